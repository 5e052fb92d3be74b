/*
 * role_exec_main.c - an exec'd nodeserver, or registrar with
 * interceptors: the role needs the driver's functions (hooks,
 * interceptors, state and journal callbacks), and only the driver's
 * main() can name them, so main() runs again, with the driver's argv, in
 * the new address space, and the first kp_start() it reaches that its
 * options pass becomes the role (api.c). That start proves it is the
 * same plugin: its options, flattened as the monitor's copy was
 * (child_opts.c), must equal that copy byte for byte; anything else is a
 * start failure that names the option.
 *
 * Between the constructor and kp_start() the driver's main() holds the
 * monitor's fds at fixed numbers (ipc/child.h). They are checked when the
 * constructor runs and again, by inode, at kp_start(): a main() that
 * closed or replaced one fails the start, naming the fd, rather than
 * handing the role the driver's file. What main() opened itself is
 * closed, its signal handlers reset and its working directory left, so
 * the role starts as a forked one would.
 *
 * Runs in: an exec'd nodeserver or registrar, from the constructor
 * (role_exec_main_begin) and from kp_start() (role_exec_main).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/msg.h"
#include "base/sigfd.h"
#include "ipc/child.h"

#define MAIN_AGAIN	"the driver's main(), run again"

static enum kp_role	 pending = ROLE_COUNT;
static struct child_env	 early;		/* ctl and log, for a failure */
static char		 last_err[KP_ERROR_SIZE];
static struct {
	int	 open;
	dev_t	 dev;
	ino_t	 ino;
} fds[CHILD_FD_COUNT];

static const char *const fd_what[CHILD_FD_COUNT] = {
	[STDERR_FILENO] = "stderr, the log relay",
	[CHILD_FD_CTL] = "control channel", [CHILD_FD_LOG] = "log channel",
	[CHILD_FD_OPTS] = "options copy", [CHILD_FD_LISTEN] = "listener",
	[CHILD_FD_LOCK] = "lock file", [CHILD_FD_STATE] = "driver state",
	[CHILD_FD_EXTRA] = "nodeserver extras",
};

enum kp_role
role_exec_pending(void)
{
	return (pending);
}

/* main() returned, or ended the process, before it reached the role. */
static void
role_exec_atexit(void)
{
	char	 denied[KP_ERROR_SIZE] = "";

	if (pending == ROLE_COUNT)
		return;
	pending = ROLE_COUNT;
	policy_denied_end(MAIN_AGAIN, 1, denied, sizeof(denied));
	(void)child_start_fail(&early, KP_ECHILD, MAIN_AGAIN " in the exec'd "
	    "%s, ended before it reached kp_start()%s%s%s: main() must reach "
	    "the same kp_start() on every run (docs/driver-guide.md, "
	    "\"main() runs more than once\"; or kp_sandbox_exec(opts, 0))",
	    log_role(), last_err[0] ? "; its last kp_start() failed: " : "",
	    last_err, denied);
}

/*
 * From the constructor, before the driver's main(): the fds the monitor
 * handed over, checked and remembered; stderr and out when they are not
 * what they should be (nothing else can report yet).
 */
