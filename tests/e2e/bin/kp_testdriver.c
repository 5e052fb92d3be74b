/*
 * kp_testdriver - a driver for the end-to-end tests. Options map to the
 * kp_* setters; hook behaviour is chosen by flags. After kp_start it
 * prints "ready <pid>" on stdout and then reads commands on stdin:
 *   status   prints "status <state> <kubelet error>"
 *   publish  calls kp_publish_resources with one device, prints the result
 *   stop     calls kp_stop, prints "stopped <code>", exits
 * End of input stops as "stop" does. A failed start prints
 * "error <KP_NAME> <message>" and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "kubeletplugin.h"

struct tdrv {
	char		 name[64];
	const char	*fail_claim;	/* per-claim error for this name */
	const char	*share_id;
	int		 hook_fail;
	int		 init_fail;
	int		 slow_ms;
	int		 spawn_thread;
};

static struct tdrv	 drv;
static atomic_int	 in_hook;	/* hooks running right now */

static int
count_fds(void)
{
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*de;
	int		 n = -1;	/* the DIR's own fd */

	if (d == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/* Serialization proof: report when two hooks ever run at once. */
static void
hook_enter(void)
{
	if (atomic_fetch_add(&in_hook, 1) > 0)
		fprintf(stderr, "OVERLAP: hooks ran concurrently\n");
}

static void
hook_leave(void)
{
	atomic_fetch_sub(&in_hook, 1);
}

/*
 * Plays compromised driver code: finds this process's channel to the
 * supervisor (the unnamed AF_UNIX stream socket) and writes a hostile
 * frame on it. The supervisor must kill and restart this nodeserver.
 */
static void
hostile(const char *kind)
{
	static const uint8_t	 oversize[4] = { 0x7f, 0xff, 0xff, 0xff };
	/* a valid frame of an unpermitted type: Stop (field 10, empty) */
	static const uint8_t	 stop[6] = { 0, 0, 0, 2, 0x52, 0x00 };
	static const uint8_t	 garbage[8] = { 0, 0, 0, 4, 0xff, 0xff,
				    0xff, 0xff };
	struct sockaddr_un	 sun;
	socklen_t		 len;
	DIR			*d;
	struct dirent		*de;
	int			 fd, type, acc;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		len = sizeof(type);
		if (fd < 3 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
		    &len) == -1 || type != SOCK_STREAM)
			continue;
		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) ||
		    acc)
			continue;
		len = sizeof(sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
		    sun.sun_family != AF_UNIX || len > sizeof(sa_family_t))
			continue;
		if (strcmp(kind, "oversize") == 0)
			(void)!write(fd, oversize, sizeof(oversize));
		else if (strcmp(kind, "unpermitted") == 0)
			(void)!write(fd, stop, sizeof(stop));
		else
			(void)!write(fd, garbage, sizeof(garbage));
	}
	closedir(d);
}

/* What the claim look-up gave the hook, for the tests to read. */
static void
log_allocation(const struct kp_claim *c)
{
	size_t	 k;

	fprintf(stderr, "ALLOC %s/%s results=%zu", c->namespace_, c->name,
	    c->n_results);
	for (k = 0; k < c->n_results; k++)
		fprintf(stderr, " %s:%s/%s%s", c->results[k].request,
		    c->results[k].pool, c->results[k].device,
		    c->results[k].admin_access ? ":admin" : "");
	fprintf(stderr, " config=%s\n", c->config_json ? c->config_json :
	    "(null)");
}

/*
 * Sandbox probes (tests/e2e/sandbox.test.js). Claim "syscall-<name>" makes
 * the prepare hook call that syscall with zero arguments, claim "fork"
 * calls fork(), claim "open-<x>" opens $KP_TEST_OPEN_PATH and fails the
 * claim with the outcome. In the registrar the interceptors (with
 * --interceptors) do the same on GetInfo with $KP_TEST_REGISTRAR_SYSCALL
 * and $KP_TEST_REGISTRAR_OPEN, printing the outcome on stderr.
 */
static void
probe_syscall(const char *who, const char *name)
{
	int	 nr = seccomp_syscall_resolve_name(name);
	long	 r;

	if (nr < 0) {
		fprintf(stderr, "probe: %s: unknown syscall %s\n", who, name);
		return;
	}
	fprintf(stderr, "probe: %s calls %s\n", who, name);
	errno = 0;
	r = syscall(nr, 0, 0, 0, 0, 0, 0);
	fprintf(stderr, "probe: %s: %s returned %ld (%s)\n", who, name, r,
	    strerror(errno));
}

