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
#include <time.h>

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
strings_json(char **v, size_t n, int *bad)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL) {
		*bad = 1;
		return (NULL);
	}
	for (i = 0; i < n; i++)
		append(a, json_string(v[i]), bad);
	return (a);
}

static json_t *
attribute_json(const Kpipc__Attribute *a, int *bad)
{
	json_t	*l;
	size_t	 i;

	switch (a->value_case) {
	case KPIPC__ATTRIBUTE__VALUE_INT_VALUE:
		return (json_pack("{sI}", "int", (json_int_t)a->int_value));
	case KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE:
		return (json_pack("{sb}", "bool", a->bool_value ? 1 : 0));
	case KPIPC__ATTRIBUTE__VALUE_STRING_VALUE:
		return (json_pack("{ss}", "string", a->string_value));
	case KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE:
		return (json_pack("{ss}", "version", a->version_value));
	case KPIPC__ATTRIBUTE__VALUE_INTS:
		if ((l = json_array()) == NULL)
			break;
		for (i = 0; i < a->ints->n_values; i++)
			append(l, json_integer(a->ints->values[i]), bad);
		return (json_pack("{so}", "ints", l));
	case KPIPC__ATTRIBUTE__VALUE_BOOLS:
		if ((l = json_array()) == NULL)
			break;
		for (i = 0; i < a->bools->n_values; i++)
			append(l, json_boolean(a->bools->values[i]), bad);
		return (json_pack("{so}", "bools", l));
	case KPIPC__ATTRIBUTE__VALUE_STRINGS:
		return (json_pack("{so}", "strings", strings_json(
		    a->strings->values, a->strings->n_values, bad)));
	case KPIPC__ATTRIBUTE__VALUE_VERSIONS:
		return (json_pack("{so}", "versions", strings_json(
		    a->versions->values, a->versions->n_values, bad)));
	default:
		break;
	}
	*bad = 1;	/* validate.c never lets this through */
	return (NULL);
}

static json_t *
counters_json(Kpipc__Counter **c, size_t n, int *bad)
{
	json_t	*m;
	size_t	 i;

	if ((m = json_object()) == NULL) {
		*bad = 1;
		return (NULL);
	}
	for (i = 0; i < n; i++)
		put(m, c[i]->name, json_pack("{ss}", "value", c[i]->quantity),
		    bad);
	return (m);
}

static json_t *
capacity_json(const Kpipc__Capacity *c, int *bad)
{
	const Kpipc__RequestPolicy	*p = c->request_policy;
	json_t				*o, *rp, *r;

	if ((o = json_pack("{ss}", "value", c->quantity)) == NULL || p == NULL)
		return (o);
	if ((rp = json_object()) == NULL) {
		*bad = 1;
		return (o);
	}
	if (p->default_value[0] != '\0')
		put(rp, "default", json_string(p->default_value), bad);
	if (p->n_valid_values > 0)
		put(rp, "validValues", strings_json(p->valid_values,
		    p->n_valid_values, bad), bad);
	if (p->has_range && (r = json_pack("{ss}", "min", p->range_min)) !=
	    NULL) {
		if (p->range_max[0] != '\0')
			put(r, "max", json_string(p->range_max), bad);
		if (p->range_step[0] != '\0')
			put(r, "step", json_string(p->range_step), bad);
		put(rp, "validRange", r, bad);
	}
	put(o, "requestPolicy", rp, bad);
	return (o);
}

static const char *
effect_name(int32_t e)
{
	switch (e) {
	case KP_TAINT_NONE:
		return ("None");
	case KP_TAINT_NO_SCHEDULE:
		return ("NoSchedule");
	default:
		return ("NoExecute");
	}
}

