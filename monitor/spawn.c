/*
 * spawn.c - the monitor starts a child when the broker asks (MON_SPAWN):
 * fresh channels whose other ends go to the broker (MON_STARTED), never
 * read here; a pid namespace per child; fd hygiene; the role's main (or
 * an exec of it, child_exec.c). The backoff between restarts is the
 * broker's; the monitor only refuses two starts of one role closer than
 * MON_SPAWN_MIN_MS, so a broker cannot make it fork in a loop.
 *
 * Runs in: the monitor, and in each new child until its role's main.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/sigfd.h"
#include "monitor/monitor.h"

void
spawn_table_init(struct mon *mon)
{
	static const struct {
		enum kp_role	 role;
		int		(*main)(struct child_env *);
	} roles[ROLE_COUNT] = {
		{ ROLE_NODESERVER, nodeserver_main },
		{ ROLE_REGISTRAR, registrar_main },
		{ ROLE_PUBLISHER, publisher_main },
		{ ROLE_OBSERVER, observer_main },
	};
	struct mon_child	*c;
	int			 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &mon->children[i];
		memset(c, 0, sizeof(*c));
		c->role = roles[i].role;
		c->name = ipc_role_name(roles[i].role);
		c->main = roles[i].main;
		c->pid = -1;
	}
	mon->children[ROLE_NODESERVER].listen_fd = &mon->plugin_sock.fd;
	mon->children[ROLE_REGISTRAR].listen_fd = &mon->reg_sock.fd;
	mon->children[ROLE_OBSERVER].listen_fd = &mon->http_fd;
}

static int
cmp_int(const void *a, const void *b)
{
	return (*(const int *)a - *(const int *)b);
}

/* Close every fd but those in keep (at most 12): nothing leaks into a
 * child that it was not given (STYLE: fork without exec). */
int
fd_close_except(const int *keep, size_t n)
{
	int	 k[12];
	size_t	 i, m = 0;
	unsigned lo = 0;

	for (i = 0; i < n && m < 12; i++)
		if (keep[i] >= 0)
			k[m++] = keep[i];
	qsort(k, m, sizeof(k[0]), cmp_int);
	for (i = 0; i < m; i++) {
		if ((unsigned)k[i] > lo &&
		    close_range(lo, (unsigned)k[i] - 1, 0) == -1)
			return (-1);
		lo = (unsigned)k[i] + 1;
	}
	return (close_range(lo, ~0U, 0));
}

/* ps and /proc/<pid>/comm show the role: "kp-nodeserver". */
void
child_set_name(const char *role)
{
	char	 name[16];

	snprintf(name, sizeof(name), "kp-%s", role);
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
}

/*
 * Remember our pid namespace, so that each child (and the broker) gets a
 * fresh one (spawn_fork). They share ours when this fails (not root).
 */
void
spawn_ns_init(struct mon *mon)
{
	mon->pidns_fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (mon->pidns_fd == -1)
		log_warn("open /proc/self/ns/pid: children share the "
		    "monitor's pid namespace");
}

/*
 * fork() into a new pid namespace: the child is its pid 1 and sees no
 * other process (policy/ns.c mounts its /proc). unshare(CLONE_NEWPID)
 * moves only the children made next, so the monitor enters the new
 * namespace for this fork and returns to its own right after.
 *
 * Not clone(CLONE_NEWPID) as a raw syscall: that skips what glibc's fork
 * does in the child beyond the atfork handlers (moot here: one thread, no
 * handlers registered): it stores the new tid in the thread descriptor
 * (CLONE_CHILD_SETTID) and registers the robust-futex list again. Without
 * the tid, pthread_kill() of the main thread (rpc/serve.c wakes it so)
 * and error-checking mutexes would use the monitor's tid.
 *
 * Without CAP_SYS_ADMIN (not root) a plain fork, warned once.
 */
