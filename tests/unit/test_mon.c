/*
 * test_mon.c - the monitor against a compromised broker: mon_recv() and
 * the handlers of both channels (monitor.c mon_dispatch, cdi_put.c
 * cdi_put_serve) fed frames through real SOCK_SEQPACKET socketpairs as a
 * hostile broker could write them: of another size, of unknown types,
 * strings without their end, fds where none may go, too many fds, signals
 * of pids that are not a child's, starts of roles not configured or too
 * soon, hidden paths that are not absolute, spec names of other drivers
 * or outside the CDI directory, contents that are not sealed memfds.
 * Each is refused (the plugin ends, or a file request gets its error)
 * without leaking an fd (counted in /proc/self/fd), and the good paths do
 * what they say (bytes and mode of a spec, a directory made again).
 *
 * fork() and kill() are wrapped (tests/CMakeLists.txt): a fork of the
 * monitor returns a pretend pid without forking; a kill() is recorded,
 * and reaches a process only when it is one of this test's own sleeping
 * children, so that a wrong signal shows as a dead sleeper and kill(-1)
 * or kill(0) can never hit anything.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "base/log.h"
#include "monitor/monitor.h"

#define DRV		"test.example.com"
#define FAKE_PID	0x7fff0000	/* above any pid_max (2^22) */
#define SPEC		"{\"cdiVersion\":\"0.6.0\",\"kind\":\"" DRV "/pci\"}"
#define NO_RESULT	(-1000)		/* files_call(): channel closed */

pid_t	__real_fork(void);
int	__real_kill(pid_t, int);
pid_t	__wrap_fork(void);
int	__wrap_kill(pid_t, int);

static struct kp_options	 opts;
static char			 top[64], cdi[128];
static int			 forks, kills;
static pid_t			 sleepers[4];
static char			 last_err[KP_LOG_MAX];

/* The monitor's fork of a child: a pretend pid, nothing forked. */
pid_t
__wrap_fork(void)
{
	forks++;
	return (FAKE_PID + forks);
}

/* Recorded; delivered only to a sleeper of this test. */
int
__wrap_kill(pid_t pid, int sig)
{
	size_t	 i;

	kills++;
	for (i = 0; i < sizeof(sleepers) / sizeof(sleepers[0]); i++)
		if (pid > 1 && pid == sleepers[i])
			return (__real_kill(pid, sig));
	return (0);
}

static void
logged(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	if (level == KP_LOG_ERROR)
		snprintf(last_err, sizeof(last_err), "%s", msg);
}

/* A real process that only waits for its end, with no fd of ours. */
static pid_t
sleeper(void)
{
	pid_t	 p;

	if ((p = __real_fork()) == 0) {
		(void)close_range(3, ~0U, 0);
		for (;;)
			pause();
	}
	CHECK(p > 0);
	return (p);
}

static int
alive(pid_t p)
{
	return (waitpid(p, NULL, WNOHANG) == 0 && __real_kill(p, 0) == 0);
}

static int
nfd(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		abort();
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/* Entries of directory path ("." and ".." not counted), -1: none. */
static int
entries(const char *path)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n);
}

/* A struct mon as monitor_main() makes it, without signals, sockets or a
 * broker process: *ctl and *files are the broker's ends. */
static void
mon_open(struct mon *mon, int *ctl, int *files)
{
	int	 a[2], b[2];

	memset(mon, 0, sizeof(*mon));
	mon->cfg = &opts;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, a) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, b) == -1)
		abort();
	mon->ctl = a[0];
	*ctl = a[1];
	mon->files = b[0];
	*files = b[1];
	mon->sigfd = mon->http_fd = mon->pidns_fd = mon->lock_fd = -1;
	mon->cdi_fd = mon->state_fd = mon->repair_fd = -1;
	mon->plugin_sock.fd = mon->reg_sock.fd = -1;
	mon->broker_pid = -1;
	spawn_table_init(mon);
	last_err[0] = '\0';
	forks = kills = 0;
}

static void
mon_close(struct mon *mon, int ctl, int files)
{
	int	*fds[] = { &mon->ctl, &mon->files, &mon->cdi_fd,
		    &mon->state_fd, &mon->lock_fd, &mon->http_fd };
	size_t	 i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] != -1)
			close(*fds[i]);
	sock_close(&mon->reg_sock);
	close(ctl);
	close(files);
}

/* One datagram of len bytes with nfds fds, as the broker's sendmsg(). */
static void
send_raw(int fd, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(32 * sizeof(int))];
	}		 cm;
	struct msghdr	 mh;
	struct iovec	 iov;

	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(&cm.h), fds, nfds * sizeof(int));
	}
	CHECK(sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)len);
}

