/*
 * pack.c - a struct kp_resources (the driver's borrowed memory) as a
 * Kpipc__Publish tree the driver process owns, to send with ipc_send().
 * Everything, strings included, is copied into an arena of a few large
 * chunks: the caller may change or free its data as soon as
 * pack_resources() returns, and pack_free() is one walk over the chunks.
 * The tree is not protobuf-c's to free (no free_unpacked on it).
 *
 * This is also where the growable-struct rules of the header are applied
 * (its "How this data grows" comment): every array is walked with the
 * caller's struct_size as the stride, each element is copied into a
 * zeroed struct of ours, of which only the first struct_size bytes come
 * from the caller, and bytes of a newer caller's struct beyond ours must
 * be zero. So validate.c only ever sees the Kpipc tree, whatever header
 * the driver was compiled with. Errors name the field path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

#define CHUNK_SIZE	(64u * 1024)
#define ALIGN		(sizeof(max_align_t))

struct chunk {
	struct chunk	*next;
	size_t		 size;		/* bytes in data */
	size_t		 used;
	max_align_t	 data[];
};

struct arena {
	struct chunk	*head;
	int		 error;		/* first failure: KP_E* */
	char		*err;		/* the message of it */
	size_t		 errsize;
	char		 path[160];	/* pools[0].slices[1]... */
	size_t		 len;
};

/* The Publish a caller sees sits in here; pack_free() finds the rest. */
struct pack {
	struct chunk	*chunks;
	Kpipc__Publish	 pub;
};