pid_t
spawn_fork(struct mon *mon, const char *name)
{
	static int	 warned;
	pid_t		 pid;
	int		 e;

	if (mon->pidns_fd == -1 || unshare(CLONE_NEWPID) == -1) {
		if (!warned++)
			log_warnx("no pid namespace per child (%s): every "
			    "child sees the others in /proc", mon->pidns_fd ==
			    -1 ? "no namespace fd" : strerror(errno));
		return (fork());
	}
	pid = fork();
	e = errno;
	if (pid == 0)
		return (0);
	if (setns(mon->pidns_fd, CLONE_NEWPID) == -1) {
		/* The next fork would join this child's namespace. */
		log_warn("setns back to the monitor's pid namespace; "
		    "no more pid namespaces");
		close(mon->pidns_fd);
		mon->pidns_fd = -1;
		if (pid > 0) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
		}
		errno = EAGAIN;
		return (-1);
	}
	errno = e;
	log_info(2, "%s in a pid namespace of its own", name);
	return (pid);
}

/*
 * The child's stdio: nothing to read, stdout discarded, stderr a pipe the
 * broker turns into log lines ("<role>] stderr: ..."), sanitised and
 * rate-limited like every other line. The driver's own fds 0-2 never
 * reach a child: raw bytes there would bypass the sanitiser (a forged log
 * line) or land on the driver's stdout. Returns -1 on failure.
 */
static int
child_stdio(int errw)
{
	int	 null;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return (-1);
	if (dup2(null, 0) == -1 || dup2(null, 1) == -1 ||
	    dup2(errw, 2) == -1) {
		close(null);
		return (-1);
	}
	if (null > 2)
		close(null);
	return (0);
}

/*
 * The first steps of every new child, forked or about to exec
 * (child_exec.c): signals, stdio, working directory, parent-death signal.
 * Returns -1 on failure.
 */
int
child_begin(int errw)
{
	sig_reset_all();
	/* Nothing of the driver's working directory, which may lie in a
	 * directory hidden from the child: relative paths start at "/"
	 * (policy/fs.c changes there again after the init hook). */
	if (child_stdio(errw) == -1 || chdir("/") == -1)
		return (-1);
	/* The monitor's death (SIGKILL) ends the children too. */
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	return (0);
}

/*
 * The driver's latest state for a nodeserver (kp_state_set), from the
 * memfd the broker handed with MON_SPAWN: read here, in the new child,
 * never by the monitor. NULL with *len 0 when none or unreadable.
 */
static uint8_t *
child_state(int fd, size_t *len)
{
	struct stat	 st;
	uint8_t		*buf;
	ssize_t		 n;
	size_t		 off = 0;

	*len = 0;
	if (fd < 0)
		return (NULL);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size <= 0 || (size_t)st.st_size > KP_IPC_MAX_FRAME ||
	    (buf = malloc((size_t)st.st_size)) == NULL) {
		close(fd);	/* not kept in the hooks' process */
		return (NULL);
	}
	while (off < (size_t)st.st_size &&
	    (n = pread(fd, buf + off, (size_t)st.st_size - off,
	    (off_t)off)) > 0)
		off += (size_t)n;
	close(fd);
	*len = off;
	return (buf);
}

