/*
 * claim_info.c - kp_claim_info(): everything about a claim of a running
 * hook call, built on first use from the claim's JSON (the publisher's
 * ClaimReply.claim_json) in the nodeserver. Runs in the nodeserver, with
 * the driver's hooks: the JSON comes from the publisher through the
 * supervisor and is read as hostile (a wrong type is an absent field, a
 * list is bounded by what the API server allows).
 *
 * Why a registry of running calls and not a pointer in struct kp_claim:
 * that struct is read by stride in drivers compiled against the first
 * release, so it cannot grow; the claim's address inside its call's array
 * is what finds its info, from any thread while the hook runs.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "base/quantity.h"
#include "nodeserver/dra.h"

static pthread_mutex_t	 ci_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 ci_cond = PTHREAD_COND_INITIALIZER;
static struct ci_call	*ci_calls;	/* running hook calls, under ci_lock */

/* n bytes from the arena, zeroed; NULL when out of memory. */
static void *
ci_alloc(struct dra_arena_chunk **ar, size_t n)
{
	void	*p;

	if ((p = dra_arena_alloc(ar, n)) != NULL)
		memset(p, 0, n);
	return (p);
}

/* v as compact JSON text in the arena. */
static const char *
ci_dump(struct dra_arena_chunk **ar, const json_t *v)
{
	char	*s, *d;
	size_t	 n;

	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return (NULL);
	n = strlen(s) + 1;
	if ((d = dra_arena_alloc(ar, n)) != NULL)
		memcpy(d, s, n);
	free(s);
	return (d);
}

static const char *
ci_str(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return (s != NULL ? s : "");
}

/* A list of n pointers (n + 1, NULL-terminated); NULL when out of memory. */
static void *
ci_ptrs(struct dra_arena_chunk **ar, size_t n)
{
	if (n >= SIZE_MAX / sizeof(void *))
		return (NULL);
	return (ci_alloc(ar, (n + 1) * sizeof(void *)));
}

/* The strings of array a ("" for a non-string element). */
static int
ci_strings(struct dra_arena_chunk **ar, const json_t *a, const char *const **out,
    size_t *n)
{
	const char	**v;
	const json_t	 *x;
	size_t		  i, m = json_array_size(a);

	*n = 0;
	*out = NULL;
	if (m == 0)
		return (0);
	if ((v = ci_ptrs(ar, m)) == NULL)
		return (KP_ENOMEM);
	for (i = 0; i < m; i++) {
		x = json_array_get(a, i);
		v[i] = json_string_value(x) != NULL ? json_string_value(x) : "";
	}
	*out = v;
	*n = m;
	return (0);
}

/* An object's members as key/value pairs (string values only). */
static int
ci_pairs(struct dra_arena_chunk **ar, const json_t *o,
    const struct kp_key_value *const **out, size_t *n)
{
	const struct kp_key_value	**v;
	struct kp_key_value		 *kv;
	const char			 *k;
	json_t				 *x;
	size_t				  m = 0;

	*n = 0;
	*out = NULL;
	if (json_object_size(o) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_object_size(o))) == NULL)
		return (KP_ENOMEM);
	json_object_foreach((json_t *)o, k, x) {
		if (!json_is_string(x))
			continue;
		if ((kv = ci_alloc(ar, sizeof(*kv))) == NULL)
			return (KP_ENOMEM);
		kv->struct_size = sizeof(*kv);
		kv->key = k;
		kv->value = json_string_value(x);
		v[m++] = kv;
	}
	*out = v;
	*n = m;
	return (0);
}

static int
ci_tolerations(struct dra_arena_chunk **ar, const json_t *a,
    struct kp_claim_result *r)
{
	const struct kp_toleration	**v;
	struct kp_toleration		 *t;
	const json_t			 *e, *s;
	size_t				  i;

	if (json_array_size(a) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_array_size(a))) == NULL)
		return (KP_ENOMEM);
	json_array_foreach(a, i, e) {
		if ((t = ci_alloc(ar, sizeof(*t))) == NULL)
			return (KP_ENOMEM);
		t->struct_size = sizeof(*t);
		t->key = ci_str(e, "key");
		t->operator_ = ci_str(e, "operator");
		t->value = ci_str(e, "value");
		t->effect = ci_str(e, "effect");
		s = json_object_get(e, "tolerationSeconds");
		if (json_is_integer(s)) {
			t->has_toleration_seconds = 1;
			t->toleration_seconds = json_integer_value(s);
		}
		v[i] = t;
	}
	r->tolerations = v;
	r->n_tolerations = json_array_size(a);
	return (0);
}

