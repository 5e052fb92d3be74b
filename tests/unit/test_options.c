/*
 * test_options.c - every setter of api/options*.c: for each rule a
 * good and a bad value, the code returned and a message that names the
 * option and the rule; the previous value survives a failed call; the
 * cross-field checks of opt_check(); opt_copy() independence; invalid
 * handles.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api.h"
#include "test.h"

/* call must fail with code; the message names opt and contains rule. */
#define FAILS(o, call, code, opt, rule) do {				\
	int _rc = (call);						\
	CHECK_EQ(_rc, (code));						\
	CHECK_CONTAINS(kp_options_last_error(o), (opt));		\
	CHECK_CONTAINS(kp_options_last_error(o), (rule));		\
} while (0)

#define OK(call) CHECK_EQ((call), 0)

/* A string of n copies of c (several live at once: a ring of buffers). */
static const char *
rep(char c, size_t n)
{
	static char	bufs[4][PATH_MAX + 64];
	static int	next;
	char		*b = bufs[next++ % 4];

	memset(b, c, n);
	b[n] = '\0';
	return (b);
}

/* An absolute path of exactly n bytes: "/" then 'p's. */
static const char *
path_of(size_t n)
{
	static char	bufs[2][PATH_MAX + 64];
	static int	next;
	char		*b = bufs[next++ % 2];

	memset(b, 'p', n);
	b[0] = '/';
	b[n] = '\0';
	return (b);
}

static int
count_fds(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

static int
fd_open(int fd)
{
	return (fcntl(fd, F_GETFD) != -1);
}

static int
test_interceptor(void *user, enum kp_call_phase phase,
    const struct kp_call *call, char *msg, size_t msgsize)
{
	return (0);
}

static void
test_log(void *user, enum kp_log_level level, int verbosity,
    const char *role, const char *msg)
{
}

/* A listening AF_UNIX stream socket bound in the abstract namespace. */
static int
unix_listener(void)
{
	struct sockaddr_un	sun;
	int			fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (-1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	/* Autobind: an address length of just the family picks a name. */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sa_family_t)) == -1 ||
	    listen(fd, 4) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}

static void
test_defaults(void)
{
	struct kp_options	*o;

	CHECK_EQ(kp_options_new(NULL), KP_EINVAL);
	OK(kp_options_new(&o));
	CHECK(o != NULL);
	if (o == NULL)
		return;
	CHECK(opt_valid_handle(o));
	CHECK_STREQ(kp_options_last_error(o), "");
	CHECK(o->driver_name == NULL && o->node_name == NULL);
	CHECK(o->node_uid == NULL && o->kubeconfig == NULL);
	CHECK_EQ(o->kube_mode, KP_KUBE_NONE);
	CHECK(o->kube_qps == 5);
	CHECK_EQ(o->kube_burst, 10);
	CHECK_EQ(o->plugin_listener, -1);
	CHECK_EQ(o->registrar_listener, -1);
	CHECK_EQ(o->socket_mode, 0600);
	CHECK_EQ(o->n_peer_uids, 1);
	CHECK_EQ(o->peer_uids[0], 0);
	CHECK_EQ(o->v1alpha4, 0);
	CHECK_EQ(o->v1beta1, 1);
	CHECK_EQ(o->v1, 1);
	CHECK_EQ(o->grpc_verbosity, 4);
	CHECK_EQ(o->log_verbosity, 0);
	CHECK_EQ(o->serialize, 1);
	CHECK_EQ(o->workers, 4);
	CHECK_EQ(o->max_conns, 8);
	CHECK_EQ(o->handshake_ms, 10000);
	CHECK_EQ(o->n_unary, 0);
	CHECK_EQ(o->n_stream, 0);
	CHECK(o->log_fn == NULL);
	kp_options_free(o);
	kp_options_free(NULL);
}

/* Every entry point on a NULL handle and on a foreign one. */
static void
test_bad_handles(void)
{
	struct kp_options	 bogus, saved;
	struct kp_options	*h;
	int			 i;

	memset(&bogus, 0, sizeof(bogus));
	bogus.magic = 0xdeadbeef;
	bogus.plugin_listener = bogus.registrar_listener = -1;
	memcpy(&saved, &bogus, sizeof(saved));
	for (i = 0; i < 2; i++) {
		h = i == 0 ? NULL : &bogus;
		CHECK_EQ(kp_driver_name(h, "ok"), KP_EINVAL);
		CHECK_EQ(kp_node_name(h, "ok"), KP_EINVAL);
		CHECK_EQ(kp_node_uid(h,
		    "123e4567-e89b-12d3-a456-426614174000"), KP_EINVAL);
		CHECK_EQ(kp_kube_client_in_cluster(h), KP_EINVAL);
		CHECK_EQ(kp_kube_client_kubeconfig(h, "/k", NULL), KP_EINVAL);
		CHECK_EQ(kp_kube_api_qps(h, 5, 10), KP_EINVAL);
		CHECK_EQ(kp_kubelet_plugin_socket_path(h, "/a"), KP_EINVAL);
		CHECK_EQ(kp_plugin_socket_path(h, "/a"), KP_EINVAL);
		CHECK_EQ(kp_plugin_listener(h, -1), KP_EINVAL);
		CHECK_EQ(kp_registrar_socket_path(h, "/a"), KP_EINVAL);
		CHECK_EQ(kp_registrar_listener(h, -1), KP_EINVAL);
		CHECK_EQ(kp_node_v1alpha4(h, 1), KP_EINVAL);
		CHECK_EQ(kp_node_v1beta1(h, 1), KP_EINVAL);
		CHECK_EQ(kp_node_v1(h, 1), KP_EINVAL);
		CHECK_EQ(kp_grpc_verbosity(h, 1), KP_EINVAL);
		CHECK_EQ(kp_log_verbosity(h, 1), KP_EINVAL);
		CHECK_EQ(kp_log_callback(h, test_log, NULL), KP_EINVAL);
		CHECK_EQ(kp_grpc_interceptor(h, test_interceptor, NULL),
		    KP_EINVAL);
		CHECK_EQ(kp_grpc_stream_interceptor(h, test_interceptor, NULL),
		    KP_EINVAL);
		CHECK_EQ(kp_socket_mode(h, 0600), KP_EINVAL);
		CHECK_EQ(kp_allowed_peer_uid(h, 1000), KP_EINVAL);
		CHECK_EQ(kp_serialize(h, 0), KP_EINVAL);
		CHECK_EQ(kp_worker_threads(h, 2), KP_EINVAL);
		CHECK_EQ(kp_grpc_max_connections(h, 8), KP_EINVAL);
		CHECK_EQ(kp_grpc_handshake_timeout(h, 1000), KP_EINVAL);
		CHECK_STREQ(kp_options_last_error(h), "");
		CHECK_EQ(opt_check(h), KP_EINVAL);
		CHECK(!opt_valid_handle(h));
		/* Ignored, not freed: bogus lives on the stack. */
		kp_options_free(h);
	}
	CHECK(memcmp(&bogus, &saved, sizeof(bogus)) == 0);
}

