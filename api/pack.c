/*
 * pack.c - a struct kp_resources (the driver's borrowed memory) as a
 * Kpipc__Publish tree the driver process owns, to send with ipc_send().
 * Everything, strings included, is copied into an arena of a few large
 * chunks: the caller may change or free its data as soon as
 * pack_resources() returns, and pack_free() is one walk over the chunks.
 * The tree is not protobuf-c's to free (no free_unpacked on it).
 */
#include <stddef.h>
#include <stdint.h>
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

	if (s == NULL) {
		a->error = KP_EINVAL;
		return (NULL);
	}
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

/* A list the caller says has n entries must be there. */
static int
arena_list(struct arena *a, const void *list, size_t n)
{
	if (n > 0 && list == NULL) {
		a->error = KP_EINVAL;
		return (-1);
	}
	return (0);
}

static Kpipc__Attribute *
pack_attribute(struct arena *a, const struct kp_attribute *in)
{
	Kpipc__Attribute	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__attribute__init(o);
	if ((o->name = arena_strdup(a, in->name)) == NULL)
		return (NULL);
	switch (in->type) {
	case KP_ATTR_INT:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_INT_VALUE;
		o->int_value = in->int_value;
		return (o);
	case KP_ATTR_BOOL:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE;
		o->bool_value = in->bool_value != 0;
		return (o);
	case KP_ATTR_STRING:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_STRING_VALUE;
		o->string_value = arena_strdup(a, in->string_value);
		return (o->string_value != NULL ? o : NULL);
	case KP_ATTR_VERSION:
		o->value_case = KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE;
		o->version_value = arena_strdup(a, in->string_value);
		return (o->version_value != NULL ? o : NULL);
	}
	a->error = KP_EINVAL;
	return (NULL);
}

static Kpipc__Capacity *
pack_capacity(struct arena *a, const struct kp_capacity *in)
{
	Kpipc__Capacity	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__capacity__init(o);
	if ((o->name = arena_strdup(a, in->name)) == NULL ||
	    (o->quantity = arena_strdup(a, in->quantity)) == NULL)
		return (NULL);
	return (o);
}