static void
probe_open(const char *path, char *out, size_t size)
{
	char	 buf[64];
	ssize_t	 n;
	int	 fd;

	if (path == NULL) {
		snprintf(out, size, "open: no path");
		return;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(out, size, "open %s: %s", path, strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	snprintf(out, size, "open %s: ok, read %zd bytes", path, n);
}

/* 1 if claim i was a sandbox probe (answered here). */
static int
sandbox_claim(struct kp_prepare_results *res, size_t i, const char *name)
{
	char	 out[300];
	pid_t	 pid;

	if (strncmp(name, "syscall-", 8) == 0)
		probe_syscall("nodeserver", name + 8);
	else if (strcmp(name, "fork") == 0) {
		if ((pid = fork()) == 0)
			_exit(0);
		snprintf(out, sizeof(out), "fork: %s", pid == -1 ?
		    strerror(errno) : "a child was created");
		kp_prepare_claim_error(res, i, out);
		return (1);
	} else if (strncmp(name, "open-", 5) == 0) {
		probe_open(getenv("KP_TEST_OPEN_PATH"), out, sizeof(out));
		kp_prepare_claim_error(res, i, out);
		return (1);
	}
	return (0);
}

static void
sandbox_icpt(enum kp_call_phase phase, const struct kp_call *call)
{
	const char	*sc = getenv("KP_TEST_REGISTRAR_SYSCALL");
	const char	*path = getenv("KP_TEST_REGISTRAR_OPEN");
	char		 out[300];

	if (phase != KP_CALL_BEFORE || strcmp(call->server, "registrar") ||
	    strstr(call->method, "GetInfo") == NULL)
		return;
	if (path != NULL) {
		probe_open(path, out, sizeof(out));
		fprintf(stderr, "probe: registrar %s\n", out);
	}
	if (sc != NULL)
		probe_syscall("registrar", sc);
}

/* --sandbox-user role:uid:gid */
static int
sandbox_user(struct kp_options *o, const char *a)
{
	static const char	*names[] = { "nodeserver", "registrar",
				    "publisher" };
	unsigned		 uid, gid;
	char			 role[32];
	int			 i;

	if (sscanf(a, "%31[a-z]:%u:%u", role, &uid, &gid) != 3)
		return (-1);
	for (i = 0; i < 3; i++)
		if (strcmp(role, names[i]) == 0)
			return (kp_sandbox_user(o, (enum kp_process)i, uid, gid));
	return (-1);
}

static int
sandbox_mode(struct kp_options *o, const char *a)
{
	if (strcmp(a, "enforce") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_ENFORCE));
	if (strcmp(a, "complain") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_COMPLAIN));
	if (strcmp(a, "off") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_OFF));
	return (kp_sandbox_mode(o, (enum kp_sandbox_mode)99));
}

static int	prepare_body(const struct kp_claim *, size_t,
		    struct kp_prepare_results *, char *, size_t);

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	int	 r;

	hook_enter();
	r = prepare_body(c, n, res, errbuf, errsize);
	hook_leave();
	return (r);
}

static int
prepare_body(const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 dev;
	const char			*reqs[1] = { "req-0" };
	char				 cdi[200];
	const char			*ids[1] = { cdi };
	size_t				 i;
	int				 waited;

	for (waited = 0; waited < drv.slow_ms; waited += 10) {
		if (kp_prepare_cancelled(res))
			break;
		usleep(10000);
	}
	if (drv.hook_fail) {
		snprintf(errbuf, errsize, "test hook failure");
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (sandbox_claim(res, i, c[i].name))
			continue;
		if (strncmp(c[i].name, "hostile-", 8) == 0) {
			hostile(c[i].name + 8);
			sleep(5);	/* the supervisor kills us here */
		}
		if (drv.fail_claim && strcmp(c[i].name, drv.fail_claim) == 0) {
			kp_prepare_claim_error(res, i, "test claim failure");
			continue;
		}
		log_allocation(&c[i]);
		snprintf(cdi, sizeof(cdi), "%s/test=%s", drv.name, c[i].name);
		memset(&dev, 0, sizeof(dev));
		dev.request_names = reqs;
		dev.n_request_names = 1;
		dev.pool_name = "pool-a";
		dev.device_name = c[i].name;
		dev.cdi_device_ids = ids;
		dev.n_cdi_device_ids = 1;
		dev.share_id = drv.share_id;
		if (kp_prepare_add_device(res, i, &dev) != 0)
			return (-1);
	}
	return (0);
}

static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	size_t	 i;
	int	 waited;

	hook_enter();
	for (waited = 0; waited < drv.slow_ms; waited += 10)
		usleep(10000);
	for (i = 0; i < n; i++)
		if (drv.fail_claim && strcmp(c[i].name, drv.fail_claim) == 0)
			kp_unprepare_claim_error(res, i, "test claim failure");
	hook_leave();
	if (drv.hook_fail) {
		snprintf(errbuf, errsize, "test hook failure");
		return (-1);
	}
	return (0);
}