static void
test_driver_name(void)
{
	struct kp_options	*o;
	char			 buf[16];
	const char		*rule =
	    "a DNS subdomain of at most 63 characters";

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_driver_name(o, "gpu.example.com"));
	CHECK_STREQ(o->driver_name, "gpu.example.com");
	OK(kp_driver_name(o, rep('a', 63)));
	CHECK_EQ(strlen(o->driver_name), 63);
	OK(kp_driver_name(o, "a"));
	OK(kp_driver_name(o, "0-x.y-1"));

	FAILS(o, kp_driver_name(o, rep('a', 64)), KP_EINVAL,
	    "kp_driver_name (DriverName)", "is 64 characters long");
	CHECK_CONTAINS(kp_options_last_error(o), rule);
	CHECK_STREQ(o->driver_name, "0-x.y-1");	/* untouched */
	FAILS(o, kp_driver_name(o, "Foo"), KP_EINVAL,
	    "kp_driver_name (DriverName): \"Foo\" must be lower case", rule);
	FAILS(o, kp_driver_name(o, "-foo"), KP_EINVAL, "kp_driver_name",
	    "must start and end each dot-separated part with a letter");
	FAILS(o, kp_driver_name(o, "foo-"), KP_EINVAL, "kp_driver_name",
	    "must start and end");
	FAILS(o, kp_driver_name(o, "foo.-bar"), KP_EINVAL, "kp_driver_name",
	    "must start and end");
	FAILS(o, kp_driver_name(o, ""), KP_EINVAL, "DriverName",
	    "must not be empty");
	FAILS(o, kp_driver_name(o, NULL), KP_EINVAL,
	    "kp_driver_name (DriverName): must be set: a DNS subdomain of "
	    "at most 63 characters", "");
	FAILS(o, kp_driver_name(o, "a..b"), KP_EINVAL, "DriverName",
	    "empty part");
	FAILS(o, kp_driver_name(o, ".ab"), KP_EINVAL, "DriverName",
	    "empty part");
	FAILS(o, kp_driver_name(o, "foo_bar"), KP_EINVAL, "DriverName",
	    "only lower-case letters, digits, '-' and '.'");
	FAILS(o, kp_driver_name(o, "a\nb"), KP_EINVAL, "\"a\\x0ab\"",
	    "only lower-case");
	FAILS(o, kp_driver_name(o, "a/b"), KP_EINVAL, "DriverName",
	    "only lower-case");
	CHECK_STREQ(o->driver_name, "0-x.y-1");

	/* Copied, and the last call wins. */
	snprintf(buf, sizeof(buf), "first");
	OK(kp_driver_name(o, buf));
	buf[0] = 'x';
	CHECK_STREQ(o->driver_name, "first");
	OK(kp_driver_name(o, "second"));
	CHECK_STREQ(o->driver_name, "second");
	kp_options_free(o);
}

static void
test_node_name(void)
{
	struct kp_options	*o;
	char			 name[300];

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_node_name(o, "node-1"));
	/* 253 characters: three 63-character labels, 59, and 1. */
	snprintf(name, sizeof(name), "%s.%s.%s.%s.a", rep('a', 63),
	    rep('b', 63), rep('c', 63), rep('d', 59));
	CHECK_EQ(strlen(name), 253);
	OK(kp_node_name(o, name));
	CHECK_STREQ(o->node_name, name);
	snprintf(name, sizeof(name), "%s.%s.%s.%s.a", rep('a', 63),
	    rep('b', 63), rep('c', 63), rep('d', 60));
	CHECK_EQ(strlen(name), 254);
	FAILS(o, kp_node_name(o, name), KP_EINVAL, "kp_node_name (NodeName)",
	    "is 254 characters long: a DNS subdomain of at most 253");
	CHECK_EQ(strlen(o->node_name), 253);
	FAILS(o, kp_node_name(o, "Node1"), KP_EINVAL, "kp_node_name",
	    "must be lower case");
	/* Every rule a value breaks, in one message. */
	FAILS(o, kp_node_name(o, "Node_1"), KP_EINVAL,
	    "kp_node_name (NodeName): \"Node_1\" must be lower case and must "
	    "contain only lower-case letters, digits, '-' and '.': a DNS "
	    "subdomain of at most 253 characters", "");
	FAILS(o, kp_node_name(o, "-Node..x"), KP_EINVAL,
	    "\"-Node..x\" must be lower case and must not have an empty "
	    "part between dots and must start and end each dot-separated "
	    "part with a letter or digit:", "");
	CHECK_EQ(strlen(o->node_name), 253);	/* untouched */
	FAILS(o, kp_node_name(o, ""), KP_EINVAL, "kp_node_name",
	    "must not be empty");
	FAILS(o, kp_node_name(o, "node."), KP_EINVAL, "kp_node_name",
	    "empty part");
	kp_options_free(o);
}

