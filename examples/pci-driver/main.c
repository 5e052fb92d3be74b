/*
 * pci-driver - an example DRA driver built on kubeletplugin.h: it
 * publishes this machine's PCI functions as ResourceSlices, prepares
 * claims by writing CDI spec files; the library's journal keeps what it
 * prepared.
 *
 * This file: flags and the driver process's lifecycle (discover, start
 * the plugin, publish, rescan until SIGTERM/SIGINT, stop). discover.c
 * reads sysfs, publish.c builds the slices, prepare.c holds the hooks
 * (run by the library in its sandboxed nodeserver).
 *
 * Usage: see usage() or pci-driver --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pci.h"

/* Flags as given; applied to the options once all are known. */
struct flags {
	const char	*kubelet_dir;
	const char	*registrar_socket;
	const char	*plugin_socket;
	const char	*kubelet_plugin_socket;
	const char	*rolling_uid;	/* --rolling-update-uid, $POD_UID */
	const char	*kubeconfig;
	const char	*context;
	int		 in_cluster;
	int		 max_conns;	/* 0: the library's default */
	double		 qps;		/* 0: the library's default */
	int		 burst;
	uid_t		 allow_uids[16];
	size_t		 n_allow_uids;
	int		 rescan;	/* seconds; 0: never */
	int		 list;
	int		 print_profile;	/* --print-seccomp-profile */
	int		 v1alpha4;	/* also serve DRA v1alpha4 */
	const char	*http_endpoint;	/* /healthz, /metrics; NULL: off */
};

static struct pci_config	cfg;	/* the hooks' user pointer */

static void
usage(FILE *f)
{
	fprintf(f,
"usage: pci-driver [options]\n"
"  --driver-name NAME        DRA driver name (pci.example.com)\n"
"  --node-name NAME          this node ($NODE_NAME, else the host name)\n"
"  --kubelet-dir DIR         kubelet root (/var/lib/kubelet): the library's\n"
"                            default sockets DIR/plugins_registry/<driver>-\n"
"                            reg.sock and DIR/plugins/<driver>/dra.sock\n"
"  --rolling-update-uid UID  this pod's UID ($POD_UID): per-instance\n"
"                            sockets, hooks serialized across instances\n"
"                            (kubelet 1.33+; \"\" turns it off)\n"
"  --registrar-socket PATH   registration socket, instead of the default\n"
"  --plugin-socket PATH      DRA socket, instead of the default\n"
"  --kubelet-plugin-socket PATH  the DRA socket as kubelet sees it\n"
"  --kubeconfig PATH [--context NAME] | --in-cluster\n"
"                            Kubernetes access: publish ResourceSlices and\n"
"                            look claims up (without: register only)\n"
"  --kube-api-qps QPS        API requests per second (5; > 0, at most 1000,\n"
"                            fractions allowed: 0.5 is one each 2 s);\n"
"                            claim look-ups have a budget of their own\n"
"  --kube-api-burst N        bursts of up to N requests (10; 1 to 10000)\n"
"  --cdi-dir DIR             CDI spec directory (/var/run/cdi)\n"
"  --state-dir DIR           journal directory (/var/lib/<driver>): the\n"
"                            nodeserver's own, it may write nothing else\n"
"  --sysfs-root DIR          sysfs to discover from (/sys)\n"
"  --class PREFIX            publish only these classes, e.g. 0x02 or\n"
"                            0x0300 (repeatable)\n"
"  --vendor ID               publish only these vendors, e.g. 0x10de\n"
"                            (repeatable)\n"
"  --rescan SECONDS          rediscover this often, republish on change\n"
"                            (60; 0: never, at most 86400; SIGHUP rescans\n"
"                            at once)\n"
"  --max-connections N       connections per socket (the library's 8;\n"
"                            1 to 1024)\n"
"  --allow-uid UID           a uid allowed to connect (default: root; up\n"
"                            to 16 times)\n"
"  --v1alpha4                also serve DRA v1alpha4 (kubelet 1.31)\n"
"  --http-endpoint ADDR      serve /healthz, /readyz and /metrics on\n"
"                            ADDR (IP:PORT or :PORT; default: off)\n"
"  --list                    print the devices found (JSON lines), exit\n"
"  --print-seccomp-profile   print the pod's seccomp profile for these\n"
"                            flags (kp_policy_export_oci()), exit; pipe it\n"
"                            to kubeletplugin-policy --from - for the\n"
"                            runtime's own syscalls or -f spo\n"
"  -v LEVEL                  log verbosity (0; 0 to 10)\n");
}

