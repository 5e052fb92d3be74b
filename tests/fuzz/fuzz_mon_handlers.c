/*
 * fuzz_mon_handlers.c - libFuzzer target for what the monitor does with
 * the broker's frames, the broker taken as compromised: mon_recv() and
 * the handlers of both channels, monitor.c's mon_dispatch (SPAWN, KILL,
 * HIDE, RUNNING, STOPPING, FATAL, DONE) and cdi_put.c's cdi_put_serve
 * (PUT, REMOVE, REOPEN), on a struct mon as monitor_main() makes it, with
 * a CDI directory of its own (under /dev/shm), through real
 * SOCK_SEQPACKET socketpairs. The input is
 *   byte 0: the plugin's configuration: bit 0: no DRA service (no
 *           nodeserver); bit 1: no registration; bit 2: Kubernetes access
 *           (a publisher); bit 3: an observer's listener; bit 4: the CDI
 *           directory is missing at the start; bit 5: the registration
 *           socket exists (else the registrar's first start binds it);
 *   then frames, each one control byte and sizeof(struct mon_msg) bytes
 *   of the frame (the last one possibly short: a frame of another
 *   size, or none). The control byte is the harness's, never sent: the
 *   broker's choice of channel and fds cannot come from the frame's own
 *   bytes, which the monitor reads. Its bit 0: the files channel (else
 *   the control channel); bits 1-3: the fds that go with the frame (none,
 *   a sealed memfd with a spec, the same unsealed, a sealed memfd over
 *   MON_CDI_MAX, a pipe, a socket, /dev/null, the CDI directory); bits
 *   4-5: how many of them (1 to 4); bit 6: before the frame, every
 *   running child exits (reaped: its pid is -1, as mon_reap() leaves
 *   it); bit 7: before the frame, MON_SPAWN_MIN_MS pass (every role's
 *   start time moves back by as much, the harness's records too).
 * Each frame is read by the handler of its channel at once, and what the
 * monitor answers is read by the harness, as the broker would.
 * No process is forked or signalled: kill() and fork() are wrapped
 * (-Wl,--wrap, tests/fuzz/CMakeLists.txt); fork() returns a pid above any
 * pid_max without forking. Invariants (trap on a breach):
 *  - kill() only of a pid that is some role's current pid, only with
 *    SIGTERM or SIGKILL;
 *  - a fork only for a role configured and not running, not while
 *    stopping, at least MON_SPAWN_MIN_MS after that role's last fork;
 *  - every frame the monitor sends passes the broker's mon_recv(): on the
 *    control channel STARTED (with 3 fds and the role's current pid),
 *    SPAWN_FAILED, EXITED, SOCKET, STOP; on the files channel RESULT, an
 *    fd only with a REOPEN that succeeded;
 *  - a PUT succeeds only with a spec name of this driver and a sealed
 *    memfd, and then the file holds exactly its bytes, mode 0644; a
 *    REMOVE that succeeds leaves no such file;
 *  - the CDI directory holds only regular files of this driver's spec
 *    names (no temporary file), nothing else is made next to it (but the
 *    registration socket);
 *  - no fd is left open across an input; no leak, memory error or UB
 *    (ASan, UBSan); no blocking call (libFuzzer's -timeout).
 * A custom mutator changes the fields the rules read in place, half of
 * the time (LLVMFuzzerCustomMutator, below): with byte mutations alone a
 * refused SPAWN's leaked fd took more than 60 s to find, with it one
 * second. -max_len above the largest seed (14 246 bytes, 5 frames) lets
 * it add frames.
 * Run: ./tests/fuzz/fuzz_mon_handlers -max_total_time=60 -max_len=40000
 *     corpus/
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/names.h"
#include "monitor/monitor.h"

#define DRV		"pci.example.com"
#define FAKE_PID	0x7fff0000	/* above any pid_max (2^22) */
#define SPEC		"{\"cdiVersion\":\"0.6.0\",\"kind\":\"" DRV "/pci\"}"
#define SEALED		(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define MAX_FDS		4
#define CHUNK		(1 + sizeof(struct mon_msg))	/* control, frame */

enum fd_kind {
	FD_NONE, FD_SPEC, FD_UNSEALED, FD_HUGE, FD_PIPE, FD_SOCKET,
	FD_NULL, FD_DIR
};

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
size_t	LLVMFuzzerMutate(uint8_t *, size_t, size_t);
size_t	LLVMFuzzerCustomMutator(uint8_t *, size_t, size_t, unsigned int);
int	__wrap_kill(pid_t, int);
pid_t	__wrap_fork(void);

