/*
 * publish.c - the discovered devices as ResourceSlices: one pool named
 * after the node, slices of at most 128 devices, attributes qualified
 * with the driver's name (and the standard resource.kubernetes.io/
 * pcieRoot), the memory BARs as a capacity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

static void
add_string(struct dev_entry *e, size_t *n, const char *driver,
    const char *id, const char *value)
{
	if (value[0] == '\0')
		return;		/* sysfs had nothing: no attribute */
	snprintf(e->names[*n], NAME_SIZE, "%s/%s", driver, id);
	e->attrs[*n].name = e->names[*n];
	e->attrs[*n].type = KP_ATTR_STRING;
	e->attrs[*n].string_value = value;
	(*n)++;
}

static void
add_int(struct dev_entry *e, size_t *n, const char *driver, const char *id,
    int64_t value)
{
	snprintf(e->names[*n], NAME_SIZE, "%s/%s", driver, id);
	e->attrs[*n].name = e->names[*n];
	e->attrs[*n].type = KP_ATTR_INT;
	e->attrs[*n].int_value = value;
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
fill_device(const struct pci_config *cfg, const struct pci_dev *d,
    struct dev_entry *e, struct kp_device *out)
{
	size_t	 n = 0;

	memset(e, 0, sizeof(*e));
	add_string(e, &n, cfg->driver, "pciAddress", d->addr);
	add_string(e, &n, cfg->driver, "vendor", d->vendor);
	add_string(e, &n, cfg->driver, "device", d->device);
	add_string(e, &n, cfg->driver, "subsystemVendor", d->subsys_vendor);
	add_string(e, &n, cfg->driver, "subsystemDevice", d->subsys_device);
	add_string(e, &n, cfg->driver, "class", d->class);
	add_string(e, &n, cfg->driver, "driver", d->driver);
	if (d->numa_node >= 0)
		add_int(e, &n, cfg->driver, "numaNode", d->numa_node);
	if (d->iommu_group >= 0)
		add_int(e, &n, cfg->driver, "iommuGroup", d->iommu_group);
	if (d->pcie_root[0] != '\0') {
		snprintf(e->names[n], NAME_SIZE,
		    "resource.kubernetes.io/pcieRoot");
		e->attrs[n].name = e->names[n];
		e->attrs[n].type = KP_ATTR_STRING;
		e->attrs[n].string_value = d->pcie_root;
		n++;
	}
	memset(out, 0, sizeof(*out));
	out->name = d->name;
	out->attributes = e->attrs;
	out->n_attributes = n;
	if (d->bar_bytes > 0) {
		snprintf(e->cap_name, sizeof(e->cap_name), "%s/barMemory",
		    cfg->driver);
		quantity(d->bar_bytes, e->quantity, sizeof(e->quantity));
		e->cap.name = e->cap_name;
		e->cap.quantity = e->quantity;
		out->capacities = &e->cap;
		out->n_capacities = 1;
	}
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
	struct kp_slice		*slices = NULL;
	struct kp_pool		 pool;
	struct kp_resources	 res;
	size_t			 i, n_slices;
	int			 r;

	n_slices = (devs->n + PCI_SLICE_MAX - 1) / PCI_SLICE_MAX;
	if (devs->n > 0 &&
	    ((entries = calloc(devs->n, sizeof(*entries))) == NULL ||
	    (kdevs = calloc(devs->n, sizeof(*kdevs))) == NULL ||
	    (slices = calloc(n_slices, sizeof(*slices))) == NULL)) {
		snprintf(err, errsize, "out of memory");
		r = KP_ENOMEM;
		goto out;
	}
	for (i = 0; i < devs->n; i++)
		fill_device(cfg, &devs->devs[i], &entries[i], &kdevs[i]);
	for (i = 0; i < n_slices; i++) {
		slices[i].devices = &kdevs[i * PCI_SLICE_MAX];
		slices[i].n_devices = devs->n - i * PCI_SLICE_MAX;
		if (slices[i].n_devices > PCI_SLICE_MAX)
			slices[i].n_devices = PCI_SLICE_MAX;
	}
	memset(&pool, 0, sizeof(pool));
	pool.name = cfg->node;
	pool.slices = slices;
	pool.n_slices = n_slices;
	res.pools = &pool;
	res.n_pools = 1;
	if ((r = kp_publish_resources(plugin, &res)) != 0)
		snprintf(err, errsize, "%s", kp_plugin_last_error(plugin));
out:
	free(slices);
	free(kdevs);
	free(entries);
	return (r);
}
