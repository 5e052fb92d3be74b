/*
 * test_rolling.c - rolling updates: the registration socket names against
 * the Go helper's examples (endpoint tests of PR #139623 and the
 * dra-example-driver chart test; the hashes computed independently with
 * Python's hashlib/base64), the bound < 108 bytes (PR #141815), the
 * setters' rules and the mutual exclusion in both orders, the paths
 * kp_start() derives (sockets, serialize.lock), and the service switches.
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

#define REG	"/var/lib/kubelet/plugins_registry"
#define UID	"ad4af911-5bcd-47c5-a554-f35cea869472"
#define LONGDRV	"gpu.dra-example-driver.sigs.k8s.io"	/* 34 bytes */

/* A registry directory of n bytes: "/" and n-1 'r's. */
static const char *
rdir(size_t n)
{
	static char	 d[128];

	d[0] = '/';
	memset(d + 1, 'r', n - 1);
	d[n] = '\0';
	return (d);
}

/* len(path.Join(dir, name)) of the chosen name */
static size_t
chosen_len(const char *dir, const char *drv)
{
	char	 name[160];

	if (kp_rolling_update_registrar_socket_file(dir, drv, UID, name,
	    sizeof(name)) != 0)
		return (0);
	return (strlen(dir) + 1 + strlen(name));
}

static void
test_names(void)
{
	char	 n[160], drv[40];

	/* prefersFullUID */
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG,
	    "example.com/driver", "11111111-2222-3333-4444-555555555555", n,
	    sizeof(n)), 0);
	CHECK_STREQ(n, "example.com/driver-11111111-2222-3333-4444-"
	    "555555555555-reg.sock");
	/* usesHashedUIDForLongDriverName (issue #139166's driver) */
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG, LONGDRV, UID, n,
	    sizeof(n)), 0);
	CHECK_STREQ(n, LONGDRV "-Jk8-oymVURI-reg.sock");
	/* the shortest form, whose hash covers driver NUL uid */
	CHECK_EQ(kp_rolling_update_registrar_socket_file(rdir(60), LONGDRV,
	    UID, n, sizeof(n)), 0);
	CHECK_STREQ(n, "dra-i1uYBA3g7FMHZvgPIxSbNw-reg.sock");
	/* distinctInputs: the driver name is in the hash */
	CHECK_EQ(kp_rolling_update_registrar_socket_file(rdir(80),
	    "driver.one", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", n,
	    sizeof(n)), 0);
	CHECK_STREQ(n, "dra-_Fx8z05JKnw_xMl1w7SxEw-reg.sock");
	CHECK_EQ(kp_rolling_update_registrar_socket_file(rdir(80),
	    "driver.two", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", n,
	    sizeof(n)), 0);
	CHECK_STREQ(n, "dra-RtsoA4eE9grt2JaXUnPNiQ-reg.sock");
	/*
	 * The dra-example-driver chart table (a 34-byte driver name), with
	 * v0.37's bound: the full path is < 108 bytes, else the last form.
	 * (That table was written when 108 was still accepted: its
	 * 52-byte directory expects 108, which the fix turns into 88.)
	 */
	memset(drv, 'a', 22);
	snprintf(drv + 22, sizeof(drv) - 22, ".example.org");
	CHECK_EQ(chosen_len(rdir(51), drv), 107);	/* UID hash at limit */
	CHECK_EQ(chosen_len(rdir(52), drv), 88);	/* over: shortest */
	CHECK_EQ(chosen_len(rdir(53), drv), 89);
	CHECK_EQ(chosen_len(rdir(71), drv), 107);	/* shortest at limit */
	CHECK_EQ(chosen_len(rdir(72), drv), 108);	/* none fits: last */
	CHECK_EQ(chosen_len(rdir(73), drv), 109);
	/* the full UID form right at the bound (21-byte driver: the path
	 * is the directory plus 68 bytes) */
	CHECK_EQ(chosen_len(rdir(39), "abcdefghi.example.com"), 107);
	CHECK_EQ(kp_rolling_update_registrar_socket_file(rdir(39),
	    "abcdefghi.example.com", UID, n, sizeof(n)), 0);
	CHECK_CONTAINS(n, UID);
	CHECK_EQ(chosen_len(rdir(40), "abcdefghi.example.com"), 83);
	/* rules */
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG "/", LONGDRV,
	    UID, n, sizeof(n)), KP_EINVAL);
	CHECK_EQ(kp_rolling_update_registrar_socket_file("/a/./b", LONGDRV,
	    UID, n, sizeof(n)), KP_EINVAL);
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG, "", UID, n,
	    sizeof(n)), KP_EINVAL);
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG, LONGDRV, "", n,
	    sizeof(n)), KP_EINVAL);
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG, LONGDRV, UID, n,
	    10), KP_ENAMETOOLONG);
	CHECK_EQ(kp_rolling_update_registrar_socket_file(REG, LONGDRV, UID,
	    NULL, 10), KP_EINVAL);
}