static int
parse_int(const char *s, long lo, long hi, long *out)
{
	char	*end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (errno != 0 || end == s || *end != '\0' || *out < lo ||
	    *out > hi ? -1 : 0);
}

/* The library's rule for the QPS (kp_kube_api_qps): > 0, at most 1000. */
static int
parse_qps(const char *s, double *out)
{
	char	*end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno != 0 || end == s || *end != '\0' || !isfinite(*out) ||
	    *out <= 0 || *out > 1000 ? -1 : 0);
}

static int
filter_add(const char **list, size_t *n, const char *v, const char *what)
{
	if (*n == PCI_MAX_FILTER) {
		fprintf(stderr, "pci-driver: at most %d %s filters\n",
		    PCI_MAX_FILTER, what);
		return (-1);
	}
	if (strncmp(v, "0x", 2) != 0) {
		fprintf(stderr, "pci-driver: --%s %s: give a hex prefix "
		    "such as 0x02\n", what, v);
		return (-1);
	}
	list[(*n)++] = v;
	return (0);
}

static int
parse_args(int argc, char **argv, struct flags *fl)
{
	enum { O_DRIVER = 256, O_NODE, O_KDIR, O_REG, O_PLUG, O_KPLUG, O_KCFG,
	    O_ROLL, O_CTX, O_INCL, O_CDI, O_STATE, O_SYSFS, O_CLASS, O_VENDOR,
	    O_RESCAN, O_UID, O_LIST, O_V1ALPHA4, O_HTTP, O_QPS, O_BURST,
	    O_MAXCONN, O_PROFILE, O_HELP };
	static const struct option longopts[] = {
		{ "driver-name", required_argument, NULL, O_DRIVER },
		{ "node-name", required_argument, NULL, O_NODE },
		{ "kubelet-dir", required_argument, NULL, O_KDIR },
		{ "registrar-socket", required_argument, NULL, O_REG },
		{ "plugin-socket", required_argument, NULL, O_PLUG },
		{ "kubelet-plugin-socket", required_argument, NULL, O_KPLUG },
		{ "rolling-update-uid", required_argument, NULL, O_ROLL },
		{ "kubeconfig", required_argument, NULL, O_KCFG },
		{ "context", required_argument, NULL, O_CTX },
		{ "in-cluster", no_argument, NULL, O_INCL },
		{ "kube-api-qps", required_argument, NULL, O_QPS },
		{ "kube-api-burst", required_argument, NULL, O_BURST },
		{ "max-connections", required_argument, NULL, O_MAXCONN },
		{ "cdi-dir", required_argument, NULL, O_CDI },
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "sysfs-root", required_argument, NULL, O_SYSFS },
		{ "class", required_argument, NULL, O_CLASS },
		{ "vendor", required_argument, NULL, O_VENDOR },
		{ "rescan", required_argument, NULL, O_RESCAN },
		{ "allow-uid", required_argument, NULL, O_UID },
		{ "list", no_argument, NULL, O_LIST },
		{ "print-seccomp-profile", no_argument, NULL, O_PROFILE },
		{ "v1alpha4", no_argument, NULL, O_V1ALPHA4 },
		{ "http-endpoint", required_argument, NULL, O_HTTP },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 }
	};
	const char	*rule = "";	/* what the bad value should have been */
	long		 v;
	int		 ch, idx;

	for (;;) {
		idx = -1;	/* set for long options only */
		if ((ch = getopt_long(argc, argv, "v:h", longopts,
		    &idx)) == -1)
			break;
		switch (ch) {
		case O_DRIVER:
			snprintf(cfg.driver, sizeof(cfg.driver), "%s", optarg);
			break;
		case O_NODE:
			snprintf(cfg.node, sizeof(cfg.node), "%s", optarg);
			break;
		case O_KDIR: fl->kubelet_dir = optarg; break;
		case O_REG: fl->registrar_socket = optarg; break;
		case O_PLUG: fl->plugin_socket = optarg; break;
		case O_KPLUG: fl->kubelet_plugin_socket = optarg; break;
		case O_ROLL: fl->rolling_uid = optarg; break;
		case O_KCFG: fl->kubeconfig = optarg; break;
		case O_CTX: fl->context = optarg; break;
		case O_INCL: fl->in_cluster = 1; break;
		case O_QPS:
			/* A float, as upstream's flag; kp_kube_api_qps's
			 * range, checked here to name the flag. */
			rule = "a number > 0 and at most 1000, e.g. 0.5";
			if (parse_qps(optarg, &fl->qps) != 0)
				goto bad;
			break;
		case O_MAXCONN:
			rule = "a whole number from 1 to 1024";
			if (parse_int(optarg, 1, 1024, &v) != 0)
				goto bad;
			fl->max_conns = (int)v;
			break;
		case O_BURST:
			rule = "a whole number from 1 to 10000";
			if (parse_int(optarg, 1, 10000, &v) != 0)
				goto bad;
			fl->burst = (int)v;
			break;
		case O_CDI:
			snprintf(cfg.cdi_dir, sizeof(cfg.cdi_dir), "%s", optarg);
			break;
		case O_STATE:
			snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s",
			    optarg);
			break;
		case O_SYSFS:
			snprintf(cfg.sysfs, sizeof(cfg.sysfs), "%s", optarg);
			break;
		case O_CLASS:
			if (filter_add(cfg.filter.classes,
			    &cfg.filter.n_classes, optarg, "class") != 0)
				return (-1);
			break;
		case O_VENDOR:
			if (filter_add(cfg.filter.vendors,
			    &cfg.filter.n_vendors, optarg, "vendor") != 0)
				return (-1);
			break;
		case O_RESCAN:
			rule = "seconds, a whole number from 0 to 86400";
			if (parse_int(optarg, 0, 86400, &v) != 0)
				goto bad;
			fl->rescan = (int)v;
			break;
		case O_UID:
			rule = "a uid from 0 to 2147483646, at most 16 of them";
			if (parse_int(optarg, 0, INT_MAX - 1, &v) != 0 ||
			    fl->n_allow_uids == 16)
				goto bad;
			fl->allow_uids[fl->n_allow_uids++] = (uid_t)v;
			break;
		case O_LIST: fl->list = 1; break;
		case O_PROFILE: fl->print_profile = 1; break;
		case O_V1ALPHA4: fl->v1alpha4 = 1; break;
		case O_HTTP: fl->http_endpoint = optarg; break;
		case 'v':
			rule = "a whole number from 0 to 10";
			if (parse_int(optarg, 0, 10, &v) != 0)
				goto bad;
			cfg.verbose = (int)v;
			break;
		case 'h':
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return (-1);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return (-1);
	}
	return (0);
