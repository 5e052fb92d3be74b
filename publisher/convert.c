/*
 * convert.c - ResourceSlice JSON per API version (jansson), and the
 * version-neutral form the controller compares: v1beta1 nests device fields
 * under "basic", v1beta2 and v1 flatten them; "devices": null is an empty
 * list; quantities compare by value ("1Gi" == "1024Mi"); map key order and
 * empty or false optional fields do not matter.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publisher/slices.h"

const char *
conv_api_version(enum kube_version v)
{
	switch (v) {
	case KUBE_V1BETA1:
		return ("resource.k8s.io/v1beta1");
	case KUBE_V1BETA2:
		return ("resource.k8s.io/v1beta2");
	case KUBE_V1:
	default:
		return ("resource.k8s.io/v1");
	}
}

/* json_object_set_new() that remembers a failure in *bad. */
static void
put(json_t *o, const char *k, json_t *v, int *bad)
{
	if (v == NULL || json_object_set_new(o, k, v) != 0)
		*bad = 1;
}

static void
append(json_t *a, json_t *v, int *bad)
{
	if (v == NULL || json_array_append_new(a, v) != 0)
		*bad = 1;
}

static json_t *
requirements_json(Kpipc__SelectorRequirement **r, size_t n, int *bad)
{
	json_t	*a, *o, *vals;
	size_t	 i, j;

	if ((a = json_array()) == NULL) {
		*bad = 1;
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		if ((o = json_object()) == NULL) {
			*bad = 1;
			break;
		}
		put(o, "key", json_string(r[i]->key), bad);
		put(o, "operator", json_string(r[i]->op), bad);
		if (r[i]->n_values > 0) {
			vals = json_array();
			for (j = 0; vals != NULL && j < r[i]->n_values; j++)
				append(vals, json_string(r[i]->values[j]), bad);
			put(o, "values", vals, bad);
		}
		append(a, o, bad);
	}
	return (a);
}

/* Our NodeSelector message is one term of a core/v1 NodeSelector. */
static json_t *
selector_json(const Kpipc__NodeSelector *s, int *bad)
{
	json_t	*sel, *terms, *term;

	sel = json_object();
	terms = json_array();
	term = json_object();
	if (sel == NULL || terms == NULL || term == NULL) {
		json_decref(sel);
		json_decref(terms);
		json_decref(term);
		*bad = 1;
		return (NULL);
	}
	if (s->n_match_expressions > 0)
		put(term, "matchExpressions", requirements_json(
		    s->match_expressions, s->n_match_expressions, bad), bad);
	if (s->n_match_fields > 0)
		put(term, "matchFields", requirements_json(s->match_fields,
		    s->n_match_fields, bad), bad);
	append(terms, term, bad);
	put(sel, "nodeSelectorTerms", terms, bad);
	return (sel);
}

static json_t *
attribute_json(const Kpipc__Attribute *a, int *bad)
{
	switch (a->value_case) {
	case KPIPC__ATTRIBUTE__VALUE_INT_VALUE:
		return (json_pack("{sI}", "int", (json_int_t)a->int_value));
	case KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE:
		return (json_pack("{sb}", "bool", a->bool_value ? 1 : 0));
	case KPIPC__ATTRIBUTE__VALUE_STRING_VALUE:
		return (json_pack("{ss}", "string", a->string_value));
	case KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE:
		return (json_pack("{ss}", "version", a->version_value));
	default:
		*bad = 1;	/* validate.c never lets this through */
		return (NULL);
	}
}

static json_t *
device_json(enum kube_version v, const Kpipc__Device *dev, int *bad)
{
	json_t	*d, *fields, *attrs, *caps;
	size_t	 i;

	if ((d = json_object()) == NULL) {
		*bad = 1;
		return (NULL);
	}
	put(d, "name", json_string(dev->name), bad);
	if (v == KUBE_V1BETA1) {
		if ((fields = json_object()) == NULL) {
			*bad = 1;
			return (d);
		}
		put(d, "basic", fields, bad);
	} else
		fields = d;
	if (dev->n_attributes > 0) {
		attrs = json_object();
		for (i = 0; attrs != NULL && i < dev->n_attributes; i++)
			put(attrs, dev->attributes[i]->name,
			    attribute_json(dev->attributes[i], bad), bad);
		put(fields, "attributes", attrs, bad);
	}
	if (dev->n_capacities > 0) {
		caps = json_object();
		for (i = 0; caps != NULL && i < dev->n_capacities; i++)
			put(caps, dev->capacities[i]->name, json_pack("{ss}",
			    "value", dev->capacities[i]->quantity), bad);
		put(fields, "capacity", caps, bad);
	}
	return (d);
}