static void
test_setters(void)
{
	struct kp_options	*o;

	CHECK_EQ(kp_rolling_update(NULL, UID), KP_EINVAL);
	CHECK_EQ(kp_registration_service(NULL, 0), KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	FAILS(o, kp_rolling_update(o, "a/b"), KP_EINVAL,
	    "kp_rolling_update (RollingUpdate): \"a/b\" must be a pod UID");
	FAILS(o, kp_rolling_update(o, ".."), KP_EINVAL, "must be a pod UID");
	CHECK_EQ(kp_rolling_update(o, UID), 0);
	CHECK_STREQ(o->rolling_uid, UID);
	FAILS(o, kp_registrar_socket_filename(o, "x-reg.sock"), KP_EINVAL,
	    "rolling updates and explicit registration socket filename are "
	    "mutually exclusive");
	FAILS(o, kp_registrar_socket_path(o, "/x/x-reg.sock"), KP_EINVAL,
	    "mutually exclusive");
	CHECK_EQ(kp_rolling_update(o, NULL), 0);
	CHECK_STREQ(o->rolling_uid, "");
	CHECK_EQ(kp_registrar_socket_filename(o, "x-reg.sock"), 0);
	FAILS(o, kp_rolling_update(o, UID), KP_EINVAL,
	    "kp_rolling_update (RollingUpdate): rolling updates and explicit "
	    "registration socket filename are mutually exclusive");
	CHECK_STREQ(o->rolling_uid, "");
	FAILS(o, kp_flock_directory_path(o, "rel"), KP_EINVAL,
	    "kp_flock_directory_path (FlockDirectoryPath): \"rel\" must be an "
	    "absolute path");
	FAILS(o, kp_registration_service(o, 2), KP_EINVAL,
	    "kp_registration_service (RegistrationService): 2 must be 0 or 1");
	FAILS(o, kp_dra_service(o, -1), KP_EINVAL, "kp_dra_service (DRAService)");
	kp_options_free(o);
}

static void
test_resolve(void)
{
	struct kp_options	*o;
	char			 root[] = "/tmp/kp-test-roll-XXXXXX";
	char			 reg[128], want[200], p[160];
	struct stat		 st;

	CHECK(mkdtemp(root) != NULL);
	snprintf(reg, sizeof(reg), "%s/plugins_registry", root);
	CHECK_EQ(mkdir(reg, 0755), 0);
	snprintf(p, sizeof(p), "%s/plugins", root);
	CHECK_EQ(mkdir(p, 0755), 0);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "gpu.example.com"), 0);
	CHECK_EQ(kp_kubelet_root_dir(o, root), 0);
	CHECK_EQ(kp_rolling_update(o, UID), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	snprintf(want, sizeof(want), "%s/plugins/gpu.example.com/dra-" UID
	    ".sock", root);
	CHECK_STREQ(o->plugin_socket_path, want);
	snprintf(want, sizeof(want), "%s/gpu.example.com-" UID "-reg.sock",
	    reg);
	CHECK_STREQ(o->registrar_socket_path, want);
	snprintf(want, sizeof(want), "%s/plugins/gpu.example.com/"
	    "serialize.lock", root);
	CHECK_STREQ(o->lock_path, want);
	/* an explicit PluginSocket wins; no serialization: no lock file */
	CHECK_EQ(kp_plugin_socket(o, "mine.sock"), 0);
	CHECK_EQ(kp_serialize(o, 0), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	CHECK_CONTAINS(o->plugin_socket_path, "/gpu.example.com/mine.sock");
	CHECK_STREQ(o->lock_path, "");
	/* the lock elsewhere: that directory must exist */
	CHECK_EQ(kp_serialize(o, 1), 0);
	CHECK_EQ(kp_flock_directory_path(o, "/nonexistent-kp-dir"), 0);
	FAILS(o, opt_dirs_resolve(o), KP_ENOENT, "kp_flock_directory_path "
	    "(FlockDirectoryPath): /nonexistent-kp-dir does not exist");
	CHECK_EQ(kp_flock_directory_path(o, root), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	snprintf(want, sizeof(want), "%s/serialize.lock", root);
	CHECK_STREQ(o->lock_path, want);
	/* registration off: no registration path at all, and opt_check()
	 * does not ask for one */
	CHECK_EQ(kp_registration_service(o, 0), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	CHECK(o->registrar_socket_path == NULL);
	CHECK_EQ(opt_check(o), 0);
	kp_options_free(o);

	/* DRA off: the endpoint is derived (advertised), the directory is
	 * not created, no lock */
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "other.example.com"), 0);
	CHECK_EQ(kp_kubelet_root_dir(o, root), 0);
	CHECK_EQ(kp_rolling_update(o, UID), 0);
	CHECK_EQ(kp_dra_service(o, 0), 0);
	CHECK_EQ(opt_dirs_resolve(o), 0);
	CHECK_CONTAINS(o->plugin_socket_path, "/plugins/other.example.com/"
	    "dra-" UID ".sock");
	snprintf(want, sizeof(want), "%s/plugins/other.example.com", root);
	CHECK(stat(want, &st) == -1);
	CHECK_STREQ(o->lock_path, "");
	kp_options_free(o);

	snprintf(want, sizeof(want), "%s/plugins/gpu.example.com", root);
	rmdir(want);
	rmdir(p);
	rmdir(reg);
	rmdir(root);
}

/*
 * The DRA socket of a rolling instance: dra-<uid>.sock while its path is
 * < 108 bytes (all that upstream does), then dra-<11 characters>.sock,
 * then <11 characters>.sock (base64url(SHA-256(uid)[:8]) = "Jk8-oymVURI"
 * for UID, by Python's hashlib and base64). A 63-byte driver name under
 * /var/lib/kubelet/plugins fits (105 bytes).
 */
static void
test_plugin_socket(void)
{
	char	 n[64], dir[160];
	size_t	 d;

	CHECK_EQ(rolling_plugin_socket_file("/var/lib/kubelet/plugins/"
	    "gpu.example.com", UID, n, sizeof(n)), 0);
	CHECK_STREQ(n, "dra-" UID ".sock");
	/* dir + '/' + 45 bytes: the full UID up to a 61-byte directory */
	d = 107 - 1 - strlen("dra-" UID ".sock");
	CHECK_EQ(rolling_plugin_socket_file(rdir(d), UID, n, sizeof(n)), 0);
	CHECK_STREQ(n, "dra-" UID ".sock");
	CHECK_EQ(rolling_plugin_socket_file(rdir(d + 1), UID, n, sizeof(n)),
	    0);
	CHECK_STREQ(n, "dra-Jk8-oymVURI.sock");
	d = 107 - 1 - strlen("dra-Jk8-oymVURI.sock");
	CHECK_EQ(rolling_plugin_socket_file(rdir(d), UID, n, sizeof(n)), 0);
	CHECK_STREQ(n, "dra-Jk8-oymVURI.sock");
	CHECK_EQ(rolling_plugin_socket_file(rdir(d + 1), UID, n, sizeof(n)),
	    0);
	CHECK_STREQ(n, "Jk8-oymVURI.sock");
	/* too long for any: the shortest, for the caller's check to name */
	CHECK_EQ(rolling_plugin_socket_file(rdir(100), UID, n, sizeof(n)), 0);
	CHECK_STREQ(n, "Jk8-oymVURI.sock");
	snprintf(dir, sizeof(dir), "/var/lib/kubelet/plugins/%.63s",
	    "a23456789.123456789.123456789.123456789.123456789.123456789.123");
	CHECK_EQ(rolling_plugin_socket_file(dir, UID, n, sizeof(n)), 0);
	CHECK_EQ(strlen(dir) + 1 + strlen(n), 105);
	CHECK_EQ(rolling_plugin_socket_file(dir, UID, n, 10), KP_ENAMETOOLONG);
	CHECK_EQ(rolling_plugin_socket_file(dir, "", n, sizeof(n)), KP_EINVAL);
}

/* RegError: the field rules (ipc_check) and who may send it (rules.c). */
static void
test_reg_error_frame(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__RegError	 e = KPIPC__REG_ERROR__INIT;
	char		 err[KP_ERROR_SIZE], big[1100];

	m.m_case = KPIPC__MSG__M_REG_ERROR;
	m.reg_error = &e;
	e.which = 1;
	e.message = "simulated";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	e.which = 3;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "reg_error.which: 3");
	e.which = 2;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	e.message = big;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "at most 1024 bytes of UTF-8");
	e.message = "\xff\xfe";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY, KPIPC__MSG__M_REG_ERROR,
	    err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_REGISTRAR, CS_READY,
	    KPIPC__MSG__M_REG_ERROR, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_REG_ERROR, err, sizeof(err)), KP_EPROTO);
}

int
main(void)
{
	test_reg_error_frame();
	test_names();
	test_setters();
	test_resolve();
	test_plugin_socket();
	return (test_done("test_rolling"));
}