bad:
	/* The option's own name: argv[optind - 1] is the value when it
	 * was a separate argument. */
	fprintf(stderr, "pci-driver: bad value for %s%s: \"%s\" (%s)\n",
	    idx >= 0 ? "--" : "-", idx >= 0 ? longopts[idx].name : "v",
	    optarg, rule);
	return (-1);
}

/* Defaults that depend on other flags; -1 on a too long path. */
static int
resolve_defaults(struct flags *fl, char *reg, char *plug, size_t size)
{
	const char	*kdir = fl->kubelet_dir ? fl->kubelet_dir :
			    "/var/lib/kubelet";
	const char	*env;
	size_t		 i;

	if (cfg.driver[0] == '\0')
		snprintf(cfg.driver, sizeof(cfg.driver), "pci.example.com");
	if (cfg.node[0] == '\0') {
		if ((env = getenv("NODE_NAME")) != NULL && env[0] != '\0')
			snprintf(cfg.node, sizeof(cfg.node), "%s", env);
		else if (gethostname(cfg.node, sizeof(cfg.node) - 1) != 0)
			snprintf(cfg.node, sizeof(cfg.node), "localhost");
		for (i = 0; cfg.node[i] != '\0'; i++)	/* node names */
			if (cfg.node[i] >= 'A' && cfg.node[i] <= 'Z')
				cfg.node[i] = (char)(cfg.node[i] - 'A' + 'a');
	}
	if (cfg.sysfs[0] == '\0')
		snprintf(cfg.sysfs, sizeof(cfg.sysfs), "/sys");
	if (cfg.cdi_dir[0] == '\0')
		snprintf(cfg.cdi_dir, sizeof(cfg.cdi_dir), "/var/run/cdi");
	/* The sockets are the library's defaults under the kubelet root
	 * (kp_kubelet_root_dir); only explicit flags override them. reg
	 * and plug are the registry and plugin directories to create when
	 * a demo or test root lacks them. */
	if ((size_t)snprintf(reg, size, "%s/plugins_registry/x", kdir) >=
	    size || (size_t)snprintf(plug, size, "%s/plugins/x", kdir) >= size)
		return (-1);
	if (fl->kubelet_dir == NULL)
		fl->kubelet_dir = kdir;
	/* As upstream's example drivers: the pod UID from the downward API
	 * unless the flag says otherwise. */
	if (fl->rolling_uid == NULL && (env = getenv("POD_UID")) != NULL)
		fl->rolling_uid = env;
	/* Not the plugin socket's directory (upstream's habit): the
	 * library hands the state directory to the sandboxed nodeserver,
	 * which must not be able to replace the socket kubelet dials. */
	if (cfg.state_dir[0] == '\0' && snprintf(cfg.state_dir,
	    sizeof(cfg.state_dir), "/var/lib/%s", cfg.driver) >=
	    (int)sizeof(cfg.state_dir))
		return (-1);
	return (0);
}

