/*
 * fuzz_slice_json.c - libFuzzer target for the publisher's decoders of
 * ResourceSlice JSON from the API server (convert.c, the cache of
 * slices_watch.c): each line of the input is taken as the informer takes
 * it, for each API version:
 *  - a watch event {type, object}: ERROR gives a Status message
 *    (conv_status_message), ADDED and MODIFIED a cache entry
 *    (conv_parse_slice through sl_cache_own), DELETED a tombstone
 *    (sl_cache_gone);
 *  - a ResourceSliceList {items}: each item through conv_parse_slice;
 *  - anything else: one stored object, as a create or update returns it.
 * The whole input is also an error body for conv_status_message().
 * Invariants checked (trap on a breach):
 *  - a parsed record is complete: every string set, devices counted and
 *    their names sorted, the neutral form has pool and devices; a copy
 *    (conv_rec_copy) equals it; a failed parse leaves it zeroed with a
 *    NUL-terminated reason;
 *  - the neutral form does not depend on the version's shape: a v1 spec
 *    and the same spec with each device's fields under "basic" (v1beta1)
 *    compare equal;
 *  - sl_cache_pool() returns the live entries of a pool sorted by name.
 * Run: ./tests/fuzz/fuzz_slice_json -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "publisher/slices.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
}

static void
check_rec(const struct slice_rec *r)
{
	struct slice_rec	 c;
	size_t			 i;

	if (r->name == NULL || r->uid == NULL || r->rv == NULL ||
	    r->pool == NULL || r->neutral == NULL || r->metadata == NULL ||
	    !json_is_object(json_object_get(r->neutral, "pool")) ||
	    !json_is_array(json_object_get(r->neutral, "devices")))
		__builtin_trap();
	for (i = 1; i < r->n_dev_names; i++)
		if (strcmp(r->dev_names[i - 1], r->dev_names[i]) > 0)
			__builtin_trap();
	if (conv_rec_copy(r, &c) != 0)
		return;
	if (strcmp(c.name, r->name) != 0 || strcmp(c.rv, r->rv) != 0 ||
	    c.n_dev_names != r->n_dev_names ||
	    !json_equal(c.neutral, r->neutral) ||
	    !json_equal(c.metadata, r->metadata))
		__builtin_trap();
	for (i = 0; i < c.n_dev_names; i++)
		if (strcmp(c.dev_names[i], r->dev_names[i]) != 0)
			__builtin_trap();
	conv_rec_free(&c);
}

/* conv_parse_slice() and the record's invariants. */
static void
parse(enum kube_version v, const json_t *o)
{
	struct slice_rec	 r;
	const json_t		*devs;
	char			 err[KP_ERROR_SIZE];
	size_t			 i;

	memset(err, 'x', sizeof(err));
	if (conv_parse_slice(v, o, &r, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL)
			__builtin_trap();
		for (i = 0; i < sizeof(r); i++)
			if (((const unsigned char *)&r)[i] != 0)
				__builtin_trap();
		return;
	}
	devs = json_object_get(json_object_get(o, "spec"), "devices");
	if (r.n_dev_names != json_array_size(devs))
		__builtin_trap();
	check_rec(&r);
	conv_rec_free(&r);
}

/* spec with every device's fields but its name moved under "basic". */
static json_t *
nest_basic(const json_t *spec)
{
	json_t		*s, *devs, *d, *nd, *basic, *x;
	const char	*k;
	size_t		 i;

	if ((s = json_deep_copy(spec)) == NULL)
		return (NULL);
	devs = json_object_get(s, "devices");
	json_array_foreach(devs, i, d) {
		if (!json_is_object(d))
			continue;
		nd = json_object();
		basic = json_object();
		if (nd == NULL || basic == NULL) {
			json_decref(nd);
			json_decref(basic);
			json_decref(s);
			return (NULL);
		}
		json_object_foreach(d, k, x) {
			if (strcmp(k, "name") == 0)
				json_object_set(nd, k, x);
			else
				json_object_set(basic, k, x);
		}
		json_object_set_new(nd, "basic", basic);
		json_array_set_new(devs, i, nd);
	}
	return (s);
}