static Kpipc__Device *
pack_device(struct arena *a, const struct kp_device *in)
{
	Kpipc__Device	*o;

	if (arena_list(a, in->attributes, in->n_attributes) != 0 ||
	    arena_list(a, in->capacities, in->n_capacities) != 0 ||
	    (o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__device__init(o);
	if ((o->name = arena_strdup(a, in->name)) == NULL)
		return (NULL);
	o->attributes = arena_array(a, in->n_attributes, sizeof(void *));
	o->capacities = arena_array(a, in->n_capacities, sizeof(void *));
	if (a->error != 0)
		return (NULL);
	for (; o->n_attributes < in->n_attributes; o->n_attributes++)
		if ((o->attributes[o->n_attributes] = pack_attribute(a,
		    &in->attributes[o->n_attributes])) == NULL)
			return (NULL);
	for (; o->n_capacities < in->n_capacities; o->n_capacities++)
		if ((o->capacities[o->n_capacities] = pack_capacity(a,
		    &in->capacities[o->n_capacities])) == NULL)
			return (NULL);
	return (o);
}

static Kpipc__Slice *
pack_slice(struct arena *a, const struct kp_slice *in)
{
	Kpipc__Slice	*o;

	if (arena_list(a, in->devices, in->n_devices) != 0 ||
	    (o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__slice__init(o);
	o->devices = arena_array(a, in->n_devices, sizeof(void *));
	if (a->error != 0)
		return (NULL);
	for (; o->n_devices < in->n_devices; o->n_devices++)
		if ((o->devices[o->n_devices] = pack_device(a,
		    &in->devices[o->n_devices])) == NULL)
			return (NULL);
	return (o);
}

static Kpipc__SelectorRequirement **
pack_requirements(struct arena *a,
    const struct kp_node_selector_requirement *in, size_t n)
{
	Kpipc__SelectorRequirement	**v, *o;
	size_t				  i, j;

	if (arena_list(a, in, n) != 0 ||
	    ((v = arena_array(a, n, sizeof(*v))) == NULL && n > 0))
		return (NULL);
	for (i = 0; i < n; i++) {
		if (arena_list(a, in[i].values, in[i].n_values) != 0 ||
		    (o = v[i] = arena_alloc(a, sizeof(*o))) == NULL)
			return (NULL);
		kpipc__selector_requirement__init(o);
		if ((o->key = arena_strdup(a, in[i].key)) == NULL ||
		    (o->op = arena_strdup(a, in[i].op)) == NULL)
			return (NULL);
		o->values = arena_array(a, in[i].n_values, sizeof(char *));
		if (a->error != 0)
			return (NULL);
		for (j = 0; j < in[i].n_values; j++)
			if ((o->values[j] = arena_strdup(a,
			    in[i].values[j])) == NULL)
				return (NULL);
		o->n_values = in[i].n_values;
	}
	return (v);
}

static Kpipc__NodeSelector *
pack_selector(struct arena *a, const struct kp_node_selector *in)
{
	Kpipc__NodeSelector	*o;

	if ((o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__node_selector__init(o);
	o->match_expressions = pack_requirements(a, in->match_expressions,
	    in->n_match_expressions);
	o->match_fields = pack_requirements(a, in->match_fields,
	    in->n_match_fields);
	if (a->error != 0)
		return (NULL);
	o->n_match_expressions = in->n_match_expressions;
	o->n_match_fields = in->n_match_fields;
	return (o);
}

static Kpipc__Pool *
pack_pool(struct arena *a, const struct kp_pool *in)
{
	Kpipc__Pool	*o;

	if (arena_list(a, in->slices, in->n_slices) != 0 ||
	    (o = arena_alloc(a, sizeof(*o))) == NULL)
		return (NULL);
	kpipc__pool__init(o);
	if ((o->name = arena_strdup(a, in->name)) == NULL)
		return (NULL);
	o->generation = in->generation;
	if (in->node_selector != NULL &&
	    (o->node_selector = pack_selector(a, in->node_selector)) == NULL)
		return (NULL);
	o->slices = arena_array(a, in->n_slices, sizeof(void *));
	if (a->error != 0)
		return (NULL);
	for (; o->n_slices < in->n_slices; o->n_slices++)
		if ((o->slices[o->n_slices] = pack_slice(a,
		    &in->slices[o->n_slices])) == NULL)
			return (NULL);
	return (o);
}

/*
 * pack_resources - deep-copy res into a new Kpipc__Publish at *out.
 * Errors: KP_EINVAL (NULL argument, a NULL list with a count or a NULL
 * string: validate_resources() reports those with their place),
 * KP_ENOMEM. On error *out is NULL and nothing is left allocated.
 */
int
pack_resources(const struct kp_resources *res, Kpipc__Publish **out)
{
	struct arena	 a = { NULL, 0 };
	struct pack	*pk;
	size_t		 i;

	if (out == NULL)
		return (KP_EINVAL);
	*out = NULL;
	if (res == NULL || (res->n_pools > 0 && res->pools == NULL))
		return (KP_EINVAL);
	if ((pk = malloc(sizeof(*pk))) == NULL)
		return (KP_ENOMEM);
	kpipc__publish__init(&pk->pub);
	pk->pub.pools = arena_array(&a, res->n_pools, sizeof(void *));
	for (i = 0; a.error == 0 && i < res->n_pools; i++)
		if ((pk->pub.pools[i] = pack_pool(&a,
		    &res->pools[i])) == NULL && a.error == 0)
			a.error = KP_EINVAL;
	if (a.error != 0) {
		arena_free(a.head);
		free(pk);
		return (a.error);
	}
	pk->pub.n_pools = res->n_pools;
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
