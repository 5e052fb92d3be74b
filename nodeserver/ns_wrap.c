/*
 * ns_wrap.c - the nodeserver's synchronous requests to the supervisor,
 * shaped like the call they stand for (OpenSSH monitor_wrap.c): a claim
 * look-up sends ClaimGet and waits for the ClaimReply that answers it (same
 * id, same claim). A reader thread delivers answers, so calls look up
 * their claims concurrently. Only namespace, name and UID leave this
 * process. A prepare served over gRPC does not wait here: its look-ups
 * are a batch no thread waits for (ns_lookup.c), delivered by the same
 * reader.
 *
 * The CDI spec requests of the hooks (kp_cdi_spec_write, _remove, _list:
 * the public functions are here) go one at a time; the supervisor does
 * the writing (supervisor/files.c). Before the reader runs (in the init
 * hook) the caller reads the answer itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/names.h"
#include "ipc/ipc.h"
#include "base/log.h"
#include "base/msg.h"
#include "nodeserver/dra.h"
#include "nodeserver/ns_wrap.h"

#define NS_CLAIM_TIMEOUT_MS	25000	/* the publisher gives up at 20 s;
					 * kubelet's deadline is 45 s */
#define NS_CDI_TIMEOUT_MS	10000

/* The nodeserver's wrapper, for the public kp_cdi_spec_* functions: set
 * only in the nodeserver process (NULL in every other). */
static struct ns_wrap	*ns_self;

/* The static name of a version ipc_check() let through. */
static const char *
ns_api_version(const char *v)
{
	static const char *const known[] = { "resource.k8s.io/v1",
	    "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1" };
	size_t	i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(v, known[i]) == 0)
			return (known[i]);
	return (known[0]);	/* "" from an older publisher: v1 */
}

static int
ns_fill(const Kpipc__ClaimReply *r, struct dra_claim_alloc *out,
    const char *driver, char *err, size_t errsize)
{
	size_t	 i;
	int	 rc;

	if (r->result->code != 0) {
		(void)msg_fit(err, errsize, r->result->message);
		return (r->result->code);
	}
	for (i = 0; i < r->n_results; i++)
		if (dra_claim_alloc_add(out, r->results[i]->request,
		    r->results[i]->pool, r->results[i]->device,
		    r->results[i]->admin_access) != 0)
			goto nomem;
	if (r->config_json[0] != '\0' && (rc = dra_claim_alloc_config(out,
	    r->config_json, driver, err, errsize)) != 0) {
		char	 why[KP_ERROR_SIZE];

		if (rc == KP_ENOMEM)
			goto nomem;
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errsize, "claim %s/%s: %s", r->namespace_,
		    r->name, why);
		return (rc);
	}
	if (r->pod_claim_name[0] != '\0' &&
	    (out->pod_claim_name = strdup(r->pod_claim_name)) == NULL)
		goto nomem;
	if (r->claim_json[0] != '\0') {
		out->claim_json_len = strlen(r->claim_json);
		if ((out->claim_json = strdup(r->claim_json)) == NULL)
			goto nomem;
		out->api_version = ns_api_version(r->api_version);
	}
	return (0);
nomem:
	snprintf(err, errsize, "out of memory");
	return (KP_ENOMEM);
}

/* The reply answers look-up g: same id and the same claim. */
static int
ns_matches(const Kpipc__ClaimReply *r, const Kpipc__ClaimGet *g)
{
	return (r->id == g->id && strcmp(r->namespace_, g->namespace_) == 0 &&
	    strcmp(r->name, g->name) == 0 && strcmp(r->uid, g->uid) == 0);
}

/*
 * What the answer to our CDI request did to the directory, in the copy
 * of its list (ns_mirror.c): applied here, on the reader, in the order
 * of the channel, before any CdiChanged sent after it. The lock is held.
 */
static void
ns_cdi_applied(struct ns_wrap *w, const Kpipc__CdiReply *r)
{
	if (r->result->code != 0 || (w->cdi_case != KPIPC__MSG__M_CDI_WRITE &&
	    w->cdi_case != KPIPC__MSG__M_CDI_REMOVE &&
	    w->cdi_case != KPIPC__MSG__M_CDI_LIST))
		ns_mirror_drop(&w->mirror);	/* a failure; metadata */
	else if (w->cdi_case == KPIPC__MSG__M_CDI_LIST) {
		if (r->watched)
			ns_mirror_set(&w->mirror, r->names, r->n_names);
		else
			ns_mirror_drop(&w->mirror);
	} else
		ns_mirror_change(&w->mirror, w->cdi_name,
		    w->cdi_case == KPIPC__MSG__M_CDI_WRITE);
}