/* Apply the flags to the options; prints the error and returns -1. */
static int
configure(struct kp_options *o, struct flags *fl, const char *reg,
    const char *plug)
{
	struct kp_journal_hooks	 jh = { KP_JOURNAL_HOOKS_INIT, .user = &cfg,
				    .write_spec = pci_journal_write_spec };
	size_t			 i;
	int			 r;

	(void)reg;
	(void)plug;
	if ((r = kp_driver_name(o, cfg.driver)) != 0 ||
	    (r = kp_node_name(o, cfg.node)) != 0 ||
	    (r = kp_kubelet_root_dir(o, fl->kubelet_dir)) != 0 ||
	    (fl->rolling_uid != NULL && (r = kp_rolling_update(o,
	    fl->rolling_uid)) != 0) ||
	    (fl->registrar_socket != NULL && (r = kp_registrar_socket_path(o,
	    fl->registrar_socket)) != 0) ||
	    (fl->plugin_socket != NULL && (r = kp_plugin_socket_path(o,
	    fl->plugin_socket)) != 0) ||
	    (fl->kubelet_plugin_socket != NULL &&
	    (r = kp_kubelet_plugin_socket_path(o,
	    fl->kubelet_plugin_socket)) != 0) ||
	    (fl->kubeconfig != NULL && (r = kp_kube_client_kubeconfig(o,
	    fl->kubeconfig, fl->context)) != 0) ||
	    (fl->in_cluster && (r = kp_kube_client_in_cluster(o)) != 0) ||
	    ((fl->qps > 0 || fl->burst > 0) && (r = kp_kube_api_qps(o,
	    fl->qps > 0 ? fl->qps : 5, fl->burst > 0 ? fl->burst : 10)) != 0) ||
	    (fl->v1alpha4 && (r = kp_node_v1alpha4(o, 1)) != 0) ||
	    (fl->max_conns > 0 && (r = kp_grpc_max_connections(o,
	    fl->max_conns)) != 0) ||
	    (fl->http_endpoint != NULL && (r = kp_http_endpoint(o,
	    fl->http_endpoint)) != 0) ||
	    (r = kp_log_verbosity(o, cfg.verbose)) != 0)
		goto fail;
	/* The sandboxed hooks' files: the library's journal in the state
	 * directory, CDI specs through the library, sysfs to read. */
	if ((r = kp_journal_dir(o, cfg.state_dir)) != 0 ||
	    (r = kp_journal_hooks(o, &jh)) != 0 ||
	    (r = kp_cdi_directory(o, cfg.cdi_dir)) != 0 ||
	    (r = kp_sandbox_read_path(o, cfg.sysfs)) != 0)
		goto fail;
	/* What its specs ask of the runtime (prepare.c), and nothing else
	 * of /dev/vfio: vfio's container node, the misc device 10:196
	 * (VFIO_MINOR), and the IOMMU group nodes, /dev/vfio/<group>, whose
	 * major the kernel picks at boot (so by name; the broker still
	 * refuses a link or anything but a device node there). */
	if ((r = kp_cdi_allow_device_number(o, "/dev/vfio/vfio", 'c', 10, 196,
	    196)) != 0 || (r = kp_cdi_allow_device(o, "/dev/vfio/[0-9]*")) != 0)
		goto fail;
	for (i = 0; i < fl->n_allow_uids; i++)
		if ((r = kp_allowed_peer_uid(o, fl->allow_uids[i])) != 0)
			goto fail;
	return (0);
fail:
	fprintf(stderr, "pci-driver: %s\n", kp_options_last_error(o));
	return (-1);
}