static void
test_node_uid(void)
{
	struct kp_options	*o;
	const char		*good =
	    "123e4567-e89b-12d3-a456-426614174000";
	const char		*rule = "canonical lower-case form";
	const char		*bad[] = {
		"123E4567-E89B-12D3-A456-426614174000",	/* upper case */
		"123e4567e89b12d3a456426614174000",	/* no hyphens */
		"123e4567-e89b-12d3-a456-42661417400",	/* 35 */
		"123e4567-e89b-12d3-a456-4266141740000",	/* 37 */
		"123e4567-e89b-12d3-a456-42661417400g",	/* not hex */
		"123e456-7e89b-12d3-a456-426614174000",	/* moved - */
		"{123e4567-e89b-12d3-a456-426614174000}",
		"",
		NULL
	};
	size_t			 i;

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_node_uid(o, good));
	CHECK_STREQ(o->node_uid, good);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FAILS(o, kp_node_uid(o, bad[i]), KP_EINVAL,
		    "kp_node_uid (NodeUID)", rule);
		CHECK_STREQ(o->node_uid, good);
	}
	kp_options_free(o);
}

/* ReconcilePoolWithName: a pool name, or NULL / "" for off. */
static void
test_reconcile_pool(void)
{
	struct kp_options	*o;
	char			 long_name[300];

	if (kp_options_new(&o) != 0)
		return;
	CHECK_STREQ(o->reconcile_pool, "");
	OK(kp_reconcile_pool_with_name(o, "node-1/gpus"));
	CHECK_STREQ(o->reconcile_pool, "node-1/gpus");
	FAILS(o, kp_reconcile_pool_with_name(o, "Node_1"), KP_EINVAL,
	    "kp_reconcile_pool_with_name (ReconcilePoolWithName)",
	    "must be a pool name");
	FAILS(o, kp_reconcile_pool_with_name(o, "a//b"), KP_EINVAL,
	    "kp_reconcile_pool_with_name", "DNS subdomains");
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	long_name[100] = long_name[200] = '/';
	FAILS(o, kp_reconcile_pool_with_name(o, long_name), KP_EINVAL,
	    "kp_reconcile_pool_with_name", "at most 253");
	CHECK_STREQ(o->reconcile_pool, "node-1/gpus");
	OK(kp_reconcile_pool_with_name(o, NULL));
	CHECK_STREQ(o->reconcile_pool, "");
	OK(kp_reconcile_pool_with_name(o, "p"));
	OK(kp_reconcile_pool_with_name(o, ""));
	CHECK_STREQ(o->reconcile_pool, "");
	CHECK_EQ(kp_reconcile_pool_with_name(NULL, "p"), KP_EINVAL);
	kp_options_free(o);
}

/* ValidateQualifiedNames: on by default; 0 turns it off, anything else on. */
static void
test_qualified_names(void)
{
	struct kp_options	*o;

	if (kp_options_new(&o) != 0)
		return;
	CHECK_EQ(o->qnames_off, 0);
	OK(kp_validate_qualified_names(o, 0));
	CHECK_EQ(o->qnames_off, 1);
	OK(kp_validate_qualified_names(o, 2));
	CHECK_EQ(o->qnames_off, 0);
	CHECK_EQ(kp_validate_qualified_names(NULL, 1), KP_EINVAL);
	kp_options_free(o);
}

static void
test_kube_client(void)
{
	struct kp_options	*o;
	char			 cwd[PATH_MAX], want[PATH_MAX + 32];
	char			*longp;

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_kube_client_kubeconfig(o, "/etc/kube/config", NULL));
	CHECK_EQ(o->kube_mode, KP_KUBE_KUBECONFIG);
	CHECK_STREQ(o->kubeconfig, "/etc/kube/config");
	CHECK(o->kube_context == NULL);

	/* Relative: joined to the current directory; need not exist. */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(want, sizeof(want), "%s/sub/no-such-kubeconfig", cwd);
	OK(kp_kube_client_kubeconfig(o, "sub/no-such-kubeconfig", "ctx-a"));
	CHECK_STREQ(o->kubeconfig, want);
	CHECK_STREQ(o->kube_context, "ctx-a");

	FAILS(o, kp_kube_client_kubeconfig(o, "", NULL), KP_EINVAL,
	    "kp_kube_client_kubeconfig (KubeClient)", "must not be empty");
	FAILS(o, kp_kube_client_kubeconfig(o, NULL, NULL), KP_EINVAL,
	    "kp_kube_client_kubeconfig", "must not be empty");
	FAILS(o, kp_kube_client_kubeconfig(o, "/k", ""), KP_EINVAL,
	    "kp_kube_client_kubeconfig", "non-empty name");
	if ((longp = malloc(PATH_MAX + 2)) != NULL) {
		memcpy(longp, path_of(PATH_MAX), PATH_MAX + 1);
		FAILS(o, kp_kube_client_kubeconfig(o, longp, NULL),
		    KP_ENAMETOOLONG, "kp_kube_client_kubeconfig", "at most");
		/* Relative, too long once made absolute. */
		memset(longp, 'r', PATH_MAX - 1);
		longp[PATH_MAX - 1] = '\0';
		FAILS(o, kp_kube_client_kubeconfig(o, longp, NULL),
		    KP_ENAMETOOLONG, "kp_kube_client_kubeconfig",
		    "made absolute is longer than");
		free(longp);
	}
	CHECK_STREQ(o->kubeconfig, want);	/* untouched */
	CHECK_STREQ(o->kube_context, "ctx-a");

	/* In-cluster replaces the kubeconfig, and the other way round. */
	OK(kp_kube_client_in_cluster(o));
	CHECK_EQ(o->kube_mode, KP_KUBE_IN_CLUSTER);
	CHECK(o->kubeconfig == NULL && o->kube_context == NULL);
	OK(kp_kube_client_kubeconfig(o, "/k", NULL));
	CHECK_EQ(o->kube_mode, KP_KUBE_KUBECONFIG);
	kp_options_free(o);
}

