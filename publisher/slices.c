/*
 * slices.c - the ResourceSlice controller with the semantics of upstream's
 * k8s.io/dynamic-resource-allocation/resourceslice (v0.36/v0.37: index
 * names, ReconcilePoolWithName): a watch thread (slices_watch.c) keeps a
 * cache of this node's slices of this driver, a sync worker runs syncPool
 * (slices_sync.c) per pool from a delaying, rate-limited queue.
 *
 * Queue rules, as upstream's work queue: update() and the first LIST queue
 * pools at once; watch events queue their pool after sync_delay_ms (upstream
 * SyncDelay is 30 s; a node agent wants slices wiped by a kubelet restart
 * back quickly, so the default here is 1 s); a failed sync re-queues its
 * pool after 5 ms doubling per failure up to 60 s (upstream: 1000 s), or
 * after Retry-After when the server sent one; success resets the pool's
 * backoff. An item already queued keeps the earlier of its due times.
 *
 * Nothing is synced before the first update(): a restarted publisher must
 * not delete slices only because the driver has not published yet.
 * slice_ctl_stop() never deletes slices.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/clock.h"
#include "publisher/slices.h"

static void	*sync_main(void *);

void
sl_deadline(struct timespec *ts, int ms)
{
	ts_deadline(ts, CLOCK_MONOTONIC, ms);
}

static int
ts_before(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec));
}

/*
 * Sleep ms milliseconds or until stopped; the lock must not be held.
 * Returns non-zero when the controller is stopping.
 */
int
sl_wait_ms(struct slice_ctl *ctl, int ms)
{
	struct timespec	dl;
	int		stop;

	sl_deadline(&dl, ms);
	pthread_mutex_lock(&ctl->lock);
	while (!ctl->stop && pthread_cond_timedwait(&ctl->cond, &ctl->lock,
	    &dl) != ETIMEDOUT)
		;
	stop = ctl->stop;
	pthread_mutex_unlock(&ctl->lock);
	return (stop);
}

/*
 * Record and log an error; the lock must not be held. A fault makes every
 * retry fail: the first failure is a warning, the retries are V(2) until
 * SL_WARN_EVERY_S passed (then one more warning, with the count), so an
 * API server that is down for an hour logs about 60 lines, not one per
 * retry (tests/e2e/faults.test.js counts them).
 */
void
sl_set_error(struct slice_ctl *ctl, const char *fmt, ...)
{
	char		buf[KP_ERROR_SIZE];
	struct timespec	now;
	va_list		ap;
	int		warn, n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&ctl->lock);
	memcpy(ctl->stats.last_error, buf, sizeof(buf));
	memcpy(ctl->recent[ctl->stats.errors++ % SL_RECENT], buf, sizeof(buf));
	n = ++ctl->err_streak;
	warn = n == 1 || now.tv_sec - ctl->err_warned.tv_sec >=
	    SL_WARN_EVERY_S;
	if (warn)
		ctl->err_warned = now;
	pthread_mutex_unlock(&ctl->lock);
	if (warn && n == 1)
		log_warnx("resourceslices: %s (retrying with backoff)", buf);
	else if (warn)
		log_warnx("resourceslices: %s (%d failures so far, still "
		    "retrying)", buf, n);
	else
		log_info(2, "resourceslices: %s", buf);
}

/* A request succeeded (what says which): after errors, one line. */
void
sl_clear_error(struct slice_ctl *ctl, const char *what)
{
	int	n;

	pthread_mutex_lock(&ctl->lock);
	n = ctl->err_streak;
	ctl->err_streak = 0;
	pthread_mutex_unlock(&ctl->lock);
	if (n > 0)
		log_info(0, "resourceslices: %s again after %d failed "
		    "attempt%s", what, n, n == 1 ? "" : "s");
}

/*
 * Record a condition that retries do not fix: logged as an error once
 * per distinct message, kept as the last error (see slice_ctl.sticky).
 */
void
sl_set_sticky(struct slice_ctl *ctl, const char *fmt, ...)
{
	char	buf[KP_ERROR_SIZE];
	va_list	ap;
	int	same;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ctl->lock);
	same = strcmp(ctl->sticky, buf) == 0;
	memcpy(ctl->sticky, buf, sizeof(buf));
	memcpy(ctl->stats.last_error, buf, sizeof(buf));
	if (!same)
		memcpy(ctl->recent[ctl->stats.errors++ % SL_RECENT], buf,
		    sizeof(buf));
	pthread_mutex_unlock(&ctl->lock);
	if (!same)
		log_warnx("resourceslices: %s", buf);
}

