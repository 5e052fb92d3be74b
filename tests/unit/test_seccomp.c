/*
 * test_seccomp.c - the filters themselves, loaded for real: each case
 * forks a child that builds and loads one role's filter (policy/seccomp.c)
 * and makes the calls an attacker would. Argument rules (fcntl, socket,
 * socketpair, newfstatat, kill, clone, ioctl, prctl), the nodeserver's
 * EPERM with its record (policy/sigsys.c), the hooks' claim errors
 * (nodeserver/hooks.c), what a hook's own SIGSYS handler or mask changes,
 * strict mode and the other roles' death by SIGSYS; the driver process's
 * own filter (kp_policy_main_confine, policy/main.c) on every thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/loop.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <linux/netlink.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "api/api.h"
#include "nodeserver/dra.h"
#include "policy/policy.h"

/* In the child: load role's filter in mode. */
static void
sandbox(enum kp_role role, int mode)
{
	struct policy_opts	 po;
	struct pol_filter	*f;
	char			 err[256];
	struct rlimit		 core = { 0, 0 };

	(void)setrlimit(RLIMIT_CORE, &core);	/* SIGSYS dumps core */
	pol_opts_init(&po);
	po.mode = mode;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    pol_filter_build(role, &po, -1, &f, err, sizeof(err)) != 0 ||
	    pol_filter_load(f, err, sizeof(err)) != 0) {
		fprintf(stderr, "sandbox: %s\n", err);
		_exit(99);
	}
}

/* Run fn in a child; its wait status. */
static int
in_child(void (*fn)(void))
{
	pid_t	 pid;
	int	 st;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		test_failures = 0;	/* the child's own count */
		fn();
		_exit(test_failures == 0 ? 0 : 1);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid)
		return (-1);
	return (st);
}

#define DENIED(call) do {						\
	errno = 0;							\
	CHECK((call) == -1 && errno == EPERM);				\
} while (0)

static int	 target;	/* a process of ours to aim signals at */

