/*
 * child_exec.c - the monitor's half of a start by exec (ipc/child.h):
 * in the forked child, what child_run() does up to the role's main
 * (child_begin(), fds), then execve() of the driver's own binary, so
 * that the role gets a fresh address space: a new layout for each
 * generation (a crash-restart loop learns nothing of the monitor's or
 * of earlier children's) and nothing of the driver's heap. The library's
 * constructor (ipc/role_exec.c) takes over before the driver's main().
 *
 * The roles that run no driver code (the publisher, the observer, a
 * registrar without interceptors) run from the constructor; the
 * nodeserver and a registrar with interceptors get the driver's argv, and
 * the driver's main() runs again up to its kp_start() (role_exec_main.c),
 * unless kp_sandbox_exec(opts, 0) or a second plugin in one process
 * made them forked (children.c child_run).
 *
 * Runs in: a child of the monitor between fork and exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "monitor/monitor.h"

/* The binary this process runs, whatever became of its path since. */
#define CHILD_EXEC_PATH	"/proc/self/exe"

/*
 * Each fd of from[n] (-1: none) at its index as number, inheritable;
 * every other fd closed. Every source goes above the fixed numbers
 * first, so no dup2() overwrites a source not yet moved.
 */
static int
exec_fds(const int *from, size_t n)
{
	int	 tmp[EXEC_FD_MAX], keep[EXEC_FD_MAX];
	size_t	 i;

	if (n > EXEC_FD_MAX)
		return (-1);
	for (i = 0; i < n; i++) {
		keep[i] = tmp[i] = -1;
		if (from[i] >= 0 && (tmp[i] = fcntl(from[i], F_DUPFD_CLOEXEC,
		    (int)n)) == -1)
			return (-1);
	}
	for (i = 0; i < n; i++) {
		if (tmp[i] == -1)
			continue;
		if (dup2(tmp[i], (int)i) == -1)
			return (-1);
		keep[i] = (int)i;
	}
	return (fd_close_except(keep, n));
}

/* A pipe holding buf (len bytes, all of it: nobody reads before the
 * exec), its write end closed; -1 with the reason in err. */
static int
exec_pipe(const void *buf, size_t len, const char *what, char *err,
    size_t errsize)
{
	const uint8_t	*b = buf;
	size_t		 off = 0;
	ssize_t		 n;
	int		 p[2];

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errsize, "%s: pipe: %s", what, strerror(errno));
		return (-1);
	}
	/*
	 * All of it must fit (64 KiB by default; the options copy is
	 * about 26 KiB). A user past fs.pipe-user-pages-soft gets
	 * one-page pipes: the write end is non-blocking so that fails
	 * here, naming why, instead of hanging the child until the start
	 * times out.
	 */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) == -1 ||
	    (len > 65536 && fcntl(p[1], F_SETPIPE_SZ, (int)len) == -1)) {
		snprintf(err, errsize, "%s: %zu bytes: %s: %s", what, len,
		    len > 65536 ? "F_SETPIPE_SZ" : "O_NONBLOCK",
		    strerror(errno));
		goto fail;
	}
	while (off < len) {
		if ((n = write(p[1], b + off, len - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errsize, "%s: write after %zu of %zu "
			    "bytes: %s", what, off, len, n == 0 ?
			    "no progress" : errno == EAGAIN ? "the pipe is "
			    "full (its size is limited: "
			    "fs.pipe-user-pages-soft?)" : strerror(errno));
			goto fail;
		}
		off += (size_t)n;
	}
	close(p[1]);
	return (p[0]);
fail:
	close(p[0]);
	close(p[1]);
	return (-1);
}

/* The flat options in a pipe (exec_pipe); -1 with the reason in err.
 * A pipe, not a memfd: the syscalls are those the monitor and every
 * seccomp profile of the deploy kit already allow. */
static int
exec_opts_fd(const struct kp_options *cfg, char *err, size_t errsize)
{
	uint8_t	*buf;
	size_t	 len;
	int	 fd;

	if (child_opts_flatten(cfg, &buf, &len, err, errsize) != 0)
		return (-1);
	fd = exec_pipe(buf, len, "options copy", err, errsize);
	free(buf);
	return (fd);
}

/* The nodeserver's state generation and the paths it hides, which a
 * forked one finds in the monitor's memory (spawn.c child_run). */
static int
exec_extra_fd(const struct mon *mon, char *err, size_t errsize)
{
	uint8_t			 buf[sizeof(struct child_ns_extra) +
				    KP_IPC_MAX_HIDE * KP_IPC_PATH_MAX];
	struct child_ns_extra	 x;
	size_t			 n = mon->n_pub_hide;

	if (n > KP_IPC_MAX_HIDE)
		n = KP_IPC_MAX_HIDE;
	memset(&x, 0, sizeof(x));
	x.magic = CHILD_NS_EXTRA_MAGIC;
	x.n_hide = (uint32_t)n;
	x.state_gen = mon->state_fd != -1 ? mon->state_gen : 0;
	memcpy(buf, &x, sizeof(x));
	memcpy(buf + sizeof(x), mon->pub_hide, n * KP_IPC_PATH_MAX);
	return (exec_pipe(buf, sizeof(x) + n * KP_IPC_PATH_MAX,
	    "nodeserver extras", err, errsize));
}