static struct sl_pool *
pool_get(struct slice_ctl *ctl, const char *name)
{
	struct sl_pool	*np;
	size_t		 i;
	char		*s;

	for (i = 0; i < ctl->n_pools; i++)
		if (strcmp(ctl->pools[i].name, name) == 0)
			return (&ctl->pools[i]);
	if ((s = strdup(name)) == NULL)
		return (NULL);
	if ((np = reallocarray(ctl->pools, ctl->n_pools + 1,
	    sizeof(*np))) == NULL) {
		free(s);
		return (NULL);
	}
	ctl->pools = np;
	np = &ctl->pools[ctl->n_pools++];
	memset(np, 0, sizeof(*np));
	np->name = s;
	return (np);
}

static void
pool_drop(struct slice_ctl *ctl, struct sl_pool *p)
{
	size_t	i = p - ctl->pools;

	free(p->name);
	ctl->pools[i] = ctl->pools[--ctl->n_pools];
}

/* Queue a pool after delay_ms (earliest due time wins); lock held. */
void
sl_schedule(struct slice_ctl *ctl, const char *name, int delay_ms)
{
	struct sl_pool	*p;
	struct timespec	 due;

	if ((p = pool_get(ctl, name)) == NULL) {
		log_warnx("resourceslices: out of memory queueing %s", name);
		return;
	}
	sl_deadline(&due, delay_ms);
	if (!p->queued || ts_before(&due, &p->due))
		p->due = due;
	p->queued = 1;
	pthread_cond_broadcast(&ctl->cond);
}

/* Queue every desired and every cached pool; lock held. */
void
sl_schedule_all(struct slice_ctl *ctl, int delay_ms)
{
	size_t	i;

	if (ctl->desired != NULL)
		for (i = 0; i < ctl->desired->n_pools; i++)
			sl_schedule(ctl, ctl->desired->pools[i]->name,
			    delay_ms);
	for (i = 0; i < ctl->n_cache; i++)
		if (!ctl->cache[i].deleted)
			sl_schedule(ctl, ctl->cache[i].rec.pool, delay_ms);
}

/* A field-selector value: '\', ',' and '=' get a backslash. */
static int
selector_value(char *buf, size_t size, size_t *off, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*off + 3 > size)
			return (-1);
		if (*v == '\\' || *v == ',' || *v == '=')
			buf[(*off)++] = '\\';
		buf[(*off)++] = *v;
	}
	buf[*off] = '\0';
	return (0);
}

/* node NULL: the "not node-local" selector, spec.nodeName= (empty). */
static char *
field_selector(const char *driver, const char *node)
{
	char	buf[1024];
	size_t	off;

	/* Sorted terms, as Go's fields.Set.String(). */
	off = (size_t)snprintf(buf, sizeof(buf), "spec.driver=");
	if (selector_value(buf, sizeof(buf), &off, driver) != 0 ||
	    off + 16 > sizeof(buf))
		return (NULL);
	off += (size_t)snprintf(buf + off, sizeof(buf) - off,
	    ",spec.nodeName=");
	if (node != NULL && selector_value(buf, sizeof(buf), &off, node) != 0)
		return (NULL);
	return (http_escape(buf));
}

static void
ctl_free(struct slice_ctl *ctl)
{
	size_t	i;

	sl_cache_free(ctl);
	for (i = 0; i < ctl->n_pools; i++)
		free(ctl->pools[i].name);
	free(ctl->pools);
	if (ctl->desired != NULL)
		kpipc__publish__free_unpacked(ctl->desired, NULL);
	free(ctl->driver);
	free(ctl->node);
	free(ctl->node_uid);
	free(ctl->reconcile_pool);
	json_decref(ctl->dropped);
	free(ctl->streams[SL_NODE].field_selector);
	free(ctl->streams[SL_SELECTOR].field_selector);
	pthread_mutex_destroy(&ctl->lock);
	pthread_cond_destroy(&ctl->cond);
	free(ctl);
}

