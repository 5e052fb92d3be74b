/*
 * slices_watch.c - the informer: LIST this node's slices of this driver,
 * WATCH from the list's resourceVersion (bookmarks on, timeoutSeconds in
 * [300, 600)), reconnect from the last seen RV after a clean end, re-LIST
 * after 410 Expired (HTTP or an ERROR event) and after errors, which back
 * off 0.8 s doubling to 30 s.
 *
 * The cache doubles as upstream's mutation cache: the responses to our own
 * creates and updates go in at once, so the next sync sees its own writes;
 * an entry is only replaced by a newer resourceVersion. Deletions leave a
 * tombstone so that a late response or event cannot resurrect a slice. A
 * re-LIST replaces the cache but keeps own writes newer than the list
 * (for SL_MUTATION_TTL_S), unless the list's RV went backwards (a wiped
 * store): then the list alone is the truth.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "publisher/slices.h"

#define TOMBSTONE_TTL_S	300

struct watch_state {
	struct slice_ctl	*ctl;
	struct sl_stream	*st;
	char			*rv;		/* last seen, owned */
	int			 events;
	int			 expired;	/* 410: re-LIST */
	int			 failed;
	char			 error[KP_ERROR_SIZE];
};

uint64_t
sl_rv_parse(const char *rv)
{
	char			*end;
	unsigned long long	 v;

	if (rv == NULL || *rv == '\0')
		return (0);
	errno = 0;
	v = strtoull(rv, &end, 10);
	if (errno != 0 || *end != '\0')
		return (0);
	return (v);
}

static void
entry_free(struct sl_entry *e)
{
	conv_rec_free(&e->rec);
}

void
sl_cache_free(struct slice_ctl *ctl)
{
	size_t	i;

	for (i = 0; i < ctl->n_cache; i++)
		entry_free(&ctl->cache[i]);
	free(ctl->cache);
	ctl->cache = NULL;
	ctl->n_cache = 0;
}

static struct sl_entry *
cache_find(struct slice_ctl *ctl, const char *name)
{
	size_t	i;

	for (i = 0; i < ctl->n_cache; i++)
		if (strcmp(ctl->cache[i].rec.name, name) == 0)
			return (&ctl->cache[i]);
	return (NULL);
}

static void
cache_expire(struct slice_ctl *ctl, time_t now)
{
	size_t	i;

	for (i = 0; i < ctl->n_cache;) {
		if (ctl->cache[i].deleted &&
		    now - ctl->cache[i].written > TOMBSTONE_TTL_S) {
			entry_free(&ctl->cache[i]);
			ctl->cache[i] = ctl->cache[--ctl->n_cache];
		} else
			i++;
	}
}

/*
 * Put a record in (moved; freed when not taken) unless the cache has the
 * same or a newer RV for the name. Lock held. Returns 1 if taken.
 */
static int
cache_put(struct slice_ctl *ctl, struct slice_rec *r, int deleted,
    int mutation, int stream)
{
	struct sl_entry	*e, *ne;
	uint64_t	 rv = sl_rv_parse(r->rv);
	time_t		 now = time(NULL);

	if (rv > ctl->max_rv)
		ctl->max_rv = rv;
	if ((e = cache_find(ctl, r->name)) != NULL) {
		if (e->rv > rv || (e->rv == rv && !deleted)) {
			conv_rec_free(r);
			return (0);
		}
		entry_free(e);
	} else {
		cache_expire(ctl, now);
		if ((ne = reallocarray(ctl->cache, ctl->n_cache + 1,
		    sizeof(*ne))) == NULL) {
			conv_rec_free(r);
			return (0);
		}
		ctl->cache = ne;
		e = &ctl->cache[ctl->n_cache++];
	}
	e->rec = *r;
	memset(r, 0, sizeof(*r));
	e->rv = rv;
	e->stream = stream;
	e->deleted = deleted;
	e->mutation = mutation;
	e->written = now;
	return (1);
}

