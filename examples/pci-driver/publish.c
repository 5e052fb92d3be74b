/*
 * publish.c - the discovered devices as ResourceSlices: one pool named
 * after the node, attributes qualified with the driver's name (and the
 * standard resource.kubernetes.io/pcieRoot), the memory BARs as a
 * capacity. Written with the library's growable structs (KP_*_INIT and
 * designated initialisers), built in a loop.
 *
 * SR-IOV: where discovery found a function's physfn link (a virtual
 * function), its physical function and its VFs become partitions of one
 * device: a counter set "<pf name>" with one counter "vfs" (the number
 * of VFs), the PF consuming all of it and each VF one, so the scheduler
 * never hands out the PF together with any of its VFs; a VF also carries
 * its PF's address as the attribute "<driver>/physfn". Everything goes
 * out as one flat slice with split_slices set: the library puts the
 * counter sets in slices of their own (the 1.35 rule) and cuts the
 * devices into slices of 128, or 64 where devices consume counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pci.h"

#define MAX_ATTRS	12
#define NAME_SIZE	128	/* "<driver>/<identifier>" */

/* The attributes and capacity of one device, with their storage. */
struct dev_entry {
	struct kp_attribute	 attrs[MAX_ATTRS];
	char			 names[MAX_ATTRS][NAME_SIZE];
	struct kp_capacity	 cap;
	char			 cap_name[NAME_SIZE];
	char			 quantity[32];
	struct kp_counter	 use;		/* of the PF's counter set */
	struct kp_counter_consumption consume;
	char			 set[PCI_NAME_SIZE];	/* its PF's name */
	char			 count[24];
};

/*
 * Attributes and capacities of the driver's own domain go by their short
 * names ("pciAddress", not "<driver>/pciAddress"): the same in CEL, and
 * what kp_validate_qualified_names() requires (Kubernetes 1.38).
 */
static void
add_string(struct dev_entry *e, size_t *n, const char *id,
    const char *value)
{
	if (value[0] == '\0')
		return;		/* sysfs had nothing: no attribute */
	snprintf(e->names[*n], NAME_SIZE, "%s", id);
	e->attrs[*n] = (struct kp_attribute)KP_ATTR_STRING(e->names[*n],
	    value);
	(*n)++;
}

static void
add_int(struct dev_entry *e, size_t *n, const char *id, int64_t value)
{
	snprintf(e->names[*n], NAME_SIZE, "%s", id);
	e->attrs[*n] = (struct kp_attribute)KP_ATTR_INT(e->names[*n], value);
	(*n)++;
}

/* Bytes as a Kubernetes quantity: the largest binary suffix that
 * divides it exactly ("512Ki", "16Mi", "1536"). */
