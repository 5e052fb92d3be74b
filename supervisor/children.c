/*
 * children.c - the role table, fork with fd hygiene and a pid namespace
 * per child, and restart backoff (100 ms doubling to 3.2 s, reset after
 * 60 s up).
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
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

/* Before a child's frame is unpacked: its state table and size rules. */
static int
child_gate(void *user, int mcase, size_t len, char *err, size_t errsize)
{
	struct child	*c = user;

	return (ipc_rule_gate(c->role, c->state, mcase, len, err, errsize));
}

/* The role table (the supervisor starts the publisher, the nodeserver,
 * then the registrar: supervisor.c phases). */
void
child_table_init(struct sup *sup)
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
	struct child	*c;
	int		 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		memset(c, 0, sizeof(*c));
		c->role = roles[i].role;
		c->name = ipc_role_name(roles[i].role);
		c->main = roles[i].main;
		/* The publisher exists only with Kubernetes access; the
		 * nodeserver and the registrar unless switched off
		 * (kp_dra_service, kp_registration_service); the observer
		 * only with an HTTP endpoint. */
		c->enabled = c->role == ROLE_PUBLISHER ?
		    sup->cfg->kube_mode != KP_KUBE_NONE :
		    c->role == ROLE_NODESERVER ? !sup->cfg->dra_off :
		    c->role == ROLE_OBSERVER ? sup->http_fd != -1 :
		    !sup->cfg->registration_off;
		c->pid = -1;
		c->logfd = -1;
		c->errfd = -1;
		c->backoff_ms = KP_BACKOFF_MIN_MS;
		ipc_chan_init(&c->ctl, -1, c->role == ROLE_REGISTRAR ||
		    c->role == ROLE_OBSERVER ? KP_IPC_SMALL_FRAME :
		    KP_IPC_CHILD_FRAME);
		c->ctl.gate = child_gate;
		c->ctl.gate_user = c;
	}
	sup->children[ROLE_NODESERVER].listen_fd = &sup->plugin_sock.fd;
	sup->children[ROLE_REGISTRAR].listen_fd = &sup->reg_sock.fd;
	sup->children[ROLE_OBSERVER].listen_fd = &sup->http_fd;
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

static void
child_reset_signals(void)
{
	struct sigaction	 sa;
	sigset_t		 all;
	int			 s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (s = 1; s < NSIG; s++)
		(void)sigaction(s, &sa, NULL);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
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
 * Remember our pid namespace, so that each child can get a fresh one
 * (child_fork). Children share ours when this fails (not root).
 */
void
child_ns_init(struct sup *sup)
{
	sup->pidns_fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (sup->pidns_fd == -1)
		log_warn("open /proc/self/ns/pid: children share the "
		    "supervisor's pid namespace");
}

/*
 * fork() into a new pid namespace: the child is its pid 1 and sees no
 * other process (policy/ns.c mounts its /proc). unshare(CLONE_NEWPID)
 * moves only the children made next, so the supervisor enters the new
 * namespace for this fork and returns to its own right after.
 *
 * Not clone(CLONE_NEWPID) as a raw syscall: that skips what glibc's fork
 * does in the child beyond the atfork handlers (moot here: one thread, no
 * handlers registered): it stores the new tid in the thread descriptor
 * (CLONE_CHILD_SETTID) and registers the robust-futex list again. Without
 * the tid, pthread_kill() of the main thread (rpc/serve.c wakes it so)
 * and error-checking mutexes would use the supervisor's tid.
 *
 * Without CAP_SYS_ADMIN (not root) a plain fork, warned once.
 */
static pid_t
child_fork(struct sup *sup, struct child *c)
{
	static int	 warned;
	pid_t		 pid;
	int		 e;

	if (sup->pidns_fd == -1 || unshare(CLONE_NEWPID) == -1) {
		if (!warned++)
			log_warnx("no pid namespace per child (%s): every "
			    "child sees the others in /proc", sup->pidns_fd ==
			    -1 ? "no namespace fd" : strerror(errno));
		return (fork());
	}
	pid = fork();
	e = errno;
	if (pid == 0)
		return (0);
	if (setns(sup->pidns_fd, CLONE_NEWPID) == -1) {
		/* The next fork would join this child's namespace. */
		log_warn("setns back to the supervisor's pid namespace; "
		    "no more pid namespaces");
		close(sup->pidns_fd);
		sup->pidns_fd = -1;
		if (pid > 0) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
		}
		errno = EAGAIN;
		return (-1);
	}
	errno = e;
	log_info(2, "%s in a pid namespace of its own", c->name);
	return (pid);
}