static void
shapes(const json_t *o)
{
	const json_t	*spec = json_object_get(o, "spec");
	json_t		*nested, *a, *b;

	if (!json_is_object(spec) || (nested = nest_basic(spec)) == NULL)
		return;
	a = conv_neutral_spec(KUBE_V1, spec);
	b = conv_neutral_spec(KUBE_V1BETA1, nested);
	if (a != NULL && b != NULL && !json_equal(a, b))
		__builtin_trap();
	json_decref(a);
	json_decref(b);
	json_decref(nested);
}

static void
pool_sorted(struct slice_ctl *ctl, const char *pool)
{
	struct slice_rec	*v;
	size_t			 i, n;

	if (sl_cache_pool(ctl, pool, &v, &n) != 0)
		return;
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].pool, pool) != 0 ||
		    (i > 0 && strcmp(v[i - 1].name, v[i].name) > 0))
			__builtin_trap();
		check_rec(&v[i]);
	}
	for (i = 0; i < n; i++)
		conv_rec_free(&v[i]);
	free(v);
}

/* One line as the informer takes it. */
static void
line(struct slice_ctl *ctl, const json_t *j)
{
	const json_t	*obj, *items, *it, *meta;
	const char	*type, *name, *pool;
	char		*m;
	size_t		 i;

	type = json_string_value(json_object_get(j, "type"));
	obj = json_object_get(j, "object");
	items = json_object_get(j, "items");
	if (type != NULL && json_is_object(obj)) {
		if (strcmp(type, "ERROR") == 0) {
			m = conv_status_message(NULL, (long)json_integer_value(
			    json_object_get(obj, "code")));
			if (m == NULL || m[0] == '\0')
				__builtin_trap();
			free(m);
			return;
		}
		meta = json_object_get(obj, "metadata");
		(void)sl_rv_parse(json_string_value(json_object_get(meta,
		    "resourceVersion")));
		parse(ctl->version, obj);
		sl_cache_own(ctl, obj);
		name = json_string_value(json_object_get(meta, "name"));
		if (strcmp(type, "DELETED") == 0 && name != NULL)
			sl_cache_gone(ctl, name, json_string_value(
			    json_object_get(meta, "resourceVersion")));
		pool = json_string_value(json_object_get(json_object_get(
		    json_object_get(obj, "spec"), "pool"), "name"));
		if (pool != NULL)
			pool_sorted(ctl, pool);
		return;
	}
	if (json_is_array(items)) {
		json_array_foreach(items, i, it)
			parse(ctl->version, it);
		return;
	}
	parse(ctl->version, j);
	sl_cache_own(ctl, j);
	if (ctl->version == KUBE_V1)
		shapes(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct slice_ctl	 ctl[3];
	const uint8_t		*p, *nl, *end = data + size;
	json_t			*j;
	char			*s, *m;
	int			 v;

	if (!ready) {
		log_init(100, silent, NULL);
		ready = 1;
	}
	memset(ctl, 0, sizeof(ctl));
	for (v = 0; v < 3; v++) {
		ctl[v].version = (enum kube_version)v;
		ctl[v].node = "node-1";
		pthread_mutex_init(&ctl[v].lock, NULL);
	}
	for (p = data; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((j = json_loadb((const char *)p, (size_t)(nl - p), 0,
		    NULL)) == NULL)
			continue;
		for (v = 0; v < 3; v++)
			line(&ctl[v], j);
		json_decref(j);
	}
	for (v = 0; v < 3; v++) {
		sl_cache_free(&ctl[v]);
		pthread_mutex_destroy(&ctl[v].lock);
	}
	if ((s = malloc(size + 1)) == NULL)
		return (0);
	memcpy(s, data, size);
	s[size] = '\0';
	if ((m = conv_status_message(s, 409)) == NULL || m[0] == '\0')
		__builtin_trap();
	free(m);
	free(s);
	return (0);
}