/* Hand a frame to the look-up it answers; anything else is dropped. */
static void
ns_deliver(struct ns_wrap *w, Kpipc__Msg *m)
{
	size_t	 i;

	if (m != NULL && m->m_case == KPIPC__MSG__M_PING) {
		/* The heartbeat: answered here, on the reader, never by a
		 * hook or under the serialization lock. */
		ns_pong(w, m->ping->seq);
		ipc_free(m);
		return;
	}
	if (m != NULL && m->m_case == KPIPC__MSG__M_CDI_CHANGED) {
		pthread_mutex_lock(&w->lock);
		ns_mirror_changed(&w->mirror, m->cdi_changed);
		pthread_mutex_unlock(&w->lock);
		ipc_free(m);
		return;
	}
	if (m != NULL && m->m_case != KPIPC__MSG__M_CLAIM_REPLY &&
	    m->m_case != KPIPC__MSG__M_CDI_REPLY && w->other != NULL) {
		w->other(w->other_user, m);
		return;
	}
	pthread_mutex_lock(&w->lock);
	if (m != NULL && m->m_case == KPIPC__MSG__M_CDI_REPLY &&
	    w->cdi_id != 0 && m->cdi_reply->id == w->cdi_id &&
	    w->cdi_reply == NULL) {
		ns_cdi_applied(w, m->cdi_reply);
		w->cdi_reply = m;
		m = NULL;
	}
	for (i = 0; m != NULL && i < NS_PENDING; i++) {
		if (w->pend[i].g == NULL || w->pend[i].reply != NULL ||
		    m->m_case != KPIPC__MSG__M_CLAIM_REPLY ||
		    !ns_matches(m->claim_reply, w->pend[i].g))
			continue;
		w->pend[i].reply = m;
		m = NULL;
	}
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	ipc_free(m);
	/* An answer to a batch (ns_lookup.c): it moves on. */
	ns_lookup_pump(w);
}

/*
 * The reader: the only thread that reads the supervisor's channel, so
 * look-ups of several calls can be in flight at once (one slow claim does
 * not hold up the others).
 */
static void *
ns_reader(void *arg)
{
	struct ns_wrap	*w = arg;
	struct pollfd	 pfd[3];
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE], buf[64];
	int		 r = 0;

	pfd[0].fd = w->ctl->fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = w->stop[0];
	pfd[1].events = POLLIN;
	pfd[2].fd = w->wake[0];
	pfd[2].events = POLLIN;
	while (r >= 0) {
		/* Woken by an answer, a new batch, or the first batch's
		 * time (ns_lookup.c). */
		if (poll(pfd, 3, ns_lookup_next_ms(w)) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents != 0)
			return (NULL);
		if (pfd[2].revents != 0)
			(void)!read(w->wake[0], buf, sizeof(buf));
		ns_lookup_pump(w);
		if (pfd[0].revents == 0)
			continue;
		if ((r = ipc_read(w->ctl)) < 0)
			break;
		while ((r = ipc_next(w->ctl, &m, err, sizeof(err))) > 0)
			ns_deliver(w, m);
	}
	pthread_mutex_lock(&w->lock);
	w->dead = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	ns_lookup_pump(w);	/* the batches fail: nobody answers */
	return (NULL);
}

/* Send g and wait for its answer; the lock is held. */
static int
ns_ask(struct ns_wrap *w, Kpipc__ClaimGet *g, Kpipc__Msg **out)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	struct ns_pending	*p = NULL;
	struct timespec		 end;
	size_t			 i;
	int			 r = 0;

	ts_deadline(&end, CLOCK_REALTIME, NS_CLAIM_TIMEOUT_MS);
	while (p == NULL && !w->dead && r != ETIMEDOUT) {
		for (i = 0; i < NS_PENDING && p == NULL; i++)
			if (w->pend[i].g == NULL)
				p = &w->pend[i];
		if (p == NULL)
			r = pthread_cond_timedwait(&w->cond, &w->lock, &end);
	}
	if (p == NULL)
		return (w->dead ? KP_EPIPE : KP_ETIMEDOUT);
	g->id = ++w->next_id;
	p->g = g;
	p->reply = NULL;
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = g;
	if ((r = ipc_send(w->ctl, &m)) == 0) {
		while (p->reply == NULL && !w->dead && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&w->cond, &w->lock, &end);
		r = p->reply != NULL ? 0 : w->dead ? KP_EPIPE : KP_ETIMEDOUT;
	}
	*out = p->reply;
	p->g = NULL;
	p->reply = NULL;
	pthread_cond_broadcast(&w->cond);	/* a slot is free */
	return (r);
}