/* Quantity q scaled: value, or INT64_MAX/MIN (overflow set) beyond, or
 * 0 (invalid set) for no quantity. */
static int64_t
ci_scaled(const char *q, int milli, int *overflow, int *invalid)
{
	int64_t	v;
	int	r;

	if ((r = qty_value_scaled(q, milli ? 3 : 0, &v)) == 0)
		return (v);
	if (r != KP_ENOTSUP) {
		*invalid = 1;
		return (0);
	}
	*overflow = 1;
	return (q[0] == '-' ? INT64_MIN : INT64_MAX);
}

static int
ci_capacity(struct dra_arena_chunk **ar, const json_t *o, struct kp_claim_result *r)
{
	const struct kp_capacity_quantity	**v;
	struct kp_capacity_quantity		 *c;
	const char				 *k;
	json_t					 *x;
	size_t					  m = 0;

	if (json_object_size(o) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_object_size(o))) == NULL)
		return (KP_ENOMEM);
	json_object_foreach((json_t *)o, k, x) {
		if (!json_is_string(x))
			continue;
		if ((c = ci_alloc(ar, sizeof(*c))) == NULL)
			return (KP_ENOMEM);
		c->struct_size = sizeof(*c);
		c->name = k;
		c->quantity = json_string_value(x);
		c->value = ci_scaled(c->quantity, 0, &c->overflow,
		    &c->invalid);
		c->milli_value = ci_scaled(c->quantity, 1, &c->milli_overflow,
		    &c->invalid);
		v[m++] = c;
	}
	r->consumed_capacity = v;
	r->n_consumed_capacity = m;
	return (0);
}

/* One allocation result e (index i of every driver's) into r. */
static int
ci_result(struct dra_arena_chunk **ar, const json_t *e, size_t i,
    struct kp_claim_result *r)
{
	const char	*slash;
	char		*b;
	size_t		 len;
	int		 rc;

	r->struct_size = sizeof(*r);
	r->index = i;
	r->request = ci_str(e, "request");
	r->driver = ci_str(e, "driver");
	r->pool = ci_str(e, "pool");
	r->device = ci_str(e, "device");
	r->admin_access = json_is_true(json_object_get(e, "adminAccess"));
	r->share_id = json_string_value(json_object_get(e, "shareID"));
	r->base_request = r->request;
	if ((slash = strchr(r->request, '/')) != NULL) {
		len = (size_t)(slash - r->request);
		if ((b = ci_alloc(ar, len + 1)) == NULL)
			return (KP_ENOMEM);
		memcpy(b, r->request, len);
		r->base_request = b;
		r->subrequest = slash + 1;
	}
	if ((rc = ci_tolerations(ar, json_object_get(e, "tolerations"),
	    r)) != 0 ||
	    (rc = ci_capacity(ar, json_object_get(e, "consumedCapacity"),
	    r)) != 0 ||
	    (rc = ci_strings(ar, json_object_get(e, "bindingConditions"),
	    &r->binding_conditions, &r->n_binding_conditions)) != 0 ||
	    (rc = ci_strings(ar, json_object_get(e,
	    "bindingFailureConditions"), &r->binding_failure_conditions,
	    &r->n_binding_failure_conditions)) != 0)
		return (rc);
	return (0);
}

static int
ci_results(struct dra_arena_chunk **ar, const json_t *a, const char *driver,
    struct kp_claim_info *ci)
{
	const struct kp_claim_result	**v;
	struct kp_claim_result		 *r;
	const json_t			 *e;
	size_t				  i, m = 0;
	int				  rc;

	if (json_array_size(a) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_array_size(a))) == NULL)
		return (KP_ENOMEM);
	json_array_foreach(a, i, e) {
		if (strcmp(ci_str(e, "driver"), driver) != 0)
			continue;
		if ((r = ci_alloc(ar, sizeof(*r))) == NULL)
			return (KP_ENOMEM);
		if ((rc = ci_result(ar, e, i, r)) != 0)
			return (rc);
		if (r->share_id != NULL)
			ci->absent &= ~KP_CLAIM_ABSENT_SHARE_ID;
		if (r->n_consumed_capacity > 0)
			ci->absent &= ~KP_CLAIM_ABSENT_CONSUMED_CAPACITY;
		if (r->n_tolerations > 0)
			ci->absent &= ~KP_CLAIM_ABSENT_TOLERATIONS;
		if (r->n_binding_conditions + r->n_binding_failure_conditions >
		    0)
			ci->absent &= ~KP_CLAIM_ABSENT_BINDING_CONDITIONS;
		v[m++] = r;
	}
	ci->results = v;
	ci->n_results = m;
	return (0);
}

