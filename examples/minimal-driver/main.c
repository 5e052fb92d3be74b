/* minimal-driver NODE KUBECONFIG KUBELET_DIR: one device; CDI IDs, no spec. */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "kubeletplugin.h"

#define DRIVER "minimal.example.com"

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].n_results; k++) {
			char id[128];
			const char *ids[] = { id };
			struct kp_prepared_device d = { KP_PREPARED_DEVICE_INIT,
			    .request_names = &c[i].results[k].request,
			    .n_request_names = 1, .pool_name = c[i].results[k].pool,
			    .device_name = c[i].results[k].device,
			    .cdi_device_ids = ids, .n_cdi_device_ids = 1 };
			snprintf(id, sizeof(id), DRIVER "/dev=%s", d.device_name);
			kp_prepare_add_device(res, i, &d);	/* copies */
		}
	return (0);	/* idempotent: same claims, same answer */
}

static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	return (0);	/* nothing to undo; unknown claims are fine */
}

int
main(int argc, char **argv)
{
	struct kp_hooks hooks = { .prepare = prepare, .unprepare = unprepare };
	static const struct kp_attribute attr = KP_ATTR_STRING("model", "demo");
	static const struct kp_device dev = { KP_DEVICE_INIT, .name = "dev-0",
	    .attributes = &attr, .n_attributes = 1 };	/* grows: ABI-safe */
	struct kp_slice slice = { KP_SLICE_INIT, .devices = &dev, .n_devices = 1 };
	struct kp_pool pool = { KP_POOL_INIT, .name = argv[1], .slices = &slice, .n_slices = 1 };
	struct kp_resources resources = { KP_RESOURCES_INIT, .pools = &pool, .n_pools = 1 };
	const char *dirs[] = { "plugins", "plugins_registry" };
	struct kp_options *o;
	struct kp_plugin *p;
	char dir[256];
	sigset_t set;

	if (argc != 4 || kp_options_new(&o) != 0)
		errx(2, "usage: minimal-driver NODE KUBECONFIG KUBELET_DIR");
	for (size_t i = 0; i < 2; i++) {	/* kubelet makes them on a node */
		snprintf(dir, sizeof(dir), "%s/%s", argv[3], dirs[i]);
		if (mkdir(dir, 0750) != 0 && errno != EEXIST)
			err(1, "%s", dir);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);	/* the supervisor exited */
	sigprocmask(SIG_BLOCK, &set, NULL);	/* before kp_start */
	if (kp_driver_name(o, DRIVER) || kp_node_name(o, argv[1]) ||
	    kp_kube_client_kubeconfig(o, argv[2], NULL) ||
	    kp_kubelet_root_dir(o, argv[3]) ||	/* default sockets under it */
	    kp_rolling_update(o, getenv("POD_UID")) ||	/* set in a DaemonSet */
	    kp_start(o, &hooks, &p)) {
		warnx("%s", kp_options_last_error(o));
		kp_options_free(o);
		return (1);
	}
	kp_options_free(o);	/* kp_start copied what it needs */
	if (kp_publish_resources(p, &resources) != 0)
		warnx("%s", kp_plugin_last_error(p));
	int sig = sigwaitinfo(&set, NULL);	/* SIGCHLD: it stopped on its own */
	if (sig == SIGCHLD && kp_plugin_wait(p, -1, dir, sizeof(dir)) != KP_EINVAL)
		warnx("the plugin stopped: %s", dir);	/* exit non-zero: a restart */
	return (kp_stop(p) == 0 && sig != SIGCHLD ? 0 : 1);
}