/*
 * In the child of role c just forked: returns at once when c is not
 * started by exec (the caller then runs it as forked), else never. A
 * failure before the exec is reported as the role's start failure.
 */
void
child_exec(struct mon *mon, struct mon_child *c, int ctl, int logfd, int errw)
{
	struct child_env	 env;
	char			 marker[32], name[16], err[KP_ERROR_SIZE];
	char			*argv[2];
	char *const		*args = argv;
	int			 from[CHILD_FD_COUNT], ofd, xfd = -1, i;

	if (role_exec_marker(c->role, mon->cfg, marker, sizeof(marker)) != 0)
		return;
	/* As child_run(); the signal mask (all blocked) is kept by exec,
	 * each role takes its own (sigwait, signalfd). */
	if (child_begin(errw) == -1)
		_exit(KP_EXIT_START);
	log_procinit(c->name);
	log_set_sink(logfd);
	memset(&env, 0, sizeof(env));
	/* What the child reads comes from the supervisor; the publisher's
	 * Publish frames are the driver's, up to KP_IPC_MAX_FRAME (a 1 MiB
	 * limit made it exit on 8 pools of 4096 devices and crash-loop). */
	ipc_chan_init(&env.ctl, ctl, c->role == ROLE_PUBLISHER ?
	    KP_IPC_MAX_FRAME : KP_IPC_CHILD_FRAME);
	if ((ofd = exec_opts_fd(mon->cfg, err, sizeof(err))) == -1 ||
	    (c->role == ROLE_NODESERVER &&
	    (xfd = exec_extra_fd(mon, err, sizeof(err))) == -1))
		_exit(child_start_fail(&env, KP_EIO, "%s", err));
	for (i = 0; i < CHILD_FD_COUNT; i++)
		from[i] = -1;
	from[0] = 0;
	from[1] = 1;
	from[2] = 2;
	from[CHILD_FD_CTL] = ctl;
	from[CHILD_FD_LOG] = logfd;
	from[CHILD_FD_OPTS] = ofd;
	from[CHILD_FD_LISTEN] = c->listen_fd != NULL ? *c->listen_fd : -1;
	if (c->role == ROLE_NODESERVER) {
		from[CHILD_FD_LOCK] = mon->lock_fd;
		from[CHILD_FD_STATE] = mon->state_fd;
		from[CHILD_FD_EXTRA] = xfd;
	}
	if (exec_fds(from, CHILD_FD_COUNT) == -1)
		_exit(child_start_fail(&env, KP_EIO, "fds for exec: %s",
		    strerror(errno)));
	env.ctl.fd = CHILD_FD_CTL;
	log_set_sink(CHILD_FD_LOG);
	if (setenv(CHILD_EXEC_ENV, marker, 1) == -1)
		_exit(child_start_fail(&env, KP_ENOMEM, "setenv %s: %s",
		    CHILD_EXEC_ENV, strerror(errno)));
	/* A role run from the constructor: argv[0] names it in ps, nothing
	 * else is passed. One whose main() runs again: the driver's argv,
	 * which main() parses again. */
	snprintf(name, sizeof(name), "kp-%s", c->name);
	argv[0] = name;
	argv[1] = NULL;
	if (strchr(marker, ':') != strrchr(marker, ':'))
		args = role_exec_argv();
	(void)execve(CHILD_EXEC_PATH, args, environ);
	_exit(child_start_fail(&env, KP_EIO, "execve %s (the driver's "
	    "binary, for a fresh address space): %s", CHILD_EXEC_PATH,
	    strerror(errno)));
}

/*
 * In the broker just forked (monitor/broker.c): its fds at the
 * BROKER_FD_* numbers (stdin and stdout /dev/null, stderr the
 * driver's), the options in a pipe, then the exec; never returns. Before
 * the exec nothing can report to the broker's channels: a failure is one
 * line on stderr, and the monitor reports the broker's end.
 */
void
child_exec_broker(struct mon *mon, int ctl, int files, int driver,
    int events)
{
	char	 marker[32], err[KP_ERROR_SIZE];
	char	*argv[2] = { "kp-broker", NULL };
	int	 from[BROKER_FD_COUNT], null, ofd;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    (ofd = exec_opts_fd(mon->cfg, err, sizeof(err))) == -1) {
		log_errorx("broker: %s", null == -1 ? "open /dev/null" : err);
		_exit(1);
	}
	from[0] = from[1] = null;
	from[2] = STDERR_FILENO;
	from[BROKER_FD_CTL] = ctl;
	from[BROKER_FD_FILES] = files;
	from[BROKER_FD_OPTS] = ofd;
	from[BROKER_FD_DRIVER] = driver;
	from[BROKER_FD_EVENTS] = events;
	if (exec_fds(from, BROKER_FD_COUNT) == -1 ||
	    role_exec_marker(ROLE_BROKER, mon->cfg, marker,
	    sizeof(marker)) != 0 ||
	    setenv(CHILD_EXEC_ENV, marker, 1) == -1) {
		log_errorx("broker: fds or marker for exec: %s",
		    strerror(errno));
		_exit(1);
	}
	(void)execve(CHILD_EXEC_PATH, argv, environ);
	log_errorx("broker: execve %s: %s", CHILD_EXEC_PATH, strerror(errno));
	_exit(1);
}
