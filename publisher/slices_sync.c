/*
 * slices_sync.c - upstream's syncPool (resourceslice v0.36/v0.37) for one
 * pool: delete obsolete slices first, then update changed ones (PUT with
 * the cached resourceVersion), then create the missing ones (POST with the
 * Node as controller owner).
 *
 * Names carry the slice's index in the pool (v0.36, PR #136641): the
 * generateName is "<index>-<driver>-<node>-", the index in lower-case hex,
 * zero-padded to max(5, hex digits of n-1), so the allocator's sort by name
 * follows the driver's order of slices. A current slice matches the desired
 * slice its name's index points at; a name without a valid index of the
 * current width (random names of older versions included: replaced once),
 * an index out of range or taken, a slice of an older pool generation and
 * one whose node locality differs (spec.nodeName is immutable) are
 * obsolete. Generation: the driver's if higher; kept when nothing is
 * created and at most one slice changes; else bumped, and then every
 * matched slice is rewritten. A pool with no slices is published as one
 * empty slice ("an empty pool" is not "no pool").
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "publisher/slices.h"

static const Kpipc__Slice empty_slice = KPIPC__SLICE__INIT;

struct req {
	struct http_response	 resp;
	json_t			*obj;		/* parsed 2xx body */
	char			 err[KP_ERROR_SIZE];
};

/*
 * One request; JSON body optional. Returns the HTTP status (0: transport
 * error), with r->err filled for anything but 2xx.
 */
static long
request(struct slice_ctl *ctl, const char *method, const char *path,
    const json_t *body, struct req *r, long *retry_ms)
{
	char	*text = NULL, *m;
	long	 st;
	int	 rc;

	memset(r, 0, sizeof(*r));
	if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return (0);
	}
	rc = http_request(ctl->http, method, path, text, HTTP_MAX_OBJECT,
	    &r->resp);
	free(text);
	st = r->resp.status;
	if (r->resp.retry_after_s > 0 && retry_ms != NULL &&
	    r->resp.retry_after_s * 1000 > *retry_ms)
		*retry_ms = r->resp.retry_after_s * 1000;
	if (st == 0) {
		snprintf(r->err, sizeof(r->err), "%s", r->resp.error[0] ?
		    r->resp.error : kp_strerror(rc));
		return (0);
	}
	if (st >= 200 && st < 300) {
		r->obj = json_loads(r->resp.body != NULL ? r->resp.body : "",
		    0, NULL);
		return (st);
	}
	m = conv_status_message(r->resp.body, st);
	snprintf(r->err, sizeof(r->err), "%s", m != NULL ? m : "error");
	free(m);
	/* A Forbidden is a configuration problem: retry slowly, but not
	 * a minute after an administrator fixed the RBAC rules: the
	 * per-pool backoff doubles from SL_FORBIDDEN_RETRY_MS on. */
	if (st == 403 && retry_ms != NULL && *retry_ms < SL_FORBIDDEN_RETRY_MS)
		*retry_ms = SL_FORBIDDEN_RETRY_MS;
	return (st);
}

static void
req_free(struct req *r)
{
	http_response_free(&r->resp);
	json_decref(r->obj);
}

