/*
 * prepare.c - the hooks, run by the library inside the sandboxed
 * nodeserver process (after fork; init before the sandbox, prepare and
 * unprepare inside it, one call at a time as kp_serialize() defaults).
 *
 * init: load the checkpoint from the state directory (a bad one fails the
 * start with its message), and rewrite the CDI spec of every
 * checkpointed claim whose file is gone (/var/run/cdi is a tmpfs: a reboot
 * empties it while the checkpoint survives, and kubelet does not prepare
 * claims again that its own checkpoint lists as prepared).
 *
 * prepare: a checkpointed claim gets the same devices again, with nothing
 * written (but a missing spec file is recreated first). A new claim: its
 * allocation results (from the library's claim look-up) name devices of
 * this node's pool; each is found in sysfs, the CDI spec is written, the
 * checkpoint updated, and the CDI device IDs returned.
 *
 * unprepare: remove the spec and the checkpoint entry; an unknown claim is
 * not an error (its spec file is removed anyway, in case state was lost).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci.h"

#define MAX_DEVS	64	/* devices of one claim */

static json_t		*claims;	/* the checkpoint's claims */
static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;

static void KP_PRINTF(2, 3)
logf_(const struct pci_config *cfg, const char *fmt, ...)
{
	va_list	 ap;

	if (cfg->verbose < 1)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "pci-driver[nodeserver]: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The IOMMU group of a function bound to vfio-pci; -1 otherwise. */
static int
vfio_group(const struct pci_list *l, const char *addr)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->devs[i].addr, addr) == 0)
			return (strcmp(l->devs[i].driver, "vfio-pci") == 0 ?
			    l->devs[i].iommu_group : -1);
	return (-1);
}

/* Write the CDI spec of a checkpointed claim (after its file vanished). */
static int
respec(const struct pci_config *cfg, const char *uid, json_t *entry,
    char *err, size_t errsize)
{
	struct pci_filter	 all;
	struct cdi_device	 cd[MAX_DEVS];
	struct pci_list		 l;
	const char		*id, *eq;
	json_t			*devs, *d;
	size_t			 i, n = 0;
	int			 r;

	memset(&all, 0, sizeof(all));
	if (pci_discover(cfg->sysfs, &all, &l, err, errsize) != 0)
		memset(&l, 0, sizeof(l));	/* env only, no nodes */
	devs = json_object_get(entry, "devices");
	json_array_foreach(devs, i, d) {
		if (n == MAX_DEVS)
			break;
		id = json_string_value(json_object_get(d, "cdiDeviceId"));
		eq = strchr(id, '=');
		cd[n].name = eq != NULL ? eq + 1 : id;
		cd[n].addr = json_string_value(json_object_get(d,
		    "pciAddress"));
		cd[n].vfio_group = vfio_group(&l, cd[n].addr);
		n++;
	}
	r = cdi_write_spec(cfg, uid, cd, n, err, errsize);
	pci_list_free(&l);
	return (r);
}

static int
spec_missing(const struct pci_config *cfg, const char *uid)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	return (cdi_spec_path(cfg, uid, path, sizeof(path)) == 0 &&
	    stat(path, &st) == -1 && errno == ENOENT);
}

int
pci_hook_init(void *user, char *err, size_t errsize)
{
	const struct pci_config	*cfg = user;
	const char		*uid;
	json_t			*entry;

	/* The library's supervisor created both directories (the state
	 * directory is this process's; CDI specs go through it). */
	json_decref(claims);
	if (checkpoint_load(cfg, &claims, err, errsize) != 0)
		return (-1);
	json_object_foreach(claims, uid, entry) {
		if (!spec_missing(cfg, uid))
			continue;
		if (respec(cfg, uid, entry, err, errsize) != 0)
			return (-1);
		fprintf(stderr, "pci-driver[nodeserver]: claim %s: CDI spec "
		    "was missing, rewritten from the checkpoint\n", uid);
	}
	logf_(cfg, "%zu prepared claims in the checkpoint",
	    json_object_size(claims));
	return (0);
}

/* Report the checkpointed devices of claim i. */
static int
add_devices(struct kp_prepare_results *res, size_t i, json_t *entry)
{
	struct kp_prepared_device	 pd;
	const char			*req, *id;
	json_t				*devs, *d;
	size_t				 k;

	devs = json_object_get(entry, "devices");
	json_array_foreach(devs, k, d) {
		req = json_string_value(json_object_get(d, "request"));
		id = json_string_value(json_object_get(d, "cdiDeviceId"));
		memset(&pd, 0, sizeof(pd));
		pd.request_names = &req;
		pd.n_request_names = 1;
		pd.pool_name = json_string_value(json_object_get(d, "pool"));
		pd.device_name = json_string_value(json_object_get(d,
		    "device"));
		pd.cdi_device_ids = &id;
		pd.n_cdi_device_ids = 1;
		if (kp_prepare_add_device(res, i, &pd) != 0)
			return (-1);
	}
	return (0);
}

/* Prepare a claim that is not checkpointed yet: the new entry, or NULL
 * with err set. */