static void
test_qps(void)
{
	struct kp_options	*o;
	const char		*opt =
	    "kp_kube_api_qps (rest.Config QPS/Burst)";

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_kube_api_qps(o, 0.5, 1));
	OK(kp_kube_api_qps(o, 1000, 10000));
	OK(kp_kube_api_qps(o, 20, 40));
	FAILS(o, kp_kube_api_qps(o, 0, 10), KP_EINVAL, opt,
	    "qps 0 must be > 0 and at most 1000");
	FAILS(o, kp_kube_api_qps(o, -1, 10), KP_EINVAL, opt, "must be > 0");
	FAILS(o, kp_kube_api_qps(o, NAN, 10), KP_EINVAL, opt, "must be > 0");
	FAILS(o, kp_kube_api_qps(o, INFINITY, 10), KP_EINVAL, opt,
	    "at most 1000");
	FAILS(o, kp_kube_api_qps(o, 1000.5, 10), KP_EINVAL, opt,
	    "at most 1000");
	FAILS(o, kp_kube_api_qps(o, 5, 0), KP_EINVAL, opt,
	    "burst 0 must be between 1 and 10000");
	FAILS(o, kp_kube_api_qps(o, 5, 10001), KP_EINVAL, opt,
	    "between 1 and 10000");
	FAILS(o, kp_kube_api_qps(o, 5, -3), KP_EINVAL, opt, "burst -3");
	CHECK(o->kube_qps == 20);
	CHECK(o->kube_timeout_ms == 30000);
	OK(kp_kube_api_timeout(o, 100));
	OK(kp_kube_api_timeout(o, 300000));
	FAILS(o, kp_kube_api_timeout(o, 99), KP_EINVAL,
	    "kp_kube_api_timeout (rest.Config Timeout)",
	    "99 ms must be between 100 and 300000");
	FAILS(o, kp_kube_api_timeout(o, 300001), KP_EINVAL,
	    "kp_kube_api_timeout (rest.Config Timeout)", "300001 ms");
	OK(kp_kube_api_timeout(o, 1000));
	CHECK(o->kube_timeout_ms == 1000);
	CHECK_EQ(o->kube_burst, 40);
	kp_options_free(o);
}

typedef int (*path_setter)(struct kp_options *, const char *);

static void
test_one_path(path_setter set, char **field, struct kp_options *o,
    const char *opt)
{
	OK(set(o, "/run/x.sock"));
	CHECK_STREQ(*field, "/run/x.sock");
	OK(set(o, path_of(107)));
	CHECK_EQ(strlen(*field), 107);
	FAILS(o, set(o, path_of(108)), KP_ENAMETOOLONG, opt,
	    "is 108 bytes, at most 107");
	CHECK_EQ(strlen(*field), 107);
	FAILS(o, set(o, "run/x.sock"), KP_EINVAL, opt,
	    "\"run/x.sock\" must be an absolute path");
	FAILS(o, set(o, "./x.sock"), KP_EINVAL, opt, "absolute");
	FAILS(o, set(o, ""), KP_EINVAL, opt, "must not be empty");
	FAILS(o, set(o, NULL), KP_EINVAL, opt, "must not be empty");
	FAILS(o, set(o, "/run/dir/"), KP_EINVAL, opt, "must name a file");
	CHECK_EQ(strlen(*field), 107);
	OK(set(o, "/run/last.sock"));
	CHECK_STREQ(*field, "/run/last.sock");
}

static void
test_socket_paths(void)
{
	struct kp_options	*o;

	if (kp_options_new(&o) != 0)
		return;
	test_one_path(kp_kubelet_plugin_socket_path,
	    &o->kubelet_plugin_socket_path, o,
	    "kp_kubelet_plugin_socket_path (KubeletPluginSocketPath)");
	test_one_path(kp_plugin_socket_path, &o->plugin_socket_path, o,
	    "kp_plugin_socket_path (PluginSocketPath)");
	test_one_path(kp_registrar_socket_path, &o->registrar_socket_path, o,
	    "kp_registrar_socket_path (RegistrarSocketPath)");
	FAILS(o, kp_registrar_socket_path(o, "/reg/.hidden-reg.sock"),
	    KP_EINVAL, "kp_registrar_socket_path (RegistrarSocketPath)",
	    "the base name must not start with '.'");
	FAILS(o, kp_registrar_socket_path(o, "/.x"), KP_EINVAL,
	    "kp_registrar_socket_path", "must not start with '.'");
	OK(kp_registrar_socket_path(o, "/.reg/drv.example.com-reg.sock"));
	/* Only the registrar has the dot rule. */
	OK(kp_plugin_socket_path(o, "/reg/.hidden.sock"));
	kp_options_free(o);
}

