/*
 * prepare.c - the hooks, run by the library inside the sandboxed
 * nodeserver process (prepare and unprepare inside its sandbox, one call
 * at a time as kp_serialize() defaults).
 *
 * What is prepared is the library's journal's to keep (kp_journal_dir()
 * in main.c): a claim prepared before is answered from it without the
 * prepare hook, its CDI spec rewritten through pci_journal_write_spec()
 * first when the file is gone (/var/run/cdi is a tmpfs: a reboot empties
 * it while the journal survives); unprepare's removal of the spec and the
 * entry is the library's too, and a claim it does not know never reaches
 * the unprepare hook. So the hooks only do the PCI work:
 *
 * prepare: the claim's allocation results (from the library's claim
 * look-up) name devices of this node's pool; each is found in the
 * nodeserver's device list (cache.c: rescanned when stale or on a miss,
 * the device's driver link read again) and
 * becomes one CDI device "<device>-<claim uid>" of kind <driver>/pci: an
 * environment variable naming its PCI address and, for a function bound
 * to vfio-pci, the nodes /dev/vfio/vfio and /dev/vfio/<IOMMU group>. The
 * spec goes through kp_prepare_cdi_spec(); the addresses are the claim's
 * journal data, from which write_spec builds the spec again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci.h"

#define MAX_DEVS	64	/* devices of one claim */

/* "0000:00:1f.2" -> "PCI_ADDRESS_0000_00_1F_2=0000:00:1f.2" */
static void
env_entry(const char *addr, char *out, size_t size)
{
	size_t	 i, n;

	n = (size_t)snprintf(out, size, "PCI_ADDRESS_");
	for (i = 0; addr[i] != '\0' && n + 1 < size; i++, n++) {
		if (addr[i] == ':' || addr[i] == '.')
			out[n] = '_';
		else if (addr[i] >= 'a' && addr[i] <= 'f')
			out[n] = (char)(addr[i] - 'a' + 'A');
		else
			out[n] = addr[i];
	}
	snprintf(out + n, size - n, "=%s", addr);
}

/* The IOMMU group of d when bound to vfio-pci; -1 otherwise. */
static int
dev_vfio_group(const struct pci_dev *d)
{
	return (strcmp(d->driver, "vfio-pci") == 0 ? d->iommu_group : -1);
}

/* The IOMMU group of a function bound to vfio-pci; -1 otherwise. */
static int
vfio_group(const struct pci_list *l, const char *addr)
{
	size_t	 i;

	for (i = 0; addr != NULL && i < l->n; i++)
		if (strcmp(l->devs[i].addr, addr) == 0)
			return (dev_vfio_group(&l->devs[i]));
	return (-1);
}

/* One CDI device of the spec (group: vfio's, -1: none); 0 or -1 with
 * err set. */
static int
spec_device(struct kp_cdi_builder *b, const char *name, const char *addr,
    int g, char *err, size_t errsize)
{
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT };
	char				 env[128], node[64];

	env_entry(addr, env, sizeof(env));
	if (kp_cdi_add_device(b, name) != 0 ||
	    kp_cdi_add_env(b, name, env) != 0)
		goto fail;
	if (g >= 0) {
		snprintf(node, sizeof(node), "/dev/vfio/%d", g);
		n.path = "/dev/vfio/vfio";
		if (kp_cdi_add_device_node(b, name, &n) != 0)
			goto fail;
		n.path = node;
		if (kp_cdi_add_device_node(b, name, &n) != 0)
			goto fail;
	}
	return (0);
fail:
	snprintf(err, errsize, "CDI spec: %s", kp_cdi_builder_last_error(b));
	return (-1);
}

/* Check claim c's results against this node's devices, each found into
 * devs[k] (the nodeserver's cache, cache.c): NULL or why. */
static const char *
check_claim(const struct pci_config *cfg, const struct kp_claim *c,
    struct pci_dev *devs, char *err, size_t errsize)
{
	size_t	 k;
	int	 r;

	if (c->n_results == 0)
		snprintf(err, errsize, "claim %s/%s has no allocation for "
		    "%s (the driver needs Kubernetes access to look claims "
		    "up: --kubeconfig or --in-cluster)", c->namespace_,
		    c->name, cfg->driver);
	else if (c->n_results > MAX_DEVS)
		snprintf(err, errsize, "claim %s/%s: more than %d devices",
		    c->namespace_, c->name, MAX_DEVS);
	else {
		for (k = 0; k < c->n_results; k++) {
			if (strcmp(c->results[k].pool, cfg->node) != 0) {
				snprintf(err, errsize, "claim %s/%s: device "
				    "%s is from pool %s, not this node's pool "
				    "%s", c->namespace_, c->name,
				    c->results[k].device, c->results[k].pool,
				    cfg->node);
				return (err);
			}
			r = pci_cache_lookup(cfg, c->results[k].device,
			    &devs[k], err, errsize);
			if (r < 0)
				return (err);
			if (r > 0) {
				snprintf(err, errsize, "claim %s/%s: device "
				    "%s is not on this node (any more)",
				    c->namespace_, c->name,
				    c->results[k].device);
				return (err);
			}
		}
		return (NULL);
	}
	return (err);
}

