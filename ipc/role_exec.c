/*
 * role_exec.c - the child's half of a start by exec (ipc/child.h): a
 * constructor of the library that, in a process the monitor exec'd,
 * runs the role before the driver's main() gets control, then _exits.
 * Without the marker it does nothing and the driver starts as usual.
 *
 * The roles run from here run no driver code (no hook, interceptor or
 * callback), so all they need is what the monitor handed over: the fds
 * at fixed numbers and the flat copy of the options (child_opts.c). The
 * driver's heap, stack and layout stay behind. The nodeserver and a
 * registrar with interceptors need the driver's functions: for them the
 * constructor only checks the fds and lets main() run again up to
 * kp_start() (role_exec_main.c).
 *
 * Here, not in supervisor/: this is the child, and ipc/ includes nothing
 * but base/, so the constructor reaches no supervisor or api code; the
 * supervisor's half (supervisor/child_exec.c) asks role_exec_marker()
 * for the marker, which links this file, constructor included, into
 * every program that can start a plugin (the static library too).
 *
 * Runs in: every process that loads the library (a look at the
 * environment, argv kept for a later exec); an exec'd publisher,
 * observer, registrar or broker (the rest).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "ipc/child.h"

#define ROLE_EXEC_MAX_OPTS	(1024u * 1024)	/* bytes of the copy */

/* The roles run from the constructor, no driver code in them. */
static const struct {
	enum kp_role	 role;
	int		(*main)(struct child_env *);
} role_exec_roles[] = {
	{ ROLE_PUBLISHER, publisher_main },
	{ ROLE_OBSERVER, observer_main },
	{ ROLE_REGISTRAR, registrar_main },
};
#define ROLE_EXEC_N	(sizeof(role_exec_roles) / sizeof(role_exec_roles[0]))

/* The driver's argv, as the program started (glibc hands it to every
 * constructor): main() gets it again in an exec'd nodeserver. */
static char *const *role_exec_args;

char *const *
role_exec_argv(void)
{
	return (role_exec_args);
}

/*
 * The marker's value for role in buf: "publisher:1", or "nodeserver:1:main"
 * when the role needs the driver's functions (the nodeserver's hooks, a
 * registrar's interceptors) and cfg->exec_hooks says main() may run
 * again (api.c); -1 when role is forked.
 */
int
role_exec_marker(enum kp_role role, const struct kp_options *cfg, char *buf,
    size_t size)
{
	int	 driver_code;

	switch (role) {
	case ROLE_BROKER:
	case ROLE_PUBLISHER:
	case ROLE_OBSERVER:
		driver_code = 0;
		break;
	case ROLE_REGISTRAR:
		driver_code = cfg->n_unary > 0 || cfg->n_stream > 0;
		break;
	case ROLE_NODESERVER:
		driver_code = 1;
		break;
	default:
		return (-1);
	}
	if (driver_code && (!cfg->exec_hooks || role_exec_args == NULL))
		return (-1);
	snprintf(buf, size, "%s:%d%s", ipc_role_name(role), CHILD_EXEC_VERSION,
	    driver_code ? ":" CHILD_EXEC_MAIN : "");
	return (0);
}

/* Before the channels are known good: stderr (the monitor's pipe,
 * logged as "<role>] stderr: ...") and out. */
void
role_exec_die(const char *fmt, ...)
{
	char	 line[512];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
	_exit(KP_EXIT_START);
}

/* fd is open and of type fmt (S_IFSOCK, S_IFIFO, S_IFREG) and made
 * close-on-exec: 0, or -1 with the reason in err. */
int
role_exec_fd_check(int fd, mode_t fmt, const char *what, char *err,
    size_t errsize)
{
	struct stat	 st;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errsize, "exec'd child: fd %d (%s): %s", fd,
		    what, strerror(errno));
		return (-1);
	}
	if ((st.st_mode & S_IFMT) != fmt) {
		snprintf(err, errsize, "exec'd child: fd %d (%s) is of type "
		    "0%o, expected 0%o", fd, what,
		    (unsigned)(st.st_mode & S_IFMT), (unsigned)fmt);
		return (-1);
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return (0);
}