static int
init_hook(void *user, char *errbuf, size_t errsize)
{
	if (drv.init_fail) {
		snprintf(errbuf, errsize, "test init failure");
		return (-1);
	}
	return (0);
}

/* Logs every call's phase, proving interceptors run in order. */
static int
icpt(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	const char	*tag = user;

	sandbox_icpt(phase, call);
	fprintf(stderr, "interceptor %s %s %s status=%d\n", tag,
	    phase == KP_CALL_BEFORE ? "before" : "after", call->method,
	    call->status);
	if (phase == KP_CALL_BEFORE && strstr(call->method, "Unprepare") &&
	    getenv("KP_TEST_DENY_UNPREPARE") != NULL && tag[0] == 'B') {
		snprintf(msg, msgsize, "denied by interceptor %s", tag);
		return (7);	/* PERMISSION_DENIED */
	}
	return (0);
}

static int
apply(struct kp_options *o, int ch, const char *a)
{
	switch (ch) {
	case 'd':
		snprintf(drv.name, sizeof(drv.name), "%s", a);
		return (kp_driver_name(o, a));
	case 'n': return (kp_node_name(o, a));
	case 'r': return (kp_registrar_socket_path(o, a));
	case 'p': return (kp_plugin_socket_path(o, a));
	case 'k': return (kp_kubelet_plugin_socket_path(o, a));
	case 'c': return (kp_kube_client_kubeconfig(o, a, NULL));
	case 'U': return (kp_node_uid(o, a));
	case 'u': return (kp_allowed_peer_uid(o, (uid_t)strtoul(a, 0, 10)));
	case 'm': return (kp_socket_mode(o, (unsigned)strtoul(a, 0, 8)));
	case 'g': return (kp_grpc_verbosity(o, (int)strtol(a, 0, 10)));
	case 'v': return (kp_log_verbosity(o, (int)strtol(a, 0, 10)));
	case 'w': return (kp_serialize(o, 0) ||
	    kp_worker_threads(o, (int)strtol(a, 0, 10)));
	case '1': return (kp_node_v1alpha4(o, 1));
	case '2': return (kp_node_v1beta1(o, 0));
	case '3': return (kp_node_v1(o, 0));
	case 'F': drv.fail_claim = a; return (0);
	case 'S': drv.share_id = a; return (0);
	case 'H': drv.hook_fail = 1; return (0);
	case 'I': drv.init_fail = 1; return (0);
	case 'W': drv.slow_ms = (int)strtol(a, 0, 10); return (0);
	case 'T': drv.spawn_thread = 1; return (0);
	case 300: return (sandbox_mode(o, a));
	case 301: return (kp_sandbox_capability(o, a));
	case 302: return (kp_sandbox_syscall(o, a));
	case 303: return (kp_sandbox_hide_path(o, a));
	case 304: return (sandbox_user(o, a));
	case 'i':
		return (kp_grpc_interceptor(o, icpt, "A") ||
		    kp_grpc_interceptor(o, icpt, "B"));
	default: return (-1);
	}
}

static int
parse(int argc, char **argv, struct kp_options *o)
{
	static const struct option lo[] = {
		{ "driver-name", 1, 0, 'd' }, { "node-name", 1, 0, 'n' },
		{ "registrar-socket", 1, 0, 'r' },
		{ "plugin-socket", 1, 0, 'p' },
		{ "kubelet-plugin-socket", 1, 0, 'k' },
		{ "kubeconfig", 1, 0, 'c' }, { "allow-uid", 1, 0, 'u' },
		{ "socket-mode", 1, 0, 'm' }, { "grpc-verbosity", 1, 0, 'g' },
		{ "workers", 1, 0, 'w' }, { "v1alpha4", 0, 0, '1' },
		{ "no-v1beta1", 0, 0, '2' }, { "no-v1", 0, 0, '3' },
		{ "fail-claim", 1, 0, 'F' }, { "share-id", 1, 0, 'S' },
		{ "hook-fail", 0, 0, 'H' }, { "init-fail", 0, 0, 'I' },
		{ "slow-ms", 1, 0, 'W' }, { "interceptors", 0, 0, 'i' },
		{ "sandbox-mode", 1, 0, 300 }, { "sandbox-cap", 1, 0, 301 },
		{ "sandbox-syscall", 1, 0, 302 }, { "hide-path", 1, 0, 303 },
		{ "sandbox-user", 1, 0, 304 },
		{ "spawn-thread", 0, 0, 'T' }, { "node-uid", 1, 0, 'U' },
		{ 0, 0, 0, 0 }
	};
	int	 ch;

	while ((ch = getopt_long(argc, argv, "v:", lo, NULL)) != -1) {
		if (apply(o, ch, optarg) != 0) {
			printf("error %s %s\n", "KP_EINVAL",
			    kp_options_last_error(o));
			return (-1);
		}
	}
	return (0);
}

