/*
 * ns_lookup.c - a call's claim look-ups without a thread waiting for them
 * (issue 28). A batch sends its ClaimGets as look-up slots free up, in
 * turns with the other calls' batches (a 1-claim call is not queued
 * behind a 250-claim one), and ends when every claim was answered, when
 * its time is up (the caller's budget, inside kubelet's deadline), or
 * when its call is cancelled. Then done(arg) is called once, and the
 * caller collects the answers. What a batch no longer waits for is
 * withdrawn: never sent if it had not gone out, and a ClaimCancel for
 * what had, so the supervisor and the publisher drop it too (no GET for
 * a call kubelet gave up on).
 *
 * The reader thread (ns_wrap.c) delivers the answers and watches the
 * batches' times; done runs on the reader, or on the thread that
 * cancelled, without the wrapper's lock.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "nodeserver/ns_wrap.h"

/* st[i] of a batch's claim */
#define LK_WAITING	0	/* not sent yet */
#define LK_SENT		1	/* in slot[i] */
#define LK_DONE		2	/* reply[i] or rc[i] */

struct ns_batch {
	struct ns_batch		 *next;		/* w->batches, start order */
	struct ns_batch		 *ready;	/* to notify, a local list */
	struct ns_wrap		 *w;
	const struct kp_claim	 *claims;	/* borrowed from the caller */
	size_t			  n, done, cursor;
	Kpipc__ClaimGet		 *g;
	Kpipc__Msg		**reply;
	struct ns_pending	**slot;
	int			 *rc;
	char			 *st;
	int64_t			  until_ms;	/* CLOCK_MONOTONIC */
	int			  armed;	/* ns_lookup_start'ed */
	int			  ended;	/* no longer in w->batches */
	int			  notified;
	void			(*done_fn)(void *);
	void			 *arg;
};

int64_t
ns_mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* A batch for claims c[0..n-1] (borrowed until ns_lookup_end), not sent
 * before ns_lookup_start; NULL when out of memory. */
void *
ns_lookup_new(void *user, const struct kp_claim *c, size_t n,
    int64_t until_ms, void (*done)(void *), void *arg)
{
	struct ns_batch	*b;
	size_t		 i;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return (NULL);
	b->g = calloc(n + 1, sizeof(*b->g));
	b->reply = calloc(n + 1, sizeof(*b->reply));
	b->slot = calloc(n + 1, sizeof(*b->slot));
	b->rc = calloc(n + 1, sizeof(*b->rc));
	b->st = calloc(n + 1, 1);
	if (b->g == NULL || b->reply == NULL || b->slot == NULL ||
	    b->rc == NULL || b->st == NULL) {
		ns_lookup_end(b, NULL, NULL, NULL, 0);
		return (NULL);
	}
	b->w = user;
	b->claims = c;
	b->n = n;
	b->until_ms = until_ms;
	b->done_fn = done;
	b->arg = arg;
	for (i = 0; i < n; i++) {
		kpipc__claim_get__init(&b->g[i]);
		b->g[i].namespace_ = (char *)c[i].namespace_;
		b->g[i].name = (char *)c[i].name;
		b->g[i].uid = (char *)c[i].uid;
	}
	return (b);
}

/* Take the answers that arrived (lock held); returns whether any did. */
static int
collect(struct ns_wrap *w, struct ns_batch *b)
{
	size_t	 i;
	int	 moved = 0;

	for (i = 0; i < b->n; i++) {
		if (b->st[i] != LK_SENT || (b->slot[i]->reply == NULL &&
		    !w->dead))
			continue;
		b->reply[i] = b->slot[i]->reply;
		b->rc[i] = b->reply[i] != NULL ? 0 : KP_EPIPE;
		b->slot[i]->g = NULL;
		b->slot[i]->reply = NULL;
		b->st[i] = LK_DONE;
		b->done++;
		moved = 1;
	}
	return (moved);
}

/*
 * End batch b now (lock held): what is not answered fails with code,
 * what is at the supervisor is withdrawn there. Its slots are free.
 */