typedef int (*fd_setter)(struct kp_options *, int);

static void
test_one_listener(fd_setter set, size_t off, const char *opt)
{
	struct kp_options	*o;
	char			 tmpl[] = "/tmp/test_options.XXXXXX";
	int			*field;
	int			 file, pair[2], dgram, inet, lsn, lsn2, dup1;
	int			 val, before;
	socklen_t		 len;

	before = count_fds();
	if (kp_options_new(&o) != 0)
		return;
	field = (int *)(void *)((char *)o + off);

	/* A regular file. */
	if ((file = mkstemp(tmpl)) != -1) {
		unlink(tmpl);
		FAILS(o, set(o, file), KP_EINVAL, opt, "not a socket");
		CHECK_CONTAINS(kp_options_last_error(o),
		    "must be a listening AF_UNIX SOCK_STREAM socket");
		close(file);
	}
	/* A connected, not listening, Unix stream socket. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0) {
		FAILS(o, set(o, pair[0]), KP_EINVAL, opt, "not listening");
		close(pair[0]);
		close(pair[1]);
	}
	if ((dgram = socket(AF_UNIX, SOCK_DGRAM, 0)) != -1) {
		FAILS(o, set(o, dgram), KP_EINVAL, opt, "not SOCK_STREAM");
		close(dgram);
	}
	if ((inet = socket(AF_INET, SOCK_STREAM, 0)) != -1) {
		if (listen(inet, 1) == 0)
			FAILS(o, set(o, inet), KP_EINVAL, opt, "not AF_UNIX");
		close(inet);
	}
	FAILS(o, set(o, 1000000), KP_EINVAL, opt, "fd 1000000");
	FAILS(o, set(o, -2), KP_EINVAL, opt, "or -1");
	CHECK_EQ(*field, -1);

	/* A listening one: duplicated now, close-on-exec. */
	lsn = unix_listener();
	CHECK(lsn >= 0);
	OK(set(o, lsn));
	dup1 = *field;
	CHECK(dup1 >= 0 && dup1 != lsn);
	CHECK(fcntl(dup1, F_GETFD) & FD_CLOEXEC);
	close(lsn);	/* the caller's copy is only borrowed */
	val = 0;
	len = sizeof(val);
	CHECK_EQ(getsockopt(dup1, SOL_SOCKET, SO_ACCEPTCONN, &val, &len), 0);
	CHECK_EQ(val, 1);

	/* A failed call keeps it. */
	FAILS(o, set(o, -5), KP_EINVAL, opt, "or -1");
	CHECK_EQ(*field, dup1);

	/* Replacing closes the old duplicate. */
	lsn2 = unix_listener();
	OK(set(o, lsn2));
	CHECK(*field >= 0 && *field != dup1);
	CHECK(!fd_open(dup1));
	close(lsn2);

	/* -1 unsets and closes. */
	dup1 = *field;
	OK(set(o, -1));
	CHECK_EQ(*field, -1);
	CHECK(!fd_open(dup1));

	/* kp_options_free() closes a set one. */
	lsn = unix_listener();
	OK(set(o, lsn));
	close(lsn);
	kp_options_free(o);
	CHECK_EQ(count_fds(), before);
}

static void
test_listeners(void)
{
	test_one_listener(kp_plugin_listener,
	    offsetof(struct kp_options, plugin_listener),
	    "kp_plugin_listener (PluginListener)");
	test_one_listener(kp_registrar_listener,
	    offsetof(struct kp_options, registrar_listener),
	    "kp_registrar_listener (RegistrarListener)");
}