/*
 * The spec of a desired slice in version v's shape. v1beta2 and v1 get
 * nodeName / allNodes only when set (an explicit "" or false is rejected
 * there); "devices" is always an array. Returns a new reference or NULL
 * (out of memory).
 */
json_t *
conv_slice_spec(enum kube_version v, const struct conv_slice *cs)
{
	json_t	*spec, *pool, *devs;
	size_t	 i;
	int	 bad = 0;

	if ((spec = json_object()) == NULL)
		return (NULL);
	put(spec, "driver", json_string(cs->driver), &bad);
	pool = json_pack("{ss sI sI}", "name", cs->pool,
	    "generation", (json_int_t)cs->generation,
	    "resourceSliceCount", (json_int_t)cs->count);
	put(spec, "pool", pool, &bad);
	if (cs->selector != NULL)
		put(spec, "nodeSelector", selector_json(cs->selector, &bad),
		    &bad);
	else if (cs->node != NULL && cs->node[0] != '\0')
		put(spec, "nodeName", json_string(cs->node), &bad);
	else
		put(spec, "allNodes", json_true(), &bad);
	if ((devs = json_array()) == NULL)
		bad = 1;
	for (i = 0; devs != NULL && i < cs->n_devices; i++)
		append(devs, device_json(v, cs->devices[i], &bad), &bad);
	put(spec, "devices", devs, &bad);
	if (bad) {
		json_decref(spec);
		return (NULL);
	}
	return (spec);
}

/*
 * A whole ResourceSlice for a POST (gen_name: metadata.generateName) or a
 * PUT (name). owner (borrowed, may be NULL) becomes the one owner
 * reference.
 */
json_t *
conv_slice_object(enum kube_version v, const struct conv_slice *cs,
    const json_t *owner, const char *gen_name, const char *name)
{
	json_t	*o, *meta, *spec, *refs;
	int	 bad = 0;

	if ((spec = conv_slice_spec(v, cs)) == NULL)
		return (NULL);
	o = json_object();
	meta = json_object();
	if (o == NULL || meta == NULL) {
		json_decref(o);
		json_decref(meta);
		json_decref(spec);
		return (NULL);
	}
	put(o, "apiVersion", json_string(conv_api_version(v)), &bad);
	put(o, "kind", json_string("ResourceSlice"), &bad);
	if (name != NULL)
		put(meta, "name", json_string(name), &bad);
	if (gen_name != NULL)
		put(meta, "generateName", json_string(gen_name), &bad);
	if (owner != NULL) {
		refs = json_array();
		if (refs != NULL)
			append(refs, json_deep_copy(owner), &bad);
		put(meta, "ownerReferences", refs, &bad);
	}
	put(o, "metadata", meta, &bad);
	put(o, "spec", spec, &bad);
	if (bad) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/* The owner reference of every slice: the Node, controller: true. */
json_t *
conv_owner_ref(const char *node, const char *uid)
{
	return (json_pack("{ss ss ss ss sb}", "apiVersion", "v1",
	    "kind", "Node", "name", node, "uid", uid, "controller", 1));
}

/* DeleteOptions with uid and resourceVersion preconditions. */
json_t *
conv_delete_options(const char *uid, const char *rv)
{
	json_t	*o, *pre;
	int	 bad = 0;

	if ((pre = json_object()) == NULL)
		return (NULL);
	if (uid != NULL && uid[0] != '\0')
		put(pre, "uid", json_string(uid), &bad);
	if (rv != NULL && rv[0] != '\0')
		put(pre, "resourceVersion", json_string(rv), &bad);
	o = json_pack("{ss ss so}", "kind", "DeleteOptions",
	    "apiVersion", "v1", "preconditions", pre);
	if (o == NULL || bad) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/*
 * A copy without the members that mean "unset" in Go's JSON: null, false,
 * "", {} and [] (recursively). NULL when nothing is left.
 */
static json_t *
prune(const json_t *v)
{
	json_t		*o, *x;
	const char	*k;
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_FALSE:
		return (NULL);
	case JSON_STRING:
		return (json_string_length(v) == 0 ? NULL :
		    json_deep_copy(v));
	case JSON_OBJECT:
		if ((o = json_object()) == NULL)
			return (NULL);
		json_object_foreach((json_t *)v, k, x) {
			json_t	*p = prune(x);

			if (p != NULL)
				json_object_set_new(o, k, p);
		}
		if (json_object_size(o) == 0) {
			json_decref(o);
			return (NULL);
		}
		return (o);
	case JSON_ARRAY:
		if (json_array_size(v) == 0 || (o = json_array()) == NULL)
			return (NULL);
		json_array_foreach(v, i, x) {
			json_t	*p = prune(x);

			json_array_append_new(o, p != NULL ? p : json_null());
		}
		return (o);
	default:
		return (json_deep_copy(v));
	}
}

/* A quantity as a canonical string; unparsable ones keep their text. */
static json_t *
canon_json(const json_t *q)
{
	char		 c[SL_QTY_MAX], buf[64];
	const char	*s;

	if (json_is_string(q))
		s = json_string_value(q);
	else if (json_is_integer(q)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(q));
		s = buf;
	} else if (json_is_real(q)) {
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(q));
		s = buf;
	} else
		return (json_string("!"));
	if (conv_quantity_canon(s, c, sizeof(c)) != 0) {
		json_t	*r;
		char	*t;

		if (asprintf(&t, "!%s", s) == -1)
			return (NULL);
		r = json_string(t);
		free(t);
		return (r);
	}
	return (json_string(c));
}