static int
ci_configs(struct dra_arena_chunk **ar, const json_t *a, const char *driver,
    struct kp_claim_info *ci)
{
	const struct kp_claim_config	**v;
	struct kp_claim_config		 *c;
	const json_t			 *e, *op, *par;
	size_t				  i, m = 0;
	int				  rc;

	if (json_array_size(a) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_array_size(a))) == NULL)
		return (KP_ENOMEM);
	json_array_foreach(a, i, e) {
		op = json_object_get(e, "opaque");
		if (strcmp(ci_str(op, "driver"), driver) != 0)
			continue;
		if ((c = ci_alloc(ar, sizeof(*c))) == NULL)
			return (KP_ENOMEM);
		c->struct_size = sizeof(*c);
		c->source = ci_str(e, "source");
		c->driver = ci_str(op, "driver");
		if ((rc = ci_strings(ar, json_object_get(e, "requests"),
		    &c->requests, &c->n_requests)) != 0)
			return (rc);
		par = json_object_get(op, "parameters");
		c->parameters_json = par;
		if ((c->parameters = ci_dump(ar, par != NULL ? par :
		    json_null())) == NULL)
			return (KP_ENOMEM);
		v[m++] = c;
	}
	ci->configs = v;
	ci->n_configs = m;
	return (0);
}

static int
ci_reserved(struct dra_arena_chunk **ar, const json_t *a,
    struct kp_claim_info *ci)
{
	const struct kp_consumer_ref	**v;
	struct kp_consumer_ref		 *c;
	const json_t			 *e;
	size_t				  i;

	if (json_array_size(a) == 0)
		return (0);
	if ((v = ci_ptrs(ar, json_array_size(a))) == NULL)
		return (KP_ENOMEM);
	json_array_foreach(a, i, e) {
		if ((c = ci_alloc(ar, sizeof(*c))) == NULL)
			return (KP_ENOMEM);
		c->struct_size = sizeof(*c);
		c->api_group = ci_str(e, "apiGroup");
		c->resource = ci_str(e, "resource");
		c->name = ci_str(e, "name");
		c->uid = ci_str(e, "uid");
		v[i] = c;
	}
	ci->reserved_for = v;
	ci->n_reserved_for = json_array_size(a);
	return (0);
}

/* What the API version the claim was fetched in has no place for. */
static unsigned int
ci_absent(const char *api_version)
{
	if (api_version == NULL)
		return (KP_CLAIM_ABSENT_ALLOCATION |
		    KP_CLAIM_ABSENT_TOLERATIONS |
		    KP_CLAIM_ABSENT_BINDING_CONDITIONS |
		    KP_CLAIM_ABSENT_SHARE_ID |
		    KP_CLAIM_ABSENT_CONSUMED_CAPACITY);
	if (strcmp(api_version, "resource.k8s.io/v1") == 0)
		return (0);
	/* v1beta2 from a 1.33 API server, v1beta1 from 1.32 (a newer one
	 * serves v1, which discovery prefers). */
	return (KP_CLAIM_ABSENT_BINDING_CONDITIONS | KP_CLAIM_ABSENT_SHARE_ID |
	    KP_CLAIM_ABSENT_CONSUMED_CAPACITY |
	    (strcmp(api_version, "resource.k8s.io/v1beta1") == 0 ?
	    KP_CLAIM_ABSENT_TOLERATIONS : 0));
}

/*
 * The JSON values in text (every string, number, literal, array and
 * object), counted without building them, up to max + 1: what a parse
 * would cost is bounded before jansson allocates a node (a 1 MiB claim
 * of "[0,0,...]" would cost some 60 MiB as a tree).
 */