static void
test_flags_and_ranges(void)
{
	struct kp_options	*o;

	if (kp_options_new(&o) != 0)
		return;
	OK(kp_node_v1alpha4(o, 1));
	OK(kp_node_v1beta1(o, 0));
	OK(kp_node_v1(o, 0));
	CHECK(o->v1alpha4 == 1 && o->v1beta1 == 0 && o->v1 == 0);
	FAILS(o, kp_node_v1alpha4(o, 2), KP_EINVAL,
	    "kp_node_v1alpha4 (NodeV1alpha4)", "2 must be 0 or 1");
	FAILS(o, kp_node_v1beta1(o, -1), KP_EINVAL,
	    "kp_node_v1beta1 (NodeV1beta1)", "must be 0 or 1");
	FAILS(o, kp_node_v1(o, 7), KP_EINVAL, "kp_node_v1 (NodeV1)",
	    "must be 0 or 1");
	CHECK(o->v1alpha4 == 1 && o->v1beta1 == 0 && o->v1 == 0);

	OK(kp_serialize(o, 0));
	CHECK_EQ(o->serialize, 0);
	FAILS(o, kp_serialize(o, 2), KP_EINVAL, "kp_serialize (Serialize)",
	    "must be 0 or 1");
	CHECK_EQ(o->serialize, 0);

	OK(kp_grpc_verbosity(o, -1000));
	OK(kp_grpc_verbosity(o, 1000));
	OK(kp_grpc_verbosity(o, -1));
	FAILS(o, kp_grpc_verbosity(o, -1001), KP_EINVAL,
	    "kp_grpc_verbosity (GRPCVerbosity)",
	    "level -1001 must be between -1000 and 1000");
	FAILS(o, kp_grpc_verbosity(o, 1001), KP_EINVAL, "kp_grpc_verbosity",
	    "between -1000 and 1000");
	CHECK_EQ(o->grpc_verbosity, -1);

	OK(kp_log_verbosity(o, 0));
	OK(kp_log_verbosity(o, 10));
	FAILS(o, kp_log_verbosity(o, -1), KP_EINVAL, "kp_log_verbosity",
	    "between 0 and 10");
	FAILS(o, kp_log_verbosity(o, 11), KP_EINVAL, "kp_log_verbosity",
	    "level 11 must be between 0 and 10");
	CHECK_EQ(o->log_verbosity, 10);

	OK(kp_worker_threads(o, 1));
	OK(kp_worker_threads(o, 64));
	FAILS(o, kp_worker_threads(o, 0), KP_EINVAL, "kp_worker_threads",
	    "thread count 0 must be between 1 and 64");
	FAILS(o, kp_worker_threads(o, 65), KP_EINVAL, "kp_worker_threads",
	    "between 1 and 64");
	CHECK_EQ(o->workers, 64);

	OK(kp_grpc_max_connections(o, 1));
	OK(kp_grpc_max_connections(o, 1024));
	FAILS(o, kp_grpc_max_connections(o, 0), KP_EINVAL,
	    "kp_grpc_max_connections (beyond upstream)",
	    "connection count 0 must be between 1 and 1024");
	FAILS(o, kp_grpc_max_connections(o, 1025), KP_EINVAL,
	    "kp_grpc_max_connections", "between 1 and 1024");
	FAILS(o, kp_grpc_max_connections(o, -1), KP_EINVAL,
	    "kp_grpc_max_connections", "count -1 must be");
	CHECK_EQ(o->max_conns, 1024);
	OK(kp_grpc_max_connections(o, 3));
	CHECK_EQ(o->max_conns, 3);

	OK(kp_grpc_handshake_timeout(o, 100));
	OK(kp_grpc_handshake_timeout(o, 600000));
	FAILS(o, kp_grpc_handshake_timeout(o, 99), KP_EINVAL,
	    "kp_grpc_handshake_timeout (beyond upstream)",
	    "timeout 99 ms must be between 100 and 600000");
	FAILS(o, kp_grpc_handshake_timeout(o, 600001), KP_EINVAL,
	    "kp_grpc_handshake_timeout", "between 100 and 600000");
	FAILS(o, kp_grpc_handshake_timeout(o, 0), KP_EINVAL,
	    "kp_grpc_handshake_timeout", "timeout 0 ms");
	CHECK_EQ(o->handshake_ms, 600000);
	OK(kp_grpc_handshake_timeout(o, 1500));
	CHECK_EQ(o->handshake_ms, 1500);

	OK(kp_socket_mode(o, 0600));
	OK(kp_socket_mode(o, 0777));
	OK(kp_socket_mode(o, 0660));
	FAILS(o, kp_socket_mode(o, 01777), KP_EINVAL, "kp_socket_mode",
	    "only permission bits");
	FAILS(o, kp_socket_mode(o, 04600), KP_EINVAL, "kp_socket_mode",
	    "only permission bits");
	FAILS(o, kp_socket_mode(o, 0400), KP_EINVAL, "kp_socket_mode",
	    "owner read and write");
	FAILS(o, kp_socket_mode(o, 0260), KP_EINVAL, "kp_socket_mode",
	    "owner read and write");
	FAILS(o, kp_socket_mode(o, 0), KP_EINVAL, "kp_socket_mode",
	    "owner read and write");
	CHECK_EQ(o->socket_mode, 0660);

	OK(kp_log_callback(o, test_log, o));
	CHECK(o->log_fn == test_log && o->log_user == o);
	OK(kp_log_callback(o, NULL, NULL));
	CHECK(o->log_fn == NULL);
	kp_options_free(o);
}

static void
test_interceptors(void)
{
	struct kp_options	*o;
	int			 users[KP_MAX_INTERCEPTORS + 1];
	int			 i;

	if (kp_options_new(&o) != 0)
		return;
	FAILS(o, kp_grpc_interceptor(o, NULL, NULL), KP_EINVAL,
	    "kp_grpc_interceptor (GRPCInterceptor)", "must not be NULL");
	FAILS(o, kp_grpc_stream_interceptor(o, NULL, NULL), KP_EINVAL,
	    "kp_grpc_stream_interceptor (GRPCStreamInterceptor)",
	    "must not be NULL");
	for (i = 0; i < KP_MAX_INTERCEPTORS; i++) {
		OK(kp_grpc_interceptor(o, test_interceptor, &users[i]));
		OK(kp_grpc_stream_interceptor(o, test_interceptor, &users[i]));
	}
	FAILS(o, kp_grpc_interceptor(o, test_interceptor, &users[i]),
	    KP_ENOMEM, "kp_grpc_interceptor", "at most 16 interceptors");
	FAILS(o, kp_grpc_stream_interceptor(o, test_interceptor, &users[i]),
	    KP_ENOMEM, "kp_grpc_stream_interceptor", "at most 16");
	CHECK_EQ(o->n_unary, KP_MAX_INTERCEPTORS);
	CHECK_EQ(o->n_stream, KP_MAX_INTERCEPTORS);
	/* In the order added. */
	for (i = 0; i < KP_MAX_INTERCEPTORS; i++) {
		CHECK(o->unary[i].fn == test_interceptor);
		CHECK(o->unary[i].user == &users[i]);
		CHECK(o->stream[i].user == &users[i]);
	}
	kp_options_free(o);
}