/* A free look-up slot, or NULL; the lock is held. */
static struct ns_pending *
ns_free_slot(struct ns_wrap *w)
{
	size_t	 i;

	for (i = 0; i < NS_PENDING; i++)
		if (w->pend[i].g == NULL)
			return (&w->pend[i]);
	return (NULL);
}

/*
 * Send what free slots allow, collect what was answered; the lock is
 * held. st[i]: 0 not sent, 1 in flight (slot[i]), 2 done (reply[i] or
 * rc[i]). Returns whether anything moved.
 */
static int
ns_many_step(struct ns_wrap *w, Kpipc__ClaimGet *g, size_t n,
    struct ns_pending **slot, Kpipc__Msg **reply, int *rc, char *st,
    size_t *done)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	struct ns_pending	*p;
	size_t			 i;
	int			 moved = 0;

	for (i = 0; i < n; i++) {
		if (st[i] == 1 && (slot[i]->reply != NULL || w->dead)) {
			reply[i] = slot[i]->reply;
			rc[i] = reply[i] != NULL ? 0 : KP_EPIPE;
			slot[i]->g = NULL;
			slot[i]->reply = NULL;
			st[i] = 2;
			(*done)++;
			moved = 1;
		}
		if (st[i] != 0)
			continue;
		if (w->dead) {
			rc[i] = KP_EPIPE;
			st[i] = 2;
			(*done)++;
			moved = 1;
			continue;
		}
		if ((p = ns_free_slot(w)) == NULL)
			continue;
		g[i].id = ++w->next_id;
		p->g = &g[i];
		p->reply = NULL;
		m.m_case = KPIPC__MSG__M_CLAIM_GET;
		m.claim_get = &g[i];
		moved = 1;
		if ((rc[i] = ipc_send(w->ctl, &m)) != 0) {
			p->g = NULL;
			st[i] = 2;
			(*done)++;
			continue;
		}
		slot[i] = p;
		st[i] = 1;
	}
	return (moved);
}

void
ns_claim_failed(const struct kp_claim *c, int r, char *err, size_t errsize)
{
	if (r == KP_ETIMEDOUT)
		snprintf(err, errsize, "claim %s/%s: look-up not answered "
		    "within the call's time (the API server's rate limit "
		    "queues look-ups): kubelet's retry goes on from there",
		    c->namespace_, c->name);
	else if (r == KP_EALREADY)
		snprintf(err, errsize, "claim %s/%s: look-up withdrawn: the "
		    "call was cancelled", c->namespace_, c->name);
	else
		snprintf(err, errsize, "claim %s/%s: look-up failed: %s",
		    c->namespace_, c->name, kp_strerror(r));
}

/* A ClaimReply frame into out (ns_lookup.c). */
int
ns_claim_fill(struct ns_wrap *w, const Kpipc__Msg *reply,
    struct dra_claim_alloc *out, char *err, size_t errsize)
{
	return (ns_fill(reply->claim_reply, out, w->driver, err, errsize));
}

/*
 * A dra_lookup_many_fn: every ClaimGet of the call goes out (as many at a
 * time as there are slots) before the first answer is awaited, so the
 * supervisor and the publisher's workers look them up in parallel.
 */
void
ns_claim_get_many(void *user, const struct kp_claim *c, size_t n,
    struct dra_claim_alloc *out, int *rc, char *err, size_t errsize)
{
	struct ns_wrap		 *w = user;
	Kpipc__ClaimGet		 *g;
	Kpipc__Msg		**reply;
	struct ns_pending	**slot;
	struct timespec		  end;
	char			 *st;
	size_t			  i, done = 0;
	int			  r = 0;