/* The Node's UID for the owner reference, looked up once. */
static int
node_uid(struct slice_ctl *ctl, long *retry_ms)
{
	struct req	 r;
	char		*path, *n;
	const char	*uid;
	long		 st;

	if (ctl->node_uid != NULL)
		return (0);
	if ((n = http_escape(ctl->node)) == NULL)
		return (KP_ENOMEM);
	if (asprintf(&path, "/api/v1/nodes/%s", n) == -1) {
		free(n);
		return (KP_ENOMEM);
	}
	free(n);
	st = request(ctl, "GET", path, NULL, &r, retry_ms);
	free(path);
	uid = json_string_value(json_object_get(json_object_get(r.obj,
	    "metadata"), "uid"));
	if (st != 200 || uid == NULL || *uid == '\0') {
		/* A 404 is most often a wrong name: say where it came from. */
		sl_set_error(ctl, "get node %s: %s%s", ctl->node,
		    st == 200 ? "no metadata.uid" : r.err, st == 404 ?
		    " (no Node of that name: check kp_node_name(), e.g. the "
		    "NODE_NAME the driver passes)" : "");
		req_free(&r);
		return (KP_EKUBE);
	}
	ctl->node_uid = strdup(uid);
	req_free(&r);
	if (ctl->node_uid == NULL)
		return (KP_ENOMEM);
	log_info(2, "resourceslices: node %s has UID %s", ctl->node,
	    ctl->node_uid);
	return (0);
}

static char *
slice_path(struct slice_ctl *ctl, const char *name)
{
	char	*path, *n = NULL;

	if (name != NULL && (n = http_escape(name)) == NULL)
		return (NULL);
	if (asprintf(&path, "/apis/%s/resourceslices%s%s",
	    conv_api_version(ctl->version), n != NULL ? "/" : "",
	    n != NULL ? n : "") == -1)
		path = NULL;
	free(n);
	return (path);
}

static void
count(struct slice_ctl *ctl, uint64_t *c)
{
	pthread_mutex_lock(&ctl->lock);
	(*c)++;
	pthread_mutex_unlock(&ctl->lock);
}

static int
delete_slice(struct slice_ctl *ctl, const struct slice_rec *s,
    long *retry_ms)
{
	struct req	 r;
	json_t		*opts;
	char		*path;
	const char	*rv;
	long		 st;

	if ((path = slice_path(ctl, s->name)) == NULL ||
	    (opts = conv_delete_options(s->uid, s->rv)) == NULL) {
		free(path);
		return (KP_ENOMEM);
	}
	st = request(ctl, "DELETE", path, opts, &r, retry_ms);
	free(path);
	json_decref(opts);
	if (st == 200 || st == 202 || st == 404) {
		rv = json_string_value(json_object_get(json_object_get(r.obj,
		    "metadata"), "resourceVersion"));
		sl_cache_gone(ctl, s->name, rv);
		if (st != 404)
			count(ctl, &ctl->stats.deletes);
		log_info(2, "resourceslices: deleted %s (pool %s)%s", s->name,
		    s->pool, st == 404 ? ": already gone" : "");
		req_free(&r);
		return (0);
	}
	sl_set_error(ctl, "delete %s (pool %s): %s", s->name, s->pool,
	    r.err);
	req_free(&r);
	return (KP_EKUBE);
}

#define SL_DROPPED_MAX	256	/* remembered dropped-field writes */

/*
 * After a create or update: did the server store what we sent? If it
 * dropped fields (a feature gate off: upstream's DroppedFieldsError),
 * report the gates once and remember the stored form as what this
 * desired state looks like on this server, so that changed() stops
 * rewriting it (otherwise: one write per sync, forever).
 */
static void
check_stored(struct slice_ctl *ctl, const struct conv_slice *cs,
    const json_t *sent, const json_t *stored)
{
	json_t	*want, *got, *e;
	char	 gates[160], msg[KP_ERROR_SIZE * 2];

	want = conv_neutral_spec(ctl->version, sent);
	got = conv_neutral_spec(ctl->version, json_object_get(stored,
	    "spec"));
	if (want != NULL && got != NULL &&
	    conv_dropped_fields(want, got, gates, sizeof(gates))) {
		snprintf(msg, sizeof(msg), "pool %s, slice %s: some fields "
		    "were dropped by the apiserver, probably because these "
		    "features are disabled: %s", cs->pool,
		    json_string_value(json_object_get(json_object_get(stored,
		    "metadata"), "name")), gates);
		if (ctl->dropped == NULL)
			ctl->dropped = json_array();
		if (json_array_size(ctl->dropped) >= SL_DROPPED_MAX)
			json_array_remove(ctl->dropped, 0);
		e = json_pack("{sO sO ss}", "want", want, "got", got, "msg",
		    msg);
		if (ctl->dropped != NULL && e != NULL)
			json_array_append_new(ctl->dropped, e);
		sl_set_sticky(ctl, "%s", msg);
	}
	json_decref(want);
	json_decref(got);
}