static void *
arena_alloc(struct arena *a, size_t n)
{
	struct chunk	*c = a->head;
	size_t		 size;
	void		*p;

	if (n > SIZE_MAX - ALIGN - sizeof(*c)) {
		a->error = KP_ENOMEM;
		return (NULL);
	}
	n = (n + ALIGN - 1) / ALIGN * ALIGN;
	if (c == NULL || c->size - c->used < n) {
		size = n > CHUNK_SIZE ? n : CHUNK_SIZE;
		if ((c = malloc(sizeof(*c) + size)) == NULL) {
			a->error = KP_ENOMEM;
			return (NULL);
		}
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return (p);
}

static void *
arena_array(struct arena *a, size_t n, size_t size)
{
	if (n == 0)
		return (NULL);
	if (n > SIZE_MAX / size) {
		a->error = KP_ENOMEM;
		return (NULL);
	}
	return (arena_alloc(a, n * size));
}

static char *
arena_strdup(struct arena *a, const char *s)
{
	size_t	 n;
	char	*p;

	if (s == NULL)
		s = "";
	n = strlen(s) + 1;
	if ((p = arena_alloc(a, n)) != NULL)
		memcpy(p, s, n);
	return (p);
}

static void
arena_free(struct chunk *c)
{
	struct chunk	*next;

	for (; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
}

static int	pfail(struct arena *, const char *, ...) KP_PRINTF(2, 3);
static size_t	push(struct arena *, const char *, ...) KP_PRINTF(2, 3);

/* The first error wins; its message names the current path. */
static int
pfail(struct arena *a, const char *fmt, ...)
{
	char	 msg[KP_ERROR_SIZE];
	va_list	 ap;

	if (a->error != 0)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->error = KP_EINVAL;
	if (a->err != NULL && a->errsize > 0)
		snprintf(a->err, a->errsize, "%s%s%s", a->path,
		    a->len > 0 ? ": " : "", msg);
	return (-1);
}

/* Append to the path; returns the length to pop back to. */
static size_t
push(struct arena *a, const char *fmt, ...)
{
	size_t	 old = a->len;
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(a->path + a->len, sizeof(a->path) - a->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		a->len += (size_t)n < sizeof(a->path) - a->len ? (size_t)n :
		    sizeof(a->path) - a->len - 1;
	return (old);
}

static void
pop(struct arena *a, size_t to)
{
	a->len = to;
	a->path[to] = '\0';
}

/*
 * One array of the caller's structs: base (n elements) of a struct we
 * know as ours bytes, first released with min bytes, aligned to align.
 * Sets *stride to the first element's struct_size. Reports at path.field.
 */
static int
abi_array(struct arena *a, const char *field, const void *base, size_t n,
    size_t ours, size_t min, size_t align, size_t *stride)
{
	size_t	 sz, at;
	int	 r = 0;

	*stride = 0;
	if (n == 0)
		return (0);
	at = push(a, "%s%s", a->len > 0 ? "." : "", field);
	if (base == NULL)
		r = pfail(a, "NULL with a count of %zu", n);
	else if ((sz = *(const size_t *)base) == 0)
		r = pfail(a, "struct_size is 0: initialise with its KP_*_INIT "
		    "macro");
	else if (sz < min)
		r = pfail(a, "struct_size %zu is smaller than the first "
		    "release's %zu", sz, min);
	else if (sz % align != 0)
		r = pfail(a, "struct_size %zu is not a multiple of %zu", sz,
		    align);
	else if (n > SIZE_MAX / sz)
		r = pfail(a, "count %zu is too large", n);
	else
		*stride = sz;
	pop(a, at);
	return (r);
}

/*
 * Element i into out (ours bytes): the first min(stride, ours) bytes from
 * the caller, the rest zero; a newer caller's bytes beyond ours must be 0.
 */
static int
abi_elem(struct arena *a, const char *field, const void *base, size_t stride,
    size_t i, size_t ours, void *out, int indexed)
{
	const unsigned char	*p = (const unsigned char *)base + i * stride;
	size_t			 at, k;
	int			 r = 0;

	memset(out, 0, ours);
	memcpy(out, p, stride < ours ? stride : ours);
	if (indexed)
		at = push(a, "%s%s[%zu]", a->len > 0 ? "." : "", field, i);
	else
		at = push(a, "%s%s", a->len > 0 ? "." : "", field);
	if (*(const size_t *)(const void *)p != stride)
		r = pfail(a, "struct_size %zu differs from the array's first "
		    "element (%zu)", *(const size_t *)(const void *)p, stride);
	for (k = ours; r == 0 && k < stride; k++)
		if (p[k] != 0)
			r = pfail(a, "a field this library does not know is "
			    "set (byte %zu of struct_size %zu; this library "
			    "knows %zu): it needs a newer libkubeletplugin",
			    k, stride, ours);
	if (r != 0)
		pop(a, at);
	return (r != 0 ? -1 : (int)at);
}

/* The size of T up to and including its member last (the first
 * release's last member), and T's alignment. */
#define ABI_MIN(T, last)	(offsetof(T, last) + sizeof(((T *)0)->last))
#define ALIGNOF(T)		_Alignof(T)

static char **
pack_strings(struct arena *a, const char *field, const char *const *in,
    size_t n)
{
	char	**v;
	size_t	  i, at;

	if (n == 0)
		return (NULL);
	at = push(a, ".%s", field);
	if (in == NULL) {
		pfail(a, "NULL with a count of %zu", n);
		pop(a, at);
		return (NULL);
	}
	if ((v = arena_array(a, n, sizeof(*v))) == NULL) {
		pop(a, at);
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		if (in[i] == NULL) {
			push(a, "[%zu]", i);
			pfail(a, "NULL");
			pop(a, at);
			return (NULL);
		}
		if ((v[i] = arena_strdup(a, in[i])) == NULL)
			break;
	}
	pop(a, at);
	return (a->error == 0 ? v : NULL);
}

/* A string the caller must give (NULL is an error naming it). */
static char *
need(struct arena *a, const char *field, const char *s)
{
	size_t	 at;

	if (s != NULL)
		return (arena_strdup(a, s));
	at = push(a, ".%s", field);
	pfail(a, "required (NULL)");
	pop(a, at);
	return (NULL);
}

static Kpipc__Attribute *
pack_attribute(struct arena *a, const struct kp_attribute *in)
{
	Kpipc__Attribute	*o;
	Kpipc__IntList		*il;
	Kpipc__BoolList		*bl;
	Kpipc__StringList	*sl;
	size_t			 i, at;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__attribute__init(o);
	if ((o->name = need(a, "name", in->name)) == NULL)
		return (NULL);
	if (in->type >= KP_ATTR_TYPE_INTS && in->type <= KP_ATTR_TYPE_VERSIONS &&
	    in->n_values > 0) {
		int null = in->type == KP_ATTR_TYPE_INTS ?
		    in->int_values == NULL : in->type == KP_ATTR_TYPE_BOOLS ?
		    in->bool_values == NULL : in->string_values == NULL;

		if (null) {
			at = push(a, ".%s", in->type == KP_ATTR_TYPE_INTS ?
			    "int_values" : in->type == KP_ATTR_TYPE_BOOLS ?
			    "bool_values" : "string_values");
			pfail(a, "NULL with a count of %zu", in->n_values);
			pop(a, at);
			return (NULL);
		}
	}
	switch (in->type) {
	case KP_ATTR_TYPE_INT:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_INT_VALUE;
		o->int_value = in->int_value;
		return (o);
	case KP_ATTR_TYPE_BOOL:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE;
		o->bool_value = in->bool_value != 0;
		return (o);
	case KP_ATTR_TYPE_STRING:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_STRING_VALUE;
		o->string_value = need(a, "string_value", in->string_value);
		return (o->string_value != NULL ? o : NULL);
	case KP_ATTR_TYPE_VERSION:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE;
		o->version_value = need(a, "string_value", in->string_value);
		return (o->version_value != NULL ? o : NULL);
	case KP_ATTR_TYPE_INTS:
		if ((il = arena_alloc(a, sizeof(*il))) == NULL)
			return (NULL);
		kpipc__int_list__init(il);
		if ((il->values = arena_array(a, in->n_values,
		    sizeof(int64_t))) == NULL && in->n_values > 0)
			return (NULL);
		for (i = 0; i < in->n_values; i++)
			il->values[i] = in->int_values[i];
		il->n_values = in->n_values;
		o->value_case = KPIPC__ATTRIBUTE__VALUE_INTS;
		o->ints = il;
		return (o);
	case KP_ATTR_TYPE_BOOLS:
		if ((bl = arena_alloc(a, sizeof(*bl))) == NULL)
			return (NULL);
		kpipc__bool_list__init(bl);
		if ((bl->values = arena_array(a, in->n_values,
		    sizeof(protobuf_c_boolean))) == NULL && in->n_values > 0)
			return (NULL);
		for (i = 0; i < in->n_values; i++)
			bl->values[i] = in->bool_values[i] != 0;
		bl->n_values = in->n_values;
		o->value_case = KPIPC__ATTRIBUTE__VALUE_BOOLS;
		o->bools = bl;
		return (o);
	case KP_ATTR_TYPE_STRINGS:
	case KP_ATTR_TYPE_VERSIONS:
		if ((sl = arena_alloc(a, sizeof(*sl))) == NULL)
			return (NULL);
		kpipc__string_list__init(sl);
		sl->values = pack_strings(a, "string_values",
		    in->string_values, in->n_values);
		if (a->error != 0)
			return (NULL);
		sl->n_values = in->n_values;
		if (in->type == KP_ATTR_TYPE_STRINGS) {
			o->value_case = KPIPC__ATTRIBUTE__VALUE_STRINGS;
			o->strings = sl;
		} else {
			o->value_case = KPIPC__ATTRIBUTE__VALUE_VERSIONS;
			o->versions = sl;
		}
		return (o);
	}
	at = push(a, ".type");
	pfail(a, "%d is not a kp_attribute_type", (int)in->type);
	pop(a, at);
	return (NULL);
}

static Kpipc__RequestPolicy *
pack_policy(struct arena *a, const struct kp_request_policy *in)
{
	Kpipc__RequestPolicy	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__request_policy__init(o);
	o->default_value = arena_strdup(a, in->default_value);
	o->valid_values = pack_strings(a, "valid_values", in->valid_values,
	    in->n_valid_values);
	o->n_valid_values = a->error == 0 ? in->n_valid_values : 0;
	o->has_range = in->range_min != NULL;
	o->range_min = arena_strdup(a, in->range_min);
	o->range_max = arena_strdup(a, in->range_max);
	o->range_step = arena_strdup(a, in->range_step);
	return (a->error == 0 ? o : NULL);
}

static Kpipc__Capacity *
pack_capacity(struct arena *a, const struct kp_capacity *in)
{
	struct kp_request_policy	 rp;
	Kpipc__Capacity			*o;
	size_t				 stride;
	int				 at;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__capacity__init(o);
	if ((o->name = need(a, "name", in->name)) == NULL ||
	    (o->quantity = need(a, "quantity", in->quantity)) == NULL)
		return (NULL);
	if (in->request_policy == NULL)
		return (o);
	if (abi_array(a, "request_policy", in->request_policy, 1, sizeof(rp),
	    ABI_MIN(struct kp_request_policy, range_step),
	    ALIGNOF(struct kp_request_policy), &stride) != 0 ||
	    (at = abi_elem(a, "request_policy", in->request_policy, stride, 0,
	    sizeof(rp), &rp, 0)) < 0)
		return (NULL);
	o->request_policy = pack_policy(a, &rp);
	pop(a, (size_t)at);
	return (o->request_policy != NULL ? o : NULL);
}

static Kpipc__Counter **
pack_counters(struct arena *a, const char *field, const struct kp_counter *in,
    size_t n)
{
	struct kp_counter	  c;
	Kpipc__Counter		**v, *o;
	size_t			  i, stride;
	int			  at;

	if (abi_array(a, field, in, n, sizeof(c), ABI_MIN(struct kp_counter,
	    quantity), ALIGNOF(struct kp_counter), &stride) != 0 ||
	    (v = arena_array(a, n, sizeof(*v))) == NULL)
		return (NULL);
	for (i = 0; i < n; i++) {
		if ((at = abi_elem(a, field, in, stride, i, sizeof(c), &c,
		    1)) < 0 || (o = v[i] = arena_alloc(a, sizeof(*o))) == NULL)
			return (NULL);
		kpipc__counter__init(o);
		if ((o->name = need(a, "name", c.name)) == NULL ||
		    (o->quantity = need(a, "quantity", c.quantity)) == NULL)
			return (NULL);
		pop(a, (size_t)at);
	}
	return (v);
}

static Kpipc__SelectorRequirement **
pack_requirements(struct arena *a, const char *field,
    const struct kp_node_selector_requirement *in, size_t n)
{
	struct kp_node_selector_requirement	  q;
	Kpipc__SelectorRequirement		**v, *o;
	size_t					  i, stride;
	int					  at;

	if (abi_array(a, field, in, n, sizeof(q),
	    ABI_MIN(struct kp_node_selector_requirement, n_values),
	    ALIGNOF(struct kp_node_selector_requirement), &stride) != 0 ||
	    (v = arena_array(a, n, sizeof(*v))) == NULL)
		return (NULL);
	for (i = 0; i < n; i++) {
		if ((at = abi_elem(a, field, in, stride, i, sizeof(q), &q,
		    1)) < 0 || (o = v[i] = arena_alloc(a, sizeof(*o))) == NULL)
			return (NULL);
		kpipc__selector_requirement__init(o);
		if ((o->key = need(a, "key", q.key)) == NULL ||
		    (o->op = need(a, "operator", q.op)) == NULL)
			return (NULL);
		o->values = pack_strings(a, "values", q.values, q.n_values);
		if (a->error != 0)
			return (NULL);
		o->n_values = q.n_values;
		pop(a, (size_t)at);
	}
	return (v);
}

static Kpipc__NodeSelector *
pack_selector(struct arena *a, const char *field,
    const struct kp_node_selector *p)
{
	struct kp_node_selector	 in;
	Kpipc__NodeSelector	*o;
	size_t			 stride;
	int			 at;

	if (abi_array(a, field, p, 1, sizeof(in), ABI_MIN(struct
	    kp_node_selector, n_match_fields), ALIGNOF(struct
	    kp_node_selector), &stride) != 0 || (at = abi_elem(a, field, p,
	    stride, 0, sizeof(in), &in, 0)) < 0 ||
	    (o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__node_selector__init(o);
	o->match_expressions = pack_requirements(a, "matchExpressions",
	    in.match_expressions, in.n_match_expressions);
	if (a->error != 0)
		return (NULL);
	o->match_fields = pack_requirements(a, "matchFields",
	    in.match_fields, in.n_match_fields);
	if (a->error != 0)
		return (NULL);
	o->n_match_expressions = in.n_match_expressions;
	o->n_match_fields = in.n_match_fields;
	pop(a, (size_t)at);
	return (o);
}

/* Walk array in (n of T) into out[] with pack_one(a, &element). */
#define PACK_ARRAY(a, field, T, last, in, n, out, nout, pack_one) do {	\
	T	_e;							\
	size_t	_i, _stride;						\
	int	_at;							\
									\
	if (abi_array(a, field, in, n, sizeof(T), ABI_MIN(T, last),	\
	    ALIGNOF(T), &_stride) != 0)					\
		return (NULL);						\
	if ((n) > 0 && ((out) = arena_array(a, n, sizeof(*(out)))) == NULL) \
		return (NULL);						\
	for (_i = 0; _i < (n); _i++) {					\
		if ((_at = abi_elem(a, field, in, _stride, _i, sizeof(T), \
		    &_e, 1)) < 0 || ((out)[_i] = pack_one(a, &_e)) == NULL) \
			return (NULL);					\
		pop(a, (size_t)_at);					\
		(nout)++;						\
	}								\
} while (0)

static Kpipc__CounterConsumption *
pack_consumption(struct arena *a, const struct kp_counter_consumption *in)
{
	Kpipc__CounterConsumption	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__counter_consumption__init(o);
	if ((o->counter_set = need(a, "counterSet", in->counter_set)) == NULL)
		return (NULL);
	o->counters = pack_counters(a, "counters", in->counters,
	    in->n_counters);
	if (a->error != 0)
		return (NULL);
	o->n_counters = in->n_counters;
	return (o);
}

static Kpipc__CounterSet *
pack_counter_set(struct arena *a, const struct kp_counter_set *in)
{
	Kpipc__CounterSet	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__counter_set__init(o);
	if ((o->name = need(a, "name", in->name)) == NULL)
		return (NULL);
	o->counters = pack_counters(a, "counters", in->counters,
	    in->n_counters);
	if (a->error != 0)
		return (NULL);
	o->n_counters = in->n_counters;
	return (o);
}

static Kpipc__Taint *
pack_taint(struct arena *a, const struct kp_taint *in)
{
	Kpipc__Taint	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__taint__init(o);
	if ((o->key = need(a, "key", in->key)) == NULL ||
	    (o->value = arena_strdup(a, in->value)) == NULL)
		return (NULL);
	o->effect = (int32_t)in->effect;
	o->time_added = in->time_added;
	return (o);
}

static Kpipc__NodeAllocatable *
pack_node_allocatable(struct arena *a, const struct kp_node_allocatable *in)
{
	Kpipc__NodeAllocatable	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__node_allocatable__init(o);
	if ((o->resource = need(a, "resource", in->resource)) == NULL)
		return (NULL);
	o->capacity_key = arena_strdup(a, in->capacity_key);
	o->capacity_multiplier = arena_strdup(a, in->capacity_multiplier);
	o->device_multiplier = arena_strdup(a, in->device_multiplier);
	o->per_pod = arena_strdup(a, in->per_pod);
	o->per_container = arena_strdup(a, in->per_container);
	return (a->error == 0 ? o : NULL);
}

static Kpipc__Device *
pack_device(struct arena *a, const struct kp_device *in)
{
	Kpipc__Device	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__device__init(o);
	if ((o->name = need(a, "name", in->name)) == NULL)
		return (NULL);
	PACK_ARRAY(a, "attributes", struct kp_attribute, n_values,
	    in->attributes, in->n_attributes, o->attributes, o->n_attributes,
	    pack_attribute);
	PACK_ARRAY(a, "capacity", struct kp_capacity, request_policy,
	    in->capacities, in->n_capacities, o->capacities, o->n_capacities,
	    pack_capacity);
	PACK_ARRAY(a, "consumesCounters", struct kp_counter_consumption,
	    n_counters, in->consumes_counters, in->n_consumes_counters,
	    o->consumes_counters, o->n_consumes_counters, pack_consumption);
	o->node_name = arena_strdup(a, in->node_name);
	if (in->node_selector != NULL && (o->node_selector = pack_selector(a,
	    "nodeSelector", in->node_selector)) == NULL)
		return (NULL);
	o->all_nodes = in->all_nodes != 0;
	PACK_ARRAY(a, "taints", struct kp_taint, time_added, in->taints,
	    in->n_taints, o->taints, o->n_taints, pack_taint);
	o->binds_to_node = in->binds_to_node != 0;
	o->binding_conditions = pack_strings(a, "bindingConditions",
	    in->binding_conditions, in->n_binding_conditions);
	o->n_binding_conditions = in->n_binding_conditions;
	o->binding_failure_conditions = pack_strings(a,
	    "bindingFailureConditions", in->binding_failure_conditions,
	    in->n_binding_failure_conditions);
	o->n_binding_failure_conditions = in->n_binding_failure_conditions;
	if (a->error != 0)
		return (NULL);
	o->allow_multiple_allocations = in->allow_multiple_allocations != 0;
	PACK_ARRAY(a, "nodeAllocatableResources", struct kp_node_allocatable,
	    per_container, in->node_allocatable, in->n_node_allocatable,
	    o->node_allocatable, o->n_node_allocatable,
	    pack_node_allocatable);
	return (a->error == 0 ? o : NULL);
}

static Kpipc__Slice *
pack_slice(struct arena *a, const struct kp_slice *in)
{
	Kpipc__Slice	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__slice__init(o);
	PACK_ARRAY(a, "devices", struct kp_device, n_node_allocatable,
	    in->devices, in->n_devices, o->devices, o->n_devices,
	    pack_device);
	PACK_ARRAY(a, "sharedCounters", struct kp_counter_set, n_counters,
	    in->shared_counters, in->n_shared_counters, o->shared_counters,
	    o->n_shared_counters, pack_counter_set);
	o->per_device_node_selection = in->per_device_node_selection != 0;
	o->partition_type_attribute = arena_strdup(a,
	    in->partition_type_attribute);
	o->skip_node_operations = pack_strings(a, "skipNodeOperations",
	    in->skip_node_operations, in->n_skip_node_operations);
	o->n_skip_node_operations = in->n_skip_node_operations;
	return (a->error == 0 ? o : NULL);
}

static void *
split_alloc(void *a, size_t n)
{
	return (arena_alloc(a, n));
}

static Kpipc__Pool *
pack_pool(struct arena *a, const struct kp_pool *in)
{
	Kpipc__Pool	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__pool__init(o);
	if ((o->name = need(a, "name", in->name)) == NULL)
		return (NULL);
	o->generation = in->generation;
	if (in->node_selector != NULL && (o->node_selector = pack_selector(a,
	    "nodeSelector", in->node_selector)) == NULL)
		return (NULL);
	o->all_nodes = in->all_nodes != 0;
	PACK_ARRAY(a, "slices", struct kp_slice, n_skip_node_operations,
	    in->slices, in->n_slices, o->slices, o->n_slices, pack_slice);
	if (a->error == 0 && in->split_slices) {
		char	msg[KP_ERROR_SIZE];
		int	r = pack_split_pool(o, a->path, split_alloc, a, msg,
			    sizeof(msg));

		if (r == KP_EINVAL) {
			a->error = r;
			if (a->err != NULL && a->errsize > 0)
				snprintf(a->err, a->errsize, "%s", msg);
		} else if (r != 0)
			a->error = r;
	}
	return (a->error == 0 ? o : NULL);
}

static Kpipc__Publish *
pack_top(struct arena *a, Kpipc__Publish *o, const struct kp_resources *p)
{
	struct kp_resources	 in;
	size_t			 stride;
	int			 at;

	if (abi_array(a, "resources", p, 1, sizeof(in), ABI_MIN(struct
	    kp_resources, n_pools), ALIGNOF(struct kp_resources),
	    &stride) != 0 || (at = abi_elem(a, "resources", p, stride, 0,
	    sizeof(in), &in, 0)) < 0)
		return (NULL);
	pop(a, (size_t)at);
	PACK_ARRAY(a, "pools", struct kp_pool, all_nodes, in.pools,
	    in.n_pools, o->pools, o->n_pools, pack_pool);
	return (o);
}

/*
 * pack_resources - deep-copy res into a new Kpipc__Publish at *out.
 * Errors: KP_EINVAL (NULL argument, a struct_size breaking the header's
 * rules, a NULL list with a count or a NULL required string; err, when
 * not NULL, names the field path), KP_ENOMEM. On error *out is NULL and
 * nothing is left allocated.
 */
int
pack_resources(const struct kp_resources *res, Kpipc__Publish **out,
    char *err, size_t errsize)
{
	struct arena	 a;
	struct pack	*pk;

	memset(&a, 0, sizeof(a));
	a.err = err;
	a.errsize = errsize;
	if (err != NULL && errsize > 0)
		err[0] = '\0';
	if (out == NULL)
		return (KP_EINVAL);
	*out = NULL;
	if (res == NULL) {
		pfail(&a, "resources: NULL");
		return (KP_EINVAL);
	}
	if ((pk = malloc(sizeof(*pk))) == NULL)
		return (KP_ENOMEM);
	kpipc__publish__init(&pk->pub);
	if (pack_top(&a, &pk->pub, res) == NULL && a.error == 0)
		a.error = KP_ENOMEM;
	if (a.error != 0) {
		if (a.error == KP_ENOMEM && err != NULL && errsize > 0 &&
		    err[0] == '\0')
			snprintf(err, errsize, "out of memory");
		arena_free(a.head);
		free(pk);
		return (a.error);
	}
	pk->chunks = a.head;
	*out = &pk->pub;
	return (0);
}

/* pack_free - free a tree pack_resources() built; NULL is ignored. */
void
pack_free(Kpipc__Publish *p)
{
	struct pack	*pk;

	if (p == NULL)
		return;
	pk = (struct pack *)(void *)((char *)p - offsetof(struct pack, pub));
	arena_free(pk->chunks);
	free(pk);
}