/*
 * "publish <devices> [pools] [tag]": pools named pool-0.., each with
 * <devices> devices in slices of at most 128, attributes from tag (so a
 * republish with another tag changes every device).
 */
static int
publish(struct kp_plugin *p, const char *args)
{
	static struct kp_device		 devs[4096];
	static struct kp_attribute	 attrs[4096][3];
	static struct kp_capacity	 caps[4096][1];
	static char			 names[4096][32], pools[8][16];
	static char			 tag[64];
	struct kp_slice			 slices[8][32];
	struct kp_pool			 pl[8];
	struct kp_resources		 res;
	int				 n = 0, np = 1, i, k, d = 0;

	tag[0] = '\0';
	sscanf(args, "%d %d %63s", &n, &np, tag);
	if (n < 0 || n > 512 || np < 0 || np > 8)
		return (-1);
	memset(pl, 0, sizeof(pl));
	for (k = 0; k < np; k++) {
		snprintf(pools[k], sizeof(pools[k]), "pool-%d", k);
		pl[k] = (struct kp_pool){ KP_POOL_INIT, .name = pools[k],
		    .slices = slices[k] };
		for (i = 0; i < n; i++, d++) {
			snprintf(names[d], sizeof(names[d]), "dev-%d", i);
			attrs[d][0] = (struct kp_attribute)KP_ATTR_INT(
			    "index", i);
			attrs[d][1] = (struct kp_attribute)KP_ATTR_STRING(
			    "example.com/tag", tag[0] ? tag : "none");
			attrs[d][2] = (struct kp_attribute)KP_ATTR_VERSION(
			    "example.com/version", "1.2.3");
			caps[d][0] = (struct kp_capacity)KP_CAPACITY("memory",
			    "1Gi");
			devs[d] = (struct kp_device){ KP_DEVICE_INIT,
			    .name = names[d], .attributes = attrs[d],
			    .n_attributes = 3, .capacities = caps[d],
			    .n_capacities = 1 };
			if (i % 128 == 0)
				slices[k][pl[k].n_slices++] = (struct kp_slice){
				    KP_SLICE_INIT, .devices = &devs[d] };
			slices[k][pl[k].n_slices - 1].n_devices++;
		}
	}
	res = (struct kp_resources){ KP_RESOURCES_INIT, .pools = pl,
	    .n_pools = (size_t)np };
	return (kp_publish_resources(p, &res));
}

static void *
idle_thread(void *arg)
{
	pause();
	return (arg);
}

static void
commands(struct kp_plugin *p, int fds_before)
{
	enum kp_registration_state	 st;
	char				 line[256], err[KP_ERROR_SIZE];
	int				 r;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "status", 6) == 0) {
			r = kp_registration_status(p, &st, err, sizeof(err));
			if (r != 0)
				printf("status-error %s\n", kp_err_name(r));
			else
				printf("status %d %s\n", (int)st, err);
		} else if (strncmp(line, "publish-status", 14) == 0) {
			struct kp_publish_status ps;

			r = kp_publish_status(p, &ps);
			printf("pstatus %s sync=%lld pending=%d creates=%llu "
			    "updates=%llu deletes=%llu running=%d error=%s\n",
			    kp_err_name(r), (long long)ps.last_sync,
			    ps.pending_pools, (unsigned long long)ps.creates,
			    (unsigned long long)ps.updates,
			    (unsigned long long)ps.deletes,
			    ps.publisher_running, ps.last_error);
		} else if (strncmp(line, "publish", 7) == 0) {
			r = publish(p, line + 7);
			printf("publish %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "stop", 4) == 0)
			break;
		fflush(stdout);
	}
	r = kp_stop(p);
	printf("stopped %d fds %d %d\n", r, fds_before, count_fds());
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	struct kp_plugin	*p;
	struct kp_hooks		 h = { NULL, prepare, unprepare, init_hook };
	pthread_t		 th;
	int			 r, fds;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (kp_options_new(&o) != 0)
		return (2);
	if (getenv("KP_TEST_SANDBOX_MODE") != NULL)
		(void)sandbox_mode(o, getenv("KP_TEST_SANDBOX_MODE"));
	if (parse(argc, argv, o) != 0)
		return (2);
	if (drv.spawn_thread)
		pthread_create(&th, NULL, idle_thread, NULL);
	fds = count_fds();
	if ((r = kp_start(o, &h, &p)) != 0) {
		printf("error %s %s\n", kp_err_name(r),
		    kp_options_last_error(o));
		kp_options_free(o);
		return (1);
	}
	kp_options_free(o);
	printf("ready %d\n", (int)getpid());
	commands(p, fds);
	return (0);
}
