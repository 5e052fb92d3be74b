/*
 * validate.c - the API server's rules for the ResourceSlices that
 * kp_publish_resources() makes of a struct kp_resources, applied in the
 * driver process before anything is sent: synchronous, no I/O, the first
 * broken rule is reported with its pool, slice, device and field.
 *
 * It checks the Kpipc__Publish tree pack.c made of the driver's structs
 * (so the same code serves every header version a driver was built with).
 *
 * Read from kubernetes pkg/apis/resource/validation (ValidateResourceSlice,
 * 1.37 limits: see the MAX_* below; the 1.38 name rule), the resourceslice controller's
 * validateDriverResources (1.35), pkg/apis/core/validation
 * (ValidateNodeSelector*),
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
 *  - A key with two or more '/' ("a/b/c", "/a/b", "a//b") was not checked
 *    by the server before 1.38 (a TODO in validateQualifiedName); 1.38
 *    refuses it (PR #141644: only while spec.devices changes, so older
 *    slices stay updatable) and so do we, always.
 *  - A node selector is one term by construction (struct
 *    kp_node_selector, Kpipc__NodeSelector), so the 1.38 rule that a
 *    per-device nodeSelector has exactly one term (PR #141213), as the
 *    slice's always had, holds for every slice made here.
 *  - The domain of a key is lower-cased the way Go's strings.ToLower does
 *    before the DNS check: ASCII, plus the two non-ASCII letters whose
 *    lower case is ASCII (U+0130 'I' with dot -> 'i', U+212A KELVIN -> 'k').
 *  - The server checks neither that a node selector term has requirements
 *    nor that a Gt/Lt value is an integer: neither do we. Match fields
 *    take only "metadata.name", In/NotIn and exactly one node name.
 *  - Strings that end up in JSON must be UTF-8 (jansson refuses others).
 *  - Quantities: exactly ParseQuantity (val_quantity_why()). Surrounding
 *    blanks are refused, although the server's JSON decoder trims them.
 *  - 1.35+: a slice holds devices or shared counters, not both; counter
 *    set names are unique in the pool and every consumesCounters entry
 *    names a set of the pool and counters of that set (the controller's
 *    rule; the server can only check one slice).
 *  - Device limits: 128 per slice, 64 when any device has taints,
 *    consumesCounters or a list attribute (1.36's "advanced features").
 *  - requestPolicy: the 1.37 server's rules (validateRequestPolicy):
 *    only with allowMultipleAllocations; default required with
 *    validValues or validRange, not both; validValues ascending, at most
 *    10, none above the capacity, no two with the same integer value, the
 *    default one of them; validRange min <= default <= max <= capacity,
 *    min + step <= capacity, default and max a whole number of steps from
 *    min (in Quantity.Value() integers, as upstream). A step of zero or
 *    less is refused: the server divides by it (a panic, not a 422).
 *  - skipNodeOperations: only the known values, no duplicates, and
 *    NodePrepareResources only together with NodeUnprepareResources; the
 *    kubelet ignores unknown ones, we refuse them as likely typos.
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

#include "base/quantity.h"
#include "base/utf8.h"
#include "api/api.h"

#define MAX_POOLS	4096		/* ipc_check_resources */
#define MAX_DEVICES	128		/* ResourceSliceMaxDevices */
#define MAX_DEVICES_ADV	64		/* ...WithAdvancedFeatures (1.36) */
#define MAX_ENTRIES	32		/* attributes + capacities */
#define MAX_LIST_VALUES	48		/* list attribute values per device */
#define MAX_VALUE	64		/* string and version bytes */
#define MAX_COUNTER_SETS 8		/* ResourceSliceMaxCounterSets */
#define MAX_COUNTERS	32		/* per set and per consumption */
#define MAX_CONSUMES	2		/* consumesCounters per device */
#define MAX_TAINTS	16		/* DeviceTaintsMaxLength */
#define MAX_CONDITIONS	4		/* binding (failure) conditions */
#define MAX_VALID_VALUES 10		/* requestPolicy.validValues */
#define MAX_COND_LEN	316		/* a condition type: qualified name */
#define MAX_SLICE_BYTES	(3u << 20)	/* MaxRequestBodyBytes */
#define MAX_CALL_BYTES	(16u << 20)	/* KP_IPC_MAX_FRAME */
#define SHOW		24		/* characters of a value shown */

struct vctx {
	char		*err;
	size_t		 errsize;
	char		 path[192];	/* pools[0].slices[1].devices[3] */
	size_t		 len;
	size_t		 call_bytes;
	size_t		 slice_bytes;
};

struct dref {
	const char	*name;
	size_t		 slice, dev;
};

static int	vfail(struct vctx *, const char *, ...) KP_PRINTF(2, 3);
static size_t	push(struct vctx *, const char *, ...) KP_PRINTF(2, 3);

static int
vfail(struct vctx *v, const char *fmt, ...)
{
	char	 msg[KP_ERROR_SIZE];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (v->err != NULL && v->errsize > 0)
		snprintf(v->err, v->errsize, "%s%s%s", v->path,
		    v->len > 0 ? ": " : "", msg);
	return (KP_EINVAL);
}