/*
 * --print-seccomp-profile: the pod's profile for the options these flags
 * build, from this binary, so that it cannot drift from what the driver
 * declares (a driver that opens devices in main() would add
 * kp_policy_main_syscall() and kp_policy_main_ioctl() in configure();
 * this one reads only sysfs). Starts nothing, discovers nothing.
 */
static int
print_profile(struct flags *fl, const char *reg, const char *plug)
{
	struct kp_options	*o;
	char			*json;
	int			 r;

	if (kp_options_new(&o) != 0)
		return (1);
	if (configure(o, fl, reg, plug) != 0) {
		kp_options_free(o);
		return (2);
	}
	r = kp_policy_export_oci(o, &json);
	kp_options_free(o);
	if (r != 0) {
		fprintf(stderr, "pci-driver: %s\n", kp_strerror(r));
		return (1);
	}
	r = fputs(json, stdout) == EOF || fflush(stdout) != 0;
	free(json);
	return (r);
}

/* mkdir -p (the parents of the socket, state and CDI directories) */
static int
pci_mkdirs(const char *path, mode_t mode, char *err, size_t errsize)
{
	char	 buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(buf, mode) == -1 && errno != EEXIST)
		goto fail;
	return (0);
fail:
	snprintf(err, errsize, "mkdir %.200s: %s", buf, strerror(errno));
	return (-1);
}

/* mkdir -p of the directory part of path. */
static int
make_parent(const char *path, char *err, size_t errsize)
{
	char	 dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return (0);
	*slash = '\0';
	return (pci_mkdirs(dir, 0750, err, errsize));
}

static void
describe(const struct pci_list *l)
{
	size_t	 i;

	fprintf(stderr, "pci-driver: %zu PCI device(s) under %s/bus/pci/"
	    "devices\n", l->n, cfg.sysfs);
	for (i = 0; cfg.verbose >= 2 && i < l->n; i++)
		fprintf(stderr, "pci-driver:   %s %s %s:%s class %s driver %s\n",
		    l->devs[i].name, l->devs[i].addr, l->devs[i].vendor,
		    l->devs[i].device, l->devs[i].class,
		    l->devs[i].driver[0] ? l->devs[i].driver : "(none)");
}

/* Publish, logging the outcome. */
static void
publish(struct kp_plugin *plugin, const struct pci_list *l, int kube)
{
	char	 err[KP_ERROR_SIZE];

	if (!kube)
		return;
	if (pci_publish(plugin, &cfg, l, err, sizeof(err)) != 0)
		fprintf(stderr, "pci-driver: publishing failed: %s\n", err);
	else
		/* The library splits them into slices (split_slices):
		 * how many depends on counters and taints, not only on
		 * the count. */
		fprintf(stderr, "pci-driver: published %zu device(s) as pool "
		    "%s\n", l->n, cfg.node);
}

/* Rediscover; republish when the devices changed. */
static void
rescan(struct kp_plugin *plugin, struct pci_list *cur, int kube)
{
	struct pci_list	 now;
	char		 err[KP_ERROR_SIZE];
	const struct pci_dev	*old;
	size_t		 i, added = 0, gone = 0, changed = 0;

	if (pci_discover(cfg.sysfs, &cfg.filter, &now, err, sizeof(err)) !=
	    0) {
		fprintf(stderr, "pci-driver: rescan: %s\n", err);
		return;
	}
	if (pci_list_equal(cur, &now)) {
		pci_list_free(&now);
		return;
	}
	for (i = 0; i < now.n; i++) {
		if ((old = pci_find(cur, now.devs[i].name)) == NULL)
			added++;
		else if (memcmp(old, &now.devs[i], sizeof(*old)) != 0)
			changed++;
	}
	for (i = 0; i < cur->n; i++)
		if (pci_find(&now, cur->devs[i].name) == NULL)
			gone++;
	fprintf(stderr, "pci-driver: rescan: %zu device(s) now (%zu new, "
	    "%zu gone, %zu changed)\n", now.n, added, gone, changed);
	pci_list_free(cur);
	*cur = now;
	publish(plugin, cur, kube);
}