/* Runs in the new child; never returns. */
static void
child_run(struct mon *mon, struct mon_child *c, int ctl, int logfd, int errw)
{
	struct child_env	 env;
	int			 lfd = c->listen_fd ? *c->listen_fd : -1;
	int			 lock = c->role == ROLE_NODESERVER ?
				    mon->lock_fd : -1;
	int			 sfd = c->role == ROLE_NODESERVER ?
				    mon->state_fd : -1;
	int			 keep[8] = { 0, 1, 2, ctl, logfd, lfd, lock,
				    sfd };
	int			 code;

	if (child_begin(errw) == -1 || fd_close_except(keep, 8) == -1)
		_exit(KP_EXIT_START);
	/* Died before the signal was armed? (Only now: until the close
	 * above this process held the broker's end itself.) */
	if (child_supervisor_gone(ctl))
		_exit(KP_EXIT_IPC);
	log_procinit(c->name);
	log_set_sink(logfd);
	child_set_name(c->name);
	/*
	 * glibc gives each thread that allocates its own arena (up to 8 per
	 * core), each a heap of touched pages that stays: gRPC's threads
	 * made the children's largest anonymous share
	 * (docs/benchmarks-history.md, "The memory work"). The nodeserver keeps two (its hooks
	 * may run on several workers at once); the others one.
	 */
	(void)mallopt(M_ARENA_MAX, c->role == ROLE_NODESERVER ? 2 : 1);
	memset(&env, 0, sizeof(env));
	env.cfg = mon->cfg;
	env.hooks = mon->hooks;
	/* What the child reads comes from the supervisor; the publisher's
	 * Publish frames are the driver's, up to KP_IPC_MAX_FRAME (a 1 MiB
	 * limit made it exit on 8 pools of 4096 devices and crash-loop). */
	ipc_chan_init(&env.ctl, ctl, c->role == ROLE_PUBLISHER ?
	    KP_IPC_MAX_FRAME : KP_IPC_CHILD_FRAME);
	env.logfd = logfd;
	env.listen_fd = lfd;
	env.lock_fd = lock;
	if (c->role == ROLE_NODESERVER) {
		env.hide = mon->pub_hide;
		env.n_hide = mon->n_pub_hide;
		if ((env.state = child_state(sfd, &env.state_len)) != NULL)
			env.state_gen = mon->state_gen;
	}
	/*
	 * This process is pid 1 of its namespace (spawn_fork). Two things
	 * differ for an init, both moot here: it would reap orphans, but
	 * no child creates processes (fork is a seccomp violation); and it
	 * gets only signals it handles, which the roles do: every signal
	 * is blocked from sig_reset_all() on, and a blocked signal
	 * is queued even for an init, where sigwait() (rpc/serve.c) or a
	 * signalfd (publisher) takes SIGTERM.
	 */
	code = c->main(&env);
	_exit(code);
}

static void
close_pair(int *p)
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	p[0] = p[1] = -1;
}

/*
 * Fork the child of role c with fresh channels: 0 with the broker's ends
 * in fds[3] (ctl, log, stderr; the caller sends and closes them), or
 * KP_E* with err.
 */
int
spawn_child(struct mon *mon, struct mon_child *c, int *fds, char *err,
    size_t errsize)
{
	int	 ctl[2] = { -1, -1 }, logp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int	 r = KP_EIO;
	pid_t	 pid;

	/*
	 * SOCK_SEQPACKET for the log, not SOCK_DGRAM: a connected datagram
	 * socket still takes sendto() with an address, which would let a
	 * child reach any datagram socket it can name (journald,
	 * sd_notify); a connection-mode socket refuses one (EISCONN).
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    logp) == -1 || pipe2(errp, O_CLOEXEC) == -1) {
		snprintf(err, errsize, "%s: channels: %s", c->name,
		    strerror(errno));
		goto fail;
	}
	/* A nodeserver's own serialize.lock description (lockfile.c). */
	if (c->role == ROLE_NODESERVER && (r = lock_child_open(mon)) != 0) {
		snprintf(err, errsize, "%s: lock file %s cannot be opened",
		    c->name, mon->cfg->lock_path);
		goto fail;
	}
	/* The backlog a previous generation may have changed. */
	if (c->listen_fd != NULL)
		sock_relisten(*c->listen_fd);
	if ((pid = spawn_fork(mon, c->name)) == -1) {
		snprintf(err, errsize, "fork %s: %s", c->name, strerror(errno));
		r = KP_EIO;
		lock_close(mon);
		goto fail;
	}
	if (pid == 0) {
		/* Exec'd unless the role is forked (child_exec.c). */
		child_exec(mon, c, ctl[1], logp[1], errp[1]);
		child_run(mon, c, ctl[1], logp[1], errp[1]);
	}
	lock_close(mon);	/* the child's now; the monitor keeps none */
	close(ctl[1]);
	close(logp[1]);
	close(errp[1]);
	fds[0] = ctl[0];
	fds[1] = logp[0];
	fds[2] = errp[0];
	c->pid = pid;
	clock_gettime(CLOCK_MONOTONIC, &c->spawned);
	log_info(2, "started %s, pid %d", c->name, (int)pid);
	return (0);
fail:
	close_pair(ctl);
	close_pair(logp);
	close_pair(errp);
	return (r);
}