/* The stored form a dropped-fields write gave for desired neutral n. */
static const json_t *
dropped_as(struct slice_ctl *ctl, const json_t *n)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(ctl->dropped, i, e)
		if (json_equal(json_object_get(e, "want"), n)) {
			/* Shown again, not logged again: reported once. */
			pthread_mutex_lock(&ctl->lock);
			snprintf(ctl->sticky, sizeof(ctl->sticky), "%s",
			    json_string_value(json_object_get(e, "msg")));
			memcpy(ctl->stats.last_error, ctl->sticky,
			    sizeof(ctl->sticky));
			pthread_mutex_unlock(&ctl->lock);
			return (json_object_get(e, "got"));
		}
	return (NULL);
}

/*
 * Create (cur NULL: POST with generateName gen) or update (PUT of cur) one
 * slice.
 */
static int
write_slice(struct slice_ctl *ctl, const struct conv_slice *cs,
    const struct slice_rec *cur, const char *gen, long *retry_ms)
{
	struct req	 r;
	json_t		*obj, *owner = NULL;
	char		*path;
	long		 st;

	if (cur != NULL) {
		/* PUT the cached object: its metadata carries the RV. */
		json_t *spec = conv_slice_spec(ctl->version, cs);

		if (spec != NULL)
			conv_adopt_taint_times(ctl->version, spec,
			    cur->neutral);
		obj = json_pack("{ss ss sO so*}", "apiVersion",
		    conv_api_version(ctl->version), "kind", "ResourceSlice",
		    "metadata", cur->metadata, "spec", spec);
		path = slice_path(ctl, cur->name);
	} else {
		owner = conv_owner_ref(ctl->node, ctl->node_uid);
		obj = owner == NULL ? NULL : conv_slice_object(ctl->version,
		    cs, owner, gen, NULL);
		path = slice_path(ctl, NULL);
	}
	json_decref(owner);
	if (obj == NULL || path == NULL ||
	    json_object_get(obj, "spec") == NULL) {
		json_decref(obj);
		free(path);
		return (KP_ENOMEM);
	}
	st = request(ctl, cur != NULL ? "PUT" : "POST", path, obj, &r,
	    retry_ms);
	free(path);
	if ((cur != NULL && st == 200) || (cur == NULL && (st == 201 ||
	    st == 200))) {
		if (r.obj != NULL) {
			sl_cache_own(ctl, r.obj);
			check_stored(ctl, cs, json_object_get(obj, "spec"),
			    r.obj);
		}
		json_decref(obj);
		count(ctl, cur != NULL ? &ctl->stats.updates :
		    &ctl->stats.creates);
		log_info(2, "resourceslices: %s %s (pool %s, generation %lld, "
		    "%zu devices)", cur != NULL ? "updated" : "created",
		    json_string_value(json_object_get(json_object_get(r.obj,
		    "metadata"), "name")), cs->pool, (long long)cs->generation,
		    cs->n_devices);
		req_free(&r);
		return (0);
	}
	json_decref(obj);
	sl_set_error(ctl, "%s slice in pool %s: %s", cur != NULL ? "update" :
	    "create", cs->pool, r.err);
	req_free(&r);
	return (KP_EKUBE);
}

/*
 * The width of the index prefix for a pool of n slices: the hex digits of
 * n - 1, at least SL_INDEX_MIN (upstream getIndexLength).
 */