/*
 * The child's stdio: nothing to read, stdout discarded, stderr a pipe the
 * supervisor turns into log lines ("<role>] stderr: ..."), sanitised and
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
	child_reset_signals();
	/* Nothing of the driver's working directory, which may lie in a
	 * directory hidden from the child: relative paths start at "/"
	 * (policy/fs.c changes there again after the init hook). */
	if (child_stdio(errw) == -1 || chdir("/") == -1)
		return (-1);
	/* The supervisor's death (SIGKILL) ends the children too. */
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	return (0);
}

/* Runs in the new child; never returns. */
static void
child_run(struct sup *sup, struct child *c, int ctl, int logfd, int errw)
{
	struct child_env	 env;
	int			 keep[5] = { 0, 1, 2, ctl, logfd };
	int			 lfd = c->listen_fd ? *c->listen_fd : -1;
	int			 lock = c->role == ROLE_NODESERVER ?
				    sup->lock_fd : -1;
	int			 code;

	if (child_begin(errw) == -1)
		_exit(KP_EXIT_START);
	if (lfd >= 0) {
		int k2[7] = { 0, 1, 2, ctl, logfd, lfd, lock };

		code = fd_close_except(k2, 7);
	} else
		code = fd_close_except(keep, 5);
	if (code == -1)
		_exit(KP_EXIT_START);
	/* Died before the signal was armed? (Only now: until the close
	 * above this process held the supervisor's end itself.) */
	if (child_supervisor_gone(ctl))
		_exit(KP_EXIT_IPC);
	log_procinit(c->name);
	log_set_sink(logfd);
	child_set_name(c->name);
	/*
	 * glibc gives each thread that allocates its own arena (up to 8 per
	 * core), each a heap of touched pages that stays: gRPC's threads
	 * made the children's largest anonymous share (docs/benchmarks.md,
	 * "Pss of one tree alone"). The nodeserver keeps two (its hooks
	 * may run on several workers at once); the others one.
	 */
	(void)mallopt(M_ARENA_MAX, c->role == ROLE_NODESERVER ? 2 : 1);
	memset(&env, 0, sizeof(env));
	env.cfg = sup->cfg;
	env.hooks = sup->hooks;
	ipc_chan_init(&env.ctl, ctl, KP_IPC_CHILD_FRAME);
	env.logfd = logfd;
	env.listen_fd = lfd;
	env.lock_fd = lock;
	if (c->role == ROLE_NODESERVER) {
		env.hide = sup->pub_hide;
		env.n_hide = sup->n_pub_hide;
		chan_state_env(sup, &env);
	}
	/*
	 * This process is pid 1 of its namespace (child_fork). Two things
	 * differ for an init, both moot here: it would reap orphans, but
	 * no child creates processes (fork is a seccomp violation); and it
	 * gets only signals it handles, which the roles do: every signal
	 * is blocked from child_reset_signals() on, and a blocked signal
	 * is queued even for an init, where sigwait() (rpc/serve.c) or a
	 * signalfd (publisher) takes SIGTERM.
	 */
	code = c->main(&env);
	_exit(code);
}