static size_t
push(struct vctx *v, const char *fmt, ...)
{
	size_t	 old = v->len;
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(v->path + v->len, sizeof(v->path) - v->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		v->len += (size_t)n < sizeof(v->path) - v->len ? (size_t)n :
		    sizeof(v->path) - v->len - 1;
	return (old);
}

static void
pop(struct vctx *v, size_t to)
{
	v->len = to;
	v->path[to] = '\0';
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

/* A failure at path.field (field "" for the path itself). */
static int
ffail(struct vctx *v, const char *field, const char *why, const char *val)
{
	char	 b[SHOW + 8];
	size_t	 at = push(v, "%s", field);
	int	 r;

	if (val != NULL)
		r = vfail(v, "%s %s", show(b, val), why);
	else
		r = vfail(v, "%s", why);
	pop(v, at);
	return (r);
}

static int
check_label(struct vctx *v, const char *field, const char *s)
{
	if (*s == '\0')
		return (ffail(v, field, "required", NULL));
	if (strlen(s) > VAL_MAX_LABEL)
		return (ffail(v, field, "must be no more than 63 characters",
		    s));
	if (!name_is_label(s, strlen(s)))
		return (ffail(v, field, VAL_R_LABEL, s));
	return (0);
}

static int
check_quantity(struct vctx *v, const char *field, const char *q)
{
	const char	*why;

	if ((why = val_quantity_why(q)) != NULL)
		return (ffail(v, field, why, q));
	v->slice_bytes += strlen(q);
	return (0);
}

static int
check_string_value(struct vctx *v, const char *field, const char *s,
    int version)
{
	char	 b[SHOW + 8];
	size_t	 at;
	int	 r = 0;

	v->slice_bytes += strlen(s);
	at = push(v, "%s", field);
	if (version && validate_semver(s) != 0)
		r = vfail(v, "version %s is not semver 2.0.0 "
		    "(MAJOR.MINOR.PATCH[-pre][+build], no leading zeros)",
		    show(b, s));
	else if (strlen(s) > MAX_VALUE)
		r = vfail(v, "%s is %zu bytes, at most 64 allowed",
		    version ? "version" : "string", strlen(s));
	else if (!utf8_valid(s))
		r = vfail(v, "string is not UTF-8");
	pop(v, at);
	return (r);
}

/* An attribute; *list_values adds the values of a list type. */
static int
check_attribute(struct vctx *v, const Kpipc__Attribute *a,
    size_t *list_values, int *advanced)
{
	const Kpipc__StringList	*sl = NULL;
	size_t			 i, n = 0, at;
	int			 r;

	switch (a->value_case) {
	case KPIPC__ATTRIBUTE__VALUE_INT_VALUE:
	case KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE:
		return (0);
	case KPIPC__ATTRIBUTE__VALUE_STRING_VALUE:
		return (check_string_value(v, ".string", a->string_value, 0));
	case KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE:
		return (check_string_value(v, ".version", a->version_value,
		    1));
	case KPIPC__ATTRIBUTE__VALUE_INTS:
		n = a->ints->n_values;
		break;
	case KPIPC__ATTRIBUTE__VALUE_BOOLS:
		n = a->bools->n_values;
		break;
	case KPIPC__ATTRIBUTE__VALUE_STRINGS:
		n = (sl = a->strings)->n_values;
		break;
	case KPIPC__ATTRIBUTE__VALUE_VERSIONS:
		n = (sl = a->versions)->n_values;
		break;
	default:
		return (vfail(v, "exactly one value must be specified"));
	}
	*advanced = 1;
	*list_values += n;
	if (n == 0)
		return (vfail(v, "a list attribute needs at least one value"));
	for (i = 0; sl != NULL && i < n; i++) {
		at = push(v, ".%s[%zu]", a->value_case ==
		    KPIPC__ATTRIBUTE__VALUE_STRINGS ? "strings" : "versions",
		    i);
		r = check_string_value(v, "", sl->values[i], a->value_case ==
		    KPIPC__ATTRIBUTE__VALUE_VERSIONS);
		pop(v, at);
		if (r != 0)
			return (r);
	}
	return (0);
}

/* "<field>: <val>: <why>[: <arg>]", upstream's field.Invalid shape. */
static int
ifail(struct vctx *v, const char *field, const char *val, const char *why,
    const char *arg)
{
	char	 b1[SHOW + 8], b2[SHOW + 8];
	size_t	 at = push(v, "%s", field);
	int	 r;

	r = vfail(v, "%s: %s%s%s", show(b1, val), why, arg != NULL ? ": " :
	    "", arg != NULL ? show(b2, arg) : "");
	pop(v, at);
	return (r);
}

/* Compare two valid quantities (a < b: -1, ...). */
static int
qcmp(const char *a, const char *b)
{
	int	c = 0;

	(void)qty_cmp(a, b, &c);
	return (c);
}

/* (value - min) is a multiple of step, in Quantity.Value() integers. */
static int
check_step(struct vctx *v, const char *value, const char *min,
    const char *step)
{
	int64_t	 x, m, s;
	char	 b1[SHOW + 8], b2[SHOW + 8], why[2 * SHOW + 64];

	if (qty_value(value, &x) != 0 || qty_value(min, &m) != 0 ||
	    qty_value(step, &s) != 0)
		return (ffail(v, ".validRange.step", "too large for the "
		    "step check (beyond int64)", NULL));
	/* Go's int64 arithmetic wraps; so does this. */
	if ((int64_t)((uint64_t)x - (uint64_t)m) % s == 0)
		return (0);
	snprintf(why, sizeof(why), "value is not a multiple of a given step "
	    "(%s) from (%s)", show(b1, step), show(b2, min));
	return (ifail(v, ".validRange.step", value, why, NULL));
}

/*
 * requestPolicy of a capacity whose value is cap (1.37 apiserver,
 * validateRequestPolicy and its helpers): the messages and field paths are
 * upstream's, the first broken rule is reported.
 */
static int
check_policy(struct vctx *v, const char *cap, const Kpipc__RequestPolicy *p,
    int multi)
{
	const char	*def = p->default_value, *min = p->range_min;
	const char	*max = p->range_max, *step = p->range_step;
	char		 b1[SHOW + 8];
	size_t		 i, j, at;
	int64_t		 vi, vj;
	int		 r, c, found = 0;

	if (!multi)
		return (vfail(v, "allowMultipleAllocations must be true"));
	if (def[0] != '\0' &&
	    (r = check_quantity(v, ".default", def)) != 0)
		return (r);
	if (p->n_valid_values > 0 && p->has_range)
		return (vfail(v, "exactly one policy can be specified, cannot "
		    "specify \"validValues\" and \"validRange\" at the same "
		    "time"));
	if (p->n_valid_values > MAX_VALID_VALUES)
		return (ffail(v, ".validValues", "must have at most 10 items",
		    NULL));
	for (i = 0; i < p->n_valid_values; i++) {
		at = push(v, ".validValues[%zu]", i);
		r = check_quantity(v, "", p->valid_values[i]);
		pop(v, at);
		if (r != 0)
			return (r);
	}
	if (p->has_range &&
	    ((r = check_quantity(v, ".validRange.min", min)) != 0 ||
	    (max[0] != '\0' && (r = check_quantity(v, ".validRange.max",
	    max)) != 0) ||
	    (step[0] != '\0' && (r = check_quantity(v, ".validRange.step",
	    step)) != 0)))
		return (r);
	if ((p->n_valid_values > 0 || p->has_range) && def[0] == '\0')
		return (ffail(v, ".default", p->has_range ? "required when "
		    "validRange is defined" : "required when validValues is "
		    "defined", NULL));
	if (p->n_valid_values > 0) {
		for (i = 0; i + 1 < p->n_valid_values; i++)
			if (qcmp(p->valid_values[i], p->valid_values[i + 1]) >
			    0) {
				at = push(v, ".validValues[%zu]", i + 1);
				r = vfail(v, "%s: values must be sorted in "
				    "ascending order",
				    show(b1, p->valid_values[i + 1]));
				pop(v, at);
				return (r);
			}
		for (i = 0; i < p->n_valid_values; i++) {
			at = push(v, ".validValues[%zu]", i);
			r = 0;
			if (qcmp(p->valid_values[i], cap) > 0)
				r = ifail(v, "", p->valid_values[i], "option "
				    "is larger than capacity value", cap);
			/* Duplicates by integer value (quantityKey). */
			for (j = 0; r == 0 && j < i; j++)
				if (qty_value(p->valid_values[i], &vi) == 0 &&
				    qty_value(p->valid_values[j], &vj) == 0 &&
				    vi == vj)
					r = vfail(v, "%s: Duplicate value (also "
					    "validValues[%zu])",
					    show(b1, p->valid_values[i]), j);
			pop(v, at);
			if (r != 0)
				return (r);
			if (qcmp(p->valid_values[i], def) == 0)
				found = 1;
		}
		if (!found)
			return (ifail(v, ".validValues", def, "default value "
			    "is not valid according to the requestPolicy",
			    NULL));
		return (0);
	}
	if (!p->has_range)
		return (0);
	at = push(v, ".validRange");
	r = 0;
	if (qcmp(min, cap) > 0)
		r = ifail(v, ".min", min, "min is larger than capacity value",
		    cap);
	else if (qcmp(def, min) < 0)
		r = ifail(v, ".min", def, "default is less than min", min);
	else if (max[0] != '\0' && qcmp(min, max) > 0)
		r = ifail(v, ".max", min, "min is larger than max", max);
	else if (max[0] != '\0' && qcmp(max, cap) > 0)
		r = ifail(v, ".max", max, "max is larger than capacity value",
		    cap);
	else if (max[0] != '\0' && qcmp(def, max) > 0)
		r = ifail(v, ".max", def, "default is more than max", max);
	else if (step[0] != '\0') {
		if (qty_value(step, &vi) != 0 || vi <= 0)
			r = ifail(v, ".step", step, "must be greater than zero "
			    "(the server divides by it)", NULL);
		else if (qty_sum_cmp(min, step, cap, &c) != 0 || c > 0)
			r = ifail(v, ".step", step, "one step from min is "
			    "larger than capacity value", cap);
	}
	pop(v, at);
	if (r == 0 && step[0] != '\0' &&
	    (r = check_step(v, def, min, step)) == 0 && max[0] != '\0')
		r = check_step(v, max, min, step);
	return (r);
}

static int
check_counters(struct vctx *v, Kpipc__Counter **c, size_t n)
{
	char	 b[SHOW + 8];
	size_t	 i, j, at;
	int	 r = 0;

	if (n == 0)
		return (ffail(v, ".counters", "required", NULL));
	if (n > MAX_COUNTERS)
		return (ffail(v, ".counters", n > MAX_COUNTERS ?
		    "more than 32 counters" : "", NULL));
	for (i = 0; i < n && r == 0; i++) {
		at = push(v, ".counters[%s]", show(b, c[i]->name));
		if ((r = check_label(v, "", c[i]->name)) == 0)
			r = check_quantity(v, ".value", c[i]->quantity);
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(c[j]->name, c[i]->name) == 0)
				r = vfail(v, "duplicate counter name");
		pop(v, at);
	}
	return (r);
}

static int
check_requirement(struct vctx *v, const Kpipc__SelectorRequirement *q,
    int field)
{
	static const char	*ops[] = { "In", "NotIn", "Exists",
	    "DoesNotExist", "Gt", "Lt" };
	char			 b[SHOW + 8];
	const char		*why;
	size_t			 i, op;

	for (op = 0; op < 6 && strcmp(q->op, ops[op]) != 0; op++)
		;
	if (op == 6 || (field && op > 1))
		return (vfail(v, "operator %s is not one of %s",
		    show(b, q->op), field ? "In, NotIn (match fields)" :
		    "In, NotIn, Exists, DoesNotExist, Gt, Lt"));
	if (field && q->n_values != 1)
		return (vfail(v, "values: exactly one needed for a match "
		    "field, %zu given", q->n_values));
	if (op <= 1 && q->n_values == 0)
		return (vfail(v, "values: required for In and NotIn"));
	if ((op == 2 || op == 3) && q->n_values > 0)
		return (vfail(v, "values: not allowed for Exists and "
		    "DoesNotExist"));
	if (op >= 4 && q->n_values != 1)
		return (vfail(v, "values: exactly one needed for Gt and "
		    "Lt, %zu given", q->n_values));
	if (field && strcmp(q->key, "metadata.name") != 0)
		return (vfail(v, "key %s: only \"metadata.name\" is a "
		    "node field", show(b, q->key)));
	if (!field && (why = val_label_key_why(q->key)) != NULL)
		return (vfail(v, "key %s: %s", show(b, q->key), why));
	for (i = 0; i < q->n_values; i++) {
		why = field ? (name_is_subdomain(q->values[i],
		    strlen(q->values[i])) ? NULL :
		    "a node name " VAL_R_SUBDOMAIN) :
		    val_label_value_why(q->values[i]);
		if (why != NULL)
			return (vfail(v, "values[%zu] %s: %s", i,
			    show(b, q->values[i]), why));
	}
	return (0);
}

static int
check_selector(struct vctx *v, const char *field,
    const Kpipc__NodeSelector *ns)
{
	Kpipc__SelectorRequirement	**q;
	size_t				  i, n, at;
	int				  f, r;

	for (f = 0; f < 2; f++) {
		q = f ? ns->match_fields : ns->match_expressions;
		n = f ? ns->n_match_fields : ns->n_match_expressions;
		for (i = 0; i < n; i++) {
			at = push(v, "%s.%s[%zu]", field, f ? "matchFields" :
			    "matchExpressions", i);
			r = check_requirement(v, q[i], f);
			pop(v, at);
			if (r != 0)
				return (r);
		}
	}
	return (0);
}

static int
check_taint(struct vctx *v, const Kpipc__Taint *t)
{
	const char	*why;

	if (t->key[0] == '\0')
		return (ffail(v, ".key", "required", NULL));
	if ((why = val_label_key_why(t->key)) != NULL)
		return (ffail(v, ".key", why, t->key));
	if ((why = val_label_value_why(t->value)) != NULL)
		return (ffail(v, ".value", why, t->value));
	if (t->effect < KP_TAINT_NONE || t->effect > KP_TAINT_NO_EXECUTE)
		return (ffail(v, ".effect", t->effect == KP_TAINT_UNSET ?
		    "required (None, NoSchedule or NoExecute)" :
		    "not a kp_taint_effect", NULL));
	if (t->time_added < 0)
		return (ffail(v, ".timeAdded", "must not be negative", NULL));
	v->slice_bytes += strlen(t->key) + strlen(t->value) + 40;
	return (0);
}

static int
check_conditions(struct vctx *v, const char *field, char **c, size_t n)
{
	const char	*why;
	size_t		 i, j, at;
	int		 r = 0;

	if (n > MAX_CONDITIONS)
		return (ffail(v, field, "more than 4 conditions", NULL));
	for (i = 0; i < n && r == 0; i++) {
		at = push(v, "%s[%zu]", field, i);
		if (c[i][0] == '\0')
			r = vfail(v, "required");
		else if (strlen(c[i]) > MAX_COND_LEN)
			r = vfail(v, "must be no more than 316 characters");
		else if ((why = val_label_key_why(c[i])) != NULL)
			r = ffail(v, "", why, c[i]);
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(c[i], c[j]) == 0)
				r = vfail(v, "duplicate condition");
		v->slice_bytes += strlen(c[i]);
		pop(v, at);
	}
	return (r);
}

