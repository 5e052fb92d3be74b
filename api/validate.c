/*
 * validate.c - the API server's rules for the ResourceSlices that
 * kp_publish_resources() makes of a struct kp_resources, applied in the
 * driver process before anything is sent: synchronous, no I/O, the first
 * broken rule is reported with its pool, slice, device and field.
 *
 * Read from kubernetes pkg/apis/resource/validation (ValidateResourceSlice,
 * 1.32 baseline), pkg/apis/core/validation (ValidateNodeSelector*),
 * apimachinery util/validation (names, label values) and api/resource
 * (ParseQuantity, suffix.go). Where upstream is odd, or we differ:
 *  - A pool may have no slices: the upstream controller then creates no
 *    ResourceSlice for it (and deletes the ones it had), so nothing of it
 *    reaches the server. A slice may have no devices: valid ("devices":
 *    null), and what the 1.32 helper publishes for a driver without any.
 *  - Device names are unique in the whole pool, the 1.35 controller's
 *    rule (validateDriverResources); the server only checks each slice.
 *  - Attribute names are unique among the attributes, capacity names among
 *    the capacities: each becomes a key of a JSON object, where a duplicate
 *    would silently merge. One name in both maps is two keys of two maps;
 *    the server accepts that, and so do we.
 *  - A key with two or more '/' is not checked by the server (a TODO in
 *    validateQualifiedName); we accept it too, for compatibility.
 *  - The domain of a key is lower-cased the way Go's strings.ToLower does
 *    before the DNS check: ASCII, plus the two non-ASCII letters whose
 *    lower case is ASCII (U+0130 'I' with dot -> 'i', U+212A KELVIN -> 'k').
 *  - The server checks neither that a node selector term has requirements
 *    nor that a Gt/Lt value is an integer: neither do we. Match fields
 *    take only "metadata.name", In/NotIn and exactly one node name.
 *  - Strings that end up in JSON must be UTF-8 (jansson refuses others).
 *  - Quantities: exactly ParseQuantity (val_quantity_why()). Surrounding
 *    blanks are refused, although the server's JSON decoder trims them.
 *  - Transport: at most 4096 pools (ipc_check_resources), at most 16 MiB
 *    of strings per call (KP_IPC_MAX_FRAME) and 3 MiB per slice (the
 *    server's request body limit; strings alone, so a lower bound).
 *
 * This file walks the resources and names the place of a broken rule; the
 * rules for names and keys are in validate_names.c, those for quantities
 * and versions in validate_value.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "api/api.h"

#define MAX_POOLS	4096		/* ipc_check_resources */
#define MAX_DEVICES	128		/* ResourceSliceMaxDevices */
#define MAX_ENTRIES	32		/* attributes + capacities */
#define MAX_VALUE	64		/* string and version bytes */
#define MAX_SLICE_BYTES	(3u << 20)	/* MaxRequestBodyBytes */
#define MAX_CALL_BYTES	(16u << 20)	/* KP_IPC_MAX_FRAME */
#define SHOW		24		/* characters of a value shown */

struct vctx {
	char		*err;
	size_t		 errsize;
	char		 loc[128];	/* pools[0] "gpu" slices[1] ... */
	size_t		 pool_len;	/* loc up to the pool */
	size_t		 slice_len;	/* loc up to the slice */
	size_t		 call_bytes;
	size_t		 slice_bytes;
};

struct dref {
	const char	*name;
	size_t		 slice, dev;
};

static int	vfail(struct vctx *, const char *, ...) KP_PRINTF(2, 3);
static void	loc_at(struct vctx *, size_t, const char *, ...)
		    KP_PRINTF(3, 4);

static int
vfail(struct vctx *v, const char *fmt, ...)
{
	char	 msg[KP_ERROR_SIZE];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (v->err != NULL && v->errsize > 0)
		snprintf(v->err, v->errsize, "%s%s%s", v->loc,
		    v->loc[0] != '\0' ? ": " : "", msg);
	return (KP_EINVAL);
}