static int
index_width(size_t n)
{
	char	buf[32];
	int	w;

	w = snprintf(buf, sizeof(buf), "%zx", n > 0 ? n - 1 : 0);
	return (w > SL_INDEX_MIN ? w : SL_INDEX_MIN);
}

/*
 * The index a slice name starts with: exactly width hex digits, then '-'
 * (upstream decodeIndex). -1: no such prefix (a random name of an older
 * version, or one written for another number of slices).
 */
static ssize_t
index_of(const char *name, int width)
{
	const char	*dash = strchr(name, '-');
	size_t		 v = 0;
	int		 i, c;

	if (dash == NULL || dash - name != width || width > 15)
		return (-1);
	for (i = 0; i < width; i++) {
		c = (unsigned char)name[i];
		if (!isxdigit(c))
			return (-1);
		v = v * 16 + (size_t)(isdigit(c) ? c - '0' :
		    tolower(c) - 'a' + 10);
	}
	return ((ssize_t)v);
}

/* Does the stored slice differ from what we want (pool fields included)? */
static int
changed(struct slice_ctl *ctl, const struct conv_slice *cs,
    const struct slice_rec *s)
{
	const json_t	*as;
	json_t		*spec, *n;
	int		 diff;

	if ((spec = conv_slice_spec(ctl->version, cs)) == NULL)
		return (1);
	conv_adopt_taint_times(ctl->version, spec, s->neutral);
	n = conv_neutral_spec(ctl->version, spec);
	json_decref(spec);
	if (n != NULL && (as = dropped_as(ctl, n)) != NULL)
		diff = !json_equal(as, s->neutral);
	else
		diff = n == NULL || !json_equal(n, s->neutral);
	json_decref(n);
	return (diff);
}

/*
 * Sync one pool; dp NULL: no longer desired (delete its slices). Returns 0
 * or an error (recorded with sl_set_error); *retry_ms may ask for a
 * minimum delay before the retry.
 */