static struct kp_options	 opts;
static char			 top[64], cdi[96], regpath[96];
static struct mon		*cur;		/* the monitor under test */
static pid_t			 next_pid = FAKE_PID + 16;
static pid_t			 fork_pid;	/* the last fork's, or 0 */
static struct timespec		 fork_at;	/* and when */
static struct timespec		 last[ROLE_COUNT];	/* a role's last fork */

/* Only a child's current pid, only SIGTERM or SIGKILL; never sent. */
int
__wrap_kill(pid_t pid, int sig)
{
	int	 i;

	if (cur == NULL || pid <= 0 || (sig != SIGTERM && sig != SIGKILL))
		__builtin_trap();
	for (i = 0; i < ROLE_COUNT; i++)
		if (cur->children[i].pid == pid)
			return (0);
	__builtin_trap();
}

/* A start "forks" a child that is never there (its channels' other ends
 * close with the monitor's copies). */
pid_t
__wrap_fork(void)
{
	if (cur == NULL || fork_pid != 0)
		__builtin_trap();	/* one start per frame at most */
	fork_pid = next_pid++;
	clock_gettime(CLOCK_MONOTONIC, &fork_at);
	return (fork_pid);
}

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	if (memchr(msg, '\0', KP_LOG_MAX) == NULL)
		__builtin_trap();
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (f->level > 0)
		(void)remove(path);
	return (0);
}

static void
rm_top(void)
{
	(void)nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	(void)rmdir(top);
}

static void
setup(void)
{
	/* tmpfs where there is one, as /run/cdi is: fsync() costs
	 * nothing there. */
	snprintf(top, sizeof(top), "%s/kp-fuzz-mon-XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(top) == NULL)
		abort();
	atexit(rm_top);
	snprintf(cdi, sizeof(cdi), "%s/cdi", top);
	snprintf(regpath, sizeof(regpath), "%s/reg.sock", top);
	opts.driver_name = DRV;
	opts.registrar_socket_path = regpath;
	opts.socket_mode = 0600;
	opts.termlog_off = 1;
	opts.shutdown_grace_ms = 1000;
	snprintf(opts.policy.cdi_dir, sizeof(opts.policy.cdi_dir), "%s", cdi);
	log_init(0, silent, NULL);
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

static long long
ns_between(const struct timespec *a, const struct timespec *b)
{
	return ((long long)(b->tv_sec - a->tv_sec) * 1000000000LL +
	    (b->tv_nsec - a->tv_nsec));
}

/* A listener as monitor_main() gets them (autobound: no file). */
static int
listener(void)
{
	struct sockaddr_un	 sa = { .sun_family = AF_UNIX };
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) == -1 ||
	    listen(fd, SOCK_BACKLOG) == -1)
		abort();
	return (fd);
}

static void
mon_new(struct mon *mon, uint8_t cfg, int *ctl, int *files)
{
	int	 a[2], b[2];

	opts.dra_off = cfg & 0x01;
	opts.registration_off = (cfg & 0x02) != 0;
	opts.kube_mode = cfg & 0x04 ? KP_KUBE_IN_CLUSTER : KP_KUBE_NONE;
	if (cfg & 0x10)
		(void)rmdir(cdi);
	else if (mkdir(cdi, 0755) == -1 && errno != EEXIST)
		abort();
	memset(mon, 0, sizeof(*mon));
	mon->cfg = &opts;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, a) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, b) == -1)
		abort();
	mon->ctl = a[0];
	*ctl = a[1];
	mon->files = b[0];
	*files = b[1];
	mon->sigfd = mon->pidns_fd = mon->lock_fd = mon->cdi_fd = -1;
	mon->state_fd = mon->repair_fd = -1;
	mon->broker_pid = -1;
	mon->plugin_sock.fd = opts.dra_off ? -1 : listener();
	mon->reg_sock.fd = cfg & 0x20 ? listener() : -1;
	mon->http_fd = cfg & 0x08 ? listener() : -1;
	/* kp_start() binds the observer's port exactly when one is set. */
	opts.http_len = mon->http_fd != -1 ? sizeof(struct sockaddr_storage) : 0;
	mon->sock_ok[0] = mon->sock_ok[1] = 1;
	spawn_table_init(mon);
	memset(last, 0, sizeof(last));
	next_pid = FAKE_PID + 16;	/* a seed can name its children */
	cur = mon;
}

