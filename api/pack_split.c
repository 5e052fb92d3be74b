/*
 * pack_split.c - kp_pool.split_slices: the pool's slices taken as one flat
 * list of devices and counter sets and cut again into ResourceSlices of
 * the sizes the API server allows (1.37): counter sets in slices of their
 * own (1.35: a slice holds devices or sharedCounters), at most 8 per
 * slice; devices in order, at most 128 per slice, 64 in a slice where any
 * device has taints, consumesCounters or a list attribute. Runs in the
 * driver process on the packed tree, before validation, so every limit is
 * still checked (and errors name the slices of the result).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#define SPLIT_SETS	8	/* ResourceSliceMaxCounterSets */
#define SPLIT_DEVICES	128	/* ResourceSliceMaxDevices */
#define SPLIT_DEVICES_ADV 64	/* ...WithAdvancedFeatures */

static int
advanced(const Kpipc__Device *d)
{
	size_t	i;

	if (d->n_taints > 0 || d->n_consumes_counters > 0)
		return (1);
	for (i = 0; i < d->n_attributes; i++)
		switch (d->attributes[i]->value_case) {
		case KPIPC__ATTRIBUTE__VALUE_INTS:
		case KPIPC__ATTRIBUTE__VALUE_BOOLS:
		case KPIPC__ATTRIBUTE__VALUE_STRINGS:
		case KPIPC__ATTRIBUTE__VALUE_VERSIONS:
			return (1);
		default:
			break;
		}
	return (0);
}

static int
same_strings(char **a, size_t na, char **b, size_t nb)
{
	size_t	i;

	if (na != nb)
		return (0);
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return (0);
	return (1);
}

/* The slice-wide fields every slice of the result carries. */
static int
same_slice_fields(const Kpipc__Slice *a, const Kpipc__Slice *b)
{
	return (a->per_device_node_selection == b->per_device_node_selection &&
	    strcmp(a->partition_type_attribute,
	    b->partition_type_attribute) == 0 &&
	    same_strings(a->skip_node_operations, a->n_skip_node_operations,
	    b->skip_node_operations, b->n_skip_node_operations));
}

/* One slice of the result, with the first input slice's fields. */
static Kpipc__Slice *
new_slice(const Kpipc__Slice *proto, void *(*alloc)(void *, size_t),
    void *actx)
{
	Kpipc__Slice	*s;

	if ((s = alloc(actx, sizeof(*s))) == NULL)
		return (NULL);
	kpipc__slice__init(s);
	if (proto != NULL) {
		s->per_device_node_selection = proto->per_device_node_selection;
		s->partition_type_attribute = proto->partition_type_attribute;
		s->skip_node_operations = proto->skip_node_operations;
		s->n_skip_node_operations = proto->n_skip_node_operations;
	}
	return (s);
}

/*
 * pack_split_pool - re-cut p's slices in place; the new arrays come from
 * alloc (the packing arena: nothing to free here). The input slices must
 * agree on perDeviceNodeSelection, partitionTypeAttribute and
 * skipNodeOperations. No devices and no counter sets: one empty slice.
 * Returns 0, KP_EINVAL (err names the slice) or KP_ENOMEM.
 */
int
pack_split_pool(Kpipc__Pool *p, const char *path,
    void *(*alloc)(void *, size_t), void *actx, char *err, size_t errsize)
{
	Kpipc__Slice	**out, *cur = NULL, *proto;
	size_t		  i, j, n_dev = 0, n_set = 0, n_out, k = 0, lim;
	int		  adv = 0;

	proto = p->n_slices > 0 ? p->slices[0] : NULL;
	for (i = 0; i < p->n_slices; i++) {
		if (!same_slice_fields(proto, p->slices[i])) {
			snprintf(err, errsize, "%s.slices[%zu]: with "
			    "split_slices every slice needs the same "
			    "perDeviceNodeSelection, partitionTypeAttribute "
			    "and skipNodeOperations", path, i);
			return (KP_EINVAL);
		}
		n_dev += p->slices[i]->n_devices;
		n_set += p->slices[i]->n_shared_counters;
	}
	/* At most: the set slices, plus one device slice per 64 devices. */
	n_out = (n_set + SPLIT_SETS - 1) / SPLIT_SETS +
	    (n_dev + SPLIT_DEVICES_ADV - 1) / SPLIT_DEVICES_ADV + 1;
	if ((out = alloc(actx, n_out * sizeof(*out))) == NULL)
		return (KP_ENOMEM);
	for (i = 0; i < p->n_slices; i++)
		for (j = 0; j < p->slices[i]->n_shared_counters; j++) {
			if (cur == NULL || cur->n_shared_counters ==
			    SPLIT_SETS) {
				if ((cur = new_slice(proto, alloc,
				    actx)) == NULL || (cur->shared_counters =
				    alloc(actx, SPLIT_SETS *
				    sizeof(*cur->shared_counters))) == NULL)
					return (KP_ENOMEM);
				out[k++] = cur;
			}
			cur->shared_counters[cur->n_shared_counters++] =
			    p->slices[i]->shared_counters[j];
		}
	cur = NULL;
	for (i = 0; i < p->n_slices; i++)
		for (j = 0; j < p->slices[i]->n_devices; j++) {
			Kpipc__Device *d = p->slices[i]->devices[j];
			int a = adv || advanced(d);

			lim = a ? SPLIT_DEVICES_ADV : SPLIT_DEVICES;
			if (cur == NULL || cur->n_devices + 1 > lim) {
				if ((cur = new_slice(proto, alloc,
				    actx)) == NULL || (cur->devices =
				    alloc(actx, SPLIT_DEVICES *
				    sizeof(*cur->devices))) == NULL)
					return (KP_ENOMEM);
				out[k++] = cur;
				a = advanced(d);
			}
			adv = a;
			cur->devices[cur->n_devices++] = d;
		}
	if (k == 0 && (out[k++] = new_slice(proto, alloc, actx)) == NULL)
		return (KP_ENOMEM);
	p->slices = out;
	p->n_slices = k;
	return (0);
}