int
sl_sync_pool(struct slice_ctl *ctl, const char *pool, const Kpipc__Pool *dp,
    long *retry_ms)
{
	struct slice_rec	 *cur = NULL;
	const Kpipc__Slice	**want = NULL;
	struct conv_slice	  cs;
	size_t			  n_cur = 0, n_want, i, j, n_new = 0;
	size_t			  n_changed = 0;
	ssize_t			 *match = NULL;	/* desired -> cur index */
	int			 *obsolete = NULL, *chg = NULL, bumped = 0;
	int			  rc, node_local, *local = NULL, width;
	int64_t			  gen = 0;
	char			 *gen_name;
	char			  why[KP_ERROR_SIZE];

	/* Fields the served version lacks: refused, not dropped, and not
	 * retried (a new kp_publish_resources() call schedules it again). */
	if (dp != NULL && conv_check_version(ctl->version, dp, why,
	    sizeof(why)) != 0) {
		sl_set_sticky(ctl, "%s", why);
		return (0);
	}
	if ((rc = sl_cache_pool(ctl, pool, &cur, &n_cur)) != 0)
		return (rc);
	log_info(3, "resourceslices: sync pool %s: %zu current, %s", pool,
	    n_cur, dp != NULL ? "desired" : "not desired");
	n_want = dp == NULL ? 0 : (dp->n_slices > 0 ? dp->n_slices : 1);
	obsolete = calloc(n_cur + 1, sizeof(int));
	chg = calloc(n_want + 1, sizeof(int));
	match = calloc(n_want + 1, sizeof(ssize_t));
	want = calloc(n_want + 1, sizeof(*want));
	local = calloc(n_want + 1, sizeof(int));
	if (obsolete == NULL || chg == NULL || match == NULL ||
	    want == NULL || local == NULL) {
		rc = KP_ENOMEM;
		goto done;
	}
	for (i = 0; i < n_want; i++) {
		want[i] = dp->n_slices > 0 ? dp->slices[i] : &empty_slice;
		match[i] = -1;
	}
	/* spec.nodeName is immutable: a slice only ever matches a desired
	 * slice of the same node locality. With ReconcilePoolWithName no
	 * slice has a node name. */
	node_local = dp != NULL && dp->node_selector == NULL &&
	    !dp->all_nodes && ctl->reconcile_pool == NULL;
	for (i = 0; i < n_want; i++)
		local[i] = node_local && !want[i]->per_device_node_selection;

	/* Generation: the highest stored one; older slices are obsolete. */
	for (i = 0; i < n_cur; i++)
		if (cur[i].generation > gen)
			gen = cur[i].generation;

	/* Matching by the index in the name; the first slice (by name)
	 * claiming an index gets it. */
	width = index_width(n_want);
	for (i = 0; i < n_cur; i++) {
		ssize_t	k = index_of(cur[i].name, width);

		obsolete[i] = dp == NULL || cur[i].generation < gen ||
		    k < 0 || (size_t)k >= n_want || match[k] >= 0 ||
		    local[k] != cur[i].node_local;
		if (!obsolete[i])
			match[k] = (ssize_t)i;
		else
			log_info(3, "resourceslices: pool %s: %s is obsolete",
			    pool, cur[i].name);
	}

	/* Delete obsolete slices first (1.34+). */
	for (i = 0; i < n_cur; i++)
		if (obsolete[i] && (rc = delete_slice(ctl, &cur[i],
		    retry_ms)) != 0)
			goto done;
	if (dp == NULL)
		goto done;

	memset(&cs, 0, sizeof(cs));
	cs.driver = ctl->driver;
	cs.node = dp->node_selector == NULL && ctl->reconcile_pool == NULL ?
	    ctl->node : NULL;
	cs.selector = dp->node_selector;
	cs.all_nodes = dp->all_nodes;
	cs.pool = pool;
	cs.count = (int64_t)n_want;
	cs.generation = gen;
	for (j = 0; j < n_want; j++) {
		if (match[j] < 0) {
			n_new++;
			continue;
		}
		cs.slice = want[j];
		cs.devices = want[j]->devices;
		cs.n_devices = want[j]->n_devices;
		if ((chg[j] = changed(ctl, &cs, &cur[match[j]])))
			n_changed++;
	}
	if (dp->generation > gen) {
		gen = dp->generation;
		bumped = 1;
	} else if (n_new > 0 || n_changed > 1) {
		gen++;
		bumped = 1;
	}
	cs.generation = gen;

	for (j = 0; j < n_want; j++) {
		if (match[j] < 0 || (!bumped && !chg[j]))
			continue;
		cs.slice = want[j];
		cs.devices = want[j]->devices;
		cs.n_devices = want[j]->n_devices;
		if ((rc = write_slice(ctl, &cs, &cur[match[j]], NULL,
		    retry_ms)) != 0)
			goto done;
	}
	if (n_new > 0 && (rc = node_uid(ctl, retry_ms)) != 0)
		goto done;
	for (j = 0; j < n_want; j++) {
		if (match[j] >= 0)
			continue;
		cs.slice = want[j];
		cs.devices = want[j]->devices;
		cs.n_devices = want[j]->n_devices;
		/* upstream: <index>-<driver>-<owner>-, the owner being the
		 * Node here; the server appends 5 random characters. */
		if (asprintf(&gen_name, "%0*zx-%s-%s-", width, j, ctl->driver,
		    ctl->node) == -1) {
			rc = KP_ENOMEM;
			goto done;
		}
		rc = write_slice(ctl, &cs, NULL, gen_name, retry_ms);
		free(gen_name);
		gen_name = NULL;
		if (rc != 0)
			goto done;
	}
done:
	for (i = 0; i < n_cur; i++)
		conv_rec_free(&cur[i]);
	free(cur);
	free(obsolete);
	free(chg);
	free(match);
	free(want);
	free(local);
	return (rc);
}