static void
nodeserver_calls(void)
{
	int	 fd[2], nrs[POL_DENIED_MAX], nr_fcntl, nr_socket;
	size_t	 n;

	sandbox(ROLE_NODESERVER, KP_SANDBOX_ENFORCE);
	nr_fcntl = pol_syscall_number("fcntl");
	nr_socket = pol_syscall_number("socket");
	CHECK(pipe2(fd, O_CLOEXEC) == 0);

	pol_denied_begin();
	/* Commands that signal other processes: EPERM, not death. */
	DENIED(fcntl(fd[0], F_SETOWN, target));
	DENIED(fcntl(fd[0], F_SETSIG, SIGKILL));
	DENIED(fcntl(fd[0], F_SETLEASE, F_RDLCK));
	DENIED(fcntl(fd[0], F_NOTIFY, 0));
	/* The kernel reads cmd as 32 bits: high garbage is still denied. */
	DENIED(syscall(SYS_fcntl, fd[0], 0x100000000UL | F_SETOWN, target));
	/* The rest of what our code and glibc use still works. */
	CHECK(fcntl(fd[0], F_GETFL) >= 0);
	CHECK(fcntl(fd[0], F_SETFL, O_NONBLOCK | O_ASYNC) == 0);
	CHECK(fcntl(fd[0], F_GETFD) == FD_CLOEXEC);
	CHECK(fcntl(fd[0], F_DUPFD_CLOEXEC, 10) >= 10);
	CHECK(fcntl(fd[0], F_GETOWN) == 0);	/* no owner: O_ASYNC
						 * signals nobody */
	CHECK(write(fd[1], "x", 1) == 1);
	DENIED(socket(AF_INET, SOCK_STREAM, 0));
	DENIED(kill(target, SIGTERM));
	DENIED(kill(-1, 0));
	DENIED(kill(0, 0));
	DENIED(ioctl(fd[0], FIOSETOWN, &target));
	CHECK(kill(getpid(), 0) == 0);
	DENIED(syscall(SYS_clone, CLONE_THREAD | CLONE_NEWNET, 0, 0, 0, 0));
	DENIED(fork());
	DENIED(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
	n = pol_denied_end(nrs, POL_DENIED_MAX);
	CHECK(n >= 5);
	CHECK(n > 0 && nrs[0] == nr_fcntl);
	CHECK(n > 1 && nrs[1] == nr_socket);
	CHECK_EQ(pol_denied_count(nr_fcntl), 5);
	CHECK_EQ(pol_denied_count(nr_socket), 1);
	/* Outside a hook call nothing is recorded for the caller. */
	DENIED(socket(AF_INET, SOCK_STREAM, 0));
	CHECK_EQ(pol_denied_end(nrs, POL_DENIED_MAX), 0);
	CHECK_EQ(pol_denied_count(nr_socket), 2);
	DENIED(kill(target, 0));	/* not even probing it */
}

/* A hook that fails claim 0 after a denied socket, prepares claim 1. */
static int
hook(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 d = { KP_PREPARED_DEVICE_INIT };
	int				*fail = user;

	(void)c;
	(void)n;
	if (socket(AF_INET6, SOCK_DGRAM, 0) == -1)
		kp_prepare_claim_error(res, 0, "no socket");
	d.pool_name = "p";
	d.device_name = "d";
	kp_prepare_add_device(res, 1, &d);
	if (*fail) {
		snprintf(errbuf, errsize, "hook gave up");
		return (-1);
	}
	return (0);
}

static void
nodeserver_hook(void)
{
	struct kp_hooks		 h = { 0 };
	struct kp_claim		 c[2] = { 0 };
	struct dra_results	 r;
	char			 err[KP_ERROR_SIZE];
	int			 fail = 0;

	sandbox(ROLE_NODESERVER, KP_SANDBOX_ENFORCE);
	h.prepare = hook;
	h.user = &fail;
	CHECK(dra_results_init(&r, 2, NULL, NULL) == 0);
	r.n_hook = 2;
	CHECK(dra_hook_call(&h, 1, c, &r, err, sizeof(err)) == 0);
	CHECK_STREQ(r.claims[0].error, "no socket; sandbox denied socket");
	CHECK(r.claims[1].error == NULL && r.claims[1].n_devices == 1);
	dra_results_free(&r);

	/* The whole call failed: its error names the denial too. */
	fail = 1;
	CHECK(dra_results_init(&r, 2, NULL, NULL) == 0);
	r.n_hook = 2;
	CHECK(dra_hook_call(&h, 1, c, &r, err, sizeof(err)) == -1);
	CHECK_STREQ(err, "hook gave up; sandbox denied socket");
	dra_results_free(&r);
}

static void
nodeserver_strict(void)
{
	sandbox(ROLE_NODESERVER, KP_SANDBOX_STRICT);
	if (test_failures > 0)
		_exit(1);
	(void)socket(AF_INET, SOCK_STREAM, 0);
	_exit(0);		/* not reached: SIGSYS */
}

/* A hook's own SIGSYS handler: the call still does not run. */
static void
noop(int sig)
{
	(void)sig;
}

static void
nodeserver_own_handler(void)
{
	long	 r;

	sandbox(ROLE_NODESERVER, KP_SANDBOX_ENFORCE);
	signal(SIGSYS, noop);
	r = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	/* The registers were rolled back: the "fd" is the syscall number,
	 * and no socket exists. */
	CHECK_EQ(r, SYS_socket);
	CHECK(fcntl((int)r, F_GETFD) == -1 && errno == EBADF);
	CHECK_EQ(pol_denied_count(pol_syscall_number("socket")), 0);
}

/* A hook that blocks SIGSYS: the kernel forces it, the process dies. */
static void
nodeserver_blocked(void)
{
	sigset_t	 set;

	sandbox(ROLE_NODESERVER, KP_SANDBOX_ENFORCE);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	sigprocmask(SIG_BLOCK, &set, NULL);
	(void)socket(AF_INET, SOCK_STREAM, 0);
	_exit(0);		/* not reached: SIGSYS */
}

/* A SIGSYS that seccomp did not send ends the process. */
static void
nodeserver_raise(void)
{
	sandbox(ROLE_NODESERVER, KP_SANDBOX_ENFORCE);
	(void)raise(SIGSYS);
	_exit(0);		/* not reached: SIGSYS */
}

static void
registrar_calls(void)
{
	struct stat	 st;

	sandbox(ROLE_REGISTRAR, KP_SANDBOX_ENFORCE);
	CHECK(fstat(0, &st) == 0);
	errno = 0;
	CHECK(fstatat(AT_FDCWD, "", &st, AT_EMPTY_PATH) == -1 &&
	    errno == EACCES);
	errno = 0;
	CHECK(fstatat(AT_FDCWD, "/etc/passwd", &st, 0) == -1 &&
	    errno == EACCES);
	errno = 0;
	CHECK(fstatat(0, "/etc/passwd", &st, 0) == -1 && errno == EACCES);
	/* AT_FDCWD zero-extended is refused too. */
	errno = 0;
	CHECK(syscall(SYS_newfstatat, 0xffffff9cUL, "", &st,
	    AT_EMPTY_PATH) == -1 && errno == EACCES);
	CHECK(fcntl(0, F_GETFL) >= 0);
	if (test_failures > 0)
		_exit(1);
	(void)fcntl(0, F_SETOWN, target);
	_exit(0);		/* not reached: SIGSYS */
}

static int
resolves(const char *host, int flags)
{
	struct addrinfo	 h, *r;

	memset(&h, 0, sizeof(h));
	h.ai_socktype = SOCK_STREAM;
	h.ai_flags = flags;
	if (getaddrinfo(host, "443", &h, &r) != 0)
		return (0);
	freeaddrinfo(r);
	return (1);
}

static void
publisher_calls(void)
{
	int	 s, sv[2];

	sandbox(ROLE_PUBLISHER, KP_SANDBOX_ENFORCE);
	CHECK((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	close(s);
	CHECK((s = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0)) >= 0);
	close(s);
	errno = 0;
	CHECK(socket(AF_UNIX, SOCK_STREAM, 0) == -1 && errno == EACCES);
	errno = 0;
	CHECK(socket(AF_UNIX, SOCK_DGRAM, 0) == -1 && errno == EACCES);
	errno = 0;
	CHECK(socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE) == -1 &&
	    errno == EACCES);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	/* Name resolution falls back past the nscd (AF_UNIX) and
	 * AI_ADDRCONFIG (netlink) probes. */
	CHECK(resolves("localhost", 0));
	CHECK(resolves("localhost", AI_ADDRCONFIG));
	CHECK(resolves("127.0.0.1", AI_ADDRCONFIG));
	CHECK(resolves("::1", AI_NUMERICHOST));
	if (test_failures > 0)
		_exit(1);
	(void)socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	_exit(0);		/* not reached: SIGSYS */
}

static void
publisher_raw(void)
{
	sandbox(ROLE_PUBLISHER, KP_SANDBOX_ENFORCE);
	(void)socket(AF_INET, SOCK_RAW, 1);
	_exit(0);		/* not reached: SIGSYS */
}

static void
publisher_netlink(void)
{
	sandbox(ROLE_PUBLISHER, KP_SANDBOX_ENFORCE);
	(void)socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
	_exit(0);		/* not reached: SIGSYS */
}

/*
 * As pid 1 of a pid namespace of its own (what a child is when the
 * supervisor gives it one): the own-pid rule uses the pid seen inside,
 * and a violation still ends the process. Needs CAP_SYS_ADMIN; the
 * status of the inner child, or -2 when no namespace could be made.
 */
static void
pidns_registrar(void)
{
	CHECK(getpid() == 1);
	sandbox(ROLE_REGISTRAR, KP_SANDBOX_ENFORCE);
	CHECK(kill(getpid(), 0) == 0);
	if (test_failures > 0)
		_exit(1);
	(void)fcntl(0, F_SETOWN, 1);
	_exit(0);		/* not reached */
}

static int
in_pidns(void)
{
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == 0) {
		if (unshare(CLONE_NEWPID) == -1)
			_exit(2);
		st = in_child(pidns_registrar);
		_exit(st == -1 ? 3 : WIFEXITED(st) ? 10 + WEXITSTATUS(st) :
		    WIFSIGNALED(st) ? 100 + WTERMSIG(st) : 4);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return (-1);
	return (WEXITSTATUS(st) == 2 ? -2 : WEXITSTATUS(st));
}

static int
died_of_sigsys(int st)
{
	return (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
}

/* "Seccomp:" and "NoNewPrivs:" of every thread (/proc/self/task), as
 * "<seccomp>/<nnp>" each; fewer than two threads is a failure. */
static void
threads_are(const char *want)
{
	char		 path[300], line[128], got[8];
	DIR		*d;
	struct dirent	*de;
	FILE		*f;
	int		 n = 0, sc, nnp;

	CHECK((d = opendir("/proc/self/task")) != NULL);
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status",
		    de->d_name);
		sc = nnp = -1;
		CHECK((f = fopen(path, "r")) != NULL);
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			(void)sscanf(line, "Seccomp: %d", &sc);
			(void)sscanf(line, "NoNewPrivs: %d", &nnp);
		}
		if (f != NULL)
			fclose(f);
		snprintf(got, sizeof(got), "%d/%d", sc, nnp);
		CHECK_STREQ(got, want);
		n++;
	}
	if (d != NULL)
		closedir(d);
	CHECK(n >= 2);
}