static void
test_peer_uids(void)
{
	struct kp_options	*o;
	uid_t			 u;

	if (kp_options_new(&o) != 0)
		return;
	FAILS(o, kp_allowed_peer_uid(o, (uid_t)-1), KP_EINVAL,
	    "kp_allowed_peer_uid", "(uid_t)-1");
	CHECK_EQ(o->n_peer_uids, 1);	/* the default survives */
	CHECK_EQ(o->peer_uids[0], 0);
	/* The first call replaces the default. */
	OK(kp_allowed_peer_uid(o, 1000));
	CHECK_EQ(o->n_peer_uids, 1);
	CHECK_EQ(o->peer_uids[0], 1000);
	OK(kp_allowed_peer_uid(o, 1000));	/* a repeat adds nothing */
	CHECK_EQ(o->n_peer_uids, 1);
	for (u = 0; u < KP_MAX_PEER_UIDS - 1; u++)
		OK(kp_allowed_peer_uid(o, u));
	CHECK_EQ(o->n_peer_uids, KP_MAX_PEER_UIDS);
	FAILS(o, kp_allowed_peer_uid(o, 5000), KP_ENOMEM,
	    "kp_allowed_peer_uid", "at most 16 uids");
	CHECK_EQ(o->n_peer_uids, KP_MAX_PEER_UIDS);
	kp_options_free(o);
}

/* A set that passes opt_check(). */
static struct kp_options *
complete(void)
{
	struct kp_options	*o;

	if (kp_options_new(&o) != 0)
		return (NULL);
	OK(kp_driver_name(o, "gpu.example.com"));
	OK(kp_plugin_socket_path(o, "/var/lib/kubelet/plugins/gpu/dra.sock"));
	OK(kp_registrar_socket_path(o,
	    "/var/lib/kubelet/plugins_registry/gpu.example.com-reg.sock"));
	return (o);
}

static void
test_check(void)
{
	struct kp_options	*o;
	int			 lsn;

	/* Driver name first. */
	if (kp_options_new(&o) == 0) {
		FAILS(o, opt_check(o), KP_EINVAL, "kp_driver_name (DriverName)",
		    "driver name must be set");
		OK(kp_driver_name(o, "drv"));
		FAILS(o, opt_check(o), KP_EINVAL,
		    "kp_kubelet_plugin_socket_path", "DRA address must be set");
		/* The plugin server: neither path nor listener. */
		OK(kp_kubelet_plugin_socket_path(o, "/kubelet/view/dra.sock"));
		FAILS(o, opt_check(o), KP_EINVAL, "kp_plugin_listener",
		    "a Unix domain socket path and/or listener must be set "
		    "for the kubelet plugin");
		CHECK_CONTAINS(kp_options_last_error(o),
		    "kp_plugin_socket_path");
		/* A listener alone is enough for it. */
		lsn = unix_listener();
		OK(kp_plugin_listener(o, lsn));
		close(lsn);
		FAILS(o, opt_check(o), KP_EINVAL, "kp_registrar_listener",
		    "a Unix domain socket path and/or listener must be set "
		    "for the registrar");
		CHECK_CONTAINS(kp_options_last_error(o),
		    "kp_registrar_socket_path");
		lsn = unix_listener();
		OK(kp_registrar_listener(o, lsn));
		close(lsn);
		OK(opt_check(o));
		kp_options_free(o);
	}

	/* Paths alone. */
	if ((o = complete()) != NULL) {
		OK(opt_check(o));
		OK(kp_node_v1beta1(o, 0));
		OK(kp_node_v1(o, 0));
		FAILS(o, opt_check(o), KP_EINVAL, "kp_node_v1alpha4",
		    "no supported DRA gRPC API is implemented and enabled");
		OK(kp_node_v1alpha4(o, 1));
		OK(opt_check(o));
		OK(kp_node_v1alpha4(o, 0));
		OK(kp_node_v1(o, 1));
		OK(opt_check(o));
		/* Both servers on one path. */
		OK(kp_registrar_socket_path(o,
		    "/var/lib/kubelet/plugins/gpu/dra.sock"));
		FAILS(o, opt_check(o), KP_EINVAL, "kp_registrar_socket_path",
		    "must not share one socket path");
		kp_options_free(o);
	}
}