/* s quoted for a message: at most SHOW characters, non-printables '?'. */
static const char *
show(char buf[SHOW + 8], const char *s)
{
	size_t	 i, n = 0;

	if (s == NULL)
		return ("NULL");
	buf[n++] = '"';
	for (i = 0; s[i] != '\0' && i < SHOW; i++)
		buf[n++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s[i] != '\0') {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return (buf);
}

static void
loc_at(struct vctx *v, size_t at, const char *fmt, ...)
{
	va_list	 ap;

	v->loc[at] = '\0';
	va_start(ap, fmt);
	vsnprintf(v->loc + at, sizeof(v->loc) - at, fmt, ap);
	va_end(ap);
}

/*
 * The name of what[i] (an attribute or a capacity); f gets the field as
 * the messages about the entry name it.
 */
static int
check_entry_name(struct vctx *v, const char *what, const char *name,
    size_t i, char *f, size_t fsize)
{
	char		 b[SHOW + 8];
	const char	*why;

	if (name == NULL)
		return (vfail(v, "%s[%zu]: name is NULL", what, i));
	snprintf(f, fsize, "%s[%s]", what, show(b, name));
	if ((why = val_key_why(name)) != NULL)
		return (vfail(v, "%s: %s", f, why));
	return (0);
}

static int
check_attribute(struct vctx *v, const struct kp_attribute *a, size_t i)
{
	char		 b[SHOW + 8], f[SHOW + 32];
	const char	*s = a->string_value;
	int		 r;

	if ((r = check_entry_name(v, "attributes", a->name, i, f,
	    sizeof(f))) != 0)
		return (r);
	switch (a->type) {
	case KP_ATTR_INT:
	case KP_ATTR_BOOL:
		return (0);
	case KP_ATTR_STRING:
	case KP_ATTR_VERSION:
		break;
	default:
		return (vfail(v, "%s: type %d is not a kp_attribute_type", f,
		    (int)a->type));
	}
	if (s == NULL)
		return (vfail(v, "%s: string_value is NULL", f));
	v->slice_bytes += strlen(s);
	if (a->type == KP_ATTR_VERSION && validate_semver(s) != 0)
		return (vfail(v, "%s: version value %s is not semver 2.0.0 "
		    "(MAJOR.MINOR.PATCH[-pre][+build], no leading zeros)", f,
		    show(b, s)));
	if (strlen(s) > MAX_VALUE)
		return (vfail(v, "%s: %s value is %zu bytes, at most 64 "
		    "allowed", f, a->type == KP_ATTR_STRING ? "string" :
		    "version", strlen(s)));
	if (!utf8_valid(s))
		return (vfail(v, "%s: string value is not UTF-8", f));
	return (0);
}

static int
check_capacity(struct vctx *v, const struct kp_capacity *c, size_t i)
{
	char		 b[SHOW + 8], f[SHOW + 32];
	const char	*why;
	int		 r;

	if ((r = check_entry_name(v, "capacities", c->name, i, f,
	    sizeof(f))) != 0)
		return (r);
	if (c->quantity == NULL)
		return (vfail(v, "%s: quantity is NULL", f));
	if ((why = val_quantity_why(c->quantity)) != NULL)
		return (vfail(v, "%s: quantity %s %s", f, show(b, c->quantity),
		    why));
	v->slice_bytes += strlen(c->quantity);
	return (0);
}

/* Names within one map: at most 32 entries, so pairs are cheap. */
static int
check_unique(struct vctx *v, const char *what, const char *earlier,
    size_t i, const char *name, size_t j)
{
	char	 s[SHOW + 8];

	if (strcmp(earlier, name) != 0)
		return (0);
	return (vfail(v, "%s[%zu] %s: duplicate name (also %s[%zu])", what, j,
	    show(s, name), what, i));
}

static int
check_device(struct vctx *v, const struct kp_device *d)
{
	size_t	 i, j;
	int	 r;

	if (d->name == NULL)
		return (vfail(v, "name is NULL"));
	if (strlen(d->name) > VAL_MAX_LABEL || !name_is_label(d->name,
	    strlen(d->name)))
		return (vfail(v, "name: %s", strlen(d->name) > VAL_MAX_LABEL ?
		    "must be no more than 63 characters" : VAL_R_LABEL));
	if ((d->n_attributes > 0 && d->attributes == NULL) ||
	    (d->n_capacities > 0 && d->capacities == NULL))
		return (vfail(v, "%s is NULL with a count of %zu",
		    d->attributes == NULL ? "attributes" : "capacities",
		    d->attributes == NULL ? d->n_attributes : d->n_capacities));
	if (d->n_attributes > MAX_ENTRIES || d->n_capacities > MAX_ENTRIES ||
	    d->n_attributes + d->n_capacities > MAX_ENTRIES)
		return (vfail(v, "%zu attributes and %zu capacities: at most "
		    "32 together allowed", d->n_attributes, d->n_capacities));
	v->slice_bytes += strlen(d->name);
	for (i = 0; i < d->n_attributes; i++) {
		if ((r = check_attribute(v, &d->attributes[i], i)) != 0)
			return (r);
		v->slice_bytes += strlen(d->attributes[i].name);
		for (j = 0; j < i; j++)
			if ((r = check_unique(v, "attributes",
			    d->attributes[j].name, j, d->attributes[i].name,
			    i)) != 0)
				return (r);
	}
	for (i = 0; i < d->n_capacities; i++) {
		if ((r = check_capacity(v, &d->capacities[i], i)) != 0)
			return (r);
		v->slice_bytes += strlen(d->capacities[i].name);
		for (j = 0; j < i; j++)
			if ((r = check_unique(v, "capacities",
			    d->capacities[j].name, j, d->capacities[i].name,
			    i)) != 0)
				return (r);
	}
	return (0);
}

static int
check_slice(struct vctx *v, const struct kp_slice *s)
{
	char	 b[SHOW + 8];
	size_t	 i;
	int	 r;

	if (s->n_devices > 0 && s->devices == NULL)
		return (vfail(v, "devices is NULL with a count of %zu",
		    s->n_devices));
	if (s->n_devices > MAX_DEVICES)
		return (vfail(v, "%zu devices, at most 128 allowed",
		    s->n_devices));
	v->slice_bytes = 0;
	for (i = 0; i < s->n_devices; i++) {
		loc_at(v, v->slice_len, " devices[%zu] %s", i,
		    show(b, s->devices[i].name));
		if ((r = check_device(v, &s->devices[i])) != 0)
			return (r);
	}
	v->loc[v->slice_len] = '\0';
	if (v->slice_bytes > MAX_SLICE_BYTES)
		return (vfail(v, "more than 3 MiB of strings, over the API "
		    "server's request limit"));
	v->call_bytes += v->slice_bytes;
	if (v->call_bytes > MAX_CALL_BYTES)
		return (vfail(v, "more than 16 MiB of strings in one call"));
	return (0);
}

static int
dref_cmp(const void *a, const void *b)
{
	const struct dref	*x = a, *y = b;
	int			 c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return (c);
	if (x->slice != y->slice)
		return (x->slice < y->slice ? -1 : 1);
	return (x->dev < y->dev ? -1 : x->dev > y->dev);
}

/* Device names unique in the pool (1.35 controller); slices are valid. */
static int
check_pool_devices(struct vctx *v, const struct kp_pool *p)
{
	struct dref	*d;
	char		 b[SHOW + 8];
	size_t		 i, j, n = 0;
	int		 r = 0;

	for (i = 0; i < p->n_slices; i++)
		n += p->slices[i].n_devices;
	if (n < 2)
		return (0);
	if ((d = calloc(n, sizeof(*d))) == NULL) {
		vfail(v, "out of memory checking device names");
		return (KP_ENOMEM);
	}
	for (n = 0, i = 0; i < p->n_slices; i++)
		for (j = 0; j < p->slices[i].n_devices; j++, n++) {
			d[n].name = p->slices[i].devices[j].name;
			d[n].slice = i;
			d[n].dev = j;
		}
	qsort(d, n, sizeof(*d), dref_cmp);
	for (i = 1; i < n && r == 0; i++)
		if (strcmp(d[i - 1].name, d[i].name) == 0) {
			loc_at(v, v->pool_len, " slices[%zu] devices[%zu] %s",
			    d[i].slice, d[i].dev, show(b, d[i].name));
			r = vfail(v, "name: duplicate in the pool (also "
			    "slices[%zu] devices[%zu])", d[i - 1].slice,
			    d[i - 1].dev);
		}
	free(d);
	return (r);
}

static int
check_requirement(struct vctx *v, const char *f,
    const struct kp_node_selector_requirement *q, int field)
{
	static const char	*ops[] = { "In", "NotIn", "Exists",
	    "DoesNotExist", "Gt", "Lt" };
	char			 b[SHOW + 8];
	const char		*why;
	size_t			 i, op;

	if (q->key == NULL || q->op == NULL)
		return (vfail(v, "%s: %s is NULL", f, q->op ? "key" : "op"));
	if (q->n_values > 0 && q->values == NULL)
		return (vfail(v, "%s: values is NULL with a count of %zu", f,
		    q->n_values));
	for (i = 0; i < q->n_values; i++)
		if (q->values[i] == NULL)
			return (vfail(v, "%s: values[%zu] is NULL", f, i));
	for (op = 0; op < 6 && strcmp(q->op, ops[op]) != 0; op++)
		;
	if (op == 6 || (field && op > 1))
		return (vfail(v, "%s: op %s is not one of %s", f,
		    show(b, q->op), field ? "In, NotIn (match fields)" :
		    "In, NotIn, Exists, DoesNotExist, Gt, Lt"));
	if (field && q->n_values != 1)
		return (vfail(v, "%s: values: exactly one needed for a match "
		    "field, %zu given", f, q->n_values));
	if (op <= 1 && q->n_values == 0)
		return (vfail(v, "%s: values: required for In and NotIn", f));
	if ((op == 2 || op == 3) && q->n_values > 0)
		return (vfail(v, "%s: values: not allowed for Exists and "
		    "DoesNotExist", f));
	if (op >= 4 && q->n_values != 1)
		return (vfail(v, "%s: values: exactly one needed for Gt and "
		    "Lt, %zu given", f, q->n_values));
	if (field && strcmp(q->key, "metadata.name") != 0)
		return (vfail(v, "%s: key %s: only \"metadata.name\" is a "
		    "node field", f, show(b, q->key)));
	if (!field && (why = val_label_key_why(q->key)) != NULL)
		return (vfail(v, "%s: key %s: %s", f, show(b, q->key), why));
	for (i = 0; i < q->n_values; i++) {
		why = field ? (name_is_subdomain(q->values[i],
		    strlen(q->values[i])) ? NULL :
		    "a node name " VAL_R_SUBDOMAIN) :
		    val_label_value_why(q->values[i]);
		if (why != NULL)
			return (vfail(v, "%s: values[%zu] %s: %s", f, i,
			    show(b, q->values[i]), why));
	}
	return (0);
}

static int
check_selector(struct vctx *v, const struct kp_node_selector *ns)
{
	const struct kp_node_selector_requirement	*q;
	char						 f[64];
	size_t						 i, n;
	int						 field, r;

	for (field = 0; field < 2; field++) {
		q = field ? ns->match_fields : ns->match_expressions;
		n = field ? ns->n_match_fields : ns->n_match_expressions;
		if (n > 0 && q == NULL)
			return (vfail(v, "node_selector.%s is NULL with a "
			    "count of %zu", field ? "match_fields" :
			    "match_expressions", n));
		for (i = 0; i < n; i++) {
			snprintf(f, sizeof(f), "node_selector.%s[%zu]",
			    field ? "match_fields" : "match_expressions", i);
			if ((r = check_requirement(v, f, &q[i], field)) != 0)
				return (r);
		}
	}
	return (0);
}

static int
check_pool_name(struct vctx *v, const char *name)
{
	const char	*s, *slash;
	size_t		 n, part = 0;

	if (name == NULL || *name == '\0')
		return (vfail(v, "name: required"));
	if ((n = strlen(name)) > VAL_MAX_SUBDOMAIN)
		return (vfail(v, "name: %zu characters, at most 253 allowed",
		    n));
	for (s = name;; s = slash + 1, part++) {
		slash = strchr(s, '/');
		n = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (!name_is_subdomain(s, n))
			return (vfail(v, "name: part %zu %s", part,
			    n == 0 ? "is empty" : VAL_R_SUBDOMAIN));
		if (slash == NULL)
			return (0);
	}
}

static int
check_pool(struct vctx *v, const struct kp_pool *p)
{
	size_t	 i;
	int	 r;

	if ((r = check_pool_name(v, p->name)) != 0)
		return (r);
	if (p->generation < 0)
		return (vfail(v, "generation: %lld, must be 0 or more",
		    (long long)p->generation));
	if (p->node_selector != NULL &&
	    (r = check_selector(v, p->node_selector)) != 0)
		return (r);
	if (p->n_slices > 0 && p->slices == NULL)
		return (vfail(v, "slices is NULL with a count of %zu",
		    p->n_slices));
	for (i = 0; i < p->n_slices; i++) {
		loc_at(v, v->pool_len, " slices[%zu]", i);
		v->slice_len = strlen(v->loc);
		if ((r = check_slice(v, &p->slices[i])) != 0)
			return (r);
	}
	v->loc[v->pool_len] = '\0';
	return (check_pool_devices(v, p));
}

int
validate_resources(const struct kp_resources *res, char *err,
    size_t errsize)
{
	struct vctx	 v;
	char		 b[SHOW + 8];
	size_t		 i, j;
	int		 r;

	memset(&v, 0, sizeof(v));
	v.err = err;
	v.errsize = errsize;
	if (err != NULL && errsize > 0)
		err[0] = '\0';
	if (res == NULL)
		return (vfail(&v, "resources: NULL"));
	if (res->n_pools > 0 && res->pools == NULL)
		return (vfail(&v, "pools is NULL with a count of %zu",
		    res->n_pools));
	if (res->n_pools > MAX_POOLS)
		return (vfail(&v, "%zu pools, at most 4096 per call",
		    res->n_pools));
	for (i = 0; i < res->n_pools; i++) {
		loc_at(&v, 0, "pools[%zu] %s", i, show(b, res->pools[i].name));
		v.pool_len = strlen(v.loc);
		if ((r = check_pool(&v, &res->pools[i])) != 0)
			return (r);
		for (j = 0; j < i; j++)
			if (strcmp(res->pools[j].name,
			    res->pools[i].name) == 0)
				return (vfail(&v, "name: duplicate (also "
				    "pools[%zu])", j));
	}
	return (0);
}
