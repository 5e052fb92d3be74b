/*
 * pub_claims.c - the publisher's claim look-ups: a bounded queue and a few
 * worker threads, each doing exactly one GET per look-up (claims.c), so a
 * slow API server never blocks the supervisor's channel, and one slow
 * claim never holds up the others.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "ipc/ipc.h"
#include "base/log.h"
#include "publisher/pub.h"

/* The reply names the claim it answers (borrowed from the request). */
static void
echo(Kpipc__ClaimReply *r, const Kpipc__ClaimGet *g)
{
	r->id = g->id;
	r->namespace_ = g->namespace_;
	r->name = g->name;
	r->uid = g->uid;
}

static void
reply_error(struct pub *p, const Kpipc__ClaimGet *g, int code,
    const char *msg)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	Kpipc__Result		 res = KPIPC__RESULT__INIT;

	res.code = code;
	res.message = (char *)msg;
	echo(&r, g);
	r.result = &res;
	m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
	m.claim_reply = &r;
	(void)pub_send(p, &m);
}

/*
 * One look-up, which arrived at the publisher at *arrived. Its budget
 * (KP_CLAIM_BUDGET_S) counts from then: one that waited for a thread
 * while a slow API server held them all gets what is left, and none once
 * the nodeserver that asked must have given up (it waits 25 s), rather
 * than a GET nobody waits for ahead of the look-ups that came after it.
 */
static void
serve_one(struct pub *p, struct pub_claim_slot *slot,
    const Kpipc__ClaimGet *g, const struct timespec *arrived)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	struct timespec		 until, now;
	enum kube_version	 v;
	double			 left;
	char			 why[96];
	int			 ok;

	/* A publisher that just (re)started answers once discovery is
	 * done, within a bounded wait, rather than failing the claim. */
	ts_deadline(&until, CLOCK_REALTIME, PUB_CLAIMS_WAIT_MS);
	pthread_mutex_lock(&p->lock);
	while (!p->have_version && !p->quit && pthread_cond_timedwait(
	    &p->cond, &p->lock, &until) != ETIMEDOUT)
		;
	ok = p->have_version;
	v = p->version;
	pthread_mutex_unlock(&p->lock);
	if (!ok) {
		reply_error(p, g, KP_EKUBE, "API server not reachable for 10 s");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	left = KP_CLAIM_BUDGET_S - ((double)(now.tv_sec - arrived->tv_sec) +
	    (double)(now.tv_nsec - arrived->tv_nsec) / 1e9);
	if (left < 1) {
		snprintf(why, sizeof(why), "claim look-up waited %.0f s at the "
		    "publisher for the API server: not sent",
		    KP_CLAIM_BUDGET_S - left);
		reply_error(p, g, KP_ETIMEDOUT, why);
		return;
	}
	claims_get(p->http_claims, v, p->driver, g, left, &slot->withdrawn,
	    &r);
	echo(&r, g);
	m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
	m.claim_reply = &r;
	(void)pub_send(p, &m);
	r.namespace_ = r.name = r.uid = (char *)protobuf_c_empty_string;
	claims_reply_free(&r);
}

static void *
claims_thread(void *arg)
{
	struct pub_claim_slot	*slot = arg;
	struct pub		*p = slot->p;
	Kpipc__Msg		*m;
	struct timespec		 arrived;

	for (;;) {
		pthread_mutex_lock(&p->qlock);
		slot->id = 0;
		while (p->qlen == 0 && !p->quit)
			pthread_cond_wait(&p->qcond, &p->qlock);
		if (p->quit) {
			pthread_mutex_unlock(&p->qlock);
			return (NULL);
		}
		m = p->queue[p->qhead];
		arrived = p->qtime[p->qhead];
		p->qhead = (p->qhead + 1) % PUB_CLAIMS_QUEUE;
		p->qlen--;
		slot->id = m->claim_get->id;
		slot->withdrawn = 0;
		pthread_mutex_unlock(&p->qlock);
		serve_one(p, slot, m->claim_get, &arrived);
		ipc_free(m);
	}
}

int
pub_claims_start(struct pub *p)
{
	for (p->claims_started = 0; p->claims_started < PUB_CLAIMS_THREADS;
	    p->claims_started++) {
		p->claims_slot[p->claims_started].p = p;
		if (pthread_create(&p->claims_thread[p->claims_started], NULL,
		    claims_thread, &p->claims_slot[p->claims_started]) != 0)
			return (p->claims_started > 0 ? 0 : KP_EIO);
	}
	return (0);
}