static json_t *
neutral_device(enum kube_version v, const json_t *d)
{
	json_t		*nd, *src, *x, *m, *c, *y;
	const char	*k, *k2;

	if ((nd = json_object()) == NULL)
		return (NULL);
	x = json_object_get(d, "name");
	json_object_set_new(nd, "name", json_is_string(x) ?
	    json_deep_copy(x) : json_string(""));
	src = v == KUBE_V1BETA1 ? json_object_get(d, "basic") : (json_t *)d;
	if (!json_is_object(src))
		return (nd);
	json_object_foreach(src, k, x) {
		if (strcmp(k, "name") == 0 && src == d)
			continue;
		if (strcmp(k, "attributes") == 0) {
			/* Values as they are: {"bool": false} is a value. */
			if (!json_is_object(x) || json_object_size(x) == 0)
				continue;
			m = json_object();
			json_object_foreach(x, k2, y) {
				json_t	*a = json_object(), *z;
				const char *t;

				json_object_foreach(y, t, z) {
					if (!json_is_null(z))
						json_object_set(a, t, z);
				}
				json_object_set_new(m, k2, a);
			}
			json_object_set_new(nd, "attributes", m);
		} else if (strcmp(k, "capacity") == 0) {
			if (!json_is_object(x) || json_object_size(x) == 0)
				continue;
			m = json_object();
			json_object_foreach(x, k2, y) {
				c = prune(y);
				if (c == NULL)
					c = json_object();
				json_object_set_new(c, "value", canon_json(
				    json_object_get(y, "value")));
				json_object_set_new(m, k2, c);
			}
			json_object_set_new(nd, "capacity", m);
		} else if ((c = prune(x)) != NULL)
			json_object_set_new(nd, k, c);
	}
	return (nd);
}

/*
 * The comparable, version-neutral form of a spec in version v's shape:
 * pool {name, generation, resourceSliceCount}, nodeSelector and allNodes
 * when set, devices flattened (always an array), quantities canonical,
 * every other field pruned of zero values. driver and nodeName are left
 * out: both are immutable and fixed by the watch's field selector.
 * Returns a new reference or NULL (out of memory).
 */
json_t *
conv_neutral_spec(enum kube_version v, const json_t *spec)
{
	json_t		*n, *pool, *devs, *x, *p;
	const char	*k;
	size_t		 i;

	if ((n = json_object()) == NULL)
		return (NULL);
	pool = json_object_get(spec, "pool");
	x = json_object_get(pool, "name");
	json_object_set_new(n, "pool", json_pack("{ss sI sI}",
	    "name", json_is_string(x) ? json_string_value(x) : "",
	    "generation", json_integer_value(json_object_get(pool,
	    "generation")), "resourceSliceCount", json_integer_value(
	    json_object_get(pool, "resourceSliceCount"))));
	devs = json_array();
	x = json_object_get(spec, "devices");
	json_array_foreach(x, i, p)
		json_array_append_new(devs, neutral_device(v, p));
	json_object_set_new(n, "devices", devs);
	json_object_foreach((json_t *)spec, k, x) {
		if (strcmp(k, "driver") == 0 || strcmp(k, "nodeName") == 0 ||
		    strcmp(k, "pool") == 0 || strcmp(k, "devices") == 0)
			continue;
		if ((p = prune(x)) != NULL)
			json_object_set_new(n, k, p);
	}
	if (json_object_get(n, "pool") == NULL || devs == NULL) {
		json_decref(n);
		return (NULL);
	}
	return (n);
}

int
conv_names_cmp(const void *a, const void *b)
{
	return (strcmp(*(char * const *)a, *(char * const *)b));
}

static char *
dup_field(const json_t *o, const char *k)
{
	const json_t	*x = json_object_get(o, k);

	return (strdup(json_is_string(x) ? json_string_value(x) : ""));
}