static void
cut(struct ns_wrap *w, struct ns_batch *b, int code)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimCancel	 cc = KPIPC__CLAIM_CANCEL__INIT;
	uint64_t		 ids[NS_PENDING];
	size_t			 i;

	(void)collect(w, b);
	cc.ids = ids;
	for (i = 0; i < b->n; i++) {
		if (b->st[i] == LK_DONE)
			continue;
		if (b->st[i] == LK_SENT) {
			b->slot[i]->g = NULL;
			b->slot[i]->reply = NULL;
			if (cc.n_ids < NS_PENDING)
				ids[cc.n_ids++] = b->g[i].id;
		}
		b->st[i] = LK_DONE;
		b->rc[i] = code;
		b->done++;
	}
	if (cc.n_ids > 0 && !w->dead) {
		m.m_case = KPIPC__MSG__M_CLAIM_CANCEL;
		m.claim_cancel = &cc;
		(void)ipc_send(w->ctl, &m);
	}
	pthread_cond_broadcast(&w->cond);	/* slots are free */
}

/* Send claim i of b in slot p (lock held). */
static void
send_one(struct ns_wrap *w, struct ns_batch *b, size_t i,
    struct ns_pending *p)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;

	b->g[i].id = ++w->next_id;
	p->g = &b->g[i];
	p->reply = NULL;
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = &b->g[i];
	if ((b->rc[i] = ipc_send(w->ctl, &m)) != 0) {
		p->g = NULL;
		b->st[i] = LK_DONE;
		b->done++;
		return;
	}
	b->slot[i] = p;
	b->st[i] = LK_SENT;
}

/* The next claim of b still to send, from its cursor; n: none. */
static size_t
next_waiting(struct ns_batch *b)
{
	while (b->cursor < b->n && b->st[b->cursor] != LK_WAITING)
		b->cursor++;
	return (b->cursor);
}

static struct ns_pending *
free_slot(struct ns_wrap *w)
{
	size_t	 i;

	for (i = 0; i < NS_PENDING; i++)
		if (w->pend[i].g == NULL)
			return (&w->pend[i]);
	return (NULL);
}

/*
 * Move every batch on (lock held): answers collected, times checked,
 * free slots given out one claim per batch in turn, finished batches
 * unlinked onto *ready (the caller notifies them after the unlock).
 */
static void
pump(struct ns_wrap *w, struct ns_batch **ready)
{
	struct ns_batch		**pp, *b;
	struct ns_pending	 *p;
	int64_t			  now = ns_mono_ms();
	int			  sent, freed = 0;

	for (b = w->batches; b != NULL; b = b->next) {
		freed |= collect(w, b);
		if (b->done < b->n && w->dead)
			cut(w, b, KP_EPIPE);
		else if (b->done < b->n && b->until_ms >= 0 &&
		    now >= b->until_ms)
			cut(w, b, KP_ETIMEDOUT);
	}
	do {
		sent = 0;
		for (b = w->batches; b != NULL; b = b->next) {
			if (b->done == b->n || next_waiting(b) == b->n)
				continue;
			if ((p = free_slot(w)) == NULL)
				break;
			send_one(w, b, b->cursor, p);
			sent = 1;
		}
	} while (sent && free_slot(w) != NULL);
	/* A slot left free: for a synchronous look-up (ns_wrap.c). */
	if (freed && free_slot(w) != NULL)
		pthread_cond_broadcast(&w->cond);
	for (pp = &w->batches; (b = *pp) != NULL;) {
		if (b->done < b->n) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		b->ended = 1;
		if (b->armed && !b->notified) {
			b->notified = 1;
			b->ready = *ready;
			*ready = b;
		}
	}
}

/* Tell the finished batches' callers; without the lock. */
static void
notify(struct ns_batch *ready)
{
	struct ns_batch	*b, *next;

	for (b = ready; b != NULL; b = next) {
		next = b->ready;	/* b may be freed by done_fn */
		b->done_fn(b->arg);
	}
}

void
ns_lookup_pump(struct ns_wrap *w)
{
	struct ns_batch	*ready = NULL;

	pthread_mutex_lock(&w->lock);
	pump(w, &ready);
	pthread_mutex_unlock(&w->lock);
	notify(ready);
}

