/*
 * test_dirs.c - the directory option setters (RegistrarDirectoryPath,
 * RegistrarSocketFilename, PluginDataDirectoryPath, PluginSocket, the
 * kubelet root): rules, messages naming the option, the sun_path limit at
 * set time, the kubelet-root containment in either order, and the paths
 * opt_dirs_resolve() derives.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "test.h"

#define FAILS(o, call, code, text) do {					\
	CHECK_EQ((call), (code));					\
	CHECK_CONTAINS(kp_options_last_error(o), (text));		\
} while (0)

static void
test_setters(void)
{
	struct kp_options	*o;
	char			 longdir[120];

	CHECK_EQ(kp_kubelet_root_dir(NULL, "/x"), KP_EINVAL);
	CHECK_EQ(kp_registrar_directory_path(NULL, "/x"), KP_EINVAL);
	CHECK_EQ(kp_registrar_socket_filename(NULL, "x"), KP_EINVAL);
	CHECK_EQ(kp_plugin_data_directory_path(NULL, "/x"), KP_EINVAL);
	CHECK_EQ(kp_plugin_socket(NULL, "x"), KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	FAILS(o, kp_kubelet_root_dir(o, "var/lib"), KP_EINVAL,
	    "kp_kubelet_root_dir (beyond upstream: kubelet --root-dir): "
	    "\"var/lib\" must be an absolute path");
	FAILS(o, kp_kubelet_root_dir(o, "/a/"), KP_EINVAL, "must not end");
	FAILS(o, kp_registrar_directory_path(o, "/a/../b"), KP_EINVAL,
	    "kp_registrar_directory_path (RegistrarDirectoryPath): "
	    "\"/a/../b\" must be a clean path");
	FAILS(o, kp_registrar_directory_path(o, "/a//b"), KP_EINVAL, "clean");
	FAILS(o, kp_registrar_directory_path(o, NULL), KP_EINVAL, "absolute");
	FAILS(o, kp_registrar_socket_filename(o, "a/b"), KP_EINVAL,
	    "kp_registrar_socket_filename (RegistrarSocketFilename)");
	FAILS(o, kp_registrar_socket_filename(o, ".x"), KP_EINVAL,
	    "must not start with '.'");
	FAILS(o, kp_plugin_socket(o, ""), KP_EINVAL,
	    "kp_plugin_socket (PluginSocket)");
	memset(longdir, 'd', sizeof(longdir));
	longdir[0] = '/';
	longdir[110] = '\0';
	FAILS(o, kp_plugin_data_directory_path(o, longdir), KP_ENAMETOOLONG,
	    "would not fit in sun_path");
	longdir[99] = '\0';	/* + "/dra.sock": 108 bytes */
	FAILS(o, kp_plugin_data_directory_path(o, longdir), KP_ENAMETOOLONG,
	    "a socket path of 108 bytes, at most 107 fit in sun_path");
	longdir[98] = '\0';	/* 107: fits */
	CHECK_EQ(kp_plugin_data_directory_path(o, longdir), 0);
	CHECK_EQ(kp_plugin_socket(o, "ab.sock"), 0);	/* 106 bytes */
	FAILS(o, kp_plugin_socket(o, "abcdefghi.sock"), KP_ENAMETOOLONG,
	    "kp_plugin_socket (PluginSocket): a socket path");
	CHECK_EQ(kp_registrar_directory_path(o, "/r"), 0);
	CHECK_EQ(kp_registrar_socket_filename(o, "x-reg.sock"), 0);
	/* the kubelet root must contain the data directory, either order */
	FAILS(o, kp_kubelet_root_dir(o, "/var/lib/kubelet"), KP_EINVAL,
	    "does not contain the plugin data directory");
	CHECK_EQ(kp_plugin_data_directory_path(o, "/var/lib/kubelet/plugins/"
	    "d"), 0);
	CHECK_EQ(kp_kubelet_root_dir(o, "/var/lib/kubelet"), 0);
	FAILS(o, kp_plugin_data_directory_path(o, "/var/lib/kubeletx/p"),
	    KP_EINVAL, "must be inside the kubelet root directory");
	FAILS(o, kp_plugin_data_directory_path(o, "/run/p"), KP_EINVAL,
	    "kubelets 1.37+ refuse");
	CHECK_EQ(kp_plugin_data_directory_path(o, "/var/lib/kubelet"), 0);
	kp_options_free(o);
}

static void
test_resolve(void)
{
	struct kp_options	*o;
	char			 root[] = "/tmp/kp-test-dirs-XXXXXX";
	char			 reg[128], want[160];
	struct stat		 st;

	CHECK(mkdtemp(root) != NULL);
	snprintf(reg, sizeof(reg), "%s/plugins_registry", root);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "gpu.example.com"), 0);
	CHECK_EQ(kp_kubelet_root_dir(o, root), 0);
	snprintf(want, sizeof(want), "%s/plugins", root);
	CHECK_EQ(mkdir(want, 0755), 0);
	/* no registry directory: not created, KP_ENOENT naming it */
	FAILS(o, opt_dirs_resolve(o), KP_ENOENT, "plugins_registry does not "
	    "exist");
	CHECK(stat(reg, &st) == -1);
	CHECK_EQ(mkdir(reg, 0755), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	snprintf(want, sizeof(want), "%s/plugins/gpu.example.com/dra.sock",
	    root);
	CHECK_STREQ(o->plugin_socket_path, want);
	snprintf(want, sizeof(want), "%s/gpu.example.com-reg.sock", reg);
	CHECK_STREQ(o->registrar_socket_path, want);
	snprintf(want, sizeof(want), "%s/plugins/gpu.example.com", root);
	CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_mode & 0777) == 0750);
	/* derived again after an option changed; 1.32 paths override */
	CHECK_EQ(kp_plugin_socket(o, "other.sock"), 0);
	CHECK_EQ(kp_registrar_socket_path(o, "/elsewhere/r.sock"), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	CHECK_CONTAINS(o->plugin_socket_path, "/other.sock");
	CHECK_STREQ(o->registrar_socket_path, "/elsewhere/r.sock");
	/* Kubernetes access needs a node name */
	CHECK_EQ(kp_kube_client_in_cluster(o), 0);
	FAILS(o, opt_dirs_resolve(o), KP_EINVAL, "kp_node_name (NodeName): "
	    "must be set when Kubernetes access is configured");
	kp_options_free(o);
	rmdir(want);
	snprintf(want, sizeof(want), "%s/plugins", root);
	rmdir(want);
	rmdir(reg);
	rmdir(root);
}

int
main(void)
{
	test_setters();
	test_resolve();
	return (test_done("test_dirs"));
}