/* Unix seconds as metav1.Time's RFC 3339 form. */
static json_t *
time_json(int64_t t)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;
	char		 b[32];

	if (gmtime_r(&tt, &tm) == NULL || strftime(b, sizeof(b),
	    "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return (NULL);
	return (json_string(b));
}

static json_t *
taint_json(const Kpipc__Taint *t, int *bad)
{
	json_t	*o;

	if ((o = json_pack("{ss ss}", "key", t->key, "effect",
	    effect_name(t->effect))) == NULL) {
		*bad = 1;
		return (NULL);
	}
	if (t->value[0] != '\0')
		put(o, "value", json_string(t->value), bad);
	if (t->time_added > 0)
		put(o, "timeAdded", time_json(t->time_added), bad);
	return (o);
}

static json_t *
allocatable_json(const Kpipc__NodeAllocatable *na, int *bad)
{
	json_t	*o, *m;

	if ((o = json_object()) == NULL) {
		*bad = 1;
		return (NULL);
	}
	if (na->capacity_key[0] != '\0' || na->capacity_multiplier[0] != '\0'
	    || na->device_multiplier[0] != '\0') {
		if ((m = json_object()) == NULL)
			*bad = 1;
		if (m != NULL && na->capacity_key[0] != '\0')
			put(m, "capacityKey", json_string(na->capacity_key),
			    bad);
		if (m != NULL && na->capacity_multiplier[0] != '\0')
			put(m, "capacityMultiplier", json_string(
			    na->capacity_multiplier), bad);
		if (m != NULL && na->device_multiplier[0] != '\0')
			put(m, "deviceMultiplier", json_string(
			    na->device_multiplier), bad);
		put(o, "mapping", m, bad);
	}
	if (na->per_pod[0] != '\0' || na->per_container[0] != '\0') {
		if ((m = json_object()) == NULL)
			*bad = 1;
		if (m != NULL && na->per_pod[0] != '\0')
			put(m, "perPod", json_string(na->per_pod), bad);
		if (m != NULL && na->per_container[0] != '\0')
			put(m, "perContainer", json_string(
			    na->per_container), bad);
		put(o, "overhead", m, bad);
	}
	return (o);
}

static json_t *
device_json(enum kube_version v, const Kpipc__Device *dev, int *bad)
{
	json_t	*d, *fields, *m, *a;
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
		m = json_object();
		for (i = 0; m != NULL && i < dev->n_attributes; i++)
			put(m, dev->attributes[i]->name,
			    attribute_json(dev->attributes[i], bad), bad);
		put(fields, "attributes", m, bad);
	}
	if (dev->n_capacities > 0) {
		m = json_object();
		for (i = 0; m != NULL && i < dev->n_capacities; i++)
			put(m, dev->capacities[i]->name, capacity_json(
			    dev->capacities[i], bad), bad);
		put(fields, "capacity", m, bad);
	}
	if (dev->n_consumes_counters > 0) {
		a = json_array();
		for (i = 0; a != NULL && i < dev->n_consumes_counters; i++)
			append(a, json_pack("{ss so}", "counterSet",
			    dev->consumes_counters[i]->counter_set, "counters",
			    counters_json(dev->consumes_counters[i]->counters,
			    dev->consumes_counters[i]->n_counters, bad)), bad);
		put(fields, "consumesCounters", a, bad);
	}
	if (dev->node_name[0] != '\0')
		put(fields, "nodeName", json_string(dev->node_name), bad);
	if (dev->node_selector != NULL)
		put(fields, "nodeSelector", selector_json(dev->node_selector,
		    bad), bad);
	if (dev->all_nodes)
		put(fields, "allNodes", json_true(), bad);
	if (dev->n_taints > 0) {
		a = json_array();
		for (i = 0; a != NULL && i < dev->n_taints; i++)
			append(a, taint_json(dev->taints[i], bad), bad);
		put(fields, "taints", a, bad);
	}
	if (dev->binds_to_node)
		put(fields, "bindsToNode", json_true(), bad);
	if (dev->n_binding_conditions > 0)
		put(fields, "bindingConditions", strings_json(
		    dev->binding_conditions, dev->n_binding_conditions, bad),
		    bad);
	if (dev->n_binding_failure_conditions > 0)
		put(fields, "bindingFailureConditions", strings_json(
		    dev->binding_failure_conditions,
		    dev->n_binding_failure_conditions, bad), bad);
	if (dev->allow_multiple_allocations)
		put(fields, "allowMultipleAllocations", json_true(), bad);
	if (dev->n_node_allocatable > 0) {
		m = json_object();
		for (i = 0; m != NULL && i < dev->n_node_allocatable; i++)
			put(m, dev->node_allocatable[i]->resource,
			    allocatable_json(dev->node_allocatable[i], bad),
			    bad);
		put(fields, "nodeAllocatableResources", m, bad);
	}
	return (d);
}