/* Milliseconds until the earliest batch's time is up; -1: none. */
int
ns_lookup_next_ms(struct ns_wrap *w)
{
	struct ns_batch	*b;
	int64_t		 now = ns_mono_ms(), t = -1;

	pthread_mutex_lock(&w->lock);
	for (b = w->batches; b != NULL; b = b->next)
		if (b->until_ms >= 0 && (t < 0 || b->until_ms - now < t))
			t = b->until_ms - now < 0 ? 0 : b->until_ms - now;
	if (t > 60000)
		t = 60000;
	w->reader_until = t < 0 ? -1 : now + t;
	pthread_mutex_unlock(&w->lock);
	return ((int)t);
}

/*
 * Send what the free slots allow; done follows once the batch ends (here
 * already if it was cancelled before it started, or the channel is gone).
 */
void
ns_lookup_start(void *handle)
{
	struct ns_batch	*b = handle, *ready = NULL, **pp;
	struct ns_wrap	*w = b->w;
	int		 wake;

	pthread_mutex_lock(&w->lock);
	b->armed = 1;
	/* The reader wakes by its own time anyway unless this one is
	 * earlier (or it waits for no time at all). */
	wake = b->until_ms >= 0 && (w->reader_until < 0 ||
	    b->until_ms < w->reader_until);
	if (!b->ended) {
		b->next = NULL;
		/* Appended: the turns go in the order calls started. */
		for (pp = &w->batches; *pp != NULL; pp = &(*pp)->next)
			;
		*pp = b;
	} else if (!b->notified) {
		b->notified = 1;	/* cancelled before it started */
		ready = b;
	}
	pump(w, &ready);
	pthread_mutex_unlock(&w->lock);
	/* The reader's wait must now end earlier: it looks again. */
	if (wake && w->wake[1] >= 0)
		(void)!write(w->wake[1], "x", 1);
	notify(ready);
}

/* Its call was cancelled: withdraw what is not answered, end it now. */
void
ns_lookup_cancel(void *handle)
{
	struct ns_batch	*b = handle, *ready = NULL, **pp;
	struct ns_wrap	*w = b->w;

	pthread_mutex_lock(&w->lock);
	if (!b->ended) {
		cut(w, b, KP_EALREADY);
		for (pp = &w->batches; *pp != NULL && *pp != b;
		    pp = &(*pp)->next)
			;
		if (*pp == b)
			*pp = b->next;
		b->ended = 1;
		if (b->armed && !b->notified) {
			b->notified = 1;
			ready = b;
		}
		/* Its slots went to the others. */
		pump(w, &ready);
	}
	pthread_mutex_unlock(&w->lock);
	notify(ready);
}

/*
 * Collect a finished batch (after done was called, or one never started)
 * and free it: out[i], rc[i] and err + i * errsize as ns_claim_get_many
 * gives them. out NULL: only free.
 */
void
ns_lookup_end(void *handle, struct dra_claim_alloc *out, int *rc, char *err,
    size_t errsize)
{
	struct ns_batch	*b = handle;
	size_t		 i;

	for (i = 0; out != NULL && i < b->n; i++) {
		if (b->reply[i] != NULL)
			rc[i] = ns_claim_fill(b->w, b->reply[i], &out[i],
			    err + i * errsize, errsize);
		else {
			rc[i] = b->rc[i] != 0 ? b->rc[i] : KP_ETIMEDOUT;
			ns_claim_failed(&b->claims[i], rc[i], err + i * errsize,
			    errsize);
		}
	}
	for (i = 0; b->reply != NULL && i < b->n; i++)
		ipc_free(b->reply[i]);
	free(b->g);
	free(b->reply);
	free(b->slot);
	free(b->rc);
	free(b->st);
	free(b);
}

/* The dra_ctx's look-ups that hold no thread (nodeserver.c). */
const struct dra_lookup_async ns_lookup_ops = {
	ns_lookup_new, ns_lookup_start, ns_lookup_cancel, ns_lookup_end
};