static void *
idle(void *arg)
{
	pause();
	return (arg);
}

static int	 own_filter_loaded;

/* A thread with a filter of its own (allow all), this thread only. */
static void *
own_filter(void *arg)
{
	struct sock_filter	 allow = BPF_STMT(BPF_RET | BPF_K,
				    SECCOMP_RET_ALLOW);
	struct sock_fprog	 prog = { 1, &allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		__atomic_store_n(&own_filter_loaded, 1, __ATOMIC_SEQ_CST);
	pause();
	return (arg);
}

/*
 * kp_policy_main_confine's filter (policy_main), loaded after a thread
 * started: every thread has it; the declared ioctl passes to the driver
 * (ENOTTY on /dev/null), an undeclared one and a syscall outside the
 * union get EPERM. As root (CAP_SYS_ADMIN) without NO_NEW_PRIVS.
 */
static void
main_confined(void)
{
	struct kp_options	*o;
	struct pol_union	*u;
	char			 err[KP_ERROR_SIZE];
	pthread_t		 th;
	size_t			 i;
	int			 fd, inunion = 0;

	CHECK(kp_options_new(&o) == 0);
	CHECK(kp_policy_main_ioctl(o, LOOP_CTL_GET_FREE) == 0);
	CHECK(kp_policy_main_confine(o, 1) == 0);
	CHECK(pol_union_build(&o->policy, POL_UNION_DRIVER, &u) == 0);
	for (i = 0; i < u->n; i++)
		inunion |= strcmp(u->e[i].name, "personality") == 0;
	free(u);
	CHECK(inunion == 0);
	CHECK(pthread_create(&th, NULL, idle, NULL) == 0);
	CHECK((fd = open("/dev/null", O_RDONLY)) != -1);
	CHECK(syscall(SYS_personality, 0xffffffffUL) != -1);
	threads_are("0/0");
	CHECK_EQ(policy_main(o, err, sizeof(err)), 0);
	threads_are(geteuid() == 0 ? "2/0" : "2/1");
	errno = 0;
	CHECK(ioctl(fd, LOOP_CTL_GET_FREE) == -1 && errno == ENOTTY);
	DENIED(ioctl(fd, LOOP_CTL_ADD, 0));
	DENIED(syscall(SYS_personality, 0xffffffffUL));
	close(fd);
	kp_options_free(o);
}

/* Without CAP_SYS_ADMIN: NO_NEW_PRIVS first, on every thread. */
static void
main_confined_nnp(void)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3,
					    0 };
	struct __user_cap_data_struct	 c[2];
	struct kp_options		*o;
	char				 err[KP_ERROR_SIZE];
	pthread_t			 th;

	CHECK(syscall(SYS_capget, &h, c) == 0);
	c[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &=
	    ~CAP_TO_MASK(CAP_SYS_ADMIN);
	CHECK(syscall(SYS_capset, &h, c) == 0);
	CHECK(kp_options_new(&o) == 0);
	CHECK(kp_policy_main_confine(o, 1) == 0);
	CHECK(pthread_create(&th, NULL, idle, NULL) == 0);
	CHECK_EQ(policy_main(o, err, sizeof(err)), 0);
	threads_are("2/1");
	kp_options_free(o);
}