/* Prepare claim i: its spec, devices and journal data; errors fail it. */
static void
prepare_one(const struct pci_config *cfg, const struct kp_claim *c,
    size_t i, struct kp_prepare_results *res)
{
	struct kp_cdi_builder	*b = NULL;
	struct pci_dev		 devs[MAX_DEVS];
	const struct pci_dev	*d;
	char			 kind[128], err[KP_ERROR_SIZE * 2];
	char			 names[MAX_DEVS][PCI_NAME_SIZE + 140];
	char			 ids[MAX_DEVS][PCI_NAME_SIZE + 300];
	char			*data = NULL;
	const char		*id;
	json_t			*jd = NULL, *list;
	size_t			 k;

	if (check_claim(cfg, c, devs, err, sizeof(err)) != NULL)
		goto fail;
	snprintf(kind, sizeof(kind), "%s/pci", cfg->driver);
	if (kp_cdi_builder_new(kind, &b) != 0 ||
	    (jd = json_pack("{s:[]}", "devices")) == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	list = json_object_get(jd, "devices");
	for (k = 0; k < c->n_results; k++) {
		d = &devs[k];
		/* Unique per kind across the claims' spec files. */
		snprintf(names[k], sizeof(names[k]), "%s-%s", d->name, c->uid);
		if (kp_cdi_device_id(kind, names[k], ids[k],
		    sizeof(ids[k])) != 0) {
			snprintf(err, sizeof(err), "claim %.63s/%.200s: no "
			    "valid CDI device ID from %.200s", c->namespace_,
			    c->name, names[k]);
			goto fail;
		}
		if (spec_device(b, names[k], d->addr, dev_vfio_group(d), err,
		    sizeof(err)) != 0)
			goto fail;
		if (json_array_append_new(list, json_pack("{s:s, s:s}",
		    "name", names[k], "addr", d->addr)) != 0) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
	}
	if (kp_prepare_cdi_spec(res, i, b) != 0)
		goto out;	/* the claim failed with the reason */
	for (k = 0; k < c->n_results; k++) {
		struct kp_prepared_device pd = { KP_PREPARED_DEVICE_INIT,
		    .request_names = &c->results[k].request,
		    .n_request_names = 1, .pool_name = c->results[k].pool,
		    .device_name = c->results[k].device };

		id = ids[k];
		pd.cdi_device_ids = &id;
		pd.n_cdi_device_ids = 1;
		if (kp_prepare_add_device(res, i, &pd) != 0)
			goto out;
	}
	if ((data = json_dumps(jd, JSON_COMPACT)) != NULL)
		(void)kp_prepare_journal_data(res, i, data);
	kp_log(KP_LOG_INFO, 1, "claim %s/%s: prepared %zu device(s)",
	    c->namespace_, c->name, c->n_results);
	goto out;
fail:
	kp_prepare_claim_error(res, i, err);
out:
	free(data);
	json_decref(jd);
	kp_cdi_builder_free(b);
}

int
pci_hook_prepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	const struct pci_config	*cfg = user;
	size_t			 i;

	/* Claims prepared before never get here: the journal answers. */
	for (i = 0; i < n; i++)
		prepare_one(cfg, &cl[i], i, res);
	return (0);
}

int
pci_hook_unprepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	const struct kp_journal_entry	*e;
	size_t				 i;

	/* Nothing to undo on the device (this example binds no driver);
	 * the library removes the spec and the entry after this. */
	for (i = 0; i < n; i++) {
		e = kp_unprepare_journal_entry(res, i);
		kp_log(KP_LOG_INFO, 1, "claim %s/%s: unprepared (%zu "
		    "device(s))", cl[i].namespace_, cl[i].name,
		    e != NULL ? e->n_devices : 0);
	}
	return (0);
}

/* The journal's write_spec: a prepared claim's spec is gone. */
int
pci_journal_write_spec(void *user, const struct kp_journal_entry *e,
    char *err, size_t errsize)
{
	const struct pci_config	*cfg = user;
	struct pci_filter	 all;
	struct pci_list		 l = { NULL, 0 };
	struct kp_cdi_builder	*b;
	json_t			*jd, *d;
	char			 kind[128];
	size_t			 k;
	int			 r = 0;

	if (e->data == NULL || (jd = json_loads(e->data, 0, NULL)) == NULL) {
		snprintf(err, errsize, "claim %s/%s: no device data in the "
		    "journal", e->namespace_, e->name);
		return (-1);
	}
	memset(&all, 0, sizeof(all));
	if (pci_discover(cfg->sysfs, &all, &l, err, errsize) != 0)
		memset(&l, 0, sizeof(l));	/* env only, no nodes */
	snprintf(kind, sizeof(kind), "%s/pci", cfg->driver);
	if (kp_cdi_builder_new(kind, &b) != 0) {
		snprintf(err, errsize, "out of memory");
		r = -1;
	}
	json_array_foreach(json_object_get(jd, "devices"), k, d)
		if (r == 0 && spec_device(b, json_string_value(json_object_get(
		    d, "name")), json_string_value(json_object_get(d, "addr")),
		    vfio_group(&l, json_string_value(json_object_get(d,
		    "addr"))), err, errsize) != 0)
			r = -1;
	if (r == 0)
		r = kp_cdi_builder_write(b, e->cdi_spec, err, errsize);
	if (r == 0)
		kp_log(KP_LOG_WARNING, 0, "claim %s/%s: CDI spec %s was "
		    "missing, written again from the journal", e->namespace_,
		    e->name, e->cdi_spec);
	kp_cdi_builder_free(b);
	json_decref(jd);
	pci_list_free(&l);
	return (r);
}
