/*
 * loop-driver - an example DRA driver for devices that sit directly in
 * /dev: loop block devices, /dev/loop0 .. /dev/loop<N-1>. What it shows
 * beyond the PCI example (docs/device-drivers.md walks through it):
 *
 * - The CDI allowlist names the devices, not a directory: the hooks'
 *   specs may hand containers /dev/loop<N> block nodes of major 7 and
 *   nothing else of /dev (kp_cdi_allow_device_number()), so a
 *   compromised nodeserver cannot grant /dev/sda or /dev/mem.
 * - The driver's own main() talks to a device (LOOP_CTL_ADD on
 *   /dev/loop-control, after kp_start(): main() runs again in the exec'd
 *   nodeserver until kp_start(), where the ioctl is not allowed) and
 *   declares that ioctl for the pod's seccomp profile
 *   (kp_policy_main_ioctl()); --print-seccomp-profile prints the profile
 *   for the pod from this binary's own options; in its privileged pod,
 *   where the runtime applies none, it loads that profile on itself
 *   (kp_policy_main_confine()).
 * - The hooks only name the nodes; the runtime takes type and numbers
 *   from the host's node, which the supervisor checked against the rule.
 *
 * Usage: loop-driver --help. Deployed with deploy/examples/loop-driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kubeletplugin.h"

#define LOOP_MAX	64	/* devices published */
#define LOOP_MAJOR_NR	7	/* Documentation/admin-guide/devices.txt */

struct ldrv_config {
	char		 driver[64];
	const char	*node;
	int		 count;
};

static struct ldrv_config	cfg = { "loop.example.com", NULL, 4 };

static void
usage(FILE *f)
{
	fprintf(f,
"usage: loop-driver [options]\n"
"  --driver-name NAME        DRA driver name (loop.example.com)\n"
"  --node-name NAME          this node ($NODE_NAME)\n"
"  --kubelet-dir DIR         kubelet root (/var/lib/kubelet)\n"
"  --kubeconfig PATH         Kubernetes access (publish, look claims up)\n"
"  --in-cluster              the same from the pod's service account\n"
"  --cdi-dir DIR             CDI spec directory (/var/run/cdi)\n"
"  --state-dir DIR           journal directory (/var/lib/<driver>)\n"
"  --devices N               publish /dev/loop0 .. /dev/loop<N-1>, adding\n"
"                            the ones missing (4; 1 to %d)\n"
"  --print-seccomp-profile   print the pod's OCI seccomp profile for these\n"
"                            options (main()'s ioctl included), exit\n",
	    LOOP_MAX);
}

/*
 * "loop<N>" as this driver publishes it (N in decimal without leading
 * zeros, below --devices): N, else -1. The name comes from the claim's
 * allocation, which the API server wrote: "loop01" would alias loop1,
 * and a loop device this driver does not publish may be the host's own
 * (a snap's, a disk image's), which the device rule would let through.
 */
static int
loop_index(const char *name)
{
	char	*end;
	long	 n;

	if (strncmp(name, "loop", 4) != 0 || name[4] < '0' || name[4] > '9' ||
	    (name[4] == '0' && name[5] != '\0'))
		return (-1);
	errno = 0;
	n = strtol(name + 4, &end, 10);
	return (errno != 0 || *end != '\0' || n >= cfg.count ? -1 : (int)n);
}

/* One CDI device per allocated loop device: its node, by path only. */
static int
spec_device(struct kp_cdi_builder *b, const char *cdi_name, int idx)
{
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT };
	char				 path[32];

	snprintf(path, sizeof(path), "/dev/loop%d", idx);
	n.path = path;
	return (kp_cdi_add_device(b, cdi_name) != 0 ||
	    kp_cdi_add_device_node(b, cdi_name, &n) != 0 ? -1 : 0);
}