/* A thread with a filter TSYNC cannot replace: nothing is loaded, and
 * the error says why. */
static void
main_confined_tsync(void)
{
	struct kp_options	*o;
	char			 err[KP_ERROR_SIZE];
	pthread_t		 th;
	int			 i;

	CHECK(kp_options_new(&o) == 0);
	CHECK(kp_policy_main_confine(o, 1) == 0);
	CHECK(pthread_create(&th, NULL, own_filter, NULL) == 0);
	for (i = 0; i < 500 && !__atomic_load_n(&own_filter_loaded,
	    __ATOMIC_SEQ_CST); i++)
		usleep(2000);
	CHECK(own_filter_loaded);
	CHECK_EQ(policy_main(o, err, sizeof(err)), KP_ESANDBOX);
	CHECK_CONTAINS(err, "a thread of this process runs a seccomp filter "
	    "of its own");
	/* This thread is still unconfined. */
	CHECK(syscall(SYS_personality, 0xffffffffUL) != -1);
	kp_options_free(o);
}

int
main(void)
{
	int	 st;
	pid_t	 t;

	/* A process outside the child's thread group to aim at. */
	if ((t = fork()) == 0) {
		pause();
		_exit(0);
	}
	target = (int)t;

	st = in_child(nodeserver_calls);
	CHECK(st == 0);
	st = in_child(nodeserver_hook);
	CHECK(st == 0);
	CHECK(died_of_sigsys(in_child(nodeserver_strict)));
	CHECK(in_child(nodeserver_own_handler) == 0);
	CHECK(died_of_sigsys(in_child(nodeserver_blocked)));
	CHECK(died_of_sigsys(in_child(nodeserver_raise)));
	CHECK(died_of_sigsys(in_child(registrar_calls)));
	CHECK(died_of_sigsys(in_child(publisher_calls)));
	CHECK(died_of_sigsys(in_child(publisher_raw)));
	CHECK(died_of_sigsys(in_child(publisher_netlink)));
	CHECK(in_child(main_confined) == 0);
	CHECK(in_child(main_confined_nnp) == 0);
	CHECK(in_child(main_confined_tsync) == 0);

	/* Pid 1 of its own namespace dies of SIGSYS too: the handler makes
	 * the trapped syscall again with SIG_DFL, and that trap's SIGSYS is
	 * forced (raise() alone would be ignored by an init). */
	st = in_pidns();
	if (st == -2)
		printf("test_seccomp: no pid namespace (not root): skipped\n");
	else
		CHECK_EQ(st, 100 + SIGSYS);

	/* The target was never signalled. */
	CHECK(waitpid(t, &st, WNOHANG) == 0);
	kill(t, SIGKILL);
	waitpid(t, &st, 0);
	return (test_done("test_seccomp"));
}