static void
mon_free(struct mon *mon, int ctl, int files)
{
	int	*fds[] = { &mon->ctl, &mon->files, &mon->cdi_fd,
		    &mon->state_fd, &mon->lock_fd, &mon->http_fd };
	size_t	 i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] != -1)
			close(*fds[i]);
	sock_close(&mon->plugin_sock);
	sock_remove(&mon->reg_sock);	/* its file, if the monitor made it */
	close(ctl);
	close(files);
	cur = NULL;
}

static int
memfd(const char *s, size_t len, off_t size, int seals)
{
	int	 fd;

	if ((fd = memfd_create("spec", MFD_CLOEXEC | MFD_ALLOW_SEALING)) ==
	    -1 || write(fd, s, len) != (ssize_t)len ||
	    (size > 0 && ftruncate(fd, size) == -1) ||
	    (seals != 0 && fcntl(fd, F_ADD_SEALS, seals) == -1))
		abort();
	return (fd);
}

static int
make_fd(enum fd_kind kind)
{
	int	 p[2], fd = -1;

	switch (kind) {
	case FD_SPEC:
		return (memfd(SPEC, sizeof(SPEC) - 1, 0, SEALED));
	case FD_UNSEALED:
		return (memfd(SPEC, sizeof(SPEC) - 1, 0, 0));
	case FD_HUGE:
		return (memfd("", 0, MON_CDI_MAX + 1, SEALED));
	case FD_PIPE:
	case FD_SOCKET:
		if ((kind == FD_PIPE ? pipe2(p, O_CLOEXEC) : socketpair(AF_UNIX,
		    SOCK_STREAM | SOCK_CLOEXEC, 0, p)) == -1)
			abort();
		close(p[1]);
		return (p[0]);
	case FD_NULL:
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		break;
	case FD_DIR:
		fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	default:
		break;
	}
	if (fd == -1)
		abort();
	return (fd);
}

/* One datagram with fds, as the broker's mon_send() without its check. */
static int
send_raw(int fd, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
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
	return (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    (ssize_t)len ? 0 : -1);
}

/* The control channel as the broker reads it: only the monitor's own
 * frames, each well-formed. */