/* The stored object a create or update returned: our own write. */
void
sl_cache_own(struct slice_ctl *ctl, const json_t *obj)
{
	struct slice_rec	r;
	char			err[KP_ERROR_SIZE];

	if (conv_parse_slice(ctl->version, obj, &r, err, sizeof(err)) != 0) {
		log_warnx("resourceslices: own write: %s", err);
		return;
	}
	pthread_mutex_lock(&ctl->lock);
	cache_put(ctl, &r, 0, 1, r.node_local ? SL_NODE : SL_SELECTOR);
	pthread_mutex_unlock(&ctl->lock);
}

/*
 * A slice we deleted (or found gone: 404). rv is the response's, or NULL;
 * the tombstone gets the newest RV known for the name.
 */
void
sl_cache_gone(struct slice_ctl *ctl, const char *name, const char *rv)
{
	struct sl_entry		*e;
	struct slice_rec	 r;
	uint64_t		 v = sl_rv_parse(rv);
	char			 buf[32];

	pthread_mutex_lock(&ctl->lock);
	if ((e = cache_find(ctl, name)) == NULL || e->deleted) {
		pthread_mutex_unlock(&ctl->lock);
		return;
	}
	if (e->rv > v)
		v = e->rv;
	/* Keep the record (pool, names) so the tombstone is complete. */
	if (conv_rec_copy(&e->rec, &r) == 0) {
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		free(r.rv);
		if ((r.rv = strdup(buf)) != NULL)
			cache_put(ctl, &r, 1, 1, e->stream);
		else
			conv_rec_free(&r);
	}
	pthread_mutex_unlock(&ctl->lock);
}

/*
 * Copies of the live slices of a pool, sorted by name. Returns 0 or
 * KP_ENOMEM; *out is freed by the caller (conv_rec_free each, then free).
 */
int
sl_cache_pool(struct slice_ctl *ctl, const char *pool,
    struct slice_rec **out, size_t *n)
{
	struct slice_rec	*v = NULL, *nv;
	size_t			 i, k = 0;
	int			 rc = 0;

	pthread_mutex_lock(&ctl->lock);
	for (i = 0; i < ctl->n_cache; i++) {
		if (ctl->cache[i].deleted ||
		    strcmp(ctl->cache[i].rec.pool, pool) != 0)
			continue;
		if ((nv = reallocarray(v, k + 1, sizeof(*v))) == NULL) {
			rc = KP_ENOMEM;
			break;
		}
		v = nv;
		if (conv_rec_copy(&ctl->cache[i].rec, &v[k]) != 0) {
			rc = KP_ENOMEM;
			break;
		}
		k++;
	}
	pthread_mutex_unlock(&ctl->lock);
	if (rc != 0) {
		for (i = 0; i < k; i++)
			conv_rec_free(&v[i]);
		free(v);
		return (rc);
	}
	/* name is the first member: conv_names_cmp sorts by it. */
	if (k > 1)
		qsort(v, k, sizeof(*v), conv_names_cmp);
	*out = v;
	*n = k;
	return (0);
}

/*
 * Install a complete LIST; recs are moved. Lock held. Keeps own writes
 * newer than the list, unless the store's RV went backwards.
 */
static void
cache_replace(struct sl_stream *st, struct slice_rec *recs, size_t n,
    uint64_t list_rv)
{
	struct slice_ctl *ctl = st->ctl;
	struct sl_entry	*old = ctl->cache;
	size_t		 n_old = ctl->n_cache, i;
	time_t		 now = time(NULL);
	int		 wiped = list_rv < ctl->max_rv && st->synced;

	if (wiped)
		log_info(1, "resourceslices: list RV %" PRIu64 " is older "
		    "than %" PRIu64 ": the store was reset", list_rv,
		    ctl->max_rv);
	ctl->cache = NULL;
	ctl->n_cache = 0;
	if (wiped || list_rv > ctl->max_rv)
		ctl->max_rv = list_rv;
	for (i = 0; i < n; i++)
		cache_put(ctl, &recs[i], 0, 0, st->id);
	for (i = 0; i < n_old; i++) {
		if (old[i].stream != st->id || (!wiped && old[i].mutation &&
		    old[i].rv > list_rv &&
		    now - old[i].written <= SL_MUTATION_TTL_S)) {
			cache_put(ctl, &old[i].rec, old[i].deleted,
			    old[i].mutation, old[i].stream);
			continue;
		}
		/* Pools that vanished from the list get a sync, too. */
		if (!old[i].deleted)
			sl_schedule(ctl, old[i].rec.pool, st->synced ?
			    ctl->sync_delay_ms : 0);
		entry_free(&old[i]);
	}
	free(old);
}