int
main(int argc, char **argv)
{
	struct kp_hooks		 hooks = { &cfg, pci_hook_prepare,
				    pci_hook_unprepare, NULL };
	struct flags		 fl;
	struct kp_options	*opts;
	struct kp_plugin	*plugin;
	struct pci_list		 devs;
	struct timespec		 ts;
	char			 reg[PATH_MAX], plug[PATH_MAX];
	char			 err[KP_ERROR_SIZE * 2];
	char			 reason[KP_ERROR_SIZE];
	sigset_t		 set;
	time_t			 next;
	int			 sig, r, kube;

	memset(&fl, 0, sizeof(fl));
	fl.rescan = 60;
	if (parse_args(argc, argv, &fl) != 0)
		return (2);
	cfg.rescan = fl.rescan;	/* the nodeserver's cache too (cache.c) */
	if (resolve_defaults(&fl, reg, plug, sizeof(reg)) != 0) {
		fprintf(stderr, "pci-driver: a socket or state path is too "
		    "long\n");
		return (2);
	}
	if (fl.print_profile)
		return (print_profile(&fl, reg, plug));
	kube = fl.kubeconfig != NULL || fl.in_cluster;
	if (pci_discover(cfg.sysfs, &cfg.filter, &devs, err, sizeof(err)) !=
	    0) {
		fprintf(stderr, "pci-driver: %s\n", err);
		return (1);
	}
	if (fl.list) {
		pci_list_print(&devs, stdout);
		pci_list_free(&devs);
		return (0);
	}
	describe(&devs);
	if (geteuid() != 0)
		fprintf(stderr, "pci-driver: note: not running as root: the "
		    "sandbox is reduced (no private mount namespace or empty "
		    "root, no uid change); seccomp and NO_NEW_PRIVS still "
		    "apply\n");
	/* The parents of the socket, state and CDI directories (kubelet
	 * creates plugins_registry; a test or demo kubelet root may not
	 * have them yet); the library creates the state and CDI
	 * directories themselves. */
	if (make_parent(reg, err, sizeof(err)) != 0 ||
	    make_parent(plug, err, sizeof(err)) != 0 ||
	    (fl.registrar_socket != NULL && make_parent(fl.registrar_socket,
	    err, sizeof(err)) != 0) ||
	    (fl.plugin_socket != NULL && make_parent(fl.plugin_socket, err,
	    sizeof(err)) != 0) ||
	    make_parent(cfg.state_dir, err, sizeof(err)) != 0 ||
	    make_parent(cfg.cdi_dir, err, sizeof(err)) != 0) {
		fprintf(stderr, "pci-driver: %s\n", err);
		return (1);
	}
	if (kp_options_new(&opts) != 0)
		return (1);
	if (configure(opts, &fl, reg, plug) != 0) {
		kp_options_free(opts);
		return (2);
	}
	/* Block the signals before kp_start: sigtimedwait() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((r = kp_start(opts, &hooks, &plugin)) != 0) {
		fprintf(stderr, "pci-driver: %s: %s\n", kp_err_name(r),
		    kp_options_last_error(opts));
		kp_options_free(opts);
		return (1);
	}
	kp_options_free(opts);
	fprintf(stderr, "pci-driver: serving %s on node %s (CDI specs in "
	    "%s, journal in %s)\n", cfg.driver, cfg.node, cfg.cdi_dir,
	    cfg.state_dir);
	if (!kube)
		fprintf(stderr, "pci-driver: no Kubernetes access "
		    "(--kubeconfig or --in-cluster): registering only, no "
		    "ResourceSlices, and claims cannot be prepared\n");
	publish(plugin, &devs, kube);
	next = time(NULL) + fl.rescan;
	for (;;) {
		/* A second at a time: a plugin that stopped on its own (a
		 * socket it cannot keep) ends this process, non-zero, so the
		 * kubelet restarts the pod rather than keep it unreachable. */
		ts.tv_sec = 1;
		ts.tv_nsec = 0;
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (kp_plugin_wait(plugin, 0, reason, sizeof(reason)) !=
		    KP_ETIMEDOUT) {
			fprintf(stderr, "pci-driver: the plugin stopped: %s\n",
			    reason);
			(void)kp_stop(plugin);
			pci_list_free(&devs);
			return (1);
		}
		if (sig == SIGHUP || (fl.rescan > 0 && time(NULL) >= next)) {
			rescan(plugin, &devs, kube);
			next = time(NULL) + fl.rescan;
		}
	}
	fprintf(stderr, "pci-driver: %s, stopping\n", strsignal(sig));
	r = kp_stop(plugin);
	pci_list_free(&devs);
	return (r == 0 ? 0 : 1);
}