/* Claim i: one spec with a CDI device per loop device of this driver. */
static void
prepare_one(const struct kp_claim *c, size_t i, struct kp_prepare_results *res)
{
	struct kp_cdi_builder	*b = NULL;
	char			 kind[96], names[LOOP_MAX][200];
	char			 ids[LOOP_MAX][300], err[KP_ERROR_SIZE];
	const char		*id;
	size_t			 k;
	int			 idx;

	snprintf(kind, sizeof(kind), "%s/loop", cfg.driver);
	if (c->n_results == 0 || c->n_results > LOOP_MAX) {
		snprintf(err, sizeof(err), "claim %s/%s: %zu devices (1 to "
		    "%d)", c->namespace_, c->name, c->n_results, LOOP_MAX);
		goto fail;
	}
	if (kp_cdi_builder_new(kind, &b) != 0) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	for (k = 0; k < c->n_results; k++) {
		if (strcmp(c->results[k].pool, cfg.node) != 0 ||
		    (idx = loop_index(c->results[k].device)) < 0) {
			snprintf(err, sizeof(err), "claim %s/%s: %s/%s is "
			    "not a loop device of this node", c->namespace_,
			    c->name, c->results[k].pool, c->results[k].device);
			goto fail;
		}
		snprintf(names[k], sizeof(names[k]), "%s-%s",
		    c->results[k].device, c->uid);
		if (kp_cdi_device_id(kind, names[k], ids[k],
		    sizeof(ids[k])) != 0 || spec_device(b, names[k], idx) != 0) {
			snprintf(err, sizeof(err), "claim %s/%s: CDI spec: %s",
			    c->namespace_, c->name,
			    kp_cdi_builder_last_error(b));
			goto fail;
		}
	}
	if (kp_prepare_cdi_spec(res, i, b) != 0)
		goto out;	/* the claim failed with the reason */
	for (k = 0; k < c->n_results; k++) {
		struct kp_prepared_device d = { KP_PREPARED_DEVICE_INIT,
		    .request_names = &c->results[k].request,
		    .n_request_names = 1, .pool_name = c->results[k].pool,
		    .device_name = c->results[k].device,
		    .cdi_device_ids = &id, .n_cdi_device_ids = 1 };

		id = ids[k];
		if (kp_prepare_add_device(res, i, &d) != 0)
			goto out;
	}
	goto out;
fail:
	kp_prepare_claim_error(res, i, err);
out:
	kp_cdi_builder_free(b);
}

static int
hook_prepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	size_t	 i;

	(void)user;
	(void)errbuf;
	(void)errsize;
	for (i = 0; i < n; i++)	/* prepared claims: the journal answers */
		prepare_one(&cl[i], i, res);
	return (0);
}

static int
hook_unprepare(void *user, const struct kp_claim *cl, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	(void)user; (void)cl; (void)n; (void)res; (void)errbuf; (void)errsize;
	return (0);	/* the library removes the spec and the entry */
}

/* The journal's write_spec: a prepared claim's spec file is gone (the
 * CDI directory is a tmpfs): the devices name the nodes again. */
static int
journal_write_spec(void *user, const struct kp_journal_entry *e, char *err,
    size_t errsize)
{
	struct kp_cdi_builder	*b;
	char			 kind[96], name[200];
	size_t			 k;
	int			 idx, r = 0;

	(void)user;
	snprintf(kind, sizeof(kind), "%s/loop", cfg.driver);
	if (kp_cdi_builder_new(kind, &b) != 0) {
		snprintf(err, errsize, "out of memory");
		return (-1);
	}
	for (k = 0; r == 0 && k < e->n_devices; k++) {
		if ((idx = loop_index(e->devices[k]->device_name)) < 0)
			continue;
		snprintf(name, sizeof(name), "%s-%s",
		    e->devices[k]->device_name, e->uid);
		if (spec_device(b, name, idx) != 0) {
			snprintf(err, errsize, "%s", kp_cdi_builder_last_error(b));
			r = -1;
		}
	}
	if (r == 0)
		r = kp_cdi_builder_write(b, e->cdi_spec, err, errsize);
	kp_cdi_builder_free(b);
	return (r);
}