/*
 * The selector informer sees every node-less slice of the driver: keep the
 * ones this Node controls, or with ReconcilePoolWithName those of the pool.
 */
static int
ours(const struct sl_stream *st, const json_t *obj)
{
	const json_t	*refs, *r;
	const char	*kind, *name;
	size_t		 i;

	if (st->id == SL_NODE)
		return (1);
	if (st->ctl->reconcile_pool != NULL) {
		name = json_string_value(json_object_get(json_object_get(
		    json_object_get(obj, "spec"), "pool"), "name"));
		return (name != NULL &&
		    strcmp(name, st->ctl->reconcile_pool) == 0);
	}
	refs = json_object_get(json_object_get(obj, "metadata"),
	    "ownerReferences");
	json_array_foreach(refs, i, r) {
		kind = json_string_value(json_object_get(r, "kind"));
		name = json_string_value(json_object_get(r, "name"));
		if (kind != NULL && name != NULL &&
		    strcmp(kind, "Node") == 0 &&
		    strcmp(name, st->ctl->node) == 0 &&
		    json_is_true(json_object_get(r, "controller")))
			return (1);
	}
	return (0);
}

static char *
list_path(struct sl_stream *st, const char *cont)
{
	struct slice_ctl *ctl = st->ctl;
	char	*path, *c = NULL;

	if (cont != NULL && (c = http_escape(cont)) == NULL)
		return (NULL);
	if (asprintf(&path, "/apis/%s/resourceslices?fieldSelector=%s"
	    "&limit=%d%s%s", conv_api_version(ctl->version),
	    st->field_selector, SL_LIST_LIMIT, c != NULL ? "&continue=" : "",
	    c != NULL ? c : "") == -1)
		path = NULL;
	free(c);
	return (path);
}

/* LIST (all pages). Returns 0 with *rv set, or an error (err filled). */
static int
do_list(struct sl_stream *st, char **rv, char *err, size_t errsize)
{
	struct slice_ctl	*ctl = st->ctl;
	struct http_response	 resp;
	struct slice_rec	*recs = NULL, *nr;
	json_t			*o = NULL, *items, *it;
	char			*path, *cont = NULL, *m, *listrv = NULL;
	size_t			 n = 0, i;
	int			 rc = 0;

	for (;;) {
		if ((path = list_path(st, cont)) == NULL) {
			rc = KP_ENOMEM;
			snprintf(err, errsize, "out of memory");
			break;
		}
		memset(&resp, 0, sizeof(resp));
		rc = http_request(ctl->http, "GET", path, NULL, HTTP_MAX_LIST,
		    &resp);
		free(path);
		if (resp.status != 200) {
			if (resp.status == 0)	/* err: KP_ERROR_SIZE */
				snprintf(err, errsize, "list: %.*s",
				    KP_ERROR_SIZE - 7, resp.error[0]
				    ? resp.error : kp_strerror(rc));
			else {
				m = conv_status_message(resp.body,
				    resp.status);
				snprintf(err, errsize, "list: %s",
				    m != NULL ? m : "error");
				free(m);
			}
			http_response_free(&resp);
			rc = resp.status == 410 ? 410 : KP_EKUBE;
			break;
		}
		rc = 0;
		o = json_loads(resp.body, 0, NULL);
		http_response_free(&resp);
		items = json_object_get(o, "items");
		if (o == NULL || (items != NULL && !json_is_array(items) &&
		    !json_is_null(items))) {
			snprintf(err, errsize, "list: not a ResourceSliceList");
			rc = KP_EPROTO;
			break;
		}
		json_array_foreach(items, i, it) {
			if (!ours(st, it))
				continue;
			if ((nr = reallocarray(recs, n + 1,
			    sizeof(*recs))) == NULL) {
				rc = KP_ENOMEM;
				break;
			}
			recs = nr;
			if (conv_parse_slice(ctl->version, it, &recs[n], err,
			    errsize) == 0)
				n++;
		}
		free(listrv);
		free(cont);
		cont = NULL;
		listrv = strdup(json_string_value(json_object_get(
		    json_object_get(o, "metadata"), "resourceVersion")) ?
		    json_string_value(json_object_get(json_object_get(o,
		    "metadata"), "resourceVersion")) : "");
		m = (char *)json_string_value(json_object_get(
		    json_object_get(o, "metadata"), "continue"));
		if (m != NULL && *m != '\0')
			cont = strdup(m);
		json_decref(o);
		o = NULL;
		if (rc != 0 || listrv == NULL) {
			rc = KP_ENOMEM;
			snprintf(err, errsize, "out of memory");
			break;
		}
		if (cont == NULL)
			break;
	}
	json_decref(o);
	free(cont);
	if (rc == 0) {
		pthread_mutex_lock(&ctl->lock);
		cache_replace(st, recs, n, sl_rv_parse(listrv));
		if (!st->synced) {
			st->synced = 1;
			sl_schedule_all(ctl, 0);
		}
		pthread_cond_broadcast(&ctl->cond);
		pthread_mutex_unlock(&ctl->lock);
		log_info(2, "resourceslices: listed %zu slices at RV %s (%s)",
		    n, listrv, st->id == SL_NODE ? "node" : "no node");
		free(*rv);
		*rv = listrv;
	} else {
		for (i = 0; i < n; i++)
			conv_rec_free(&recs[i]);
		free(listrv);
	}
	free(recs);
	return (rc);
}