static int
check_allocatable(struct vctx *v, const Kpipc__NodeAllocatable *na,
    const Kpipc__Device *d)
{
	const char	*why;
	size_t		 i;
	int		 r, mapping, overhead;

	if ((why = val_label_key_why(na->resource)) != NULL)
		return (ffail(v, "", why, na->resource));
	mapping = na->capacity_key[0] != '\0' ||
	    na->capacity_multiplier[0] != '\0' ||
	    na->device_multiplier[0] != '\0';
	overhead = na->per_pod[0] != '\0' || na->per_container[0] != '\0';
	if (!mapping && !overhead)
		return (vfail(v, "a mapping or an overhead is required"));
	if (na->device_multiplier[0] != '\0' && (na->capacity_key[0] != '\0'
	    || na->capacity_multiplier[0] != '\0'))
		return (ffail(v, ".mapping", "deviceMultiplier and "
		    "capacityKey: at most one may be set", NULL));
	if (na->capacity_multiplier[0] != '\0' && na->capacity_key[0] == '\0')
		return (ffail(v, ".mapping.capacityKey", "required with "
		    "capacityMultiplier", NULL));
	if (na->capacity_key[0] != '\0') {
		for (i = 0; i < d->n_capacities; i++)
			if (strcmp(d->capacities[i]->name,
			    na->capacity_key) == 0)
				break;
		if (i == d->n_capacities)
			return (ffail(v, ".mapping.capacityKey", "is not a "
			    "capacity of the device", na->capacity_key));
	}
	if ((na->capacity_multiplier[0] != '\0' && (r = check_quantity(v,
	    ".mapping.capacityMultiplier", na->capacity_multiplier)) != 0) ||
	    (na->device_multiplier[0] != '\0' && (r = check_quantity(v,
	    ".mapping.deviceMultiplier", na->device_multiplier)) != 0) ||
	    (na->per_pod[0] != '\0' && (r = check_quantity(v,
	    ".overhead.perPod", na->per_pod)) != 0) ||
	    (na->per_container[0] != '\0' && (r = check_quantity(v,
	    ".overhead.perContainer", na->per_container)) != 0))
		return (r);
	return (0);
}