void
conv_rec_free(struct slice_rec *r)
{
	size_t	i;

	free(r->name);
	free(r->uid);
	free(r->rv);
	free(r->pool);
	for (i = 0; i < r->n_dev_names; i++)
		free(r->dev_names[i]);
	free(r->dev_names);
	json_decref(r->neutral);
	json_decref(r->metadata);
	memset(r, 0, sizeof(*r));
}

/*
 * A ResourceSlice object as served in version v -> a record. Returns 0, or
 * KP_EPROTO (not a slice: no name or spec; err says why) or KP_ENOMEM.
 */
int
conv_parse_slice(enum kube_version v, const json_t *o, struct slice_rec *r,
    char *err, size_t errsize)
{
	const json_t	*meta, *spec, *pool, *devs, *d, *nn;
	size_t		 i;

	memset(r, 0, sizeof(*r));
	meta = json_object_get(o, "metadata");
	spec = json_object_get(o, "spec");
	if (!json_is_object(meta) || !json_is_object(spec) ||
	    !json_is_string(json_object_get(meta, "name"))) {
		snprintf(err, errsize, "ResourceSlice without metadata.name "
		    "or spec");
		return (KP_EPROTO);
	}
	pool = json_object_get(spec, "pool");
	r->name = dup_field(meta, "name");
	r->uid = dup_field(meta, "uid");
	r->rv = dup_field(meta, "resourceVersion");
	r->pool = dup_field(pool, "name");
	r->generation = json_integer_value(json_object_get(pool,
	    "generation"));
	r->count = json_integer_value(json_object_get(pool,
	    "resourceSliceCount"));
	nn = json_object_get(spec, "nodeName");
	r->node_local = json_is_string(nn) && json_string_length(nn) > 0;
	r->neutral = conv_neutral_spec(v, spec);
	r->metadata = json_deep_copy(meta);
	devs = json_object_get(spec, "devices");
	if (json_array_size(devs) > 0 && (r->dev_names = calloc(
	    json_array_size(devs), sizeof(char *))) == NULL)
		goto nomem;
	json_array_foreach(devs, i, d) {
		if ((r->dev_names[i] = dup_field(d, "name")) == NULL)
			goto nomem;
		r->n_dev_names++;
	}
	if (r->n_dev_names > 1)
		qsort(r->dev_names, r->n_dev_names, sizeof(char *),
		    conv_names_cmp);
	if (r->name == NULL || r->uid == NULL || r->rv == NULL ||
	    r->pool == NULL || r->neutral == NULL || r->metadata == NULL)
		goto nomem;
	return (0);
nomem:
	conv_rec_free(r);
	snprintf(err, errsize, "out of memory");
	return (KP_ENOMEM);
}

/* A deep copy of a record. Returns 0 or KP_ENOMEM (dst zeroed). */
int
conv_rec_copy(const struct slice_rec *src, struct slice_rec *dst)
{
	size_t	i;

	memset(dst, 0, sizeof(*dst));
	dst->name = strdup(src->name);
	dst->uid = strdup(src->uid);
	dst->rv = strdup(src->rv);
	dst->pool = strdup(src->pool);
	dst->generation = src->generation;
	dst->count = src->count;
	dst->node_local = src->node_local;
	dst->neutral = json_deep_copy(src->neutral);
	dst->metadata = json_deep_copy(src->metadata);
	if (src->n_dev_names > 0 && (dst->dev_names = calloc(
	    src->n_dev_names, sizeof(char *))) == NULL)
		goto nomem;
	for (i = 0; i < src->n_dev_names; i++) {
		if ((dst->dev_names[i] = strdup(src->dev_names[i])) == NULL)
			goto nomem;
		dst->n_dev_names++;
	}
	if (dst->name == NULL || dst->uid == NULL || dst->rv == NULL ||
	    dst->pool == NULL || dst->neutral == NULL ||
	    dst->metadata == NULL)
		goto nomem;
	return (0);
nomem:
	conv_rec_free(dst);
	return (KP_ENOMEM);
}

/*
 * The message of a Kubernetes Status body, or "HTTP <status>" and the
 * start of the body. Returns a malloc'd string (NULL: out of memory).
 */
char *
conv_status_message(const char *body, long status)
{
	json_t		*o;
	const char	*m;
	char		*s = NULL;
	size_t		 n;

	if (body != NULL && (o = json_loads(body, 0, NULL)) != NULL) {
		m = json_string_value(json_object_get(o, "message"));
		if (m != NULL && *m != '\0')
			s = strdup(m);
		json_decref(o);
		if (s != NULL)
			return (s);
	}
	n = body != NULL ? strcspn(body, "\r\n") : 0;
	if (n > 120)
		n = 120;
	if (asprintf(&s, "HTTP %ld%s%.*s", status, n > 0 ? ": " : "",
	    (int)n, n > 0 ? body : "") == -1)
		return (NULL);
	return (s);
}