static json_t *
prepare_new(const struct pci_config *cfg, const struct kp_claim *c,
    const struct pci_list *devs, char *err, size_t errsize)
{
	struct cdi_device	 cd[MAX_DEVS];
	char			 names[MAX_DEVS][PCI_NAME_SIZE + 40];
	char			 id[MAX_DEVS][256];
	const struct pci_dev	*d;
	json_t			*entry, *list, *e;
	size_t			 k;

	if (c->n_results == 0) {
		snprintf(err, errsize, "claim %s/%s has no allocation for "
		    "%s (the driver needs Kubernetes access to look claims "
		    "up: --kubeconfig or --in-cluster)", c->namespace_,
		    c->name, cfg->driver);
		return (NULL);
	}
	if (c->n_results > MAX_DEVS) {
		snprintf(err, errsize, "claim %s/%s: more than %d devices",
		    c->namespace_, c->name, MAX_DEVS);
		return (NULL);
	}
	for (k = 0; k < c->n_results; k++) {
		if (strcmp(c->results[k].pool, cfg->node) != 0) {
			snprintf(err, errsize, "claim %s/%s: device %s is "
			    "from pool %s, not this node's pool %s",
			    c->namespace_, c->name, c->results[k].device,
			    c->results[k].pool, cfg->node);
			return (NULL);
		}
		if ((d = pci_find(devs, c->results[k].device)) == NULL) {
			snprintf(err, errsize, "claim %s/%s: device %s is "
			    "not on this node (any more)", c->namespace_,
			    c->name, c->results[k].device);
			return (NULL);
		}
		/* Unique per kind across the claims' spec files. */
		snprintf(names[k], sizeof(names[k]), "%s-%s", d->name, c->uid);
		if (snprintf(id[k], sizeof(id[k]), "%s/pci=%s", cfg->driver,
		    names[k]) >= (int)sizeof(id[k])) {
			snprintf(err, errsize, "claim %s/%s: CDI device ID "
			    "too long", c->namespace_, c->name);
			return (NULL);
		}
		cd[k].name = names[k];
		cd[k].addr = d->addr;
		cd[k].vfio_group = strcmp(d->driver, "vfio-pci") == 0 ?
		    d->iommu_group : -1;
	}
	if (cdi_write_spec(cfg, c->uid, cd, c->n_results, err, errsize) != 0)
		return (NULL);
	if ((list = json_array()) == NULL)
		goto oom;
	entry = json_pack("{s:s, s:s, s:o}", "namespace", c->namespace_,
	    "name", c->name, "devices", list);
	if (entry == NULL)
		goto oom;
	for (k = 0; k < c->n_results; k++) {
		e = json_pack("{s:s, s:s, s:s, s:s, s:s}",
		    "request", c->results[k].request,
		    "pool", c->results[k].pool,
		    "device", c->results[k].device,
		    "pciAddress", cd[k].addr, "cdiDeviceId", id[k]);
		if (e == NULL || json_array_append_new(list, e) != 0) {
			json_decref(entry);
			goto oom;
		}
	}
	return (entry);
oom:
	snprintf(err, errsize, "out of memory");
	(void)cdi_remove_spec(cfg, c->uid, err, 0);
	return (NULL);
}

int
pci_hook_prepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	const struct pci_config	*cfg = user;
	struct pci_list		 devs = { NULL, 0 };
	char			 err[KP_ERROR_SIZE * 2];
	int			 scanned = 0;
	json_t			*entry;
	size_t			 i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		if ((entry = json_object_get(claims, cl[i].uid)) != NULL) {
			/* Prepared before: the same answer, no writes. */
			if (spec_missing(cfg, cl[i].uid)) {
				if (respec(cfg, cl[i].uid, entry, err,
				    sizeof(err)) != 0) {
					kp_prepare_claim_error(res, i, err);
					continue;
				}
				logf_(cfg, "claim %s: CDI spec recreated",
				    cl[i].uid);
			}
			if (add_devices(res, i, entry) != 0)
				kp_prepare_claim_error(res, i, "cannot add "
				    "the checkpointed devices");
			logf_(cfg, "claim %s/%s: already prepared",
			    cl[i].namespace_, cl[i].name);
			continue;
		}
		if (!scanned && pci_discover(cfg->sysfs, &cfg->filter, &devs,
		    err, sizeof(err)) != 0) {
			kp_prepare_claim_error(res, i, err);
			continue;
		}
		scanned = 1;
		if ((entry = prepare_new(cfg, &cl[i], &devs, err,
		    sizeof(err))) == NULL) {
			kp_prepare_claim_error(res, i, err);
			continue;
		}
		if (json_object_set_new(claims, cl[i].uid, entry) != 0 ||
		    checkpoint_save(cfg, claims, err, sizeof(err)) != 0) {
			json_object_del(claims, cl[i].uid);
			(void)cdi_remove_spec(cfg, cl[i].uid, errbuf, 0);
			kp_prepare_claim_error(res, i, err);
			continue;
		}
		if (add_devices(res, i, entry) != 0)
			kp_prepare_claim_error(res, i, "cannot add devices");
		logf_(cfg, "claim %s/%s: prepared %zu device(s)",
		    cl[i].namespace_, cl[i].name, cl[i].n_results);
	}
	pthread_mutex_unlock(&lock);
	pci_list_free(&devs);
	return (0);
}

int
pci_hook_unprepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	const struct pci_config	*cfg = user;
	char			 err[KP_ERROR_SIZE * 2];
	json_t			*saved;
	size_t			 i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		if (cdi_remove_spec(cfg, cl[i].uid, err, sizeof(err)) != 0) {
			kp_unprepare_claim_error(res, i, err);
			continue;
		}
		if ((saved = json_object_get(claims, cl[i].uid)) == NULL) {
			logf_(cfg, "claim %s/%s: not prepared, nothing to do",
			    cl[i].namespace_, cl[i].name);
			continue;
		}
		json_incref(saved);
		json_object_del(claims, cl[i].uid);
		if (checkpoint_save(cfg, claims, err, sizeof(err)) != 0) {
			json_object_set(claims, cl[i].uid, saved);
			kp_unprepare_claim_error(res, i, err);
		} else
			logf_(cfg, "claim %s/%s: unprepared",
			    cl[i].namespace_, cl[i].name);
		json_decref(saved);
	}
	pthread_mutex_unlock(&lock);
	return (0);
}