/*
 * Start the controller: copies the configuration (the http client is
 * borrowed until slice_ctl_stop()), starts the watch and the sync worker and
 * returns at once. Errors: KP_EINVAL, KP_ENOCLIENT (no http client),
 * KP_ENONODE (no node name), KP_ENOMEM, or -errno from pthread_create.
 */
int
slice_ctl_start(const struct slice_ctl_config *cfg, struct slice_ctl **out)
{
	struct slice_ctl	*ctl;
	pthread_condattr_t	 ca;
	int			 rc, first;

	if (cfg == NULL || out == NULL || cfg->driver == NULL ||
	    cfg->driver[0] == '\0')
		return (KP_EINVAL);
	if (cfg->http == NULL)
		return (KP_ENOCLIENT);
	if (cfg->node == NULL || cfg->node[0] == '\0')
		return (KP_ENONODE);
	if ((ctl = calloc(1, sizeof(*ctl))) == NULL)
		return (KP_ENOMEM);
	ctl->http = cfg->http;
	ctl->version = cfg->version;
	ctl->sync_delay_ms = cfg->sync_delay_ms > 0 ? cfg->sync_delay_ms :
	    SL_SYNC_DELAY_MS;
	ctl->event = cfg->event;
	ctl->event_user = cfg->event_user;
	ctl->driver = strdup(cfg->driver);
	ctl->node = strdup(cfg->node);
	if (cfg->node_uid != NULL && cfg->node_uid[0] != '\0')
		ctl->node_uid = strdup(cfg->node_uid);
	if (cfg->reconcile_pool != NULL && cfg->reconcile_pool[0] != '\0')
		ctl->reconcile_pool = strdup(cfg->reconcile_pool);
	ctl->streams[SL_NODE].field_selector = field_selector(cfg->driver,
	    cfg->node);
	ctl->streams[SL_SELECTOR].field_selector = field_selector(cfg->driver,
	    NULL);
	ctl->streams[SL_NODE].ctl = ctl->streams[SL_SELECTOR].ctl = ctl;
	ctl->streams[SL_SELECTOR].id = SL_SELECTOR;
	pthread_mutex_init(&ctl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctl->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ctl->driver == NULL || ctl->node == NULL ||
	    ctl->streams[SL_NODE].field_selector == NULL ||
	    ctl->streams[SL_SELECTOR].field_selector == NULL ||
	    (cfg->node_uid != NULL && cfg->node_uid[0] != '\0' &&
	    ctl->node_uid == NULL) ||
	    (cfg->reconcile_pool != NULL && cfg->reconcile_pool[0] != '\0' &&
	    ctl->reconcile_pool == NULL)) {
		ctl_free(ctl);
		return (KP_ENOMEM);
	}
	/*
	 * ReconcilePoolWithName: only the informer of slices without a
	 * node, filtered by pool name on this side (upstream: the selector
	 * spec.nodeName= even for a Node owner, plus a pool filter).
	 */
	first = ctl->reconcile_pool != NULL ? SL_SELECTOR : SL_NODE;
	ctl->streams[first].running = 1;	/* before sync_main reads it */
	if ((rc = pthread_create(&ctl->streams[first].thread, NULL,
	    sl_watch_main, &ctl->streams[first])) != 0) {
		ctl_free(ctl);
		return (-rc);
	}
	if ((rc = pthread_create(&ctl->sync_thread, NULL, sync_main,
	    ctl)) != 0) {
		pthread_mutex_lock(&ctl->lock);
		__atomic_store_n(&ctl->stop, 1, __ATOMIC_SEQ_CST);
		pthread_cond_broadcast(&ctl->cond);
		pthread_mutex_unlock(&ctl->lock);
		pthread_join(ctl->streams[first].thread, NULL);
		ctl_free(ctl);
		return (-rc);
	}
	ctl->threads = 1;
	*out = ctl;
	return (0);
}

static Kpipc__Publish *
publish_copy(const Kpipc__Publish *m)
{
	Kpipc__Publish	*c;
	uint8_t		*buf;
	size_t		 len;

	len = kpipc__publish__get_packed_size(m);
	if ((buf = malloc(len > 0 ? len : 1)) == NULL)
		return (NULL);
	kpipc__publish__pack(m, buf);
	c = kpipc__publish__unpack(NULL, len, buf);
	free(buf);
	return (c);
}