/* One watch event line. Returns non-zero to end the stream. */
static int
watch_line(void *user, const char *line, size_t len)
{
	struct watch_state	*ws = user;
	struct slice_ctl	*ctl = ws->ctl;
	struct slice_rec	 r;
	json_t			*ev, *obj;
	const char		*type, *rv;
	char			*m, *pool;
	json_int_t		 code;
	int			 del;

	if ((ev = json_loadb(line, len, 0, NULL)) == NULL) {
		snprintf(ws->error, sizeof(ws->error), "watch: bad event");
		ws->failed = 1;
		return (1);
	}
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	rv = json_string_value(json_object_get(json_object_get(obj,
	    "metadata"), "resourceVersion"));
	if (type == NULL || !json_is_object(obj)) {
		snprintf(ws->error, sizeof(ws->error), "watch: bad event");
		ws->failed = 1;
		json_decref(ev);
		return (1);
	}
	if (strcmp(type, "ERROR") == 0) {
		code = json_integer_value(json_object_get(obj, "code"));
		m = conv_status_message(NULL, (long)code);
		snprintf(ws->error, sizeof(ws->error), "watch: %s",
		    json_string_value(json_object_get(obj, "message")) ?
		    json_string_value(json_object_get(obj, "message")) :
		    (m != NULL ? m : "ERROR event"));
		free(m);
		if (code == 410)
			ws->expired = 1;
		else
			ws->failed = 1;
		json_decref(ev);
		return (1);
	}
	ws->events++;
	if (rv != NULL && *rv != '\0') {
		free(ws->rv);
		ws->rv = strdup(rv);
	}
	if (strcmp(type, "BOOKMARK") == 0) {
		json_decref(ev);
		return (ws->rv == NULL);
	}
	del = strcmp(type, "DELETED") == 0;
	if (!del && strcmp(type, "ADDED") != 0 &&
	    strcmp(type, "MODIFIED") != 0) {
		json_decref(ev);
		return (0);
	}
	if (!ours(ws->st, obj)) {
		json_decref(ev);
		return (0);
	}
	if (conv_parse_slice(ctl->version, obj, &r, ws->error,
	    sizeof(ws->error)) != 0) {
		log_warnx("resourceslices: watch %s: %s", type, ws->error);
		ws->error[0] = '\0';
		json_decref(ev);
		return (0);
	}
	log_info(3, "resourceslices: %s %s (pool %s, RV %s)", type, r.name,
	    r.pool, r.rv);
	pthread_mutex_lock(&ctl->lock);
	if ((pool = strdup(r.pool)) != NULL) {
		cache_put(ctl, &r, del, 0, ws->st->id);
		sl_schedule(ctl, pool, ctl->sync_delay_ms);
		free(pool);
	} else
		conv_rec_free(&r);
	pthread_mutex_unlock(&ctl->lock);
	json_decref(ev);
	return (ws->rv == NULL);
}