static void
close_all(const int *fds, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* n fds open on /dev/null. */
static void
open_n(int *fds, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if ((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
			abort();
}

/* A memfd holding len bytes of s, with seals. */
static int
memfd_with(const char *s, size_t len, int seals)
{
	int	 fd;

	if ((fd = memfd_create("spec", MFD_CLOEXEC | MFD_ALLOW_SEALING)) ==
	    -1 || write(fd, s, len) != (ssize_t)len ||
	    (seals != 0 && fcntl(fd, F_ADD_SEALS, seals) == -1))
		abort();
	return (fd);
}

#define SEALED	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static int
spec_fd(void)
{
	return (memfd_with(SPEC, sizeof(SPEC) - 1, SEALED));
}

/* The monitor ended the plugin for a protocol violation. */
#define VIOLATION(mon) do {						\
	CHECK_EQ((mon)->done, 1);					\
	CHECK_EQ((mon)->exit_code, 1);					\
	CHECK_CONTAINS(last_err, "protocol violation");			\
} while (0)

/*
 * mon_recv() itself: each malformed frame is KP_EPROTO with its reason
 * and the fds it came with closed; a good one is 1 with its fd, still
 * open and close-on-exec.
 */
static void
test_recv(void)
{
	struct mon_msg	 m, got;
	char		 err[KP_ERROR_SIZE], big[sizeof(m) + 16];
	int		 sv[2], fds[32], rfds[MON_MAX_FDS], base;
	size_t		 n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	base = nfd();
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)), 0);

	mon_init(&m, MON_RUNNING);
	send_raw(sv[1], &m, sizeof(m) - 1, NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "another size");
	memset(big, 0, sizeof(big));
	memcpy(big, &m, sizeof(m));
	send_raw(sv[1], big, sizeof(big), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "another size");
	/* An empty datagram from a peer that is still there: not the
	 * end of the channel. */
	send_raw(sv[1], &m, 0, NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "another size");
	/* A short frame with fds: both closed. */
	open_n(fds, 2);
	send_raw(sv[1], &m, 8, fds, 2);
	close_all(fds, 2);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_EQ(nfd(), base);

	m.type = 0;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "unknown type");
	m.type = MON_TYPE_MAX;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	m.type = 0xffffffffu;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);

	mon_init(&m, MON_FATAL);
	memset(m.text, 'x', sizeof(m.text));
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "without its end");

	mon_init(&m, MON_HIDE);
	m.n = KP_IPC_MAX_HIDE + 1;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	m.n = 0x80000000u;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	m.n = 2;
	snprintf(m.paths[0], sizeof(m.paths[0]), "/ok");
	memset(m.paths[1], 'a', sizeof(m.paths[1]));
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "path without its end");
	/* Past n a path is not read: no end needed there. */
	m.n = 1;
	send_raw(sv[1], &m, sizeof(m), NULL, 0);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)), 1);
	CHECK_EQ(got.n, 1);

	/* fds on a type that carries none; one more than a type may. */
	mon_init(&m, MON_KILL);
	open_n(fds, 1);
	send_raw(sv[1], &m, sizeof(m), fds, 1);
	close_all(fds, 1);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "fds it may not carry");
	CHECK_EQ(nfd(), base);
	mon_init(&m, MON_SPAWN);
	open_n(fds, 2);
	send_raw(sv[1], &m, sizeof(m), fds, 2);
	close_all(fds, 2);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_EQ(nfd(), base);
	/* More than MON_MAX_FDS, and more than the control buffer holds
	 * (MSG_CTRUNC: the kernel drops what does not fit). */
	mon_init(&m, MON_STARTED);
	open_n(fds, 4);
	send_raw(sv[1], &m, sizeof(m), fds, 4);
	close_all(fds, 4);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_EQ(nfd(), base);
	open_n(fds, 32);
	send_raw(sv[1], &m, sizeof(m), fds, 32);
	close_all(fds, 32);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPROTO);
	CHECK_EQ(nfd(), base);

	/* A good frame: the fd is the caller's, close-on-exec. */
	mon_init(&m, MON_SPAWN);
	m.role = ROLE_NODESERVER;
	open_n(fds, 1);
	send_raw(sv[1], &m, sizeof(m), fds, 1);
	close_all(fds, 1);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)), 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(got.type, MON_SPAWN);
	CHECK_EQ(got.role, ROLE_NODESERVER);
	CHECK(fcntl(rfds[0], F_GETFD) & FD_CLOEXEC);
	close(rfds[0]);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)), 0);
	close(sv[1]);
	CHECK_EQ(mon_recv(sv[0], &got, rfds, &n, err, sizeof(err)),
	    KP_EPIPE);
	close(sv[0]);
}

/* One frame with fds on a fresh monitor's control channel: must be a
 * violation, with every fd closed and nothing forked or signalled. */