	g = calloc(n, sizeof(*g));
	reply = calloc(n, sizeof(*reply));
	slot = calloc(n, sizeof(*slot));
	st = calloc(n, 1);
	if (g == NULL || reply == NULL || slot == NULL || st == NULL) {
		for (i = 0; i < n; i++)
			rc[i] = ns_claim_get(user, c[i].namespace_, c[i].name,
			    c[i].uid, &out[i], err + i * errsize, errsize);
		goto done;
	}
	for (i = 0; i < n; i++) {
		kpipc__claim_get__init(&g[i]);
		g[i].namespace_ = (char *)c[i].namespace_;
		g[i].name = (char *)c[i].name;
		g[i].uid = (char *)c[i].uid;
	}
	ts_deadline(&end, CLOCK_REALTIME, NS_CLAIM_TIMEOUT_MS);
	pthread_mutex_lock(&w->lock);
	while (done < n && r != ETIMEDOUT)
		if (!ns_many_step(w, g, n, slot, reply, rc, st, &done))
			r = pthread_cond_timedwait(&w->cond, &w->lock, &end);
	for (i = 0; i < n; i++) {
		if (st[i] == 1) {	/* timed out */
			slot[i]->g = NULL;
			slot[i]->reply = NULL;
		}
		if (st[i] != 2)
			rc[i] = KP_ETIMEDOUT;
	}
	pthread_cond_broadcast(&w->cond);	/* slots are free */
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < n; i++) {
		if (reply[i] != NULL) {
			rc[i] = ns_fill(reply[i]->claim_reply, &out[i], w->driver,
			    err + i * errsize, errsize);
			ipc_free(reply[i]);
		} else
			ns_claim_failed(&c[i], rc[i], err + i * errsize,
			    errsize);
	}
done:
	free(g);
	free(reply);
	free(slot);
	free(st);
}

/* A dra_lookup_fn: the claim's allocation for this driver. */
int
ns_claim_get(void *user, const char *ns, const char *name, const char *uid,
    struct dra_claim_alloc *out, char *err, size_t errsize)
{
	struct ns_wrap		*w = user;
	Kpipc__ClaimGet		 g = KPIPC__CLAIM_GET__INIT;
	Kpipc__Msg		*reply = NULL;
	int			 r;

	g.namespace_ = (char *)ns;
	g.name = (char *)name;
	g.uid = (char *)uid;
	pthread_mutex_lock(&w->lock);
	r = ns_ask(w, &g, &reply);
	pthread_mutex_unlock(&w->lock);
	if (r != 0) {
		snprintf(err, errsize, "claim %s/%s: look-up failed: %s", ns,
		    name, r == KP_ETIMEDOUT ? "timed out" : kp_strerror(r));
		return (r);
	}
	r = ns_fill(reply->claim_reply, out, w->driver, err, errsize);
	ipc_free(reply);
	return (r);
}

void
ns_wrap_init(struct ns_wrap *w, struct ipc_chan *ctl, const char *driver)
{
	memset(w, 0, sizeof(*w));
	w->ctl = ctl;
	w->driver = driver;
	w->stop[0] = w->stop[1] = -1;
	w->wake[0] = w->wake[1] = -1;
	w->reader_until = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_mutex_init(&w->cdi_lock, NULL);
	ns_self = w;
}

/* Start the reader; after the sandbox (it refuses extra threads). */
int
ns_wrap_start(struct ns_wrap *w)
{
	if (pipe2(w->stop, O_CLOEXEC) == -1)
		return (KP_EIO);
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    pthread_create(&w->reader, NULL, ns_reader, w) != 0) {
		close(w->stop[0]);
		close(w->stop[1]);
		if (w->wake[0] >= 0) {
			close(w->wake[0]);
			close(w->wake[1]);
		}
		w->stop[0] = w->stop[1] = -1;
		w->wake[0] = w->wake[1] = -1;
		return (KP_EIO);
	}
	w->started = 1;
	return (0);
}

/*
 * A frame to the supervisor from outside a look-up (health staleness);
 * serialized with the look-ups' sends.
 */
int
ns_wrap_send(struct ns_wrap *w, const Kpipc__Msg *m)
{
	int	 r;

	pthread_mutex_lock(&w->lock);
	r = w->dead ? KP_EPIPE : ipc_send(w->ctl, m);
	pthread_mutex_unlock(&w->lock);
	return (r);
}

/*
 * A hook's syscall was denied: ask the supervisor for an Event on the Node
 * (it writes the note; this process names only the syscall). Best effort:
 * a failed send changes nothing for the call.
 */