static size_t
ci_values(const char *s, size_t len, size_t max)
{
	size_t	 i, n = 0;
	int	 in_str = 0, scalar = 0;

	for (i = 0; i < len && n <= max; i++) {
		char	 ch = s[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
			n++;
			scalar = 0;
		} else if (ch == '{' || ch == '[') {
			n++;
			scalar = 0;
		} else if (ch == ',' || ch == ':' || ch == '}' || ch == ']' ||
		    ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r')
			scalar = 0;
		else if (!scalar) {	/* a number or a literal begins */
			n++;
			scalar = 1;
		}
	}
	return (n);
}

/* The JSON is about claim c (an answer for another one is no answer). */
static int
ci_same_claim(const json_t *md, const struct kp_claim *c)
{
	const char	*uid = json_string_value(json_object_get(md, "uid"));
	const char	*ns = json_string_value(json_object_get(md,
			    "namespace"));
	const char	*name = json_string_value(json_object_get(md, "name"));

	return ((c->uid == NULL || c->uid[0] == '\0' ||
	    (uid != NULL && strcmp(uid, c->uid) == 0)) &&
	    (ns == NULL || strcmp(ns, c->namespace_) == 0) &&
	    (name == NULL || strcmp(name, c->name) == 0));
}

/*
 * ci_parse - build *out for claim c from json (the publisher's claim_json,
 * len bytes; NULL: nothing fetched) fetched in api_version, for driver
 * driver. Everything lives in *ar and, borrowed, in *root (decref it when
 * the arena goes; NULL after a failure). Returns 0, KP_ENOMEM, KP_ENOSPC
 * (more than KP_CLAIM_MAX_VALUES values) or KP_EPROTO (json does not
 * parse, is not an object, or names another claim).
 */
int
ci_parse(struct dra_arena_chunk **ar, const char *json, size_t len,
    const char *api_version, const char *driver, const struct kp_claim *c,
    json_t **root, struct kp_claim_info **out)
{
	struct kp_claim_info	*ci;
	const json_t		*md, *alloc, *devs, *ns;
	int			 rc;

	*root = NULL;
	*out = NULL;
	if ((ci = ci_alloc(ar, sizeof(*ci))) == NULL)
		return (KP_ENOMEM);
	ci->struct_size = sizeof(*ci);
	ci->namespace_ = c->namespace_;
	ci->name = c->name;
	ci->uid = c->uid;
	if (json == NULL) {
		ci->absent = ci_absent(NULL);
		*out = ci;
		return (0);
	}
	ci->api_version = api_version;
	ci->absent = ci_absent(api_version);
	if (ci_values(json, len, KP_CLAIM_MAX_VALUES) > KP_CLAIM_MAX_VALUES)
		return (KP_ENOSPC);
	if ((*root = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || !json_is_object(*root) ||
	    !ci_same_claim(json_object_get(*root, "metadata"), c)) {
		json_decref(*root);	/* NULL-safe */
		*root = NULL;
		return (KP_EPROTO);
	}
	ci->json = json;
	ci->json_len = len;
	ci->json_obj = *root;
	md = json_object_get(*root, "metadata");
	alloc = json_object_get(json_object_get(*root, "status"),
	    "allocation");
	devs = json_object_get(alloc, "devices");
	if ((ns = json_object_get(alloc, "nodeSelector")) != NULL &&
	    !json_is_null(ns)) {
		ci->node_selector_json = ns;
		if ((ci->node_selector = ci_dump(ar, ns)) == NULL)
			return (KP_ENOMEM);
	}
	if ((rc = ci_results(ar, json_object_get(devs, "results"), driver,
	    ci)) != 0 ||
	    (rc = ci_configs(ar, json_object_get(devs, "config"), driver,
	    ci)) != 0 ||
	    (rc = ci_pairs(ar, json_object_get(md, "labels"), &ci->labels,
	    &ci->n_labels)) != 0 ||
	    (rc = ci_pairs(ar, json_object_get(md, "annotations"),
	    &ci->annotations, &ci->n_annotations)) != 0 ||
	    (rc = ci_reserved(ar, json_object_get(json_object_get(*root,
	    "status"), "reservedFor"), ci)) != 0) {
		json_decref(*root);
		*root = NULL;
		return (rc);
	}
	*out = ci;
	return (0);
}

/* The hook call is running: its claims find their info from now on. */
void
ci_call_begin(struct ci_call *call, const struct kp_claim *claims, size_t n,
    const struct dra_claim_alloc *al, const char *driver)
{
	memset(call, 0, sizeof(*call));
	call->claims = claims;
	call->n = n;
	call->al = al;
	call->driver = driver;
	pthread_mutex_lock(&ci_lock);
	call->next = ci_calls;
	ci_calls = call;
	pthread_mutex_unlock(&ci_lock);
}

/*
 * The hook returned: no new look-up finds the call; one still building
 * or waiting (a thread the hook left running) is waited for, then what
 * kp_claim_info() gave out is freed.
 */
void
ci_call_end(struct ci_call *call)
{
	struct ci_call	**pp;
	size_t		  i;

	pthread_mutex_lock(&ci_lock);
	for (pp = &ci_calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	while (call->busy > 0)
		pthread_cond_wait(&ci_cond, &ci_lock);
	pthread_mutex_unlock(&ci_lock);
	for (i = 0; call->slots != NULL && i < call->n; i++) {
		json_decref(call->slots[i].root);	/* NULL-safe */
		dra_arena_free(call->slots[i].arena);
	}
	free(call->slots);
	memset(call, 0, sizeof(*call));
}

/* Build slot i of call, outside ci_lock (the slot is BUILDING: ours). */
static void
ci_build(struct ci_call *call, size_t i, struct ci_slot *s)
{
	const struct dra_claim_alloc	*a;
	const struct kp_claim		*c = &call->claims[i];
	struct kp_claim_info		*ci = NULL;
	struct dra_arena_chunk		*ar = NULL;
	json_t				*root = NULL;
	int				 rc;

	a = call->al != NULL ? &call->al[i] : NULL;
	rc = ci_parse(&ar, a != NULL ? a->claim_json : NULL, a != NULL ?
	    a->claim_json_len : 0, a != NULL ? a->api_version : NULL,
	    call->driver, c, &root, &ci);
	if (rc == KP_EPROTO)
		log_errorx("claim %s/%s: kp_claim_info: the claim's JSON from "
		    "the publisher does not parse or names another claim",
		    c->namespace_, c->name);
	else if (rc == KP_ENOSPC)
		log_warnx("claim %s/%s: kp_claim_info: more than %d JSON "
		    "values in the claim: refused", c->namespace_, c->name,
		    KP_CLAIM_MAX_VALUES);
	pthread_mutex_lock(&ci_lock);
	s->arena = ar;
	s->root = root;
	s->info = rc == 0 ? ci : NULL;
	s->state = rc == 0 ? CI_DONE : CI_FAILED;
	pthread_cond_broadcast(&ci_cond);
	pthread_mutex_unlock(&ci_lock);
}

KP_EXTERN const struct kp_claim_info *
kp_claim_info(const struct kp_claim *claim)
{
	const struct kp_claim_info	*ci = NULL;
	struct ci_call			*call;
	struct ci_slot			*s;
	uintptr_t			 p = (uintptr_t)claim, b;
	size_t				 i = 0;

	pthread_mutex_lock(&ci_lock);
	for (call = ci_calls; call != NULL; call = call->next) {
		b = (uintptr_t)call->claims;
		if (p >= b && p < b + call->n * sizeof(*claim) &&
		    (p - b) % sizeof(*claim) == 0) {
			i = (p - b) / sizeof(*claim);
			break;
		}
	}
	if (call == NULL || (call->slots == NULL && (call->slots =
	    calloc(call->n, sizeof(*call->slots))) == NULL)) {
		pthread_mutex_unlock(&ci_lock);
		return (NULL);
	}
	/* Counted while here: the call's end waits for us. */
	call->busy++;
	s = &call->slots[i];
	while (s->state == CI_BUILDING)
		pthread_cond_wait(&ci_cond, &ci_lock);
	if (s->state == CI_EMPTY) {
		s->state = CI_BUILDING;
		pthread_mutex_unlock(&ci_lock);
		ci_build(call, i, s);
		pthread_mutex_lock(&ci_lock);
	}
	ci = s->info;
	if (--call->busy == 0)
		pthread_cond_broadcast(&ci_cond);
	pthread_mutex_unlock(&ci_lock);
	return (ci);
}

/* name without its "<driver>/" qualifier; NULL when it has another. */
static const char *
ci_short(const char *name, const char *driver)
{
	const char	*slash = strchr(name, '/');
	size_t		 n = strlen(driver);

	if (slash == NULL)
		return (name);
	if ((size_t)(slash - name) == n && strncmp(name, driver, n) == 0)
		return (slash + 1);
	return (NULL);
}

KP_EXTERN const struct kp_capacity_quantity *
kp_claim_capacity(const struct kp_claim_result *r, const char *name)
{
	const struct kp_capacity_quantity	*c, *found = NULL;
	const char				*want, *have;
	size_t					 i;

	if (r == NULL || name == NULL ||
	    (want = ci_short(name, r->driver)) == NULL) {
		/* Another domain's name matches only as written. */
		for (i = 0; r != NULL && name != NULL &&
		    i < r->n_consumed_capacity; i++)
			if (strcmp(r->consumed_capacity[i]->name, name) == 0)
				return (r->consumed_capacity[i]);
		return (NULL);
	}
	for (i = 0; i < r->n_consumed_capacity; i++) {
		c = r->consumed_capacity[i];
		if ((have = ci_short(c->name, r->driver)) == NULL ||
		    strcmp(have, want) != 0)
			continue;
		/* Fully qualified wins (upstream LookupByQualifiedName). */
		if (strchr(c->name, '/') != NULL)
			return (c);
		found = c;
	}
	return (found);
}