/*
 * Make sure /dev/loop0 .. /dev/loop<count-1> exist (LOOP_CTL_ADD; EEXIST
 * is fine) and publish them with their numbers. Runs in the driver
 * process after kp_start(), under the pod's profile only.
 */
static int
loop_publish(struct kp_plugin *p)
{
	static struct kp_attribute	 attrs[LOOP_MAX][3];
	static struct kp_device		 devs[LOOP_MAX];
	static char			 names[LOOP_MAX][16];
	struct kp_slice	 slice = { KP_SLICE_INIT, .devices = devs };
	struct kp_pool	 pool = { KP_POOL_INIT, .name = cfg.node,
			    .slices = &slice, .n_slices = 1 };
	struct kp_resources res = { KP_RESOURCES_INIT, .pools = &pool,
			    .n_pools = 1 };
	struct stat	 st;
	char		 path[32];
	int		 ctl, i;

	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1) {
		fprintf(stderr, "loop-driver: /dev/loop-control: %s\n",
		    strerror(errno));
		return (-1);
	}
	for (i = 0; i < cfg.count; i++) {
		snprintf(path, sizeof(path), "/dev/loop%d", i);
		if (ioctl(ctl, LOOP_CTL_ADD, i) == -1 && errno != EEXIST) {
			fprintf(stderr, "loop-driver: LOOP_CTL_ADD %d: %s\n",
			    i, strerror(errno));
			break;
		}
		if (stat(path, &st) == -1 || !S_ISBLK(st.st_mode) ||
		    major(st.st_rdev) != LOOP_MAJOR_NR) {
			fprintf(stderr, "loop-driver: %s is not a loop device "
			    "node here (mount the host's at the same path)\n",
			    path);
			break;
		}
		snprintf(names[i], sizeof(names[i]), "loop%d", i);
		attrs[i][0] = (struct kp_attribute)KP_ATTR_INT("index", i);
		attrs[i][1] = (struct kp_attribute)KP_ATTR_INT("major",
		    (long long)major(st.st_rdev));
		attrs[i][2] = (struct kp_attribute)KP_ATTR_INT("minor",
		    (long long)minor(st.st_rdev));
		devs[i] = (struct kp_device){ KP_DEVICE_INIT,
		    .name = names[i], .attributes = attrs[i],
		    .n_attributes = 3 };
	}
	close(ctl);
	slice.n_devices = (size_t)i;
	if (kp_publish_resources(p, &res) != 0) {
		fprintf(stderr, "loop-driver: publish: %s\n",
		    kp_plugin_last_error(p));
		return (-1);
	}
	fprintf(stderr, "loop-driver: published %d loop device(s) as pool "
	    "%s\n", i, cfg.node);
	return (i == cfg.count ? 0 : -1);
}