/*
 * Replace the desired state (deep-copied; m stays the caller's). Thread-
 * safe. Pools of the old and of the new state are synced at once; pools no
 * longer desired get their slices deleted. Errors: KP_EINVAL (also: with
 * ReconcilePoolWithName, another pool set; the old state stays),
 * KP_ENOMEM.
 */
/* Does the pool have slices without a node (the second informer)? */
static int
pool_node_local(const Kpipc__Pool *p)
{
	size_t	 i;

	if (p->node_selector != NULL || p->all_nodes)
		return (0);
	for (i = 0; i < p->n_slices; i++)
		if (p->slices[i]->per_device_node_selection)
			return (0);
	return (1);
}

int
slice_ctl_update(struct slice_ctl *ctl, const Kpipc__Publish *m)
{
	Kpipc__Publish	*c, *old;
	size_t		 i;

	if (ctl == NULL || m == NULL)
		return (KP_EINVAL);
	/* The driver process leaves other pools out already (1.38:
	 * api/publish_rules.c); a frame with them anyway keeps the old
	 * state. */
	if (ctl->reconcile_pool != NULL && m->n_pools > 0 &&
	    (m->n_pools > 1 || strcmp(m->pools[0]->name,
	    ctl->reconcile_pool) != 0)) {
		sl_set_error(ctl, "ReconcilePoolWithName=\"%s\", but found "
		    "%zu pools; expected exactly one pool with this name",
		    ctl->reconcile_pool, m->n_pools);
		return (KP_EINVAL);
	}
	if ((c = publish_copy(m)) == NULL)
		return (KP_ENOMEM);
	pthread_mutex_lock(&ctl->lock);
	old = ctl->desired;
	if (old != NULL)
		for (i = 0; i < old->n_pools; i++)
			sl_schedule(ctl, old->pools[i]->name, 0);
	ctl->desired = c;
	ctl->desired_gen++;
	ctl->sticky[0] = '\0';	/* the new state may fix it */
	for (i = 0; i < c->n_pools; i++)
		if (!pool_node_local(c->pools[i]))
			break;
	if (i < c->n_pools && !ctl->streams[SL_SELECTOR].running &&
	    ctl->reconcile_pool == NULL) {
		/* Slices without a node: a second informer, from now on. */
		if (pthread_create(&ctl->streams[SL_SELECTOR].thread, NULL,
		    sl_watch_main, &ctl->streams[SL_SELECTOR]) == 0)
			ctl->streams[SL_SELECTOR].running = 1;
		else
			log_warnx("resourceslices: cannot start the watch of "
			    "slices without a node");
	}
	if (old == NULL)
		sl_schedule_all(ctl, 0);	/* leftovers of earlier runs */
	else
		for (i = 0; i < c->n_pools; i++)
			sl_schedule(ctl, c->pools[i]->name, 0);
	pthread_mutex_unlock(&ctl->lock);
	if (old != NULL)
		kpipc__publish__free_unpacked(old, NULL);
	return (0);
}

/* A snapshot of the counters; thread-safe. */
void
slice_ctl_stats(struct slice_ctl *ctl, struct slice_stats *st)
{
	size_t	i;

	memset(st, 0, sizeof(*st));
	if (ctl == NULL)
		return;
	pthread_mutex_lock(&ctl->lock);
	*st = ctl->stats;
	st->pending_pools = 0;
	for (i = 0; i < ctl->n_pools; i++)
		if (ctl->pools[i].queued)
			st->pending_pools++;
	pthread_mutex_unlock(&ctl->lock);
}

/*
 * The slices of each desired pool as the cache has them (for /metrics):
 * up to max pools, their names copied into names[] and their slice
 * counts into counts[].
 */
size_t
slice_ctl_pools(struct slice_ctl *ctl, char (*names)[KP_IPC_MAX_POOL + 1],
    uint32_t *counts, size_t max)
{
	size_t	 i, j, n = 0;

	if (ctl == NULL)
		return (0);
	pthread_mutex_lock(&ctl->lock);
	for (i = 0; ctl->desired != NULL && i < ctl->desired->n_pools &&
	    n < max; i++) {
		const char *pool = ctl->desired->pools[i]->name;

		snprintf(names[n], KP_IPC_MAX_POOL + 1, "%s", pool);
		counts[n] = 0;
		for (j = 0; j < ctl->n_cache; j++)
			if (!ctl->cache[j].deleted &&
			    ctl->cache[j].rec.pool != NULL &&
			    strcmp(ctl->cache[j].rec.pool, pool) == 0)
				counts[n]++;
		n++;
	}
	pthread_mutex_unlock(&ctl->lock);
	return (n);
}