/* Names of one map (attributes, capacity): unique, since each becomes a
 * key of a JSON object where a duplicate would silently merge. */
static int
check_key(struct vctx *v, const char *what, const char *name)
{
	const char	*why;

	if ((why = val_key_why(name)) != NULL)
		return (vfail(v, "%s", why));
	v->slice_bytes += strlen(name);
	(void)what;
	return (0);
}

static int
check_device(struct vctx *v, const Kpipc__Device *d, int per_device,
    int *advanced)
{
	char	 b[SHOW + 8];
	size_t	 i, j, at, list_values = 0, sel;
	int	 r = 0;

	if ((r = check_label(v, ".name", d->name)) != 0)
		return (r);
	v->slice_bytes += strlen(d->name);
	if (d->n_attributes + d->n_capacities > MAX_ENTRIES)
		return (vfail(v, "%zu attributes and %zu capacities: at most "
		    "32 together allowed", d->n_attributes, d->n_capacities));
	for (i = 0; i < d->n_attributes && r == 0; i++) {
		at = push(v, ".attributes[%s]", show(b,
		    d->attributes[i]->name));
		if ((r = check_key(v, "attributes",
		    d->attributes[i]->name)) == 0)
			r = check_attribute(v, d->attributes[i], &list_values,
			    advanced);
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(d->attributes[j]->name,
			    d->attributes[i]->name) == 0)
				r = vfail(v, "duplicate name (also "
				    "attributes[%zu])", j);
		pop(v, at);
	}
	if (r == 0 && list_values > MAX_LIST_VALUES)
		r = ffail(v, ".attributes", "more than 48 list attribute "
		    "values in the device", NULL);
	for (i = 0; i < d->n_capacities && r == 0; i++) {
		const Kpipc__Capacity *c = d->capacities[i];

		at = push(v, ".capacity[%s]", show(b, c->name));
		if ((r = check_key(v, "capacity", c->name)) == 0)
			r = check_quantity(v, ".value", c->quantity);
		if (r == 0 && c->request_policy != NULL) {
			size_t at2 = push(v, ".requestPolicy");

			r = check_policy(v, c->quantity, c->request_policy,
			    d->allow_multiple_allocations);
			pop(v, at2);
		}
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(d->capacities[j]->name, c->name) == 0)
				r = vfail(v, "duplicate name (also "
				    "capacity[%zu])", j);
		pop(v, at);
	}
	if (r != 0)
		return (r);
	if (d->n_consumes_counters > 0)
		*advanced = 1;
	if (d->n_consumes_counters > MAX_CONSUMES)
		return (ffail(v, ".consumesCounters", "more than 2 entries",
		    NULL));
	for (i = 0; i < d->n_consumes_counters && r == 0; i++) {
		const Kpipc__CounterConsumption *cc = d->consumes_counters[i];

		at = push(v, ".consumesCounters[%zu]", i);
		if ((r = check_label(v, ".counterSet", cc->counter_set)) == 0)
			r = check_counters(v, cc->counters, cc->n_counters);
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(d->consumes_counters[j]->counter_set,
			    cc->counter_set) == 0)
				r = ffail(v, ".counterSet", "duplicate: one "
				    "entry per counter set", cc->counter_set);
		pop(v, at);
	}
	if (r != 0)
		return (r);
	sel = (d->node_name[0] != '\0') + (d->node_selector != NULL) +
	    (d->all_nodes != 0);
	if (!per_device && sel > 0)
		return (vfail(v, "nodeName, nodeSelector and allNodes of a "
		    "device need the slice's perDeviceNodeSelection"));
	if (per_device && sel != 1)
		return (vfail(v, "%s of nodeName, nodeSelector and allNodes: "
		    "exactly one is required with perDeviceNodeSelection",
		    sel == 0 ? "none" : "more than one"));
	if (d->node_name[0] != '\0' && !name_is_subdomain(d->node_name,
	    strlen(d->node_name)))
		return (ffail(v, ".nodeName", "a node name " VAL_R_SUBDOMAIN,
		    d->node_name));
	if (d->node_selector != NULL &&
	    (r = check_selector(v, ".nodeSelector", d->node_selector)) != 0)
		return (r);
	if (d->n_taints > 0)
		*advanced = 1;
	if (d->n_taints > MAX_TAINTS)
		return (ffail(v, ".taints", "more than 16 taints", NULL));
	for (i = 0; i < d->n_taints && r == 0; i++) {
		at = push(v, ".taints[%zu]", i);
		r = check_taint(v, d->taints[i]);
		pop(v, at);
	}
	if (r != 0 || (r = check_conditions(v, ".bindingConditions",
	    d->binding_conditions, d->n_binding_conditions)) != 0 ||
	    (r = check_conditions(v, ".bindingFailureConditions",
	    d->binding_failure_conditions,
	    d->n_binding_failure_conditions)) != 0)
		return (r);
	for (i = 0; i < d->n_node_allocatable && r == 0; i++) {
		at = push(v, ".nodeAllocatableResources[%s]", show(b,
		    d->node_allocatable[i]->resource));
		r = check_allocatable(v, d->node_allocatable[i], d);
		for (j = 0; r == 0 && j < i; j++)
			if (strcmp(d->node_allocatable[j]->resource,
			    d->node_allocatable[i]->resource) == 0)
				r = vfail(v, "duplicate resource");
		pop(v, at);
	}
	return (r);
}