static void
read_ctl(int ctl)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 fds[MON_MAX_FDS], r;
	size_t		 n, i;

	while ((r = mon_recv(ctl, &m, fds, &n, err, sizeof(err))) == 1) {
		switch (m.type) {
		case MON_STARTED:
			if (n != 3 || m.role < 0 || m.role >= ROLE_COUNT ||
			    m.pid != cur->children[m.role].pid)
				__builtin_trap();
			break;
		case MON_SPAWN_FAILED:
		case MON_EXITED:
		case MON_SOCKET:
			if (n != 0 || m.role < 0 || m.role >= ROLE_COUNT)
				__builtin_trap();
			break;
		case MON_STOP:
			if (n != 0)
				__builtin_trap();
			break;
		default:
			__builtin_trap();
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
	if (r != 0 && r != KP_EPIPE)
		__builtin_trap();
}

/* What a request on the files channel was, for its result. */
struct req {
	struct mon_msg	 m;
	int		 whole;	/* a frame of the right size */
	enum fd_kind	 kind;
	size_t		 nfds;
};

/* The spec file name holds exactly SPEC, mode 0644. */
static int
holds_spec(const char *name)
{
	struct stat	 st;
	char		 buf[sizeof(SPEC) + 1];
	ssize_t		 n;
	int		 fd;

	if ((fd = openat(cur->cdi_fd, name, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (0);
	n = read(fd, buf, sizeof(buf));
	if (fstat(fd, &st) == -1)
		n = -1;
	close(fd);
	return (n == (ssize_t)sizeof(SPEC) - 1 &&
	    memcmp(buf, SPEC, (size_t)n) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 07777) == 0644);
}

/* The files channel as the broker reads it: RESULTs that say what was
 * done, and were done. */
static void
read_files(int files, const struct req *q)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 fds[MON_MAX_FDS], r, named;
	size_t		 n, i;

	while ((r = mon_recv(files, &m, fds, &n, err, sizeof(err))) == 1) {
		if (m.type != MON_RESULT || !q->whole ||
		    (q->m.type != MON_PUT && q->m.type != MON_REMOVE &&
		    q->m.type != MON_REOPEN) || (q->m.type == MON_PUT &&
		    q->nfds != 1) || (n > 0 && (n != 1 ||
		    q->m.type != MON_REOPEN || m.arg != 0)))
			__builtin_trap();
		named = name_is_cdi_spec(DRV, q->m.text, strlen(q->m.text));
		if (m.arg == 0 && q->m.type == MON_PUT && (!named ||
		    q->kind != FD_SPEC || q->nfds != 1 ||
		    !holds_spec(q->m.text)))
			__builtin_trap();
		if (m.arg == 0 && q->m.type == MON_REMOVE && (!named ||
		    faccessat(cur->cdi_fd, q->m.text, F_OK,
		    AT_SYMLINK_NOFOLLOW) == 0))
			__builtin_trap();
		if (m.arg == 0 && q->m.type == MON_REOPEN && n != 1)
			__builtin_trap();
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
	if (r != 0 && r != KP_EPIPE)
		__builtin_trap();
}

/* Only this driver's spec files in the CDI directory, nothing but it (and
 * the registration socket) next to it. */
static void
dirs_check(void)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;

	if ((d = opendir(top)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "cdi") != 0 &&
		    strcmp(de->d_name, "reg.sock") != 0)
			__builtin_trap();
	closedir(d);
	if ((d = opendir(cdi)) == NULL)
		return;		/* missing: nothing written */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!name_is_cdi_spec(DRV, de->d_name, strlen(de->d_name)) ||
		    fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
			__builtin_trap();
	}
	closedir(d);
}

/* Rules of a start: a fork only of a role configured, not running, not
 * while stopping, MON_SPAWN_MIN_MS after its last. */
static void
fork_check(const struct mon *mon, const pid_t *was, int stopping)
{
	int	 i, who = -1;

	for (i = 0; i < ROLE_COUNT; i++)
		if (fork_pid != 0 && mon->children[i].pid == fork_pid)
			who = i;
	if (fork_pid == 0)
		return;
	if (who == -1 || was[who] > 0 || stopping ||
	    (who == ROLE_NODESERVER && opts.dra_off) ||
	    (who == ROLE_REGISTRAR && opts.registration_off) ||
	    (who == ROLE_PUBLISHER && opts.kube_mode == KP_KUBE_NONE) ||
	    (who == ROLE_OBSERVER && mon->http_fd == -1))
		__builtin_trap();
	if (last[who].tv_sec != 0 && ns_between(&last[who], &fork_at) <
	    MON_SPAWN_MIN_MS * 1000000LL)
		__builtin_trap();
	last[who] = fork_at;
	fork_pid = 0;
}

/* ts, if set, MON_SPAWN_MIN_MS earlier. */
static void
earlier(struct timespec *ts)
{
	if (ts->tv_sec == 0)
		return;		/* never started */
	ts->tv_nsec -= MON_SPAWN_MIN_MS * 1000000L;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000L;
		ts->tv_sec--;
	}
}

