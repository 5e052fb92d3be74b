/*
 * pci-driver - an example DRA driver built on kubeletplugin.h.
 *
 * It registers with kubelet and serves NodePrepareResources: each claim is
 * prepared as one PCI device of this machine, returned with the CDI device
 * ID <driver>/pci=<device>. (Discovery, publishing and CDI spec files
 * arrive with the example-driver work.)
 *
 * Usage: pci-driver --driver-name NAME --registrar-socket PATH
 *     --plugin-socket PATH [--kubelet-plugin-socket PATH] [--node-name N]
 *     [--kubeconfig PATH | --in-cluster] [-v LEVEL] [--allow-uid UID]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeletplugin.h"

struct driver {
	char	 name[64];
	char	 device[64];	/* DNS label derived from a PCI address */
};

/* "0000:00:1f.2" -> "pci-0000-00-1f-2": a valid DNS label. */
static void
pci_device_name(const char *addr, char *out, size_t size)
{
	size_t	 i, n = (size_t)snprintf(out, size, "pci-");

	for (i = 0; addr[i] != '\0' && n + 1 < size; i++, n++)
		out[n] = (addr[i] == ':' || addr[i] == '.') ? '-' : addr[i];
	out[n] = '\0';
}

static int
find_first_pci_device(struct driver *d)
{
	DIR		*dir;
	struct dirent	*de;
	char		 best[48] = "";

	if ((dir = opendir("/sys/bus/pci/devices")) == NULL)
		return (-1);
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(best))
			continue;
		if (best[0] == '\0' || strcmp(de->d_name, best) < 0)
			snprintf(best, sizeof(best), "%.47s", de->d_name);
	}
	closedir(dir);
	if (best[0] == '\0')
		return (-1);
	pci_device_name(best, d->device, sizeof(d->device));
	return (0);
}

static int
prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct driver			*d = user;
	struct kp_prepared_device	 dev;
	char				 cdi[160];
	const char			*ids[1] = { cdi };
	size_t				 i;

	snprintf(cdi, sizeof(cdi), "%s/pci=%s", d->name, d->device);
	memset(&dev, 0, sizeof(dev));
	dev.pool_name = "default";
	dev.device_name = d->device;
	dev.cdi_device_ids = ids;
	dev.n_cdi_device_ids = 1;
	for (i = 0; i < n; i++) {
		if (kp_prepare_add_device(res, i, &dev) != 0) {
			snprintf(errbuf, errsize, "claim %s/%s: cannot add "
			    "device", claims[i].namespace_, claims[i].name);
			return (-1);
		}
	}
	return (0);
}

static int
unprepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	/* Nothing to undo yet; unknown claims are not an error. */
	return (0);
}

static void
usage(void)
{
	fprintf(stderr, "usage: pci-driver --driver-name NAME "
	    "--registrar-socket PATH --plugin-socket PATH\n"
	    "    [--kubelet-plugin-socket PATH] [--node-name NAME]\n"
	    "    [--kubeconfig PATH | --in-cluster] [--allow-uid UID] "
	    "[-v LEVEL]\n");
}

/* Apply one command-line option; returns a kp_* result or -1 (usage). */
static int
apply(struct kp_options *o, struct driver *d, int ch, const char *arg)
{
	switch (ch) {
	case 'd':
		snprintf(d->name, sizeof(d->name), "%s", arg);
		return (kp_driver_name(o, arg));
	case 'n':
		return (kp_node_name(o, arg));
	case 'r':
		return (kp_registrar_socket_path(o, arg));
	case 'p':
		return (kp_plugin_socket_path(o, arg));
	case 'k':
		return (kp_kubelet_plugin_socket_path(o, arg));
	case 'c':
		return (kp_kube_client_kubeconfig(o, arg, NULL));
	case 'i':
		return (kp_kube_client_in_cluster(o));
	case 'u':
		return (kp_allowed_peer_uid(o, (uid_t)strtoul(arg, NULL, 10)));
	case 'v':
		return (kp_log_verbosity(o, (int)strtol(arg, NULL, 10)));
	default:
		return (-1);
	}
}

static int
parse_args(int argc, char **argv, struct kp_options *o, struct driver *d)
{
	static const struct option longopts[] = {
		{ "driver-name", required_argument, NULL, 'd' },
		{ "node-name", required_argument, NULL, 'n' },
		{ "registrar-socket", required_argument, NULL, 'r' },
		{ "plugin-socket", required_argument, NULL, 'p' },
		{ "kubelet-plugin-socket", required_argument, NULL, 'k' },
		{ "kubeconfig", required_argument, NULL, 'c' },
		{ "in-cluster", no_argument, NULL, 'i' },
		{ "allow-uid", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch, r;

	while ((ch = getopt_long(argc, argv, "v:", longopts, NULL)) != -1) {
		if ((r = apply(o, d, ch, optarg)) == -1) {
			usage();
			return (-1);
		}
		if (r != 0) {
			fprintf(stderr, "pci-driver: %s\n",
			    kp_options_last_error(o));
			return (-1);
		}
	}
	return (0);
}

int
main(int argc, char **argv)
{
	struct kp_options	*opts;
	struct kp_plugin	*plugin;
	struct driver		 drv;
	struct kp_hooks		 hooks = { &drv, prepare, unprepare, NULL };
	sigset_t		 set;
	int			 sig, r;

	memset(&drv, 0, sizeof(drv));
	if (kp_options_new(&opts) != 0)
		return (1);
	if (parse_args(argc, argv, opts, &drv) != 0) {
		kp_options_free(opts);
		return (2);
	}
	if (find_first_pci_device(&drv) != 0)
		snprintf(drv.device, sizeof(drv.device), "pci-none");
	/* Block the stop signals before kp_start: sigwait() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((r = kp_start(opts, &hooks, &plugin)) != 0) {
		fprintf(stderr, "pci-driver: %s: %s\n", kp_err_name(r),
		    kp_options_last_error(opts));
		kp_options_free(opts);
		return (1);
	}
	kp_options_free(opts);
	fprintf(stderr, "pci-driver: serving %s with device %s\n", drv.name,
	    drv.device);
	while (sigwait(&set, &sig) != 0)
		;
	fprintf(stderr, "pci-driver: %s, stopping\n", strsignal(sig));
	r = kp_stop(plugin);
	return (r == 0 ? 0 : 1);
}