static int
check_skip(struct vctx *v, char **ops, size_t n)
{
	static const char	*known[] = { "NodePrepareResources",
	    "NodeUnprepareResources", "*" };
	size_t			 i, j, at;
	int			 seen[3] = { 0, 0, 0 }, r = 0;

	for (i = 0; i < n && r == 0; i++) {
		at = push(v, ".skipNodeOperations[%zu]", i);
		for (j = 0; j < 3 && strcmp(ops[i], known[j]) != 0; j++)
			;
		if (j == 3)
			r = ffail(v, "", "is not NodePrepareResources, "
			    "NodeUnprepareResources or *", ops[i]);
		else if (seen[j]++)
			r = ffail(v, "", "duplicate", ops[i]);
		pop(v, at);
	}
	if (r == 0 && seen[0] && !seen[1] && !seen[2])
		r = ffail(v, ".skipNodeOperations", "NodePrepareResources "
		    "needs NodeUnprepareResources too", NULL);
	return (r);
}

static int
check_slice(struct vctx *v, const Kpipc__Pool *p, const Kpipc__Slice *s)
{
	const char	*why;
	size_t		 i, j, at;
	int		 r = 0, advanced = 0;

	if (s->n_devices > 0 && s->n_shared_counters > 0)
		return (vfail(v, "devices and sharedCounters: a slice holds "
		    "one of them (1.35); put counter sets in their own "
		    "slice of the pool"));
	if (s->n_devices > MAX_DEVICES)
		return (vfail(v, "%zu devices, at most 128 allowed",
		    s->n_devices));
	if (s->per_device_node_selection && (p->node_selector != NULL ||
	    p->all_nodes))
		return (vfail(v, "perDeviceNodeSelection: the pool's "
		    "nodeSelector or allNodes selects the nodes already"));
	v->slice_bytes = 0;
	for (i = 0; i < s->n_devices && r == 0; i++) {
		at = push(v, ".devices[%zu]", i);
		r = check_device(v, s->devices[i],
		    s->per_device_node_selection, &advanced);
		pop(v, at);
	}
	if (r != 0)
		return (r);
	if (advanced && s->n_devices > MAX_DEVICES_ADV)
		return (vfail(v, "%zu devices, at most 64 allowed when a "
		    "device has taints, consumesCounters or list attributes",
		    s->n_devices));
	if (s->n_shared_counters > MAX_COUNTER_SETS)
		return (ffail(v, ".sharedCounters", "more than 8 counter "
		    "sets", NULL));
	for (i = 0; i < s->n_shared_counters && r == 0; i++) {
		at = push(v, ".sharedCounters[%zu]", i);
		if ((r = check_label(v, ".name",
		    s->shared_counters[i]->name)) == 0)
			r = check_counters(v, s->shared_counters[i]->counters,
			    s->shared_counters[i]->n_counters);
		pop(v, at);
	}
	if (r != 0)
		return (r);
	if (s->partition_type_attribute[0] != '\0') {
		why = strchr(s->partition_type_attribute, '/') == NULL ?
		    "must be fully qualified (domain/identifier)" :
		    val_key_why(s->partition_type_attribute);
		if (why != NULL)
			return (ffail(v, ".partitionTypeAttribute", why,
			    s->partition_type_attribute));
		for (i = 0; i < s->n_devices; i++) {
			const Kpipc__Device *d = s->devices[i];

			if (d->n_consumes_counters == 0)
				continue;
			for (j = 0; j < d->n_attributes; j++)
				if (strcmp(d->attributes[j]->name,
				    s->partition_type_attribute) == 0)
					break;
			if (j == d->n_attributes || d->attributes[j]->
			    value_case != KPIPC__ATTRIBUTE__VALUE_STRING_VALUE) {
				at = push(v, ".devices[%zu].attributes", i);
				r = vfail(v, "a partition device needs the "
				    "string attribute partitionTypeAttribute "
				    "names");
				pop(v, at);
				return (r);
			}
		}
	}
	if ((r = check_skip(v, s->skip_node_operations,
	    s->n_skip_node_operations)) != 0)
		return (r);
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

/*
 * Names unique in the pool (1.35 controller): devices when sets is 0,
 * counter sets when 1. The slices are valid already.
 */
static int
check_pool_unique(struct vctx *v, const Kpipc__Pool *p, int sets)
{
	struct dref	*d;
	size_t		 i, j, n = 0, at;
	int		 r = 0;

	for (i = 0; i < p->n_slices; i++)
		n += sets ? p->slices[i]->n_shared_counters :
		    p->slices[i]->n_devices;
	if (n < 2)
		return (0);
	if ((d = calloc(n, sizeof(*d))) == NULL) {
		vfail(v, "out of memory checking names");
		return (KP_ENOMEM);
	}
	for (n = 0, i = 0; i < p->n_slices; i++) {
		const Kpipc__Slice *s = p->slices[i];

		for (j = 0; j < (sets ? s->n_shared_counters :
		    s->n_devices); j++, n++) {
			d[n].name = sets ? s->shared_counters[j]->name :
			    s->devices[j]->name;
			d[n].slice = i;
			d[n].dev = j;
		}
	}
	qsort(d, n, sizeof(*d), dref_cmp);
	for (i = 1; i < n && r == 0; i++)
		if (strcmp(d[i - 1].name, d[i].name) == 0) {
			at = push(v, ".slices[%zu].%s[%zu].name", d[i].slice,
			    sets ? "sharedCounters" : "devices", d[i].dev);
			r = vfail(v, "duplicate %s in the pool (also "
			    "slices[%zu].%s[%zu])", sets ? "counter set" :
			    "device", d[i - 1].slice, sets ?
			    "sharedCounters" : "devices", d[i - 1].dev);
			pop(v, at);
		}
	free(d);
	return (r);
}

/* Every consumesCounters entry names a set of the pool and counters of
 * it (1.35 controller: "counter set %q referenced by device %q ..."). */
static int
check_pool_refs(struct vctx *v, const Kpipc__Pool *p)
{
	const Kpipc__CounterSet		*set;
	const Kpipc__CounterConsumption	*cc;
	size_t				 i, j, k, m, si, sj, at;
	int				 r = 0;

	for (i = 0; i < p->n_slices; i++)
		for (j = 0; j < p->slices[i]->n_devices; j++) {
			const Kpipc__Device *d = p->slices[i]->devices[j];

			for (k = 0; k < d->n_consumes_counters; k++) {
				cc = d->consumes_counters[k];
				set = NULL;
				for (si = 0; set == NULL &&
				    si < p->n_slices; si++)
					for (sj = 0; sj < p->slices[si]->
					    n_shared_counters; sj++)
						if (strcmp(p->slices[si]->
						    shared_counters[sj]->name,
						    cc->counter_set) == 0) {
							set = p->slices[si]->
							    shared_counters[sj];
							break;
						}
				at = push(v, ".slices[%zu].devices[%zu]."
				    "consumesCounters[%zu]", i, j, k);
				if (set == NULL) {
					r = ffail(v, ".counterSet", "is not a "
					    "counter set of the pool",
					    cc->counter_set);
					pop(v, at);
					return (r);
				}
				for (m = 0; m < cc->n_counters && r == 0;
				    m++) {
					size_t c;

					for (c = 0; c < set->n_counters; c++)
						if (strcmp(set->counters[c]->
						    name, cc->counters[m]->
						    name) == 0)
							break;
					if (c == set->n_counters)
						r = vfail(v, "counters[%s]: "
						    "not a counter of counter "
						    "set \"%s\"",
						    cc->counters[m]->name,
						    set->name);
				}
				pop(v, at);
				if (r != 0)
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

	if (*name == '\0')
		return (ffail(v, ".name", "required", NULL));
	if ((n = strlen(name)) > VAL_MAX_SUBDOMAIN)
		return (ffail(v, ".name", "longer than 253 characters",
		    NULL));
	for (s = name;; s = slash + 1, part++) {
		slash = strchr(s, '/');
		n = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (!name_is_subdomain(s, n)) {
			char	 b[SHOW + 8];
			size_t	 at = push(v, ".name");
			int	 r = vfail(v, "%s part %zu %s", show(b, name),
			    part, n == 0 ? "is empty" : VAL_R_SUBDOMAIN);

			pop(v, at);
			return (r);
		}
		if (slash == NULL)
			return (0);
	}
}

static int
check_pool(struct vctx *v, const Kpipc__Pool *p)
{
	size_t	 i, at;
	int	 r;

	if ((r = check_pool_name(v, p->name)) != 0)
		return (r);
	if (p->generation < 0)
		return (ffail(v, ".generation", "must be 0 or more", NULL));
	if (p->node_selector != NULL && p->all_nodes)
		return (vfail(v, "nodeSelector and allNodes: at most one of "
		    "them may be set"));
	if (p->node_selector != NULL &&
	    (r = check_selector(v, ".nodeSelector", p->node_selector)) != 0)
		return (r);
	for (i = 0; i < p->n_slices; i++) {
		at = push(v, ".slices[%zu]", i);
		r = check_slice(v, p, p->slices[i]);
		pop(v, at);
		if (r != 0)
			return (r);
	}
	if ((r = check_pool_unique(v, p, 0)) != 0 ||
	    (r = check_pool_unique(v, p, 1)) != 0)
		return (r);
	return (check_pool_refs(v, p));
}

/*
 * validate_publish - the API server's and the 1.35 controller's rules on
 * a packed Publish. Returns 0, KP_EINVAL (err names the field path and
 * the rule) or KP_ENOMEM.
 */
int
validate_publish(const Kpipc__Publish *pub, char *err, size_t errsize)
{
	struct vctx	 v;
	size_t		 i, j;
	int		 r;

	memset(&v, 0, sizeof(v));
	v.err = err;
	v.errsize = errsize;
	if (err != NULL && errsize > 0)
		err[0] = '\0';
	if (pub == NULL)
		return (vfail(&v, "resources: NULL"));
	if (pub->n_pools > MAX_POOLS)
		return (vfail(&v, "%zu pools, at most 4096 per call",
		    pub->n_pools));
	for (i = 0; i < pub->n_pools; i++) {
		push(&v, "pools[%zu]", i);
		if ((r = check_pool(&v, pub->pools[i])) != 0)
			return (r);
		for (j = 0; j < i; j++)
			if (strcmp(pub->pools[j]->name,
			    pub->pools[i]->name) == 0)
				return (ffail(&v, ".name", "duplicate pool "
				    "name", pub->pools[i]->name));
		pop(&v, 0);
	}
	return (0);
}

/*
 * validate_reconcile - the node selection ReconcilePoolWithName needs
 * (pool NULL or "": none). No slice gets spec.nodeName then, so each
 * slice of the pool of that name needs a node selection of its own: the
 * pool's nodeSelector or allNodes, or per-device selection (the server
 * requires exactly one). Other pools are left out of the call, not
 * refused (1.38; publish_rules.c). Returns 0 or KP_EINVAL.
 */
int
validate_reconcile(const Kpipc__Publish *pub, const char *pool, char *err,
    size_t errsize)
{
	const Kpipc__Pool	*p = NULL;
	size_t			 i, k;

	if (pool == NULL || pool[0] == '\0')
		return (0);
	for (k = 0; k < pub->n_pools && p == NULL; k++)
		if (strcmp(pub->pools[k]->name, pool) == 0)
			p = pub->pools[k];
	if (p == NULL || p->node_selector != NULL || p->all_nodes)
		return (0);
	k--;
	for (i = 0; i < p->n_slices; i++)
		if (!p->slices[i]->per_device_node_selection) {
			snprintf(err, errsize, "pools[%zu].slices[%zu]: with "
			    "ReconcilePoolWithName no slice has a nodeName: "
			    "set the pool's nodeSelector or allNodes, or "
			    "perDeviceNodeSelection", k, i);
			return (KP_EINVAL);
		}
	if (p->n_slices == 0) {
		snprintf(err, errsize, "pools[%zu]: with ReconcilePoolWithName "
		    "no slice has a nodeName: set the pool's nodeSelector or "
		    "allNodes", k);
		return (KP_EINVAL);
	}
	return (0);
}

/*
 * validate_resources - pack_resources() and validate_publish() in one:
 * the rules of the header and of the API server for the driver's data.
 */
int
validate_resources(const struct kp_resources *res, char *err,
    size_t errsize)
{
	Kpipc__Publish	*pub;
	int		 r;

	if ((r = pack_resources(res, &pub, err, errsize)) != 0)
		return (r);
	r = validate_publish(pub, err, errsize);
	pack_free(pub);
	return (r);
}