/*
 * The errors after number since (at most max, the newest if more):
 * copied to out; returns how many.
 */
int
slice_ctl_errors(struct slice_ctl *ctl, uint64_t since,
    char (*out)[KP_ERROR_SIZE], int max)
{
	uint64_t	 n, first;
	int		 k = 0;

	if (ctl == NULL || max <= 0)
		return (0);
	pthread_mutex_lock(&ctl->lock);
	n = ctl->stats.errors;
	first = since < n ? since : n;
	if (n - first > SL_RECENT)
		first = n - SL_RECENT;
	if (n - first > (uint64_t)max)
		first = n - (uint64_t)max;
	for (; first < n; first++)
		memcpy(out[k++], ctl->recent[first % SL_RECENT],
		    KP_ERROR_SIZE);
	pthread_mutex_unlock(&ctl->lock);
	return (k);
}

/* Pools whose last sync failed; the lock is held. */
static size_t
pools_failing(const struct slice_ctl *ctl)
{
	size_t	 i, n = 0;

	for (i = 0; i < ctl->n_pools; i++)
		if (ctl->pools[i].failures > 0)
			n++;
	return (n);
}

/* Stop both threads and free the controller. Never deletes slices. */
void
slice_ctl_stop(struct slice_ctl *ctl)
{
	if (ctl == NULL)
		return;
	pthread_mutex_lock(&ctl->lock);
	__atomic_store_n(&ctl->stop, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&ctl->cond);
	pthread_mutex_unlock(&ctl->lock);
	if (ctl->threads) {
		if (ctl->streams[SL_NODE].running)
			pthread_join(ctl->streams[SL_NODE].thread, NULL);
		if (ctl->streams[SL_SELECTOR].running)
			pthread_join(ctl->streams[SL_SELECTOR].thread, NULL);
		pthread_join(ctl->sync_thread, NULL);
	}
	ctl_free(ctl);
}

/* Pool name is to be left as stored (Publish.keep_pools); lock held. */
static int
kept_pool(const struct slice_ctl *ctl, const char *name)
{
	size_t	 i;

	for (i = 0; ctl->desired != NULL && i < ctl->desired->n_keep_pools;
	    i++)
		if (strcmp(ctl->desired->keep_pools[i], name) == 0)
			return (1);
	return (0);
}

/* A deep copy of one desired pool (NULL: not desired or no memory). */
static Kpipc__Pool *
desired_pool(struct slice_ctl *ctl, const char *name, int *nomem)
{
	Kpipc__Pool	*p;
	uint8_t		*buf;
	size_t		 i, len;

	*nomem = 0;
	if (ctl->desired == NULL)
		return (NULL);
	for (i = 0; i < ctl->desired->n_pools; i++) {
		p = ctl->desired->pools[i];
		if (strcmp(p->name, name) != 0)
			continue;
		len = kpipc__pool__get_packed_size(p);
		if ((buf = malloc(len > 0 ? len : 1)) == NULL) {
			*nomem = 1;
			return (NULL);
		}
		kpipc__pool__pack(p, buf);
		p = kpipc__pool__unpack(NULL, len, buf);
		free(buf);
		*nomem = p == NULL;
		return (p);
	}
	return (NULL);
}

/* The lock is held. */
static void
pool_event(struct slice_ctl *ctl, const char *pool)
{
	char	 note[KP_ERROR_SIZE + 320];

	snprintf(note, sizeof(note), "the API server keeps rejecting the "
	    "ResourceSlices of pool %.253s: %.700s", pool,
	    ctl->stats.last_error[0] ? ctl->stats.last_error : "no reason");
	ctl->event(ctl->event_user, KPIPC__EVENT_KIND__EVENT_POOL_REJECTED,
	    note);
}