void
role_exec_main_begin(enum kp_role role)
{
	struct stat	 st;
	char		 name[16], err[256];
	int		 fd;

	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	snprintf(name, sizeof(name), "kp-%s", ipc_role_name(role));
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
	if (role_exec_fd_check(CHILD_FD_CTL, S_IFSOCK, fd_what[CHILD_FD_CTL],
	    err, sizeof(err)) != 0 ||
	    role_exec_fd_check(CHILD_FD_LOG, S_IFSOCK, fd_what[CHILD_FD_LOG],
	    err, sizeof(err)) != 0 ||
	    role_exec_fd_check(CHILD_FD_OPTS, S_IFIFO, fd_what[CHILD_FD_OPTS],
	    err, sizeof(err)) != 0 ||
	    role_exec_fd_check(CHILD_FD_LISTEN, S_IFSOCK,
	    fd_what[CHILD_FD_LISTEN], err, sizeof(err)) != 0 ||
	    (role == ROLE_NODESERVER && role_exec_fd_check(CHILD_FD_EXTRA,
	    S_IFIFO, fd_what[CHILD_FD_EXTRA], err, sizeof(err)) != 0))
		role_exec_die("%s", err);
	if (child_supervisor_gone(CHILD_FD_CTL))
		_exit(KP_EXIT_IPC);
	for (fd = 0; fd < CHILD_FD_COUNT; fd++) {
		if (fstat(fd, &st) == -1)
			continue;
		/* The lock file and the state are files: anything else
		 * (the broker picks the state's fd) is not main()'s to
		 * hold, nor the role's. */
		if ((fd == CHILD_FD_LOCK || fd == CHILD_FD_STATE) &&
		    !S_ISREG(st.st_mode)) {
			(void)close(fd);
			continue;
		}
		fds[fd].open = 1;
		fds[fd].dev = st.st_dev;
		fds[fd].ino = st.st_ino;
		if (fd > STDERR_FILENO)
			(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	log_procinit(ipc_role_name(role));
	log_set_sink(CHILD_FD_LOG);
	ipc_chan_init(&early.ctl, CHILD_FD_CTL, KP_IPC_CHILD_FRAME);
	early.logfd = CHILD_FD_LOG;
	/* stdout is /dev/null here: unbuffered, stdio never asks whether it
	 * is a terminal (ioctl TCGETS, outside the filter below). */
	(void)setvbuf(stdout, NULL, _IONBF, 0);
	pending = role;
	(void)atexit(role_exec_atexit);
	/* main() runs under the monitor's filter: a call outside it fails
	 * with EPERM and is named, as in the init hook. */
	policy_denied_begin(ipc_role_name(role), CHILD_FD_LOG, 1);
}

/* A kp_start() that its options failed, for the report at exit. */
void
role_exec_main_failed(int code, const char *msg)
{
	snprintf(last_err, sizeof(last_err), "%s (%s)", msg,
	    kp_strerror(code));
}

static void __attribute__((noreturn, format(printf, 2, 3)))
fail(int code, const char *fmt, ...)
{
	char	 text[KP_ERROR_SIZE];
	va_list	 ap;

	va_start(ap, fmt);
	(void)msg_vfmt(text, sizeof(text), fmt, ap);
	va_end(ap);
	pending = ROLE_COUNT;
	_exit(child_start_fail(&early, code, "%s", text));
}

/* The fds of the constructor, unchanged; everything else main() opened
 * closed. stdin and stdout are /dev/null again whatever main() made
 * them; stderr, the log relay's pipe, must be the one handed over: a
 * file main() put there would take the hooks' raw bytes past the
 * relay's sanitiser and rate limit. */
static void
fds_settle(void)
{
	struct stat	 st;
	int		 fd, null;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(null, STDIN_FILENO) == -1 || dup2(null, STDOUT_FILENO) == -1)
		fail(KP_EIO, "stdin and stdout to /dev/null: %s",
		    strerror(errno));
	if (null > STDERR_FILENO)
		(void)close(null);
	for (fd = STDERR_FILENO; fd < CHILD_FD_COUNT; fd++) {
		if (!fds[fd].open) {
			(void)close(fd);	/* main()'s, if any */
			continue;
		}
		if (fstat(fd, &st) == -1 || st.st_dev != fds[fd].dev ||
		    st.st_ino != fds[fd].ino)
			fail(KP_ECHILD, "the driver's main() closed or "
			    "replaced fd %d (%s) before kp_start(): in an "
			    "exec'd child fds 2-%d are the library's", fd,
			    fd_what[fd], CHILD_FD_COUNT - 1);
	}
	(void)close_range(CHILD_FD_COUNT, ~0U, 0);
}

/* The monitor's copy of the options against the ones main() built. */
static void
opts_match(const struct kp_options *own)
{
	uint8_t	*theirs, *ours;
	size_t	 tlen, olen;
	char	 err[KP_ERROR_SIZE];
	int	 r;

	if ((r = role_exec_opts_read(CHILD_FD_OPTS, &theirs, &tlen, err,
	    sizeof(err))) != 0)
		fail(r, "%s", err);
	if ((r = child_opts_flatten(own, &ours, &olen, err,
	    sizeof(err))) != 0) {
		free(theirs);
		fail(r, "%s", err);
	}
	r = child_opts_diff(theirs, tlen, ours, olen, err, sizeof(err));
	free(theirs);
	free(ours);
	if (r != 0)
		fail(r, MAIN_AGAIN " in the exec'd %s, reached kp_start() "
		    "with other options than the plugin's: %s (docs/"
		    "driver-guide.md, \"main() runs more than once\")",
		    log_role(), err);
}

/* The nodeserver's state generation, hidden paths and state. */
static void
ns_extra(struct child_env *env)
{
	struct child_ns_extra	 x;
	struct stat		 st;
	uint8_t			*buf, *state;
	size_t			 len, off = 0;
	ssize_t			 n;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	if ((r = role_exec_opts_read(CHILD_FD_EXTRA, &buf, &len, err,
	    sizeof(err))) != 0)
		fail(r, "%s", err);
	memcpy(&x, buf, len < sizeof(x) ? len : sizeof(x));
	if (len < sizeof(x) || x.magic != CHILD_NS_EXTRA_MAGIC ||
	    x.n_hide > KP_IPC_MAX_HIDE ||
	    len != sizeof(x) + x.n_hide * KP_IPC_PATH_MAX)
		fail(KP_EPROTO, "nodeserver extras: %zu bytes, not a header "
		    "and whole paths", len);
	env->hide = (const char (*)[KP_IPC_PATH_MAX])(void *)(buf + sizeof(x));
	env->n_hide = x.n_hide;
	for (off = 0; off < x.n_hide; off++)
		if (memchr(env->hide[off], '\0', KP_IPC_PATH_MAX) == NULL)
			fail(KP_EPROTO, "nodeserver extras: path %zu "
			    "unterminated", off);
	if (!fds[CHILD_FD_STATE].open)
		return;
	if (x.state_gen == 0) {
		close(CHILD_FD_STATE);
		return;
	}
	if (fstat(CHILD_FD_STATE, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size <= 0 || (size_t)st.st_size > KP_IPC_MAX_FRAME ||
	    (state = malloc((size_t)st.st_size)) == NULL) {
		close(CHILD_FD_STATE);
		return;
	}
	off = 0;
	while (off < (size_t)st.st_size && (n = pread(CHILD_FD_STATE,
	    state + off, (size_t)st.st_size - off, (off_t)off)) > 0)
		off += (size_t)n;
	close(CHILD_FD_STATE);	/* not kept in the hooks' process */
	env->state = state;
	env->state_len = off;
	env->state_gen = x.state_gen;
}

/*
 * From kp_start() in the exec'd child, once own passed the checks a
 * start makes (api.c start_resolve): own and hooks stay the role's for
 * its life. Never returns.
 */
void
role_exec_main(struct kp_options *own, const struct kp_hooks *hooks)
{
	static struct kp_hooks	 h;
	struct child_env	 env;
	enum kp_role		 role = pending;

	policy_denied_end(MAIN_AGAIN, 0, NULL, 0);
	fds_settle();
	opts_match(own);
	pending = ROLE_COUNT;
	log_init(own->log_verbosity, NULL, NULL);
	log_info(2, "exec'd: the driver's main() ran again up to kp_start(), "
	    "with the plugin's options");
	sig_reset_all();
	if (chdir("/") == -1)
		fail(KP_EIO, "chdir /: %s", strerror(errno));
	memset(&env, 0, sizeof(env));
	env.ctl = early.ctl;
	env.logfd = CHILD_FD_LOG;
	env.listen_fd = CHILD_FD_LISTEN;
	env.lock_fd = -1;
	if (role == ROLE_NODESERVER) {
		/* Only with kp_serialize() (monitor/lockfile.c). */
		env.lock_fd = fds[CHILD_FD_LOCK].open ? CHILD_FD_LOCK : -1;
		ns_extra(&env);
	}
	if (hooks != NULL)
		h = *hooks;
	env.hooks = &h;
	env.cfg = own;
	/* As a forked child (monitor/spawn.c child_run). */
	(void)mallopt(M_ARENA_MAX, role == ROLE_NODESERVER ? 2 : 1);
	_exit(role == ROLE_NODESERVER ? nodeserver_main(&env) :
	    registrar_main(&env));
}