/* As role_exec_fd_check(), or out. */
static void
role_exec_fd(int fd, mode_t fmt, const char *what)
{
	char	 err[256];

	if (role_exec_fd_check(fd, fmt, what, err, sizeof(err)) != 0)
		role_exec_die("%s", err);
}

/* All of pipe fd (read to EOF, at most 1 MiB) in a new buffer; the fd
 * closed. KP_EPROTO or KP_ENOMEM with the reason in err. */
int
role_exec_opts_read(int fd, uint8_t **out, size_t *len, char *err,
    size_t errsize)
{
	uint8_t		*buf;
	size_t		 got = 0;
	ssize_t		 n;

	*out = NULL;
	*len = 0;
	if ((buf = malloc(ROLE_EXEC_MAX_OPTS)) == NULL) {
		snprintf(err, errsize, "options copy: out of memory");
		return (KP_ENOMEM);
	}
	for (;;) {
		n = read(fd, buf + got, ROLE_EXEC_MAX_OPTS - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errsize, "fd %d: read after %zu bytes: "
			    "%s", fd, got, strerror(errno));
			free(buf);
			return (KP_EPROTO);
		}
		if (n == 0)
			break;
		if ((got += (size_t)n) == ROLE_EXEC_MAX_OPTS) {
			snprintf(err, errsize, "fd %d: over %u bytes", fd,
			    ROLE_EXEC_MAX_OPTS);
			free(buf);
			return (KP_EPROTO);
		}
	}
	close(fd);
	*out = buf;
	*len = got;
	return (0);
}

/* The flat options from CHILD_FD_OPTS (a pipe, read to EOF), rebuilt;
 * the fd closed. */
static int
role_exec_opts(struct kp_options **o, char *err, size_t errsize)
{
	uint8_t		*buf;
	size_t		 got;
	int		 r;

	if ((r = role_exec_opts_read(CHILD_FD_OPTS, &buf, &got, err,
	    errsize)) != 0)
		return (r);
	r = child_opts_load(buf, got, o, err, errsize);
	free(buf);
	return (r);
}

/* The role, as child_run() (supervisor/children.c) would run it after a
 * fork; never returns. */
static void __attribute__((noreturn))
role_exec_run(enum kp_role role, int (*role_main)(struct child_env *))
{
	struct child_env	 env;
	struct kp_options	*cfg;
	char			 name[16], err[KP_ERROR_SIZE];
	int			 r;

	/* The supervisor's death (SIGKILL) ends the children too; exec
	 * keeps the signal only when the credentials did not change. */
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	snprintf(name, sizeof(name), "kp-%s", ipc_role_name(role));
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
	role_exec_fd(CHILD_FD_CTL, S_IFSOCK, "control channel");
	role_exec_fd(CHILD_FD_LOG, S_IFSOCK, "log channel");
	role_exec_fd(CHILD_FD_OPTS, S_IFIFO, "options copy");
	if (role != ROLE_PUBLISHER)
		role_exec_fd(CHILD_FD_LISTEN, S_IFSOCK, "listener");
	/* Died before the signal was armed? */
	if (child_supervisor_gone(CHILD_FD_CTL))
		_exit(KP_EXIT_IPC);
	log_procinit(ipc_role_name(role));
	log_set_sink(CHILD_FD_LOG);
	memset(&env, 0, sizeof(env));
	/* The publisher reads the driver's Publish frames (monitor/spawn.c). */
	ipc_chan_init(&env.ctl, CHILD_FD_CTL, role == ROLE_PUBLISHER ?
	    KP_IPC_MAX_FRAME : KP_IPC_CHILD_FRAME);
	env.logfd = CHILD_FD_LOG;
	env.listen_fd = role != ROLE_PUBLISHER ? CHILD_FD_LISTEN : -1;
	env.lock_fd = -1;
	if ((r = role_exec_opts(&cfg, err, sizeof(err))) != 0)
		_exit(child_start_fail(&env, r, "%s", err));
	env.cfg = cfg;
	log_init(cfg->log_verbosity, NULL, NULL);
	/* One glibc arena (children.c child_run: the nodeserver's two). */
	(void)mallopt(M_ARENA_MAX, 1);
	/* Signals: blocked since the fork (children.c), kept by exec. */
	_exit(role_main(&env));
}