static void
ctl_refused(const struct mon_msg *m, size_t len, size_t nfds, int line)
{
	struct mon	 mon;
	int		 ctl, files, fds[8], base = nfd();

	mon_open(&mon, &ctl, &files);
	open_n(fds, nfds);
	send_raw(ctl, m, len, fds, nfds);
	close_all(fds, nfds);
	mon_dispatch(&mon);
	if (mon.done != 1 || strstr(last_err, "protocol violation") == NULL)
		fprintf(stderr, "ctl_refused from line %d\n", line);
	VIOLATION(&mon);
	CHECK_EQ(forks, 0);
	CHECK_EQ(kills, 0);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

#define REFUSED(m, len, nfds)	ctl_refused((m), (len), (nfds), __LINE__)

/* Malformed frames and types the broker may not send on its control
 * channel end the plugin. */
static void
test_ctl_malformed(void)
{
	struct mon_msg	 m;

	mon_init(&m, MON_RUNNING);
	REFUSED(&m, sizeof(m) - 1, 0);
	REFUSED(&m, 0, 0);
	REFUSED(&m, 1, 1);
	m.type = 0;
	REFUSED(&m, sizeof(m), 0);
	m.type = MON_TYPE_MAX;
	REFUSED(&m, sizeof(m), 0);
	mon_init(&m, MON_FATAL);
	memset(m.text, 'x', sizeof(m.text));
	REFUSED(&m, sizeof(m), 0);
	mon_init(&m, MON_HIDE);
	m.n = KP_IPC_MAX_HIDE + 1;
	REFUSED(&m, sizeof(m), 0);
	m.n = 1;
	memset(m.paths[0], '/', sizeof(m.paths[0]));
	REFUSED(&m, sizeof(m), 0);
	/* fds where none may go, and too many. */
	mon_init(&m, MON_KILL);
	REFUSED(&m, sizeof(m), 1);
	mon_init(&m, MON_DONE);
	REFUSED(&m, sizeof(m), 2);
	mon_init(&m, MON_SPAWN);
	m.role = ROLE_NODESERVER;
	REFUSED(&m, sizeof(m), 4);
	REFUSED(&m, sizeof(m), 8);
	/* The monitor's own frames, and the files channel's, with the fds
	 * mon_recv lets them carry. */
	mon_init(&m, MON_STARTED);
	REFUSED(&m, sizeof(m), 3);
	mon_init(&m, MON_RESULT);
	REFUSED(&m, sizeof(m), 1);
	mon_init(&m, MON_PUT);
	snprintf(m.text, sizeof(m.text), DRV "_a.json");
	REFUSED(&m, sizeof(m), 1);
	mon_init(&m, MON_REOPEN);
	REFUSED(&m, sizeof(m), 0);
	mon_init(&m, MON_STOP);
	REFUSED(&m, sizeof(m), 0);
}

/* A SPAWN frame on mon's control channel, with a state memfd if fd. */
static void
spawn(struct mon *mon, int ctl, int role, int fd)
{
	struct mon_msg	 m;

	mon_init(&m, MON_SPAWN);
	m.role = role;
	m.gen = 7;
	send_raw(ctl, &m, sizeof(m), &fd, fd != -1);
	if (fd != -1)
		close(fd);
	mon_dispatch(mon);
}

/* What the monitor said on the control channel: its next frame, with
 * its fds closed and counted in *nfds. 0: none. */
static int
told(int ctl, struct mon_msg *m, size_t *nfds)
{
	char	 err[KP_ERROR_SIZE];
	int	 fds[MON_MAX_FDS], r;

	r = mon_recv(ctl, m, fds, nfds, err, sizeof(err));
	if (r == 1)
		close_all(fds, *nfds);
	return (r);
}

/* A SPAWN refused by the rules, before any fork: the state fd it
 * carries closed. */
static void
spawn_refused(int role, int with_fd, int line)
{
	struct mon	 mon;
	int		 ctl, files, base = nfd();

	mon_open(&mon, &ctl, &files);
	spawn(&mon, ctl, role, with_fd ? spec_fd() : -1);
	if (mon.done != 1)
		fprintf(stderr, "spawn_refused from line %d\n", line);
	VIOLATION(&mon);
	CHECK_EQ(forks, 0);
	CHECK_EQ(mon.state_fd, -1);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

static void
test_spawn_refused(void)
{
	struct mon	 mon;
	int		 ctl, files, base;

	spawn_refused(-1, 0, __LINE__);
	spawn_refused(ROLE_COUNT, 0, __LINE__);
	spawn_refused(0x7fffffff, 1, __LINE__);
	/* Roles this plugin was not configured with. */
	opts.dra_off = 1;
	spawn_refused(ROLE_NODESERVER, 0, __LINE__);
	spawn_refused(ROLE_NODESERVER, 1, __LINE__);
	opts.dra_off = 0;
	opts.registration_off = 1;
	spawn_refused(ROLE_REGISTRAR, 0, __LINE__);
	opts.registration_off = 0;
	opts.kube_mode = KP_KUBE_NONE;
	spawn_refused(ROLE_PUBLISHER, 0, __LINE__);
	spawn_refused(ROLE_OBSERVER, 0, __LINE__);	/* no http_fd */
	/* A state fd is the nodeserver's alone. */
	spawn_refused(ROLE_REGISTRAR, 1, __LINE__);

	/* A role that runs, with its real pid: refused, not signalled. */
	base = nfd();
	mon_open(&mon, &ctl, &files);
	mon.children[ROLE_NODESERVER].pid = sleepers[0];
	spawn(&mon, ctl, ROLE_NODESERVER, spec_fd());
	VIOLATION(&mon);
	CHECK_CONTAINS(last_err, "running role");
	CHECK_EQ(forks, 0);
	CHECK_EQ(kills, 0);
	CHECK(alive(sleepers[0]));
	mon.children[ROLE_NODESERVER].pid = -1;
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);

	/* While stopping. */
	mon_open(&mon, &ctl, &files);
	mon.stopping = 1;
	spawn(&mon, ctl, ROLE_NODESERVER, spec_fd());
	VIOLATION(&mon);
	CHECK_CONTAINS(last_err, "while stopping");
	CHECK_EQ(forks, 0);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

/*
 * A start, then the same role again at once (it exited meanwhile):
 * SPAWN_FAILED with KP_EBUSY, no fork, its state fd closed; after
 * MON_SPAWN_MIN_MS a fork again.
 */
static void
test_spawn_rate(void)
{
	struct mon	 mon;
	struct mon_msg	 m;
	size_t		 n;
	int		 ctl, files, base = nfd();

	mon_open(&mon, &ctl, &files);
	spawn(&mon, ctl, ROLE_NODESERVER, spec_fd());
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(forks, 1);
	CHECK_EQ(mon.children[ROLE_NODESERVER].pid, FAKE_PID + 1);
	CHECK(mon.state_fd != -1);
	CHECK_EQ(mon.state_gen, 7);
	CHECK_EQ(told(ctl, &m, &n), 1);
	CHECK_EQ(m.type, MON_STARTED);
	CHECK_EQ(m.role, ROLE_NODESERVER);
	CHECK_EQ(m.pid, FAKE_PID + 1);
	CHECK_EQ(n, 3);

	mon.children[ROLE_NODESERVER].pid = -1;	/* reaped */
	spawn(&mon, ctl, ROLE_NODESERVER, spec_fd());
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(forks, 1);
	CHECK_EQ(told(ctl, &m, &n), 1);
	CHECK_EQ(m.type, MON_SPAWN_FAILED);
	CHECK_EQ(m.arg, KP_EBUSY);
	CHECK_EQ(n, 0);
	/* Without the fd: refused the same. */
	spawn(&mon, ctl, ROLE_NODESERVER, -1);
	CHECK_EQ(forks, 1);
	CHECK_EQ(told(ctl, &m, &n), 1);
	CHECK_EQ(m.type, MON_SPAWN_FAILED);

	(void)poll(NULL, 0, MON_SPAWN_MIN_MS + 10);
	spawn(&mon, ctl, ROLE_NODESERVER, spec_fd());
	CHECK_EQ(forks, 2);
	CHECK_EQ(told(ctl, &m, &n), 1);
	CHECK_EQ(m.type, MON_STARTED);
	CHECK_EQ(m.pid, FAKE_PID + 2);
	CHECK_EQ(told(ctl, &m, &n), 0);
	CHECK_EQ(kills, 0);
	mon.children[ROLE_NODESERVER].pid = -1;
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

static void
kill_frame(struct mon *mon, int ctl, int role, pid_t pid, int sig)
{
	struct mon_msg	 m;

	mon_init(&m, MON_KILL);
	m.role = role;
	m.pid = pid;
	m.arg = sig;
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(mon);
}

/*
 * KILL reaches only the current pid of the role named, with SIGTERM or
 * SIGKILL. Another pid (a real process: the sleepers) is ignored, as an
 * older pid of a reaped child is; another signal ends the plugin.
 */
static void
test_kill(void)
{
	static const int sigs[] = { 0, SIGUSR1, SIGSTOP, SIGINT, -1, 64 };
	struct mon	 mon;
	int		 ctl, files, st;
	size_t		 i;

	mon_open(&mon, &ctl, &files);
	mon.children[ROLE_NODESERVER].pid = FAKE_PID + 100;
	kill_frame(&mon, ctl, ROLE_NODESERVER, sleepers[0], SIGKILL);
	kill_frame(&mon, ctl, ROLE_REGISTRAR, sleepers[0], SIGKILL);
	kill_frame(&mon, ctl, ROLE_NODESERVER, 0, SIGKILL);
	kill_frame(&mon, ctl, ROLE_NODESERVER, -1, SIGKILL);
	kill_frame(&mon, ctl, ROLE_NODESERVER, -sleepers[0], SIGKILL);
	/* A role not running has pid -1: a pid of -1 is not it. */
	kill_frame(&mon, ctl, ROLE_PUBLISHER, -1, SIGKILL);
	kill_frame(&mon, ctl, ROLE_OBSERVER, 0, SIGTERM);
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(kills, 0);
	CHECK(alive(sleepers[0]));
	/* The sleeper as the registrar: not the nodeserver's pid. */
	mon.children[ROLE_REGISTRAR].pid = sleepers[0];
	kill_frame(&mon, ctl, ROLE_NODESERVER, sleepers[0], SIGTERM);
	CHECK_EQ(kills, 0);
	CHECK(alive(sleepers[0]));
	mon.children[ROLE_REGISTRAR].pid = -1;
	mon_close(&mon, ctl, files);

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		mon_open(&mon, &ctl, &files);
		mon.children[ROLE_NODESERVER].pid = sleepers[0];
		kill_frame(&mon, ctl, ROLE_NODESERVER, sleepers[0], sigs[i]);
		VIOLATION(&mon);
		CHECK_EQ(kills, 0);
		CHECK(alive(sleepers[0]));
		mon_close(&mon, ctl, files);
	}
	mon_open(&mon, &ctl, &files);
	mon.children[0].pid = sleepers[0];
	kill_frame(&mon, ctl, -1, sleepers[0], SIGTERM);
	VIOLATION(&mon);
	mon_close(&mon, ctl, files);
	mon_open(&mon, &ctl, &files);
	kill_frame(&mon, ctl, ROLE_COUNT, sleepers[0], SIGTERM);
	VIOLATION(&mon);
	CHECK_EQ(kills, 0);
	CHECK(alive(sleepers[0]));
	mon_close(&mon, ctl, files);

	/* The role's current pid: signalled, for real. */
	mon_open(&mon, &ctl, &files);
	mon.children[ROLE_PUBLISHER].pid = sleepers[1];
	kill_frame(&mon, ctl, ROLE_PUBLISHER, sleepers[1], SIGTERM);
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(kills, 1);
	CHECK_EQ(waitpid(sleepers[1], &st, 0), sleepers[1]);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	sleepers[1] = sleeper();
	CHECK(alive(sleepers[0]));
	mon.children[ROLE_PUBLISHER].pid = -1;
	mon_close(&mon, ctl, files);
}

static void
test_hide(void)
{
	struct mon	 mon;
	struct mon_msg	 m;
	int		 ctl, files;

	mon_open(&mon, &ctl, &files);
	mon_init(&m, MON_HIDE);
	m.n = 2;
	snprintf(m.paths[0], sizeof(m.paths[0]), "/var/lib/a");
	snprintf(m.paths[1], sizeof(m.paths[1]), "/opt/b");
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(&mon);
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(mon.n_pub_hide, 2);
	CHECK_STREQ(mon.pub_hide[0], "/var/lib/a");
	CHECK_STREQ(mon.pub_hide[1], "/opt/b");
	/* A relative path after an absolute one: nothing taken. */
	snprintf(m.paths[0], sizeof(m.paths[0]), "/etc");
	snprintf(m.paths[1], sizeof(m.paths[1]), "etc/shadow");
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(&mon);
	VIOLATION(&mon);
	CHECK_CONTAINS(last_err, "not absolute");
	CHECK_EQ(mon.n_pub_hide, 2);
	CHECK_STREQ(mon.pub_hide[0], "/var/lib/a");
	mon_close(&mon, ctl, files);

	mon_open(&mon, &ctl, &files);
	m.n = 1;
	m.paths[0][0] = '\0';
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(&mon);
	VIOLATION(&mon);
	CHECK_EQ(mon.n_pub_hide, 0);
	mon_close(&mon, ctl, files);
}

static char *
slurp(const char *path, char *buf, size_t size)
{
	ssize_t	 n;
	int	 fd;

	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (buf);
	n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return (buf);
}

/* RUNNING, FATAL (at most MON_FATAL_MAX written), STOPPING, DONE. */
static void
test_ctl_good(void)
{
	struct mon	 mon;
	struct mon_msg	 m;
	char		 path[192], buf[512];
	size_t		 n;
	int		 ctl, files, i, fd;

	snprintf(path, sizeof(path), "%s/termination-log", top);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		abort();
	close(fd);
	snprintf(opts.termlog, sizeof(opts.termlog), "%s", path);
	opts.termlog_off = 0;
	mon_open(&mon, &ctl, &files);
	mon_init(&m, MON_RUNNING);
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	for (i = 0; i < 20; i++) {
		mon_init(&m, MON_FATAL);
		snprintf(m.text, sizeof(m.text), "reason %d", i);
		send_raw(ctl, &m, sizeof(m), NULL, 0);
	}
	mon_dispatch(&mon);
	CHECK_EQ(mon.done, 0);
	CHECK_EQ(mon.running, 1);
	CHECK_STREQ(slurp(path, buf, sizeof(buf)), "reason 15\n");
	mon_init(&m, MON_STOPPING);
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(&mon);
	CHECK_EQ(mon.stopping, 1);
	CHECK_EQ(told(ctl, &m, &n), 1);
	CHECK_EQ(m.type, MON_STOP);
	CHECK_EQ(m.arg, 0);
	mon_init(&m, MON_DONE);
	m.arg = 3;
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	/* Not read: the monitor leaves its loop at DONE. */
	mon_init(&m, MON_RUNNING);
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon.running = 0;
	mon_dispatch(&mon);
	CHECK_EQ(mon.done, 1);
	CHECK_EQ(mon.exit_code, 3);
	CHECK_EQ(mon.running, 0);
	CHECK_STREQ(slurp(path, buf, sizeof(buf)), "reason 15\n");
	mon_close(&mon, ctl, files);
	opts.termlog_off = 1;
	(void)unlink(path);
}

/*
 * A request on the files channel and the monitor's MON_RESULT: its arg,
 * the text in why and its fd in *rfd (-1: none); NO_RESULT when the
 * monitor closed the channel instead.
 */
static int
files_call(struct mon *mon, int peer, enum mon_type type, const char *name,
    const int *fds, size_t nfds, char *why, int *rfd)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 got[MON_MAX_FDS], r;
	size_t		 n;

	mon_init(&m, type);
	snprintf(m.text, sizeof(m.text), "%s", name);
	send_raw(peer, &m, sizeof(m), fds, nfds);
	cdi_put_serve(mon);
	*rfd = -1;
	why[0] = '\0';
	if ((r = mon_recv(peer, &m, got, &n, err, sizeof(err))) != 1) {
		CHECK_EQ(mon->files, -1);
		CHECK_EQ(r, KP_EPIPE);
		return (NO_RESULT);
	}
	CHECK_EQ(m.type, MON_RESULT);
	CHECK(n <= 1);
	if (n == 1)
		*rfd = got[0];
	snprintf(why, KP_ERROR_SIZE, "%s", m.text);
	return (m.arg);
}

/* A PUT with the fd, which is closed here (the broker's copy). */
static int
put(struct mon *mon, int peer, const char *name, int fd, char *why)
{
	int	 r, rfd;

	r = files_call(mon, peer, MON_PUT, name, &fd, fd != -1, why, &rfd);
	if (fd != -1)
		close(fd);
	CHECK_EQ(rfd, -1);
	return (r);
}

static int
request(struct mon *mon, int peer, enum mon_type type, const char *name)
{
	char	 why[KP_ERROR_SIZE];
	int	 r, rfd;

	r = files_call(mon, peer, type, name, NULL, 0, why, &rfd);
	if (rfd != -1)
		close(rfd);
	return (r);
}

/* top holds cdi and nothing else; cdi holds n entries. */
static void
only_cdi(int n, int line)
{
	if (entries(top) != 1 || entries(cdi) != n)
		fprintf(stderr, "only_cdi(%d) from line %d\n", n, line);
	CHECK_EQ(entries(top), 1);
	CHECK_EQ(entries(cdi), n);
}

/* Names that are not this driver's spec names, contents that are not a
 * sealed memfd of at most MON_CDI_MAX: refused, nothing written. */
static void
test_put_refused(void)
{
	static const char *const names[] = {
		"../x.json", "../" DRV "_x.json", "other.example.com_x.json",
		".hidden", "." DRV "_x.json", DRV "_a/b.json",
		DRV "_x.json/", "", DRV "_.json", DRV "x.json",
		"test.example.co_x.json", DRV ".evil_x.json", DRV "_x.jso",
		DRV "_x.json.tmp", "/tmp/" DRV "_x.json", DRV "_-x.json",
		DRV "_x y.json"
	};
	struct mon	 mon;
	struct stat	 st;
	char		 why[KP_ERROR_SIZE], path[256];
	int		 ctl, files, fd, sv[2], p[2], base = nfd();
	size_t		 i;

	mon_open(&mon, &ctl, &files);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK_EQ(put(&mon, files, names[i], spec_fd(), why), EINVAL);
		CHECK_CONTAINS(why, "CDI spec name");
	}
	only_cdi(0, __LINE__);
	/* Another driver's spec stays. */
	snprintf(path, sizeof(path), "%s/other.example.com_x.json", cdi);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		abort();
	close(fd);
	CHECK_EQ(request(&mon, files, MON_REMOVE, "other.example.com_x.json"),
	    EINVAL);
	CHECK_EQ(request(&mon, files, MON_REMOVE, "../cdi"), EINVAL);
	CHECK_EQ(request(&mon, files, MON_REMOVE, ".."), EINVAL);
	CHECK(stat(path, &st) == 0);
	CHECK(stat(cdi, &st) == 0);
	(void)unlink(path);

	/* Contents: unsealed, sealed in part, too large, not a memfd. */
	CHECK_EQ(put(&mon, files, DRV "_a.json", memfd_with(SPEC,
	    sizeof(SPEC) - 1, 0), why), EINVAL);
	CHECK_CONTAINS(why, "sealed memfd");
	CHECK_EQ(put(&mon, files, DRV "_a.json", memfd_with(SPEC,
	    sizeof(SPEC) - 1, F_SEAL_SHRINK | F_SEAL_GROW), why), EINVAL);
	fd = memfd_with("", 0, 0);
	CHECK(ftruncate(fd, MON_CDI_MAX + 1) == 0);
	CHECK(fcntl(fd, F_ADD_SEALS, SEALED) == 0);
	CHECK_EQ(put(&mon, files, DRV "_a.json", fd, why), EINVAL);
	snprintf(path, sizeof(path), "%s/fifo", top);
	CHECK(mkfifo(path, 0600) == 0);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	CHECK(fd != -1);
	(void)unlink(path);
	CHECK_EQ(put(&mon, files, DRV "_a.json", fd, why), EINVAL);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK_EQ(put(&mon, files, DRV "_a.json", sv[0], why), EINVAL);
	close(sv[1]);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	CHECK_EQ(put(&mon, files, DRV "_a.json", p[0], why), EINVAL);
	close(p[1]);
	CHECK_EQ(put(&mon, files, DRV "_a.json", open(top, O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC), why), EINVAL);
	CHECK_EQ(put(&mon, files, DRV "_a.json", open("/dev/zero", O_RDONLY |
	    O_CLOEXEC), why), EINVAL);
	/* A regular file of the broker's: no seals to be had. */
	snprintf(path, sizeof(path), "%s/plain", top);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd != -1 && write(fd, "{}", 2) == 2);
	(void)unlink(path);
	CHECK_EQ(put(&mon, files, DRV "_a.json", fd, why), EINVAL);
	CHECK_EQ(put(&mon, files, DRV "_a.json", open("/etc/passwd",
	    O_PATH | O_CLOEXEC), why), EINVAL);
	only_cdi(0, __LINE__);
	CHECK(mon.files != -1);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