/*
 * The spec of a desired slice in version v's shape. v1beta2 and v1 get
 * nodeName / allNodes only when set (an explicit "" or false is rejected
 * there); "devices" is always an array. Node selection: the slice's
 * perDeviceNodeSelection, else the pool's node selector, else allNodes
 * for a pool that says so or has no node, else this node. Returns a new
 * reference or NULL (out of memory). Fields version v cannot carry are
 * conv_check_version()'s to refuse before.
 */
json_t *
conv_slice_spec(enum kube_version v, const struct conv_slice *cs)
{
	const Kpipc__Slice	*sl = cs->slice;
	json_t			*spec, *pool, *devs, *sets;
	size_t			 i;
	int			 bad = 0;

	if ((spec = json_object()) == NULL)
		return (NULL);
	put(spec, "driver", json_string(cs->driver), &bad);
	pool = json_pack("{ss sI sI}", "name", cs->pool,
	    "generation", (json_int_t)cs->generation,
	    "resourceSliceCount", (json_int_t)cs->count);
	put(spec, "pool", pool, &bad);
	if (sl != NULL && sl->per_device_node_selection)
		put(spec, "perDeviceNodeSelection", json_true(), &bad);
	else if (cs->selector != NULL)
		put(spec, "nodeSelector", selector_json(cs->selector, &bad),
		    &bad);
	else if (!cs->all_nodes && cs->node != NULL && cs->node[0] != '\0')
		put(spec, "nodeName", json_string(cs->node), &bad);
	else
		put(spec, "allNodes", json_true(), &bad);
	if ((devs = json_array()) == NULL)
		bad = 1;
	for (i = 0; devs != NULL && i < cs->n_devices; i++)
		append(devs, device_json(v, cs->devices[i], &bad), &bad);
	put(spec, "devices", devs, &bad);
	if (sl != NULL && sl->n_shared_counters > 0) {
		sets = json_array();
		for (i = 0; sets != NULL && i < sl->n_shared_counters; i++)
			append(sets, json_pack("{ss so}", "name",
			    sl->shared_counters[i]->name, "counters",
			    counters_json(sl->shared_counters[i]->counters,
			    sl->shared_counters[i]->n_counters, &bad)), &bad);
		put(spec, "sharedCounters", sets, &bad);
	}
	if (sl != NULL && sl->partition_type_attribute[0] != '\0')
		put(spec, "partitionTypeAttribute", json_string(
		    sl->partition_type_attribute), &bad);
	if (sl != NULL && sl->n_skip_node_operations > 0)
		put(spec, "skipNodeOperations", strings_json(
		    sl->skip_node_operations, sl->n_skip_node_operations,
		    &bad), &bad);
	if (bad) {
		json_decref(spec);
		return (NULL);
	}
	return (spec);
}

/*
 * Can version v carry everything of pool p? Fields of 1.33-1.34 exist in
 * v1beta1 (under basic), v1beta2 and v1; the ones first added in 1.36 and
 * 1.37 (list attributes, nodeAllocatableResources, partitionTypeAttribute,
 * skipNodeOperations) only in v1 [inferred: v1beta1 was deprecated in
 * 1.35 and v1beta2 in 1.36 before those fields arrived]. Returns 0, or
 * KP_ENOTSUP with err naming the field and the version: such a field is
 * never dropped silently.
 */
int
conv_check_version(enum kube_version v, const Kpipc__Pool *p, char *err,
    size_t errsize)
{
	const char	*f = NULL;
	size_t		 i, j, k;

	if (v == KUBE_V1)
		return (0);
	for (i = 0; f == NULL && i < p->n_slices; i++) {
		const Kpipc__Slice *s = p->slices[i];

		if (s->partition_type_attribute[0] != '\0')
			f = "partitionTypeAttribute";
		else if (s->n_skip_node_operations > 0)
			f = "skipNodeOperations";
		for (j = 0; f == NULL && j < s->n_devices; j++) {
			const Kpipc__Device *d = s->devices[j];

			if (d->n_node_allocatable > 0)
				f = "nodeAllocatableResources";
			for (k = 0; f == NULL && k < d->n_attributes; k++)
				if (d->attributes[k]->value_case >=
				    KPIPC__ATTRIBUTE__VALUE_INTS)
					f = "attributes (list types)";
			if (f != NULL) {
				snprintf(err, errsize, "pool %s: slices[%zu]."
				    "devices[%zu].%s: not in resource.k8s.io/"
				    "%s, the newest version the API server "
				    "serves (it needs resource.k8s.io/v1)",
				    p->name, i, j, f, v == KUBE_V1BETA1 ?
				    "v1beta1" : "v1beta2");
				return (KP_ENOTSUP);
			}
		}
		if (f != NULL) {
			snprintf(err, errsize, "pool %s: slices[%zu].%s: not "
			    "in resource.k8s.io/%s, the newest version the "
			    "API server serves (it needs resource.k8s.io/v1)",
			    p->name, i, f, v == KUBE_V1BETA1 ? "v1beta1" :
			    "v1beta2");
			return (KP_ENOTSUP);
		}
	}
	return (0);
}