/*
 * The broker (monitor/child_exec.c child_exec_broker): its fds checked,
 * the options read, then its loop; never returns. Its lines go to the
 * driver's stderr, or to the driver process for its log function
 * (broker_main).
 */
static void __attribute__((noreturn))
role_exec_broker(void)
{
	struct kp_options	*cfg;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)prctl(PR_SET_NAME, "kp-broker", 0, 0, 0);
	role_exec_fd(BROKER_FD_CTL, S_IFSOCK, "monitor channel");
	role_exec_fd(BROKER_FD_FILES, S_IFSOCK, "monitor files channel");
	role_exec_fd(BROKER_FD_OPTS, S_IFIFO, "options copy");
	role_exec_fd(BROKER_FD_DRIVER, S_IFSOCK, "driver channel");
	role_exec_fd(BROKER_FD_EVENTS, S_IFSOCK, "events channel");
	if (child_supervisor_gone(BROKER_FD_CTL))
		_exit(KP_EXIT_IPC);
	log_procinit("broker");
	if ((r = role_exec_opts(&cfg, err, sizeof(err))) != 0)
		role_exec_die("broker: %s (%s)", err, kp_strerror(r));
	log_init(cfg->log_verbosity, NULL, NULL);
	_exit(broker_main(cfg, BROKER_FD_DRIVER, BROKER_FD_EVENTS,
	    BROKER_FD_CTL, BROKER_FD_FILES));
}

/*
 * Before the driver's main() and the driver's own constructors (priority
 * 101, the first a program may use; those of the shared libraries the
 * driver links ran before): a process the supervisor exec'd becomes its
 * role here and never returns.
 */
static void __attribute__((constructor(101)))
role_exec_ctor(int argc, char **argv, char **envp)
{
	const char	*v;
	char		 marker[32], *colon, *main_run;
	size_t		 i;

	(void)envp;
	if (argc > 0 && argv != NULL && argv[0] != NULL)
		role_exec_args = argv;
	if ((v = getenv(CHILD_EXEC_ENV)) == NULL)
		return;
	/* exec made us dumpable again: nothing reads our memory while we
	 * set up (policy_apply() sets it again after the uid change). */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	snprintf(marker, sizeof(marker), "%s", v);
	/* Not for the role's environment, nor for anything it runs. */
	(void)unsetenv(CHILD_EXEC_ENV);
	if ((colon = strchr(marker, ':')) == NULL)
		role_exec_die("%s=%s: expected <role>:<version>",
		    CHILD_EXEC_ENV, marker);
	*colon++ = '\0';
	if ((main_run = strchr(colon, ':')) != NULL)
		*main_run++ = '\0';
	if (strtol(colon, NULL, 10) != CHILD_EXEC_VERSION)
		role_exec_die("%s: version %s, this library speaks %d (the "
		    "driver's library replaced while it ran?)",
		    CHILD_EXEC_ENV, colon, CHILD_EXEC_VERSION);
	if (main_run != NULL) {
		if (strcmp(main_run, CHILD_EXEC_MAIN) != 0)
			role_exec_die("%s: \"%s\" after the version, expected "
			    "\"%s\"", CHILD_EXEC_ENV, main_run,
			    CHILD_EXEC_MAIN);
		if (strcmp(marker, ipc_role_name(ROLE_NODESERVER)) == 0)
			role_exec_main_begin(ROLE_NODESERVER);
		else if (strcmp(marker, ipc_role_name(ROLE_REGISTRAR)) == 0)
			role_exec_main_begin(ROLE_REGISTRAR);
		else
			role_exec_die("%s: \"%s\" is not a role whose main() runs "
		    "again", CHILD_EXEC_ENV, marker);
		return;	/* to the driver's main() */
	}
	if (strcmp(marker, ipc_role_name(ROLE_BROKER)) == 0)
		role_exec_broker();
	for (i = 0; i < ROLE_EXEC_N; i++)
		if (strcmp(marker, ipc_role_name(role_exec_roles[i].role)) ==
		    0)
			role_exec_run(role_exec_roles[i].role,
			    role_exec_roles[i].main);
	role_exec_die("%s: \"%s\" is not a role started by exec",
	    CHILD_EXEC_ENV, marker);
}