/* Frames the files channel does not take: a broken rule, which ends the
 * plugin as on the control channel; the monitor stops reading it (no
 * further file request), the fds they carried closed. */
static void
files_closed(const struct mon_msg *m, size_t len, size_t nfds, int line)
{
	struct mon	 mon;
	char		 buf[16];
	int		 ctl, files, fds[8], base = nfd();

	mon_open(&mon, &ctl, &files);
	open_n(fds, nfds);
	send_raw(files, m, len, fds, nfds);
	close_all(fds, nfds);
	cdi_put_serve(&mon);
	if (mon.files != -1)
		fprintf(stderr, "files_closed from line %d\n", line);
	CHECK_EQ(mon.files, -1);
	CHECK_EQ(recv(files, buf, sizeof(buf), MSG_DONTWAIT), 0);
	CHECK_EQ(mon.done, 1);
	CHECK_EQ(mon.exit_code, 1);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
	only_cdi(0, line);
}

static void
test_files_malformed(void)
{
	struct mon_msg	 m;

	mon_init(&m, MON_PUT);
	snprintf(m.text, sizeof(m.text), DRV "_a.json");
	files_closed(&m, sizeof(m), 0, __LINE__);	/* PUT without fd */
	files_closed(&m, sizeof(m), 2, __LINE__);
	files_closed(&m, sizeof(m), 5, __LINE__);
	files_closed(&m, sizeof(m) - 4, 1, __LINE__);
	files_closed(&m, 0, 0, __LINE__);
	memset(m.text, 'a', sizeof(m.text));
	files_closed(&m, sizeof(m), 1, __LINE__);
	mon_init(&m, MON_REMOVE);
	snprintf(m.text, sizeof(m.text), DRV "_a.json");
	files_closed(&m, sizeof(m), 1, __LINE__);
	mon_init(&m, MON_RESULT);
	files_closed(&m, sizeof(m), 1, __LINE__);
	mon_init(&m, MON_SPAWN);
	files_closed(&m, sizeof(m), 1, __LINE__);
	mon_init(&m, MON_DONE);
	files_closed(&m, sizeof(m), 0, __LINE__);
	m.type = 0;
	files_closed(&m, sizeof(m), 0, __LINE__);
	m.type = MON_TYPE_MAX;
	files_closed(&m, sizeof(m), 0, __LINE__);
}