static void
test_copy(void)
{
	struct kp_options	*o, c;
	int			 lsn, before;

	before = count_fds();
	if ((o = complete()) == NULL)
		return;
	OK(kp_node_name(o, "node-1"));
	OK(kp_node_uid(o, "123e4567-e89b-12d3-a456-426614174000"));
	OK(kp_kube_client_kubeconfig(o, "/etc/kubeconfig", "ctx"));
	OK(kp_kubelet_plugin_socket_path(o, "/kubelet/dra.sock"));
	OK(kp_grpc_interceptor(o, test_interceptor, o));
	OK(kp_allowed_peer_uid(o, 42));
	lsn = unix_listener();
	OK(kp_registrar_listener(o, lsn));
	close(lsn);
	FAILS(o, kp_worker_threads(o, 0), KP_EINVAL, "kp_worker_threads",
	    "between");
	/* kp_state_initial(): copied, bounded, NULL clears. */
	FAILS(o, kp_state_initial(o, NULL, 5), KP_EINVAL, "kp_state_initial",
	    "NULL with len 5");
	{
		char	*big = calloc(1, KP_STATE_MAX + 1);

		FAILS(o, kp_state_initial(o, big, KP_STATE_MAX + 1), KP_EINVAL,
		    "kp_state_initial", "exceed KP_STATE_MAX");
		OK(kp_state_initial(o, big, KP_STATE_MAX));
		CHECK_EQ(o->initial_state->len, KP_STATE_MAX);
		free(big);
	}
	OK(kp_state_initial(o, NULL, 0));
	CHECK(o->initial_state == NULL && o->initial_state_set == 0);
	OK(kp_state_initial(o, "", 0));
	CHECK(o->initial_state != NULL && o->initial_state->len == 0 &&
	    o->initial_state_set == 1);
	OK(kp_state_initial(o, "boot", 4));

	memset(&c, 0xa5, sizeof(c));
	OK(opt_copy(&c, o));
	CHECK(c.initial_state != NULL && c.initial_state != o->initial_state &&
	    c.initial_state->len == 4 &&
	    memcmp(c.initial_state->data, "boot", 4) == 0);
	CHECK(opt_valid_handle(&c));
	CHECK_STREQ(kp_options_last_error(&c), "");
	CHECK_STREQ(c.driver_name, "gpu.example.com");
	CHECK(c.driver_name != o->driver_name);
	CHECK_STREQ(c.node_name, "node-1");
	CHECK(c.node_name != o->node_name);
	CHECK_STREQ(c.node_uid, "123e4567-e89b-12d3-a456-426614174000");
	CHECK_STREQ(c.kubeconfig, "/etc/kubeconfig");
	CHECK(c.kubeconfig != o->kubeconfig);
	CHECK_STREQ(c.kube_context, "ctx");
	CHECK_STREQ(c.kubelet_plugin_socket_path, "/kubelet/dra.sock");
	CHECK_STREQ(c.plugin_socket_path, o->plugin_socket_path);
	CHECK(c.plugin_socket_path != o->plugin_socket_path);
	CHECK_STREQ(c.registrar_socket_path, o->registrar_socket_path);
	CHECK_EQ(c.plugin_listener, -1);
	CHECK(c.registrar_listener >= 0);
	CHECK(c.registrar_listener != o->registrar_listener);
	CHECK(fcntl(c.registrar_listener, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(c.kube_mode, KP_KUBE_KUBECONFIG);
	CHECK_EQ(c.n_unary, 1);
	CHECK(c.unary[0].fn == test_interceptor && c.unary[0].user == o);
	CHECK_EQ(c.n_peer_uids, 1);
	CHECK_EQ(c.peer_uids[0], 42);
	CHECK_EQ(c.socket_mode, 0600);
	CHECK_EQ(c.workers, 4);
	OK(opt_check(&c));

	/* Changing or freeing the original leaves the copy alone. */
	OK(kp_driver_name(o, "other"));
	CHECK_STREQ(c.driver_name, "gpu.example.com");
	kp_options_free(o);
	CHECK_STREQ(c.node_name, "node-1");
	CHECK(fd_open(c.registrar_listener));
	OK(opt_check(&c));

	opt_clear(&c);
	CHECK(c.driver_name == NULL && c.kubeconfig == NULL);
	CHECK(c.plugin_socket_path == NULL && c.registrar_socket_path == NULL);
	CHECK_EQ(c.registrar_listener, -1);
	opt_clear(&c);	/* twice is harmless */
	CHECK_EQ(count_fds(), before);

	/* A foreign source: KP_EINVAL, and dst holds nothing to free. */
	memset(&c, 0xa5, sizeof(c));
	CHECK_EQ(opt_copy(&c, NULL), KP_EINVAL);
	CHECK(c.driver_name == NULL);
	CHECK_EQ(c.plugin_listener, -1);
	opt_clear(&c);
}

static void
test_dns_helpers(void)
{
	CHECK_EQ(opt_check_subdomain("a.b-c.d", 253), 0);
	CHECK_EQ(opt_check_subdomain(rep('a', 63), 63), 0);
	CHECK_EQ(opt_check_subdomain(rep('a', 64), 63), KP_EINVAL);
	CHECK_EQ(opt_check_subdomain("", 253), KP_EINVAL);
	CHECK_EQ(opt_check_subdomain(NULL, 253), KP_EINVAL);
	CHECK_EQ(opt_check_subdomain("a.", 253), KP_EINVAL);
	CHECK_EQ(opt_check_subdomain("A", 253), KP_EINVAL);
	CHECK_EQ(opt_check_label("dev-0", 63), 0);
	CHECK_EQ(opt_check_label("0", 63), 0);
	CHECK_EQ(opt_check_label(rep('x', 63), 63), 0);
	CHECK_EQ(opt_check_label(rep('x', 64), 63), KP_EINVAL);
	CHECK_EQ(opt_check_label("a.b", 63), KP_EINVAL);
	CHECK_EQ(opt_check_label("-a", 63), KP_EINVAL);
	CHECK_EQ(opt_check_label("a-", 63), KP_EINVAL);
	CHECK_EQ(opt_check_label("a_b", 63), KP_EINVAL);
	CHECK_EQ(opt_check_label("", 63), KP_EINVAL);
}

/* Messages stay within KP_ERROR_SIZE and show long values cut short. */
static void
test_message_bounds(void)
{
	struct kp_options	*o;
	const char		*msg;

	if (kp_options_new(&o) != 0)
		return;
	CHECK_EQ(kp_node_name(o, rep('Z', 4000)), KP_EINVAL);
	msg = kp_options_last_error(o);
	CHECK(strlen(msg) < KP_ERROR_SIZE);
	CHECK_CONTAINS(msg, "kp_node_name (NodeName)");
	CHECK_CONTAINS(msg, "...\" must be lower case");
	kp_options_free(o);
}

int
main(void)
{
	test_defaults();
	test_bad_handles();
	test_driver_name();
	test_node_name();
	test_node_uid();
	test_reconcile_pool();
	test_qualified_names();
	test_kube_client();
	test_qps();
	test_socket_paths();
	test_listeners();
	test_flags_and_ranges();
	test_interceptors();
	test_peer_uids();
	test_check();
	test_copy();
	test_dns_helpers();
	test_message_bounds();
	return (test_done("test_options"));
}