void
ns_event_denied(const char *syscall)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__EventAsk	 a = KPIPC__EVENT_ASK__INIT;

	if (ns_self == NULL || !ns_self->started)
		return;
	a.kind = KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED;
	a.syscall = (char *)syscall;
	m.m_case = KPIPC__MSG__M_EVENT_ASK;
	m.event_ask = &a;
	(void)ns_wrap_send(ns_self, &m);
}

/*
 * The journal was unreadable and moved aside (nodeserver/journal.c): the
 * supervisor tells the driver's error callback and posts an Event; it
 * writes both texts itself, this process only names the kind.
 */
void
ns_event_journal_corrupt(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__EventAsk	 a = KPIPC__EVENT_ASK__INIT;

	if (ns_self == NULL || !ns_self->started)
		return;
	a.kind = KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT;
	a.syscall = "";
	m.m_case = KPIPC__MSG__M_EVENT_ASK;
	m.event_ask = &a;
	(void)ns_wrap_send(ns_self, &m);
}

void
ns_wrap_free(struct ns_wrap *w)
{
	if (w->started) {
		(void)!write(w->stop[1], "x", 1);
		pthread_join(w->reader, NULL);
		close(w->stop[0]);
		close(w->stop[1]);
		close(w->wake[0]);
		close(w->wake[1]);
		w->wake[0] = w->wake[1] = -1;
		w->started = 0;
	}
	ns_self = NULL;
	ipc_free(w->cdi_reply);
	ns_mirror_drop(&w->mirror);
	pthread_mutex_destroy(&w->cdi_lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

/* ------------------------------------------------------------------------
 * CDI spec files: kp_cdi_spec_write, kp_cdi_spec_remove, kp_cdi_spec_list.
 */

/* Wait for the answer to request id; w->lock is held. */
static int
ns_cdi_wait(struct ns_wrap *w, uint64_t id, Kpipc__Msg **out)
{
	struct timespec	 end;
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	int		 r = 0;

	if (w->started) {
		ts_deadline(&end, CLOCK_REALTIME, NS_CDI_TIMEOUT_MS);
		while (w->cdi_reply == NULL && !w->dead && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&w->cond, &w->lock, &end);
		*out = w->cdi_reply;
		w->cdi_reply = NULL;
		return (*out != NULL ? 0 : w->dead ? KP_EPIPE : KP_ETIMEDOUT);
	}
	/* No reader yet (the init hook, single-threaded): read here. */
	for (;;) {
		if ((r = ipc_recv(w->ctl, &m, NS_CDI_TIMEOUT_MS, err,
		    sizeof(err))) != 0)
			return (r == KP_ETIMEDOUT ? r : KP_EPIPE);
		if (m->m_case == KPIPC__MSG__M_CDI_REPLY &&
		    m->cdi_reply->id == id) {
			ns_cdi_applied(w, m->cdi_reply);
			*out = m;
			return (0);
		}
		if (m->m_case == KPIPC__MSG__M_CDI_CHANGED)
			ns_mirror_changed(&w->mirror, m->cdi_changed);
		ipc_free(m);
	}
}

/* Send req (its id is set here) and return the supervisor's answer. */
static int
ns_cdi_ask(struct ns_wrap *w, Kpipc__Msg *req, uint64_t *id,
    Kpipc__Msg **out)
{
	int	 r;

	*out = NULL;
	pthread_mutex_lock(&w->cdi_lock);
	pthread_mutex_lock(&w->lock);
	*id = ++w->next_id;
	w->cdi_id = *id;
	w->cdi_case = req->m_case;
	w->cdi_name = req->m_case == KPIPC__MSG__M_CDI_WRITE ?
	    req->cdi_write->name : req->m_case == KPIPC__MSG__M_CDI_REMOVE ?
	    req->cdi_remove->name : NULL;
	w->cdi_reply = NULL;
	if (w->dead)
		r = KP_EPIPE;
	else if ((r = ipc_send(w->ctl, req)) == 0)
		r = ns_cdi_wait(w, *id, out);
	else
		r = KP_EPIPE;
	if (r != 0)		/* done or not, unknown */
		ns_mirror_drop(&w->mirror);
	w->cdi_id = 0;
	w->cdi_name = NULL;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_unlock(&w->cdi_lock);
	return (r);
}

/*
 * Checks that keep a request within the supervisor's field rules (a
 * frame outside them would be a violation); the name rule itself is the
 * supervisor's, which answers with an error.
 */
static int
ns_cdi_check(const char *fn, const char *name, char *err, size_t errsize)
{
	if (ns_self == NULL) {
		snprintf(err, errsize, "%s: only the driver's hooks, in the "
		    "nodeserver process, can ask for CDI spec files", fn);
		return (KP_ENOTSUP);
	}
	if (name != NULL && (name[0] == '\0' ||
	    strlen(name) > NAME_MAX_CDI_SPEC)) {
		snprintf(err, errsize, "%s: CDI spec name: empty or longer "
		    "than %d bytes (%s)", fn, NAME_MAX_CDI_SPEC,
		    NAME_R_CDI_SPEC);
		return (KP_EINVAL);
	}
	return (0);
}

/* A message into err, cut where a word or path ends (base/msg.c). */
static void KP_PRINTF(3, 4)
ns_msg(char *err, size_t errsize, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)msg_vfmt(err, errsize, fmt, ap);
	va_end(ap);
}

/* The answer's code, its message into err. */
static int
ns_cdi_result(const char *fn, int r, Kpipc__Msg *reply, char *err,
    size_t errsize)
{
	if (r != 0) {
		snprintf(err, errsize, "%s: supervisor: %s", fn,
		    r == KP_ETIMEDOUT ? "no answer within 10 s" :
		    kp_strerror(r));
		return (r);
	}
	if ((r = reply->cdi_reply->result->code) != 0)
		ns_msg(err, errsize, "%s: %s", fn,
		    reply->cdi_reply->result->message);
	return (r);
}

int
kp_cdi_spec_write(const char *name, const void *data, size_t len, char *err,
    size_t errsize)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT, *reply;
	Kpipc__CdiWrite	 w = KPIPC__CDI_WRITE__INIT;
	char		 e[KP_ERROR_SIZE];
	int		 r;

	if (err == NULL || errsize == 0) {
		err = e;
		errsize = sizeof(e);
	}
	err[0] = '\0';
	if (name == NULL || (data == NULL && len > 0)) {
		snprintf(err, errsize, "kp_cdi_spec_write: name or data is "
		    "NULL");
		return (KP_EINVAL);
	}
	if ((r = ns_cdi_check("kp_cdi_spec_write", name, err, errsize)) != 0)
		return (r);
	if (len > KP_IPC_MAX_CDI_CONTENT) {
		snprintf(err, errsize, "kp_cdi_spec_write: CDI spec %.64s: "
		    "content of %zu bytes, more than %u KiB", name, len,
		    KP_IPC_MAX_CDI_CONTENT / 1024);
		return (KP_EINVAL);
	}
	w.name = (char *)name;
	w.content.data = (uint8_t *)data;
	w.content.len = len;
	m.m_case = KPIPC__MSG__M_CDI_WRITE;
	m.cdi_write = &w;
	r = ns_cdi_ask(ns_self, &m, &w.id, &reply);
	r = ns_cdi_result("kp_cdi_spec_write", r, reply, err, errsize);
	ipc_free(reply);
	return (r);
}