int
main(int argc, char **argv)
{
	enum { O_DRIVER = 256, O_NODE, O_KDIR, O_KCFG, O_INCL, O_CDI,
	    O_STATE, O_COUNT, O_PROFILE, O_HELP };
	static const struct option longopts[] = {
		{ "driver-name", required_argument, NULL, O_DRIVER },
		{ "node-name", required_argument, NULL, O_NODE },
		{ "kubelet-dir", required_argument, NULL, O_KDIR },
		{ "kubeconfig", required_argument, NULL, O_KCFG },
		{ "in-cluster", no_argument, NULL, O_INCL },
		{ "cdi-dir", required_argument, NULL, O_CDI },
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "devices", required_argument, NULL, O_COUNT },
		{ "print-seccomp-profile", no_argument, NULL, O_PROFILE },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 }
	};
	struct kp_hooks		 hooks = { .prepare = hook_prepare,
				    .unprepare = hook_unprepare };
	struct kp_journal_hooks	 jh = { KP_JOURNAL_HOOKS_INIT,
				    .write_spec = journal_write_spec };
	const char	*kdir = "/var/lib/kubelet", *kcfg = NULL;
	const char	*cdi = "/var/run/cdi", *state = NULL;
	char		 state_buf[128], why[KP_ERROR_SIZE], *profile;
	struct kp_options *o;
	struct kp_plugin *p;
	sigset_t	 set;
	int		 ch, incl = 0, print = 0, sig, r;

	cfg.node = getenv("NODE_NAME");
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		switch (ch) {
		case O_DRIVER:
			snprintf(cfg.driver, sizeof(cfg.driver), "%s", optarg);
			break;
		case O_NODE: cfg.node = optarg; break;
		case O_KDIR: kdir = optarg; break;
		case O_KCFG: kcfg = optarg; break;
		case O_INCL: incl = 1; break;
		case O_CDI: cdi = optarg; break;
		case O_STATE: state = optarg; break;
		case O_COUNT:
			cfg.count = atoi(optarg);
			if (cfg.count < 1 || cfg.count > LOOP_MAX) {
				fprintf(stderr, "loop-driver: --devices %s: "
				    "1 to %d\n", optarg, LOOP_MAX);
				return (2);
			}
			break;
		case O_PROFILE: print = 1; break;
		case O_HELP: usage(stdout); return (0);
		default: usage(stderr); return (2);
		}
	if (state == NULL) {
		snprintf(state_buf, sizeof(state_buf), "/var/lib/%s",
		    cfg.driver);
		state = state_buf;
	}
	if (kp_options_new(&o) != 0)
		return (1);
	/*
	 * The specs may name /dev/loop<N> block nodes of major 7, nothing
	 * else: the supervisor lstat()s each node and refuses a link, a
	 * non-device or other numbers. main()'s one device call goes to the
	 * pod's profile; the hooks' filters never get it.
	 */
	if (kp_cdi_allow_device_number(o, "/dev/loop[0-9]*", 'b',
	    LOOP_MAJOR_NR, 0, KP_CDI_MINOR_MAX) != 0 ||
	    kp_policy_main_ioctl(o, LOOP_CTL_ADD) != 0 ||
	    /* Its pod is privileged (deploy/components/device-driver), so
	     * the runtime applies no profile: the process loads it itself
	     * when kp_start() returns. */
	    kp_policy_main_confine(o, 1) != 0 ||
	    kp_driver_name(o, cfg.driver) != 0)
		goto fail;
	if (print) {
		if (kp_policy_export_oci(o, &profile) != 0)
			goto fail;
		fputs(profile, stdout);
		free(profile);
		kp_options_free(o);
		return (0);
	}
	if (cfg.node == NULL) {
		fprintf(stderr, "loop-driver: --node-name or $NODE_NAME\n");
		kp_options_free(o);
		return (2);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);	/* the supervisor exited */
	sigprocmask(SIG_BLOCK, &set, NULL);	/* before kp_start */
	if (kp_node_name(o, cfg.node) != 0 ||
	    kp_kubelet_root_dir(o, kdir) != 0 ||
	    kp_rolling_update(o, getenv("POD_UID")) != 0 ||
	    (kcfg != NULL && kp_kube_client_kubeconfig(o, kcfg, NULL) != 0) ||
	    (incl && kp_kube_client_in_cluster(o) != 0) ||
	    kp_journal_dir(o, state) != 0 ||
	    kp_journal_hooks(o, &jh) != 0 ||
	    kp_cdi_directory(o, cdi) != 0 ||
	    kp_start(o, &hooks, &p) != 0)
		goto fail;
	kp_options_free(o);
	if (kcfg != NULL || incl)
		(void)loop_publish(p);
	fprintf(stderr, "loop-driver: serving\n");
	sig = sigwaitinfo(&set, NULL);
	if (sig == SIGCHLD && kp_plugin_wait(p, -1, why, sizeof(why)) !=
	    KP_EINVAL)
		fprintf(stderr, "loop-driver: the plugin stopped: %s\n", why);
	r = kp_stop(p);
	return (r == 0 && sig != SIGCHLD ? 0 : 1);
fail:
	fprintf(stderr, "loop-driver: %s\n", kp_options_last_error(o));
	kp_options_free(o);
	return (1);
}