/* MON_SPAWN_MIN_MS pass: every start time moves back by as much. */
static void
time_passes(struct mon *mon)
{
	int	 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		earlier(&mon->children[i].spawned);
		earlier(&last[i]);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mon	 mon;
	struct req	 q;
	pid_t		 was[ROLE_COUNT];
	size_t		 off = 1, len, i, k;
	int		 ctl, files, fds[MAX_FDS], base, stopping;
	uint8_t		 c;

	if (size < 1)
		return (0);
	if (cur == NULL && top[0] == '\0')
		setup();
	base = nfd();
	mon_new(&mon, data[0], &ctl, &files);
	while (off < size && !mon.done) {
		c = data[off++];
		len = size - off < sizeof(q.m) ? size - off : sizeof(q.m);
		memset(&q, 0, sizeof(q));
		memcpy(&q.m, data + off, len);
		off += len;
		q.whole = len == sizeof(q.m);
		q.kind = (enum fd_kind)((c >> 1) & 7);
		q.nfds = q.kind == FD_NONE ? 0 : 1 + ((c >> 4) & 3);
		if (c & 0x40)
			for (i = 0; i < ROLE_COUNT; i++)
				mon.children[i].pid = -1;
		if (c & 0x80)
			time_passes(&mon);
		if ((c & 1 ? mon.files : mon.ctl) == -1)
			continue;	/* that channel was given up */
		for (k = 0; k < q.nfds; k++)
			fds[k] = make_fd(q.kind);
		for (i = 0; i < ROLE_COUNT; i++)
			was[i] = mon.children[i].pid;
		stopping = mon.stopping;
		if (send_raw(c & 1 ? files : ctl, data + off - len, len, fds,
		    q.nfds) == -1)
			__builtin_trap();	/* drained: there is room */
		for (k = 0; k < q.nfds; k++)
			close(fds[k]);
		if (c & 1)
			cdi_put_serve(&mon);
		else
			mon_dispatch(&mon);
		fork_check(&mon, was, stopping);
		read_ctl(ctl);
		read_files(files, &q);
		dirs_check();
	}
	mon_free(&mon, ctl, files);
	dirs_check();
	if (nfd() != base)
		__builtin_trap();
	/* Each input starts from an empty CDI directory. */
	(void)nftw(cdi, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return (0);
}

static unsigned int
next(unsigned int r)
{
	return (r * 1103515245u + 12345u);
}

/*
 * Most of a frame's bytes are its text and paths, which only PUT, REMOVE,
 * FATAL and HIDE read: libFuzzer's byte mutations mostly land there, or
 * shift every later frame off its place (insertions, erasures). Half of
 * the mutations here change one field of one whole frame in place
 * instead (its control byte, type, role, pid, signal, n, a spec name, a
 * path), with values at the rules' edges, or the configuration, or copy
 * a frame after itself, or drop one; the other half are libFuzzer's own.
 */
size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed)
{
	static const char *const names[] = {
		DRV "_a.json", DRV "_gpu-0.json", "../" DRV "_a.json",
		"." DRV "_a.json", DRV "_a/b.json", "other.example.com_a.json",
		DRV "_a.json.tmp", "", "..", "/"
	};
	static const char *const paths[] = {
		"/var/lib/kubelet", "/etc", "etc", "", "//", "/.."
	};
	static const int sigs[] = { SIGTERM, SIGKILL, 0, SIGSTOP, -1 };
	struct mon_msg	 m;
	unsigned int	 r = next(seed);
	size_t		 n, k, rest;
	uint8_t		*f;

	n = size > 0 ? (size - 1) / CHUNK : 0;
	if (n == 0 || r % 2 == 0)
		return (LLVMFuzzerMutate(data, size, max));
	r = next(r);
	k = r % n;
	f = data + 1 + k * CHUNK;
	rest = size - (size_t)(f - data) - CHUNK;	/* after frame k */
	memcpy(&m, f + 1, sizeof(m));
	r = next(r);
	switch (r % 11) {
	case 0:
		f[0] = (uint8_t)(r >> 16);
		break;
	case 1:
		m.type = (r >> 16) % (MON_TYPE_MAX + 1);
		break;
	case 2:
		m.role = (int32_t)((r >> 16) % (ROLE_COUNT + 2)) - 1;
		break;
	case 3:
		m.pid = (r >> 16) % 8 == 0 ? -1 : FAKE_PID + 16 +
		    (int32_t)((r >> 16) % 6);
		break;
	case 4:
		m.arg = sigs[(r >> 16) % (sizeof(sigs) / sizeof(sigs[0]))];
		break;
	case 5:
		m.n = (r >> 16) % (KP_IPC_MAX_HIDE + 2);
		break;
	case 6:
		snprintf(m.text, sizeof(m.text), "%s",
		    names[(r >> 16) % (sizeof(names) / sizeof(names[0]))]);
		break;
	case 7:
		snprintf(m.paths[(r >> 8) % KP_IPC_MAX_HIDE],
		    sizeof(m.paths[0]), "%s",
		    paths[(r >> 16) % (sizeof(paths) / sizeof(paths[0]))]);
		break;
	case 8:
		data[0] = (uint8_t)(r >> 16);
		break;
	case 9:
		if (size + CHUNK > max)
			return (LLVMFuzzerMutate(data, size, max));
		memmove(f + 2 * CHUNK, f + CHUNK, rest);
		memcpy(f + CHUNK, f, CHUNK);
		return (size + CHUNK);
	default:
		memmove(f, f + CHUNK, rest);
		return (size - CHUNK);
	}
	memcpy(f + 1, &m, sizeof(m));
	return (size);
}