int
kp_cdi_spec_remove(const char *name, char *err, size_t errsize)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT, *reply;
	Kpipc__CdiRemove rm = KPIPC__CDI_REMOVE__INIT;
	char		 e[KP_ERROR_SIZE];
	int		 r;

	if (err == NULL || errsize == 0) {
		err = e;
		errsize = sizeof(e);
	}
	err[0] = '\0';
	if (name == NULL) {
		snprintf(err, errsize, "kp_cdi_spec_remove: name is NULL");
		return (KP_EINVAL);
	}
	if ((r = ns_cdi_check("kp_cdi_spec_remove", name, err,
	    errsize)) != 0)
		return (r);
	rm.name = (char *)name;
	m.m_case = KPIPC__MSG__M_CDI_REMOVE;
	m.cdi_remove = &rm;
	r = ns_cdi_ask(ns_self, &m, &rm.id, &reply);
	r = ns_cdi_result("kp_cdi_spec_remove", r, reply, err, errsize);
	ipc_free(reply);
	return (r);
}

/*
 * Is this driver's CDI spec name in the directory: 1 yes, 0 no, -1 not
 * known without asking (no copy of the list: kp_cdi_spec_list asks).
 * Before the reader runs (the init hook) the supervisor's changes wait
 * unread in the channel until the next request: the copy is not used.
 */