/* PUT writes the bytes, 0644, by rename (no temporary file stays);
 * REMOVE removes; REOPEN and PUT make a removed directory again; a
 * symbolic link in its place is not followed. */
static void
test_put_good(void)
{
	static const char	 two[] = "{\"cdiVersion\":\"0.7.0\"}";
	struct mon		 mon;
	struct stat		 st, dst;
	char			 why[KP_ERROR_SIZE], path[256], buf[512];
	char			 other[256];
	int			 ctl, files, rfd, fd, base = nfd();

	snprintf(path, sizeof(path), "%s/" DRV "_gpu-0.json", cdi);
	mon_open(&mon, &ctl, &files);
	CHECK_EQ(put(&mon, files, DRV "_gpu-0.json", spec_fd(), why), 0);
	CHECK_STREQ(why, "");
	CHECK_STREQ(slurp(path, buf, sizeof(buf)), SPEC);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0644);
	CHECK_EQ(st.st_size, sizeof(SPEC) - 1);
	only_cdi(1, __LINE__);
	CHECK_EQ(put(&mon, files, DRV "_gpu-0.json", memfd_with(two,
	    sizeof(two) - 1, SEALED), why), 0);
	CHECK_STREQ(slurp(path, buf, sizeof(buf)), two);
	only_cdi(1, __LINE__);
	/* Exactly MON_CDI_MAX bytes. */
	fd = memfd_with("", 0, 0);
	CHECK(ftruncate(fd, MON_CDI_MAX) == 0);
	CHECK(fcntl(fd, F_ADD_SEALS, SEALED) == 0);
	CHECK_EQ(put(&mon, files, DRV "_big.json", fd, why), 0);
	snprintf(other, sizeof(other), "%s/" DRV "_big.json", cdi);
	CHECK(stat(other, &st) == 0 && st.st_size == MON_CDI_MAX);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_big.json"), 0);

	/* Over a directory of the name: refused, the temporary file gone. */
	snprintf(other, sizeof(other), "%s/" DRV "_dir.json", cdi);
	CHECK(mkdir(other, 0755) == 0);
	CHECK(put(&mon, files, DRV "_dir.json", spec_fd(), why) != 0);
	only_cdi(2, __LINE__);
	CHECK(rmdir(other) == 0);

	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_gpu-0.json"), 0);
	CHECK(access(path, F_OK) == -1 && errno == ENOENT);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_gpu-0.json"), ENOENT);
	only_cdi(0, __LINE__);

	/* REOPEN: the directory's fd; again once it was removed. */
	CHECK_EQ(files_call(&mon, files, MON_REOPEN, "", NULL, 0, why, &rfd),
	    0);
	CHECK(rfd != -1 && fstat(rfd, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(stat(cdi, &dst) == 0 && dst.st_ino == st.st_ino);
	close(rfd);
	CHECK(rmdir(cdi) == 0);
	CHECK_EQ(files_call(&mon, files, MON_REOPEN, "", NULL, 0, why, &rfd),
	    0);
	CHECK(rfd != -1 && fstat(rfd, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_nlink > 0);
	CHECK(stat(cdi, &dst) == 0 && dst.st_ino == st.st_ino &&
	    dst.st_dev == st.st_dev);
	close(rfd);
	/* PUT after the directory went: made again too. */
	CHECK(rmdir(cdi) == 0);
	CHECK_EQ(put(&mon, files, DRV "_gpu-0.json", spec_fd(), why), 0);
	CHECK_STREQ(slurp(path, buf, sizeof(buf)), SPEC);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_gpu-0.json"), 0);

	/* A symbolic link where the directory was: not followed. */
	CHECK(rmdir(cdi) == 0);
	snprintf(other, sizeof(other), "%s/elsewhere", top);
	CHECK(mkdir(other, 0755) == 0);
	CHECK(symlink("elsewhere", cdi) == 0);
	CHECK_EQ(put(&mon, files, DRV "_gpu-0.json", spec_fd(), why), EIO);
	CHECK_EQ(request(&mon, files, MON_REOPEN, ""), EIO);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_gpu-0.json"), EIO);
	CHECK_EQ(entries(other), 0);
	CHECK(unlink(cdi) == 0 && rmdir(other) == 0);
	CHECK(mkdir(cdi, 0755) == 0);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
	only_cdi(0, __LINE__);
}

/* A broker that never reads its results: the monitor answers what fits,
 * drops the rest and returns; at most 16 requests a turn. */
static void
test_files_never_block(void)
{
	struct mon	 mon;
	struct mon_msg	 m;
	int		 ctl, files, i, sz = 4096, base = nfd();
	size_t		 n;

	mon_open(&mon, &ctl, &files);
	CHECK(setsockopt(mon.files, SOL_SOCKET, SO_SNDBUF, &sz,
	    sizeof(sz)) == 0);
	for (i = 0; i < 20; i++) {
		mon_init(&m, MON_REMOVE);
		snprintf(m.text, sizeof(m.text), DRV "_n%d.json", i);
		send_raw(files, &m, sizeof(m), NULL, 0);
	}
	alarm(20);	/* a blocked monitor ends this test */
	cdi_put_serve(&mon);
	cdi_put_serve(&mon);
	alarm(0);
	for (i = 0; told(files, &m, &n) == 1; i++)
		CHECK_EQ(m.type, MON_RESULT);
	CHECK(i >= 1 && i < 20);
	CHECK(mon.files != -1);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

/* The monitor's own quota (MON_CDI_FILES, MON_CDI_BYTES): a compromised
 * broker keeps none, so root writes no spec past it; a replacement of a
 * spec already there still works, and a removal makes room again. A
 * count that says full is taken again before a refusal (another
 * instance sharing the directory in a rolling update may have removed
 * specs), so "full" here is real files: empty ones for the count, a
 * sparse one for the bytes. */
static void
spec_file(const char *name, off_t size)
{
	char	 path[256];
	int	 fd;

	snprintf(path, sizeof(path), "%s/" DRV "_%s.json", cdi, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd != -1 && ftruncate(fd, size) == 0);
	if (fd != -1)
		close(fd);
}

static void
spec_files_gone(void)
{
	struct dirent	*de;
	char		 path[512];
	DIR		*d;

	if ((d = opendir(cdi)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", cdi, de->d_name);
			CHECK(unlink(path) == 0);
		}
	closedir(d);
}

static void
test_files_quota(void)
{
	struct mon	 mon;
	char		 why[KP_ERROR_SIZE], name[32];
	int		 ctl, files, i, base = nfd();

	mon_open(&mon, &ctl, &files);
	CHECK_EQ(put(&mon, files, DRV "_a.json", spec_fd(), why), 0);
	CHECK_EQ(mon.cdi_counted, 1);
	CHECK_EQ(mon.cdi_files, 1);
	CHECK_EQ(mon.cdi_bytes, sizeof(SPEC) - 1);
	/* A stale count (as if another instance removed specs): counted
	 * again, the spec written. */
	mon.cdi_files = MON_CDI_FILES;
	CHECK_EQ(put(&mon, files, DRV "_b.json", spec_fd(), why), 0);
	CHECK_EQ(mon.cdi_files, 2);
	/* Really full by count. */
	for (i = 2; i < MON_CDI_FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		spec_file(name, 0);
	}
	mon.cdi_counted = 0;	/* made behind its back: count them */
	CHECK_EQ(put(&mon, files, DRV "_c.json", spec_fd(), why), ENOSPC);
	CHECK_CONTAINS(why, "limit");
	CHECK_EQ(mon.cdi_files, MON_CDI_FILES);
	CHECK_EQ(put(&mon, files, DRV "_a.json", spec_fd(), why), 0);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_a.json"), 0);
	CHECK_EQ(mon.cdi_files, MON_CDI_FILES - 1);
	CHECK_EQ(put(&mon, files, DRV "_c.json", spec_fd(), why), 0);
	spec_files_gone();
	/* Really full by bytes: one sparse spec of all of them. */
	spec_file("big", (off_t)MON_CDI_BYTES);
	mon.cdi_counted = 0;
	CHECK_EQ(put(&mon, files, DRV "_d.json", spec_fd(), why), ENOSPC);
	CHECK_CONTAINS(why, "limit");
	CHECK_EQ(mon.done, 0);
	spec_files_gone();
	CHECK_EQ(put(&mon, files, DRV "_d.json", spec_fd(), why), 0);
	CHECK_EQ(request(&mon, files, MON_REMOVE, DRV "_d.json"), 0);
	mon_close(&mon, ctl, files);
	only_cdi(0, __LINE__);
	CHECK_EQ(nfd(), base);
}

/* DONE before a stop: a stop the monitor did not see begin never ends
 * with 0 (a compromised broker ending the plugin "cleanly"). */
static void
test_done_without_stop(void)
{
	struct mon	 mon;
	struct mon_msg	 m;
	int		 ctl, files, base = nfd();

	mon_open(&mon, &ctl, &files);
	mon_init(&m, MON_DONE);
	send_raw(ctl, &m, sizeof(m), NULL, 0);
	mon_dispatch(&mon);
	CHECK_EQ(mon.done, 1);
	CHECK_EQ(mon.exit_code, 1);
	mon_close(&mon, ctl, files);
	CHECK_EQ(nfd(), base);
}

int
main(void)
{
	size_t	 i;

	opts.driver_name = DRV;
	opts.termlog_off = 1;
	opts.shutdown_grace_ms = 1000;
	log_init(0, logged, NULL);
	snprintf(top, sizeof(top), "/tmp/kp-mon-XXXXXX");
	if (mkdtemp(top) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	snprintf(cdi, sizeof(cdi), "%s/cdi", top);
	snprintf(opts.policy.cdi_dir, sizeof(opts.policy.cdi_dir), "%s", cdi);
	if (mkdir(cdi, 0755) == -1)
		abort();
	for (i = 0; i < sizeof(sleepers) / sizeof(sleepers[0]); i++)
		sleepers[i] = sleeper();

	test_recv();
	test_ctl_malformed();
	test_spawn_refused();
	test_spawn_rate();
	test_kill();
	test_hide();
	test_ctl_good();
	test_put_refused();
	test_files_malformed();
	test_done_without_stop();
	test_files_quota();
	test_put_good();
	test_files_never_block();

	for (i = 0; i < sizeof(sleepers) / sizeof(sleepers[0]); i++) {
		CHECK(alive(sleepers[i]));
		(void)__real_kill(sleepers[i], SIGKILL);
		(void)waitpid(sleepers[i], NULL, 0);
	}
	(void)rmdir(cdi);
	(void)rmdir(top);
	return (test_done("test_mon"));
}