static long
backoff_ms(int failures)
{
	long	ms = SL_BACKOFF_MIN_MS;

	while (--failures > 0 && ms < SL_BACKOFF_MAX_MS)
		ms *= 2;
	return (ms > SL_BACKOFF_MAX_MS ? SL_BACKOFF_MAX_MS : ms);
}

/* Every running informer has listed once; lock held. */
int
sl_ready(struct slice_ctl *ctl)
{
	return ((!ctl->streams[SL_NODE].running ||
	    ctl->streams[SL_NODE].synced) &&
	    (!ctl->streams[SL_SELECTOR].running ||
	    ctl->streams[SL_SELECTOR].synced));
}

/* Pick the pool due first; lock held. NULL with *wait set, or a pool. */
static struct sl_pool *
next_pool(struct slice_ctl *ctl, struct timespec *wait, int *have_wait)
{
	struct sl_pool	*best = NULL;
	struct timespec	 now;
	size_t		 i;

	*have_wait = 0;
	for (i = 0; i < ctl->n_pools; i++) {
		if (!ctl->pools[i].queued)
			continue;
		if (best == NULL || ts_before(&ctl->pools[i].due, &best->due))
			best = &ctl->pools[i];
	}
	if (best == NULL)
		return (NULL);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ts_before(&now, &best->due)) {
		*wait = best->due;
		*have_wait = 1;
		return (NULL);
	}
	return (best);
}

static void *
sync_main(void *arg)
{
	struct slice_ctl	*ctl = arg;
	struct sl_pool		*p;
	struct timespec		 wait;
	Kpipc__Pool		*dp;
	char			*name;
	long			 retry_ms, ms;
	int			 have_wait, nomem, rc, cleared, kept;

	pthread_mutex_lock(&ctl->lock);
	while (!ctl->stop) {
		p = NULL;
		cleared = 0;
		have_wait = 0;
		if (sl_ready(ctl) && ctl->desired != NULL)
			p = next_pool(ctl, &wait, &have_wait);
		if (p == NULL) {
			if (have_wait)
				pthread_cond_timedwait(&ctl->cond, &ctl->lock,
				    &wait);
			else
				pthread_cond_wait(&ctl->cond, &ctl->lock);
			continue;
		}
		p->queued = 0;
		if ((name = strdup(p->name)) == NULL) {
			sl_schedule(ctl, p->name, SL_BACKOFF_MAX_MS);
			continue;
		}
		dp = desired_pool(ctl, name, &nomem);
		kept = dp == NULL && !nomem && kept_pool(ctl, name);
		pthread_mutex_unlock(&ctl->lock);

		retry_ms = -1;
		/* A kept pool: its slices stay as they are, no write. */
		rc = kept ? 0 : nomem ? KP_ENOMEM : sl_sync_pool(ctl, name, dp,
		    &retry_ms);
		if (dp != NULL)
			kpipc__pool__free_unpacked(dp, NULL);

		pthread_mutex_lock(&ctl->lock);
		if ((p = pool_get(ctl, name)) != NULL) {
			if (rc == 0) {
				p->failures = 0;
				ctl->stats.last_sync = time(NULL);
				if (!p->queued)
					pool_drop(ctl, p);
				/* All pools in sync again: the last error
				 * is history, not the current state. */
				if (pools_failing(ctl) == 0) {
					memcpy(ctl->stats.last_error,
					    ctl->sticky, sizeof(ctl->sticky));
					cleared = ctl->err_streak;
					ctl->err_streak = 0;
				}
			} else {
				p->failures++;
				/* Retrying did not help: tell the cluster
				 * (an Event on the Node, counted again on
				 * each further failure). */
				if (p->failures >= SL_EVENT_FAILURES &&
				    ctl->event != NULL)
					pool_event(ctl, name);
				ms = backoff_ms(p->failures);
				if (retry_ms > ms)
					ms = retry_ms;
				sl_schedule(ctl, name, (int)ms);
				log_info(2, "resourceslices: pool %s: retry "
				    "in %ld ms", name, ms);
			}
		}
		free(name);
		if (cleared > 0) {
			pthread_mutex_unlock(&ctl->lock);
			log_info(0, "resourceslices: in sync again after %d "
			    "failed attempt%s", cleared, cleared == 1 ? "" :
			    "s");
			pthread_mutex_lock(&ctl->lock);
		}
	}
	pthread_mutex_unlock(&ctl->lock);
	return (NULL);
}