/* Fork the child of role c with fresh channels. */
int
child_spawn(struct sup *sup, struct child *c)
{
	int	 ctl[2], logp[2], errp[2];
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == -1)
		return (KP_EIO);
	/*
	 * SOCK_SEQPACKET, not SOCK_DGRAM: a connected datagram socket still
	 * takes sendto() with an address, which would let a child reach
	 * any datagram socket it can name (journald, sd_notify); a
	 * connection-mode socket refuses one (EISCONN).
	 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    logp) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		return (KP_EIO);
	}
	if (pipe2(errp, O_CLOEXEC) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		close(logp[0]);
		close(logp[1]);
		return (KP_EIO);
	}
	/* A nodeserver's own serialize.lock description (lockfile.c). */
	if (c->role == ROLE_NODESERVER && lock_child_open(sup) != 0) {
		close(ctl[0]);
		close(ctl[1]);
		close(logp[0]);
		close(logp[1]);
		close(errp[0]);
		close(errp[1]);
		return (KP_EIO);
	}
	/* The backlog a previous generation may have changed. */
	if (c->listen_fd != NULL)
		sock_relisten(*c->listen_fd);
	if ((pid = child_fork(sup, c)) == -1) {
		log_warn("fork %s", c->name);
		lock_close(sup);
		close(ctl[0]);
		close(ctl[1]);
		close(logp[0]);
		close(logp[1]);
		close(errp[0]);
		close(errp[1]);
		return (KP_EIO);
	}
	if (pid == 0) {
		/* The publisher and the observer: exec'd (child_exec.c). */
		child_exec(sup, c, ctl[1], logp[1], errp[1]);
		child_run(sup, c, ctl[1], logp[1], errp[1]);
	}
	lock_close(sup);	/* the child's now; the supervisor keeps none */
	close(ctl[1]);
	close(logp[1]);
	close(errp[1]);
	(void)fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(logp[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(errp[0], F_SETFL, O_NONBLOCK);
	ipc_chan_close(&c->ctl);
	c->ctl.fd = ctl[0];
	c->logfd = logp[0];
	c->errfd = errp[0];
	c->errlen = 0;
	c->pid = pid;
	c->journal_told = 0;	/* a new process: its own journal read */
	c->state = CS_STARTING;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	log_info(2, "started %s, pid %d", c->name, (int)pid);
	return (0);
}

void
child_kill(struct child *c, int sig)
{
	if (c->pid > 0)
		(void)kill(c->pid, sig);
	if (sig == SIGKILL || sig == SIGTERM)
		c->state = CS_STOPPING;
}

static void
child_log_exit(struct child *c, int status)
{
	/* 159 = 128 + SIGSYS: policy/sigsys.c's last resort when the
	 * forced SIGSYS did not end the process. */
	if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS))
		log_errorx("%s killed by seccomp (SIGSYS)", c->name);
	else if (WIFSIGNALED(status))
		log_errorx("%s killed by signal %d (%s)", c->name,
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (c->start_failed && WEXITSTATUS(status) == KP_EXIT_START)
		log_info(2, "%s exited", c->name);	/* logged with why */
	else if (WEXITSTATUS(status) != 0 || (c->state != CS_STOPPING &&
	    !c->draining))	/* drained: READY to the end (drain.c) */
		log_warnx("%s exited with status %d", c->name,
		    WEXITSTATUS(status));
	else
		log_info(2, "%s exited", c->name);
}

/* A child was reaped: close its channels, remember when it may return. */
void
child_reaped(struct sup *sup, struct child *c, int status)
{
	child_log_exit(c, status);
	status_child_down(sup, c, status, c->violated);
	c->violated = 0;
	c->start_failed = 0;
	ipc_chan_close(&c->ctl);
	if (c->logfd != -1)
		close(c->logfd);
	c->logfd = -1;
	sup_drain_stderr(sup, c, 1);
	c->pid = -1;
	c->state = CS_STOPPED;
}

/*
 * A child's READY: only the publisher may name files to hide; the list
 * replaces the last one and reaches each nodeserver started from now on
 * (restarts included). Returns -1 for hide_paths from another role.
 */
int
child_ready(struct sup *sup, struct child *c, const Kpipc__Ready *r)
{
	size_t	 i;

	if (c->role != ROLE_PUBLISHER)
		return (r->n_hide_paths == 0 ? 0 : -1);
	/* ipc_check() bounded the count and the lengths. */
	for (i = 0; i < r->n_hide_paths && i < KP_IPC_MAX_HIDE; i++)
		snprintf(sup->pub_hide[i], sizeof(sup->pub_hide[i]), "%s",
		    r->hide_paths[i]);
	sup->n_pub_hide = i;
	return (0);
}

/*
 * Backoff: 100 ms doubling to 3.2 s; reset once a child ran 60 s. The cap
 * is low on purpose: the listening sockets stay open while a child is
 * down, so kubelet's calls queue in the backlog and are served by the next
 * child; a long backoff would turn a crash storm into a lock-out. A storm
 * (the cap reached) is reported once per storm.
 */
void
child_schedule_restart(struct sup *sup, struct child *c)
{
	if (-ts_ms_until(&c->started) >= KP_HEALTHY_MS) {
		c->backoff_ms = KP_BACKOFF_MIN_MS;
		c->storm = 0;
	}
	if (c->backoff_ms >= KP_BACKOFF_MAX_MS && !c->storm) {
		c->storm = 1;
		log_errorx("%s is crash-looping (%d restarts): restarting it "
		    "every %d ms until it stays up for %d s", c->name,
		    c->restarts + 1, KP_BACKOFF_MAX_MS, KP_HEALTHY_MS / 1000);
		chan_error(sup, KP_ECHILD, 0, "%s is crash-looping (%d "
		    "restarts): restarting it every %d ms", c->name,
		    c->restarts + 1, KP_BACKOFF_MAX_MS);
	}
	clock_gettime(CLOCK_MONOTONIC, &c->restart_at);
	ts_after_ms(&c->restart_at, c->backoff_ms);
	log_info(1, "restarting %s in %d ms", c->name, c->backoff_ms);
	c->backoff_ms *= 2;
	if (c->backoff_ms > KP_BACKOFF_MAX_MS)
		c->backoff_ms = KP_BACKOFF_MAX_MS;
	c->restarts++;
}