int
ns_cdi_known(const char *name)
{
	int	 r;

	if (ns_self == NULL || !ns_self->started)
		return (-1);
	pthread_mutex_lock(&ns_self->lock);
	r = ns_mirror_has(&ns_self->mirror, name);
	pthread_mutex_unlock(&ns_self->lock);
	return (r);
}

int
kp_cdi_spec_list(int (*fn)(void *, const char *), void *user, char *err,
    size_t errsize)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT, *reply;
	Kpipc__CdiList	 l = KPIPC__CDI_LIST__INIT;
	char		 e[KP_ERROR_SIZE], **names;
	size_t		 i, n;
	int		 r;

	if (err == NULL || errsize == 0) {
		err = e;
		errsize = sizeof(e);
	}
	err[0] = '\0';
	if (fn == NULL) {
		snprintf(err, errsize, "kp_cdi_spec_list: fn is NULL");
		return (KP_EINVAL);
	}
	if ((r = ns_cdi_check("kp_cdi_spec_list", NULL, err, errsize)) != 0)
		return (r);
	/* The copy, when there is one and the reader keeps it (see
	 * ns_cdi_known): no round trip. */
	pthread_mutex_lock(&ns_self->lock);
	r = ns_self->started ? ns_mirror_names(&ns_self->mirror, &names,
	    &n) : -1;
	pthread_mutex_unlock(&ns_self->lock);
	if (r == 0) {
		for (i = 0; i < n; i++)
			if (fn(user, names[i]) != 0)
				break;
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return (0);
	}
	m.m_case = KPIPC__MSG__M_CDI_LIST;
	m.cdi_list = &l;
	r = ns_cdi_ask(ns_self, &m, &l.id, &reply);
	if ((r = ns_cdi_result("kp_cdi_spec_list", r, reply, err,
	    errsize)) == 0)
		for (i = 0; i < reply->cdi_reply->n_names; i++)
			if (fn(user, reply->cdi_reply->names[i]) != 0)
				break;
	ipc_free(reply);
	return (r);
}

/* ------------------------------------------------------------------------
 * Device metadata (metadata.c): the supervisor writes the file and its CDI
 * spec (supervisor/metadata.c). Same channel and answer as the CDI
 * requests.
 */

/* The answer's code; the supervisor's reason into err. */
static int
ns_md_result(int r, Kpipc__Msg *reply, char *err, size_t errsize)
{
	if (r != 0) {
		snprintf(err, errsize, "supervisor: %s", r == KP_ETIMEDOUT ?
		    "no answer within 10 s" : kp_strerror(r));
		return (r);
	}
	if ((r = reply->cdi_reply->result->code) != 0)
		(void)msg_fit(err, errsize, reply->cdi_reply->result->message);
	return (r);
}

/* A dra_md_write_fn. */
int
ns_metadata_write(void *user, const char *ns, const char *name,
    const char *uid, const char *request, const char *pod_claim_name,
    const char *content, size_t len, char *err, size_t errsize)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT, *reply;
	Kpipc__MetadataWrite	 w = KPIPC__METADATA_WRITE__INIT;
	char			 why[KP_ERROR_SIZE];
	int			 r;

	w.namespace_ = (char *)ns;
	w.name = (char *)name;
	w.uid = (char *)uid;
	w.request = (char *)request;
	w.pod_claim_name = (char *)pod_claim_name;
	w.content.data = (uint8_t *)content;
	w.content.len = len;
	m.m_case = KPIPC__MSG__M_METADATA_WRITE;
	m.metadata_write = &w;
	r = ns_cdi_ask(user, &m, &w.id, &reply);
	if ((r = ns_md_result(r, reply, why, sizeof(why))) != 0)
		snprintf(err, errsize, "write device metadata for request %s: "
		    "%s", request, why);
	ipc_free(reply);
	return (r);
}

/* A dra_md_remove_fn. */
int
ns_metadata_remove(void *user, const char *ns, const char *name,
    const char *uid, char *err, size_t errsize)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT, *reply;
	Kpipc__MetadataRemove	 rm = KPIPC__METADATA_REMOVE__INIT;
	int			 r;

	rm.namespace_ = (char *)ns;
	rm.name = (char *)name;
	rm.uid = (char *)uid;
	m.m_case = KPIPC__MSG__M_METADATA_REMOVE;
	m.metadata_remove = &rm;
	r = ns_cdi_ask(user, &m, &rm.id, &reply);
	r = ns_md_result(r, reply, err, errsize);
	ipc_free(reply);
	return (r);
}