/* Takes m; a full queue answers at once instead of growing. */
void
pub_claims_queue(struct pub *p, Kpipc__Msg *m)
{
	pthread_mutex_lock(&p->qlock);
	if (p->qlen == PUB_CLAIMS_QUEUE) {
		pthread_mutex_unlock(&p->qlock);
		reply_error(p, m->claim_get, KP_EBUSY, "too many claim "
		    "look-ups pending");
		ipc_free(m);
		return;
	}
	p->queue[(p->qhead + p->qlen) % PUB_CLAIMS_QUEUE] = m;
	clock_gettime(CLOCK_MONOTONIC,
	    &p->qtime[(p->qhead + p->qlen) % PUB_CLAIMS_QUEUE]);
	p->qlen++;
	pthread_mutex_unlock(&p->qlock);
	/* One look-up, one thread; signalled after the unlock, so the
	 * woken thread does not block at once on the lock still held. A
	 * thread that finishes a look-up takes the next without waiting. */
	pthread_cond_signal(&p->qcond);
}

/*
 * The supervisor withdrew these look-ups (nobody waits for them): those
 * still queued are answered at once without a GET, so a cancelled call's
 * backlog costs the API server nothing and the look-ups behind it do not
 * wait for it. One at a thread still waiting for its token leaves that
 * wait without taking one (http_request_within's cancel), so at a low QPS
 * the next attempt's look-ups get the tokens; one whose GET has gone out
 * finishes. Every look-up still gets exactly one answer.
 */
void
pub_claims_cancel(struct pub *p, const Kpipc__ClaimCancel *c)
{
	Kpipc__Msg	*gone[PUB_CLAIMS_QUEUE];
	size_t		 i, k, n = 0, kept = 0, at_thread = 0;

	pthread_mutex_lock(&p->qlock);
	for (i = 0; i < p->qlen; i++) {
		size_t		 at = (p->qhead + i) % PUB_CLAIMS_QUEUE;
		Kpipc__Msg	*m = p->queue[at];

		for (k = 0; k < c->n_ids && c->ids[k] != m->claim_get->id; k++)
			;
		if (k < c->n_ids) {
			gone[n++] = m;
			continue;
		}
		/* Compacted in order, to the front of the ring. */
		p->queue[(p->qhead + kept) % PUB_CLAIMS_QUEUE] = m;
		p->qtime[(p->qhead + kept) % PUB_CLAIMS_QUEUE] = p->qtime[at];
		kept++;
	}
	p->qlen = kept;
	for (i = 0; i < PUB_CLAIMS_THREADS; i++) {
		struct pub_claim_slot	*sl = &p->claims_slot[i];

		for (k = 0; sl->id != 0 && k < c->n_ids && c->ids[k] !=
		    sl->id; k++)
			;
		if (sl->id != 0 && k < c->n_ids) {
			sl->withdrawn = 1;
			at_thread++;
		}
	}
	pthread_mutex_unlock(&p->qlock);
	if (at_thread > 0)
		http_client_wake(p->http_claims);
	for (i = 0; i < n; i++) {
		reply_error(p, gone[i]->claim_get, KP_EALREADY, "claim look-up "
		    "withdrawn: its call was cancelled or ran out of time");
		ipc_free(gone[i]);
	}
	if (n > 0)
		log_info(2, "claim look-ups: %zu withdrawn before their GET",
		    n);
	if (at_thread > 0)
		log_info(2, "claim look-ups: %zu withdrawn at a thread (no GET "
		    "unless it had gone out)", at_thread);
}

void
pub_claims_stop(struct pub *p)
{
	pthread_mutex_lock(&p->lock);
	p->quit = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* Also under the queue's lock: the claims threads read it there. */
	pthread_mutex_lock(&p->qlock);
	p->quit = 1;
	pthread_cond_broadcast(&p->qcond);
	pthread_mutex_unlock(&p->qlock);
	/* A thread waiting for a token at a low QPS leaves that wait now,
	 * so the join is not a sleep past the supervisor's grace. */
	http_client_stop(p->http_claims);
	while (p->claims_started > 0)
		pthread_join(p->claims_thread[--p->claims_started], NULL);
	while (p->qlen > 0) {
		ipc_free(p->queue[p->qhead]);
		p->qhead = (p->qhead + 1) % PUB_CLAIMS_QUEUE;
		p->qlen--;
	}
}

void
pub_set_error(struct pub *p, const char *msg)
{
	pthread_mutex_lock(&p->lock);
	snprintf(p->last_error, sizeof(p->last_error), "%s", msg);
	pthread_mutex_unlock(&p->lock);
}

/* Sleep up to ms, waking early when the publisher stops. */
void
pub_sleep(struct pub *p, int ms)
{
	struct timespec	 ts;

	ts_deadline(&ts, CLOCK_REALTIME, ms);
	pthread_mutex_lock(&p->lock);
	while (!p->quit && pthread_cond_timedwait(&p->cond, &p->lock,
	    &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&p->lock);
}