static int
taint_same(const json_t *a, const json_t *b)
{
	static const char	*k[] = { "key", "value", "effect" };
	size_t			 i;

	for (i = 0; i < 3; i++) {
		const json_t *x = json_object_get(a, k[i]);
		const json_t *y = json_object_get(b, k[i]);
		const char *xs = json_is_string(x) ? json_string_value(x) : "";
		const char *ys = json_is_string(y) ? json_string_value(y) : "";

		if (strcmp(xs, ys) != 0)
			return (0);
	}
	return (1);
}

/*
 * The controller keeps a stored taint's timeAdded (1.33+): taints of
 * spec (version v's shape) without one get the time of the same taint
 * (key, value, effect) of the same device in stored (a neutral spec).
 */
void
conv_adopt_taint_times(enum kube_version v, json_t *spec, const json_t *stored)
{
	json_t		*devs, *d, *src, *t, *sd, *st;
	size_t		 i, j, k, l;
	const char	*name;

	devs = json_object_get(spec, "devices");
	json_array_foreach(devs, i, d) {
		src = v == KUBE_V1BETA1 ? json_object_get(d, "basic") : d;
		name = json_string_value(json_object_get(d, "name"));
		if (name == NULL || json_array_size(json_object_get(src,
		    "taints")) == 0)
			continue;
		json_array_foreach(json_object_get(stored, "devices"), j, sd) {
			const char *n = json_string_value(json_object_get(sd,
			    "name"));

			if (n == NULL || strcmp(n, name) != 0)
				continue;
			json_array_foreach(json_object_get(src, "taints"), k,
			    t) {
				if (json_object_get(t, "timeAdded") != NULL)
					continue;
				json_array_foreach(json_object_get(sd,
				    "taints"), l, st)
					if (taint_same(t, st) &&
					    json_is_string(json_object_get(st,
					    "timeAdded"))) {
						json_object_set(t, "timeAdded",
						    json_object_get(st,
						    "timeAdded"));
						break;
					}
			}
			break;
		}
	}
}

/* Device fields -> the feature gate that serves them (upstream's
 * DroppedFieldsError.DisabledFeatures, plus the 1.36/1.37 gates). */
static const struct {
	const char	*field;
	const char	*gate;
} gate_of[] = {
	{ "taints", "DRADeviceTaints" },
	{ "consumesCounters", "DRAPartitionableDevices" },
	{ "nodeName", "DRAPartitionableDevices" },
	{ "nodeSelector", "DRAPartitionableDevices" },
	{ "allNodes", "DRAPartitionableDevices" },
	{ "bindsToNode", "DRADeviceBindingConditions" },
	{ "bindingConditions", "DRADeviceBindingConditions" },
	{ "bindingFailureConditions", "DRADeviceBindingConditions" },
	{ "allowMultipleAllocations", "DRAConsumableCapacity" },
	{ "nodeAllocatableResources", "DRANodeAllocatableResources" },
	{ "sharedCounters", "DRAPartitionableDevices" },
	{ "perDeviceNodeSelection", "DRAPartitionableDevices" },
	{ "partitionTypeAttribute", "DRAPartitionableDevicesType" },
	{ "skipNodeOperations", "DRAOptionalNodeOperations" },
};

static void
add_gate(char *out, size_t size, const char *g)
{
	size_t	 n = strlen(out);

	if (strstr(out, g) != NULL)
		return;
	snprintf(out + n, size - n, "%s%s", n > 0 ? ", " : "", g);
}