static char *
watch_path(struct sl_stream *st, const char *rv)
{
	struct slice_ctl *ctl = st->ctl;
	char		*path, *erv;
	unsigned int	 seed = (unsigned int)time(NULL) ^
			    (unsigned int)(uintptr_t)ctl;
	int		 timeout = 300 + (int)(rand_r(&seed) % 300);

	if ((erv = http_escape(rv)) == NULL)
		return (NULL);
	if (asprintf(&path, "/apis/%s/resourceslices?allowWatchBookmarks=true"
	    "&fieldSelector=%s&resourceVersion=%s&timeoutSeconds=%d&watch=true",
	    conv_api_version(ctl->version), st->field_selector, erv,
	    timeout) == -1)
		path = NULL;
	free(erv);
	return (path);
}

void *
sl_watch_main(void *arg)
{
	struct sl_stream	*st = arg;
	struct slice_ctl	*ctl = st->ctl;
	struct watch_state	 ws;
	char			 err[KP_ERROR_SIZE];
	char			*path;
	int			 need_list = 1, backoff = 0, rc;

	memset(&ws, 0, sizeof(ws));
	ws.ctl = ctl;
	ws.st = st;
	while (!sl_stopping(ctl)) {
		if (need_list) {
			rc = do_list(st, &ws.rv, err, sizeof(err));
			if (rc != 0) {
				sl_set_error(ctl, "%s", err);
				backoff = backoff == 0 ?
				    SL_WATCH_BACKOFF_MIN_MS : backoff * 2;
				if (backoff > SL_WATCH_BACKOFF_MAX_MS)
					backoff = SL_WATCH_BACKOFF_MAX_MS;
				if (sl_wait_ms(ctl, backoff))
					break;
				continue;
			}
			need_list = 0;
		}
		if ((path = watch_path(st, ws.rv)) == NULL) {
			if (sl_wait_ms(ctl, SL_WATCH_BACKOFF_MAX_MS))
				break;
			continue;
		}
		ws.events = ws.expired = ws.failed = 0;
		ws.error[0] = '\0';
		log_info(3, "resourceslices: watch from RV %s", ws.rv);
		rc = http_watch(ctl->http, path, watch_line, &ws, &ctl->stop,
		    err, sizeof(err));
		free(path);
		if (sl_stopping(ctl))
			break;
		if (ws.events > 0)
			backoff = 0;
		if (ws.events > 0 || (rc == 0 && !ws.failed))
			sl_clear_error(ctl, "list and watch work");
		if (ws.expired || rc == 410) {
			log_info(1, "resourceslices: %s: re-listing",
			    ws.error[0] ? ws.error : "watch expired (410)");
			need_list = 1;
			continue;
		}
		if (rc == 0 && !ws.failed && ws.rv != NULL)
			continue;	/* clean end: resume from ws.rv */
		/* A watch cut off (a server restart, a load balancer) is
		 * no fault yet: only if the re-LIST fails too, its error is
		 * the warning, naming the cause. */
		if (ws.error[0] != '\0')
			sl_set_error(ctl, "%s", ws.error);
		else if (rc == KP_EIO || rc == KP_ETIMEDOUT)
			log_info(1, "resourceslices: watch: %s; re-listing",
			    err);
		else
			sl_set_error(ctl, "watch: %s", err[0] ? err :
			    "failed");
		backoff = backoff == 0 ? SL_WATCH_BACKOFF_MIN_MS :
		    backoff * 2;
		if (backoff > SL_WATCH_BACKOFF_MAX_MS)
			backoff = SL_WATCH_BACKOFF_MAX_MS;
		need_list = 1;
		if (sl_wait_ms(ctl, backoff))
			break;
	}
	free(ws.rv);
	return (NULL);
}