static void
quantity(uint64_t bytes, char *out, size_t size)
{
	static const char	*suffix[] = { "", "Ki", "Mi", "Gi", "Ti" };
	size_t			 i = 0;

	while (i + 1 < sizeof(suffix) / sizeof(suffix[0]) && bytes >= 1024 &&
	    bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(out, size, "%llu%s", (unsigned long long)bytes, suffix[i]);
}

static void
fill_device(const struct pci_dev *d,
    struct dev_entry *e, struct kp_device *out)
{
	size_t	 n = 0;

	memset(e, 0, sizeof(*e));
	add_string(e, &n, "pciAddress", d->addr);
	add_string(e, &n, "vendor", d->vendor);
	add_string(e, &n, "device", d->device);
	add_string(e, &n, "subsystemVendor", d->subsys_vendor);
	add_string(e, &n, "subsystemDevice", d->subsys_device);
	add_string(e, &n, "class", d->class);
	add_string(e, &n, "driver", d->driver);
	if (d->numa_node >= 0)
		add_int(e, &n, "numaNode", d->numa_node);
	if (d->iommu_group >= 0)
		add_int(e, &n, "iommuGroup", d->iommu_group);
	add_string(e, &n, "physfn", d->physfn);
	if (d->pcie_root[0] != '\0') {
		e->attrs[n++] = (struct kp_attribute)KP_ATTR_STRING(
		    "resource.kubernetes.io/pcieRoot", d->pcie_root);
	}
	*out = (struct kp_device){ KP_DEVICE_INIT, .name = d->name,
	    .attributes = e->attrs, .n_attributes = n };
	if (d->bar_bytes > 0) {
		snprintf(e->cap_name, sizeof(e->cap_name), "barMemory");
		quantity(d->bar_bytes, e->quantity, sizeof(e->quantity));
		e->cap = (struct kp_capacity)KP_CAPACITY(e->cap_name,
		    e->quantity);
		out->capacities = &e->cap;
		out->n_capacities = 1;
	}
}

/* The PF of a VF, as an index into devs; -1: none or filtered out (the
 * VF then stands alone). */
static ssize_t
physfn(const struct pci_list *devs, const struct pci_dev *d)
{
	size_t	 i;

	if (d->physfn[0] == '\0')
		return (-1);
	for (i = 0; i < devs->n; i++)
		if (strcmp(devs->devs[i].addr, d->physfn) == 0)
			return ((ssize_t)i);
	return (-1);
}

/* Make e (device i) consume n "vfs" of the counter set named set. */
static void
consume(struct dev_entry *e, struct kp_device *out, const char *set,
    size_t n)
{
	snprintf(e->set, sizeof(e->set), "%s", set);
	snprintf(e->count, sizeof(e->count), "%zu", n);
	e->use = (struct kp_counter)KP_COUNTER("vfs", e->count);
	e->consume = (struct kp_counter_consumption){
	    KP_COUNTER_CONSUMPTION_INIT, .counter_set = e->set,
	    .counters = &e->use, .n_counters = 1 };
	out->consumes_counters = &e->consume;
	out->n_consumes_counters = 1;
}

/*
 * Publish devs as the pool <node> (replacing what was published before).
 * Returns the kp_publish_resources() code; err holds the library's
 * message on failure.
 */
int
pci_publish(struct kp_plugin *plugin, const struct pci_config *cfg,
    const struct pci_list *devs, char *err, size_t errsize)
{
	struct dev_entry	*entries = NULL;
	struct kp_device	*kdevs = NULL;
	struct kp_slice		 slice;
	struct kp_counter_set	*sets = NULL;
	struct kp_counter	*set_counters = NULL;
	char			(*set_counts)[24] = NULL;
	struct kp_pool		 pool;
	struct kp_resources	 res;
	ssize_t			*pf = NULL;
	size_t			*vfs = NULL, i, n_sets = 0;
	int			 r;

	if (devs->n > 0 &&
	    ((entries = calloc(devs->n, sizeof(*entries))) == NULL ||
	    (kdevs = calloc(devs->n, sizeof(*kdevs))) == NULL ||
	    (pf = calloc(devs->n, sizeof(*pf))) == NULL ||
	    (vfs = calloc(devs->n, sizeof(*vfs))) == NULL ||
	    (sets = calloc(devs->n, sizeof(*sets))) == NULL ||
	    (set_counters = calloc(devs->n, sizeof(*set_counters))) == NULL ||
	    (set_counts = calloc(devs->n, sizeof(*set_counts))) == NULL)) {
		snprintf(err, errsize, "out of memory");
		r = KP_ENOMEM;
		goto out;
	}
	for (i = 0; i < devs->n; i++) {
		fill_device(&devs->devs[i], &entries[i], &kdevs[i]);
		if ((pf[i] = physfn(devs, &devs->devs[i])) >= 0)
			vfs[pf[i]]++;
	}
	/* One counter set per PF with VFs; the PF takes all, a VF one. */
	for (i = 0; i < devs->n; i++) {
		if (vfs[i] == 0)
			continue;
		snprintf(set_counts[n_sets], sizeof(set_counts[0]), "%zu",
		    vfs[i]);
		set_counters[n_sets] = (struct kp_counter)KP_COUNTER("vfs",
		    set_counts[n_sets]);
		sets[n_sets] = (struct kp_counter_set){ KP_COUNTER_SET_INIT,
		    .name = devs->devs[i].name,
		    .counters = &set_counters[n_sets], .n_counters = 1 };
		n_sets++;
		consume(&entries[i], &kdevs[i], devs->devs[i].name, vfs[i]);
	}
	for (i = 0; i < devs->n; i++)
		if (pf[i] >= 0 && vfs[pf[i]] > 0)
			consume(&entries[i], &kdevs[i],
			    devs->devs[pf[i]].name, 1);
	/* One flat slice: the library cuts it to the allowed sizes. */
	slice = (struct kp_slice){ KP_SLICE_INIT, .devices = kdevs,
	    .n_devices = devs->n, .shared_counters = sets,
	    .n_shared_counters = n_sets };
	pool = (struct kp_pool){ KP_POOL_INIT, .name = cfg->node,
	    .slices = &slice, .n_slices = 1, .split_slices = 1 };
	res = (struct kp_resources){ KP_RESOURCES_INIT, .pools = &pool,
	    .n_pools = 1 };
	if ((r = kp_publish_resources(plugin, &res)) != 0)
		snprintf(err, errsize, "%s", kp_plugin_last_error(plugin));
out:
	free(set_counts);
	free(set_counters);
	free(sets);
	free(vfs);
	free(pf);
	free(kdevs);
	free(entries);
	return (r);
}