static void
gates_of(const json_t *want, const json_t *got, char *out, size_t size)
{
	const char	*k, *k2;
	json_t		*x, *y, *gd;
	size_t		 i, g;

	json_object_foreach((json_t *)want, k, x) {
		if (json_object_get(got, k) != NULL)
			continue;
		for (g = 0; g < sizeof(gate_of) / sizeof(gate_of[0]); g++)
			if (strcmp(gate_of[g].field, k) == 0)
				add_gate(out, size, gate_of[g].gate);
	}
	json_array_foreach(json_object_get(want, "devices"), i, x) {
		gd = json_array_get(json_object_get(got, "devices"), i);
		json_object_foreach(x, k, y) {
			if (strcmp(k, "attributes") == 0) {
				json_t *ga = json_object_get(gd, k), *a;

				json_object_foreach(y, k2, a)
					if (json_object_get(a, "ints") ||
					    json_object_get(a, "bools") ||
					    json_object_get(a, "strings") ||
					    json_object_get(a, "versions"))
						if (!json_equal(a,
						    json_object_get(ga, k2)))
							add_gate(out, size,
							    "DRAListTypeAttributes");
				continue;
			}
			if (strcmp(k, "capacity") == 0) {
				json_t *gc = json_object_get(gd, k), *c;

				json_object_foreach(y, k2, c)
					if (json_object_get(c,
					    "requestPolicy") != NULL &&
					    json_object_get(json_object_get(gc,
					    k2), "requestPolicy") == NULL)
						add_gate(out, size,
						    "DRAConsumableCapacity");
				continue;
			}
			if (json_object_get(gd, k) != NULL)
				continue;
			for (g = 0; g < sizeof(gate_of) / sizeof(gate_of[0]);
			    g++)
				if (strcmp(gate_of[g].field, k) == 0)
					add_gate(out, size, gate_of[g].gate);
		}
	}
}

/*
 * Did the server drop fields of want (both neutral specs)? Returns 1 and
 * the disabled feature gates in out ("unknown" if no known field is
 * missing but the two differ), else 0. Only what we sent and the server
 * lost counts: a field the server adds (a taint's timeAdded) does not.
 */
int
conv_dropped_fields(const json_t *want, const json_t *got, char *out,
    size_t size)
{
	out[0] = '\0';
	if (json_equal(want, got))
		return (0);
	gates_of(want, got, out, size);
	if (out[0] == '\0')
		return (0);
	return (1);
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
	char		 c[QTY_CANON_MAX], buf[64];
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
	if (qty_canon(s, c, sizeof(c)) != 0) {
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

/* o[k], a quantity, in canonical form (absent: nothing to do). */
static void
canon_key(json_t *o, const char *k)
{
	json_t	*q = json_object_get(o, k);

	if (q != NULL && !json_is_null(q))
		json_object_set_new(o, k, canon_json(q));
}

/* {"name": {"value": q}} maps of counters. */
static void
canon_counters(json_t *m)
{
	const char	*k;
	json_t		*c;

	json_object_foreach(m, k, c)
		canon_key(c, "value");
}

/* Quantities below the top level of a device: the server may return
 * any of them in canonical form. */
static void
canon_device(json_t *nd)
{
	const char	*k;
	json_t		*x, *p, *r;
	size_t		 i;

	json_object_foreach(json_object_get(nd, "capacity"), k, x) {
		if ((p = json_object_get(x, "requestPolicy")) == NULL)
			continue;
		canon_key(p, "default");
		json_array_foreach(json_object_get(p, "validValues"), i, r)
			json_array_set_new(json_object_get(p, "validValues"),
			    i, canon_json(r));
		if ((r = json_object_get(p, "validRange")) != NULL) {
			canon_key(r, "min");
			canon_key(r, "max");
			canon_key(r, "step");
		}
	}
	json_array_foreach(json_object_get(nd, "consumesCounters"), i, x)
		canon_counters(json_object_get(x, "counters"));
	json_object_foreach(json_object_get(nd, "nodeAllocatableResources"), k,
	    x) {
		canon_key(json_object_get(x, "mapping"), "capacityMultiplier");
		canon_key(json_object_get(x, "mapping"), "deviceMultiplier");
		canon_key(json_object_get(x, "overhead"), "perPod");
		canon_key(json_object_get(x, "overhead"), "perContainer");
	}
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
	canon_device(nd);
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
	json_array_foreach(json_object_get(n, "sharedCounters"), i, p)
		canon_counters(json_object_get(p, "counters"));
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
