/*
 * api.c - the driver-side entry points: kp_start, kp_stop,
 * kp_registration_status, kp_publish_resources. Each is a synchronous
 * request to the supervisor over the driver's socketpair.
 *
 * Runs in: the driver's process, with the driver's privileges and no
 * sandbox (api/ is everything that runs there: setters, kp_start,
 * validation and packing of the driver's resources).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "api/api.h"
#include "policy/policy.h"
#include "monitor/monitor.h"
#include "supervisor/supervisor.h"

/*
 * A stale socket at path may be replaced; any other file type is an error
 * naming the path, and the file is left alone. opt names the option.
 * Here, in the driver process before the fork: not monitor code.
 */
static int
sock_check_path(const char *opt, const char *path, char *err, size_t errsize)
{
	struct stat	 st;

	if (strlen(path) > KP_SUN_PATH_MAX) {
		snprintf(err, errsize, "%s: \"%s\" is longer than %d bytes "
		    "(sun_path)", opt, path, KP_SUN_PATH_MAX);
		return (KP_ENAMETOOLONG);
	}
	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, errsize, "%s: %s: %s", opt, path,
		    strerror(errno));
		return (errno == EACCES ? KP_EACCES : KP_EIO);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errsize, "%s: %s exists and is not a socket "
		    "(%s); refusing to replace it", opt, path,
		    S_ISDIR(st.st_mode) ? "a directory" :
		    S_ISLNK(st.st_mode) ? "a symbolic link" :
		    S_ISREG(st.st_mode) ? "a regular file" : "another type");
		return (KP_EEXIST);
	}
	return (0);
}

/* Plugins this process started (forked a monitor for). */
static int	started;

static int	plugin_fail(struct kp_plugin *, int, const char *, ...)
		    KP_PRINTF(3, 4);

static int
plugin_fail(struct kp_plugin *p, int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)msg_vfmt(p->errbuf, sizeof(p->errbuf), fmt, ap);
	va_end(ap);
	return (code);
}

static int
plugin_valid(const struct kp_plugin *p)
{
	return (p != NULL && p->magic == KP_PLUGIN_MAGIC);
}

/* Threads of this process, from /proc/self/task; -1 if unknown. */
int
sup_threads(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir("/proc/self/task")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/* What kp_start() derives from the options and checks of them alone:
 * the same in the driver and in an exec'd nodeserver (role_exec_main.c)
 * whose main() runs again. */
static int
start_resolve(struct kp_options *opts, const struct kp_hooks *hooks)
{
	int	 r;

	if ((r = opt_dirs_resolve(opts)) != 0 || (r = opt_check(opts)) != 0 ||
	    (r = opt_metadata_resolve(opts)) != 0)
		return (r);
	opt_advertise(opts);
	/* The supervisor hands the state directories to this uid (1: the
	 * caller's own ids are kept, not root). */
	if ((r = pol_role_ids(ROLE_NODESERVER, &opts->policy,
	    &opts->policy.ns_uid, &opts->policy.ns_gid)) < 0)
		return (opt_fail(opts, r, "kp_start: the nodeserver's uid: %s",
		    kp_strerror(r)));
	if (hooks == NULL || hooks->prepare == NULL ||
	    hooks->unprepare == NULL)
		return (opt_fail(opts, KP_EINVAL, "kp_start: hooks: prepare "
		    "and unprepare are required"));
	return (0);
}

/* The options as the monitor holds them (start_supervisor), and as an
 * exec'd child compares its own with them. */
static void
start_view(struct kp_options *cfg)
{
	cfg->plugin_listener = cfg->registrar_listener = -1;
	/* The broker is exec'd: it learns only that there are functions,
	 * and sends their calls here (api/events.c). */
	cfg->log_forward = cfg->log_fn != NULL;
	cfg->error_forward = cfg->error_fn != NULL;
}

/* Everything kp_start() can check before it forks. */
static int
start_checks(struct kp_options *opts, const struct kp_hooks *hooks)
{
	char	 err[KP_ERROR_SIZE];
	int	 r, n;

	if ((r = start_resolve(opts, hooks)) != 0)
		return (r);
	/* The event threads of plugins started before are the library's
	 * own: they hold no lock across the fork (events.c). */
	if ((n = sup_threads()) >= 0 && (n -= events_threads()) > 1)
		return (opt_fail(opts, KP_EBUSY, "kp_start: the process has "
		    "%d threads; fork is only safe from a single-threaded "
		    "process: call kp_start before starting threads", n));
	if (opts->plugin_listener == -1 && !opts->dra_off &&
	    (r = sock_check_path(
	    "kp_plugin_socket_path", opts->plugin_socket_path, err,
	    sizeof(err))) != 0)
		return (opt_fail(opts, r, "%s", err));
	if (opts->registrar_listener == -1 && !opts->registration_off &&
	    (r = sock_check_path(
	    "kp_registrar_socket_path", opts->registrar_socket_path, err,
	    sizeof(err))) != 0)
		return (opt_fail(opts, r, "%s", err));
	return (0);
}

/* The DRA socket exists before the supervisor forks; the registration
 * socket is bound by the supervisor once the nodeserver serves. */
static int
start_sockets(struct kp_options *o, struct sup_socket *ps,
    struct sup_socket *rs)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	memset(rs, 0, sizeof(*rs));
	rs->fd = -1;
	memset(ps, 0, sizeof(*ps));
	ps->fd = -1;
	if (o->dra_off)
		r = 0;	/* kp_dra_service(0): no DRA socket at all */
	else if (o->plugin_listener != -1)
		r = sock_from_listener(ps, o->plugin_listener,
		    o->plugin_socket_path);
	else
		r = sock_listen(ps, o->plugin_socket_path, o->socket_mode,
		    err, sizeof(err));
	if (r != 0)
		return (opt_fail(o, r, "kp_plugin_socket_path: %s", err));
	if (o->registrar_listener != -1 && !o->registration_off &&
	    sock_from_listener(rs,
	    o->registrar_listener, o->registrar_socket_path) != 0) {
		sock_remove(ps);
		return (opt_fail(o, KP_EIO, "kp_registrar_listener: dup "
		    "failed"));
	}
	return (0);
}

/*
 * The sockets a plugin of this process still serves are refused: binding
 * them again would take them over from it (supervisor/sockets.c replaces
 * a live socket, as it must for another process's instance).
 */
static int
start_live(struct kp_options *o, const struct kp_plugin *p)
{
	static const char *const what[LIVE_MAX] = {
		"kp_plugin_socket_path", "kp_registrar_socket_path"
	};
	const char	*paths[LIVE_MAX];
	char		 err[KP_ERROR_SIZE];
	int		 r;

	paths[0] = o->dra_off ? NULL : o->plugin_socket_path;
	paths[1] = o->registration_off ? NULL : o->registrar_socket_path;
	if ((r = live_claim(p, what, paths, LIVE_MAX, err, sizeof(err))) != 0)
		return (opt_fail(o, r, "%s", err));
	return (0);
}

/* In the new supervisor process; never returns. */
static void
start_supervisor(struct kp_options *cfg, const struct kp_hooks *hooks,
    int fd, int evfd, struct sup_socket *ps, struct sup_socket *rs,
    char *fatal, int hfd)
{
	int	 keep[10] = { 0, 1, 2, fd, evfd, ps->fd, rs->fd, hfd,
		    ps->dir_open ? ps->dirfd : -1,
		    rs->dir_open ? rs->dirfd : -1 };

	/* Only the sockets (and their directories) and the driver's
	 * channels survive. */
	if (fd_close_except(keep, 10) == -1)
		_exit(1);
	start_view(cfg);
	fatal_page_set(fatal);
	_exit(monitor_main(cfg, hooks, fd, evfd, ps, rs, hfd));
}

/*
 * The observer's TCP listener (kp_http_endpoint), bound here so that an
 * address in use fails kp_start(). *fd -1 when the observer is off.
 */
static int
start_http(struct kp_options *o, int *fd)
{
	int	 one = 1, s;

	*fd = -1;
	if (o->http_len == 0)
		return (0);
	if ((s = socket(o->http_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return (opt_fail(o, KP_EIO, "%s: socket: %s", OPT_HTTP,
		    strerror(errno)));
	(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&o->http_addr, o->http_len) == -1 ||
	    listen(s, 64) == -1) {
		int e = errno;

		close(s);
		return (opt_fail(o, KP_EIO, "%s: %s: %s", OPT_HTTP,
		    o->http_endpoint, strerror(e)));
	}
	*fd = s;
	return (0);
}

static int
start_wait(struct kp_plugin *p, struct kp_options *opts)
{
	Kpipc__Msg	*m = NULL;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	r = ipc_recv(&p->chan, &m, KP_START_TIMEOUT_MS + 5000, err,
	    sizeof(err));
	if (r != 0)
		return (opt_fail(opts, r == KP_ETIMEDOUT ? r : KP_ECHILD,
		    "kp_start: no answer from the supervisor: %s",
		    kp_strerror(r)));
	if (m->m_case != KPIPC__MSG__M_RESULT) {
		ipc_free(m);
		return (opt_fail(opts, KP_EPROTO, "kp_start: unexpected "
		    "frame from the supervisor"));
	}
	r = m->result->code;
	if (r != 0)
		opt_fail(opts, r, "%s", m->result->message);
	ipc_free(m);
	return (r);
}

static int	request(struct kp_plugin *, const Kpipc__Msg *, Kpipc__Msg **,
		    int);

/*
 * kp_state_initial(): the first state, sent while the supervisor starts
 * its children; it holds the nodeserver back until it has it, so the
 * first nodeserver (its init hook, the journal's repair) starts with
 * the state. A failed start answers in its place: that is the error.
 */
static int
start_state(struct kp_plugin *p, struct kp_options *opts)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT, *reply = NULL;
	Kpipc__StateSet	 st = KPIPC__STATE_SET__INIT;
	int		 r;

	if (opts->initial_state == NULL)
		return (0);
	st.generation = 1;
	st.data.data = opts->initial_state->data;
	st.data.len = opts->initial_state->len;
	m.m_case = KPIPC__MSG__M_STATE_SET;
	m.state_set = &st;
	p->state_gen = 1;
	if ((r = request(p, &m, &reply, KP_START_TIMEOUT_MS + 5000)) != 0)
		return (opt_fail(opts, r == KP_ETIMEDOUT ? r : KP_ECHILD,
		    "kp_start: no answer from the supervisor: %s",
		    kp_strerror(r)));
	if (reply->m_case != KPIPC__MSG__M_RESULT) {
		ipc_free(reply);
		return (opt_fail(opts, KP_EPROTO, "kp_start: unexpected "
		    "frame from the supervisor"));
	}
	if ((r = reply->result->code) != 0)
		opt_fail(opts, r, "%s", reply->result->message);
	ipc_free(reply);
	return (r);
}

static void
reap_supervisor(struct kp_plugin *p, int timeout_ms)
{
	int	 i, status;

	for (i = 0; i < timeout_ms / 10; i++) {
		if (waitpid(p->sup_pid, &status, WNOHANG) != 0)
			return;
		usleep(10000);
	}
	(void)kill(p->sup_pid, SIGKILL);
	(void)waitpid(p->sup_pid, &status, 0);
}

/*
 * kp_policy_main_confine: the driver process loads the pod's profile on
 * itself, now that the plugin runs (its threads and fds are made). A
 * failure stops the plugin first, so that nothing runs unconfined that
 * the driver asked to confine, and the caller has no handle to leak.
 */
static int
start_confine(struct kp_plugin *p, struct kp_options *opts)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	if ((r = policy_main(opts, err, sizeof(err))) == 0)
		return (0);
	(void)kp_stop(p);
	return (opt_fail(opts, r, "kp_start: kp_policy_main_confine: the "
	    "driver process's filter: %s (the plugin was stopped)", err));
}

int
kp_start(struct kp_options *opts, const struct kp_hooks *hooks,
    struct kp_plugin **out)
{
	struct kp_plugin	*p;
	struct sup_socket	 ps, rs;
	struct kp_hooks		 h;
	int			 sv[2], ev[2] = { -1, -1 }, r, n, hfd;
	pid_t			 pid = -1;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (out == NULL)
		return (opt_fail(opts, KP_EINVAL, "kp_start: out is NULL"));
	*out = NULL;
	/* An exec'd nodeserver or registrar: this main() ran again to
	 * name the driver's functions; the first start its options pass
	 * becomes the role and never returns. */
	if (role_exec_pending() != ROLE_COUNT) {
		if ((r = start_resolve(opts, hooks)) != 0) {
			role_exec_main_failed(r, opts->errbuf);
			return (r);
		}
		start_view(opts);
		opts->exec_hooks = 1;
		role_exec_main(opts, hooks);
	}
	if ((r = start_checks(opts, hooks)) != 0)
		return (r);
	/* Only a process's first plugin can be found again by running
	 * main() (kp_sandbox_exec); later ones fork those two roles. */
	opts->exec_hooks = !opts->fork_hooks && started == 0 &&
	    role_exec_argv() != NULL;
	if (!opts->fork_hooks && !opts->exec_hooks)
		log_info(1, "kp_start: %s: the nodeserver and the registrar "
		    "are forked, not exec'd (%s)", opts->driver_name,
		    started > 0 ? "not the process's first plugin" :
		    "the driver's argv is unknown");
	log_init(opts->log_verbosity, opts->log_fn, opts->log_user);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (opt_fail(opts, KP_ENOMEM, "kp_start: out of memory"));
	h = *hooks;
	/* One page the supervisor leaves its fatal reason in; it is not
	 * inherited by the children (MADV_DONTFORK there). */
	p->fatal = mmap(NULL, KP_ERROR_SIZE, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->fatal == MAP_FAILED) {
		free(p);
		return (opt_fail(opts, KP_ENOMEM, "kp_start: mmap: %s",
		    strerror(errno)));
	}
	/* Before anything is bound: a refused start touches nothing. */
	if ((r = start_live(opts, p)) != 0 ||
	    (r = start_http(opts, &hfd)) != 0) {
		live_release(p);
		munmap(p->fatal, KP_ERROR_SIZE);
		free(p);
		return (r);
	}
	if ((r = start_sockets(opts, &ps, &rs)) != 0) {
		live_release(p);
		munmap(p->fatal, KP_ERROR_SIZE);
		if (hfd != -1)
			close(hfd);
		free(p);
		return (r);
	}
	sv[0] = sv[1] = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0 &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ev) == 0) {
		events_fork_lock(1);
		pid = fork();
		if (pid != 0)
			events_fork_lock(0);
	}
	if (pid == -1) {
		r = opt_fail(opts, KP_EIO, "kp_start: %s", strerror(errno));
		for (n = 0; n < 2; n++) {
			if (sv[n] != -1)
				close(sv[n]);
			if (ev[n] != -1)
				close(ev[n]);
		}
		sock_remove(&ps);
		sock_remove(&rs);
		live_release(p);
		munmap(p->fatal, KP_ERROR_SIZE);
		if (hfd != -1)
			close(hfd);
		free(p);
		return (r);
	}
	if (pid > 0)
		started++;
	if (pid == 0) {
		close(sv[0]);
		close(ev[0]);
		start_supervisor(opts, &h, sv[1], ev[1], &ps, &rs, p->fatal, hfd);
	}
	close(sv[1]);
	close(ev[1]);
	/*
	 * The fatal page is this plugin's supervisor's alone: a later fork
	 * in this process (another kp_start()'s supervisor and its children,
	 * a driver's own child) must not inherit it and forge a reason.
	 */
	(void)madvise(p->fatal, KP_ERROR_SIZE, MADV_DONTFORK);
	/* The supervisor owns the sockets now; keep the files. */
	sock_close(&ps);
	sock_close(&rs);
	if (hfd != -1)
		close(hfd);
	p->magic = KP_PLUGIN_MAGIC;
	p->sup_pid = pid;
	p->has_kube = opts->kube_mode != KP_KUBE_NONE;
	p->has_node = opts->node_name != NULL;
	memcpy(p->reconcile_pool, opts->reconcile_pool,
	    sizeof(p->reconcile_pool));
	snprintf(p->driver, sizeof(p->driver), "%s", opts->driver_name);
	p->qnames = !opts->qnames_off;
	p->grace_ms = opts->shutdown_grace_ms;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->pub_lock, NULL);
	pthread_mutex_init(&p->health_lock, NULL);
	pthread_mutex_init(&p->state_lock, NULL);
	p->ev_fd = p->status_fd = p->note_fd = -1;
	ipc_chan_init(&p->chan, sv[0], KP_IPC_CHILD_FRAME);
	if ((r = start_state(p, opts)) == 0 &&
	    (r = start_wait(p, opts)) == 0 && (r = events_start(p, ev[0],
	    opts)) != 0) {
		ev[0] = -1;	/* closed by events_start() */
		r = opt_fail(opts, r, "kp_start: cannot start the event "
		    "thread: %s", kp_strerror(r));
	}
	if (r != 0) {
		if (ev[0] != -1 && p->ev_fd == -1)
			close(ev[0]);
		ipc_chan_close(&p->chan);
		reap_supervisor(p, 15000);
		live_release(p);
		pthread_mutex_destroy(&p->pub_lock);
		pthread_mutex_destroy(&p->state_lock);
		pthread_mutex_destroy(&p->health_lock);
		pthread_mutex_destroy(&p->lock);
		munmap(p->fatal, KP_ERROR_SIZE);
		p->magic = 0;
		free(p);
		return (r);
	}
	if (opts->policy.main_confine && (r = start_confine(p, opts)) != 0)
		return (r);
	opts->errbuf[0] = '\0';
	*out = p;
	return (0);
}

/*
 * One request, one reply; serialized among the driver's threads. The
 * supervisor answers every request once and in order, so the answers to
 * requests that timed out are still owed: they are read and dropped
 * first, and a late answer never passes for the next request's.
 */
static int
request(struct kp_plugin *p, const Kpipc__Msg *req, Kpipc__Msg **reply,
    int timeout_ms)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	*reply = NULL;
	/* Once kp_stop() began, only its own request goes out; the others
	 * (an error function's kp_publish_resources()) fail at once. */
	if (atomic_load(&p->stopping) && req->m_case != KPIPC__MSG__M_STOP)
		return (KP_EPIPE);
	pthread_mutex_lock(&p->lock);
	if (p->chan.fd == -1) {
		pthread_mutex_unlock(&p->lock);
		return (KP_EPIPE);
	}
	r = ipc_send(&p->chan, req);
	while (r == 0) {
		r = ipc_recv(&p->chan, reply, timeout_ms, err, sizeof(err));
		if (r != 0 || p->owed == 0)
			break;
		p->owed--;
		ipc_free(*reply);
		*reply = NULL;
	}
	if (r == KP_ETIMEDOUT)
		p->owed++;
	pthread_mutex_unlock(&p->lock);
	if (r == KP_EIO || r == KP_EPROTO)
		r = KP_EPIPE;
	return (r);
}

/* A Result reply to a request: its code, with its message kept. */
static int
result_of(struct kp_plugin *p, const char *fn, int r, Kpipc__Msg *reply)
{
	if (r != 0)
		return (plugin_fail(p, r, "%s: supervisor: %s", fn,
		    kp_strerror(r)));
	if (reply->m_case != KPIPC__MSG__M_RESULT) {
		ipc_free(reply);
		return (plugin_fail(p, KP_EPIPE, "%s: unexpected reply", fn));
	}
	r = reply->result->code;
	if (r != 0)
		plugin_fail(p, r, "%s: %s", fn, reply->result->message);
	ipc_free(reply);
	return (r);
}

int
kp_stop(struct kp_plugin *p)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Stop	 stop = KPIPC__STOP__INIT;
	Kpipc__Msg	*reply = NULL;
	int		 r;

	if (p == NULL)
		return (0);
	if (!plugin_valid(p))
		return (KP_EINVAL);
	if (events_on_thread(p))
		return (plugin_fail(p, KP_EBUSY, "kp_stop: called from the "
		    "error callback, which kp_stop waits for"));
	atomic_store(&p->stopping, 1);
	m.m_case = KPIPC__MSG__M_STOP;
	m.stop = &stop;
	/* The drain, then SIGTERM to each child in turn (supervisor/
	 * drain.c), each with its own grace. */
	r = request(p, &m, &reply, p->grace_ms + 3 * KP_STOP_GRACE_MS + 5000);
	if (r == 0 && (reply->m_case != KPIPC__MSG__M_RESULT ||
	    reply->result->code != 0))
		r = KP_EIO;
	ipc_free(reply);
	/* Under the lock: the error function may be in request(). */
	pthread_mutex_lock(&p->lock);
	ipc_chan_close(&p->chan);
	pthread_mutex_unlock(&p->lock);
	reap_supervisor(p, 5000);
	live_release(p);
	events_stop(p);
	free(p->last_pub);
	pthread_mutex_destroy(&p->pub_lock);
	pthread_mutex_destroy(&p->state_lock);
	pthread_mutex_destroy(&p->health_lock);
	health_table_free(&p->health);
	pthread_mutex_destroy(&p->lock);
	munmap(p->fatal, KP_ERROR_SIZE);
	p->magic = 0;
	free(p);
	return (r == 0 ? 0 : KP_EIO);
}

/* The supervisor ended: why, from its page or from its status. */
static int
wait_reason(struct kp_plugin *p, const siginfo_t *si, char *reason,
    size_t size)
{
	char	 text[KP_ERROR_SIZE];
	int	 r;

	memcpy(text, p->fatal, sizeof(text));
	text[sizeof(text) - 1] = '\0';
	r = si->si_code == CLD_EXITED && si->si_status == 0 ? 0 : KP_ECHILD;
	if (text[0] == '\0' && si->si_code == CLD_EXITED)
		snprintf(text, sizeof(text), "supervisor exited with status "
		    "%d", si->si_status);
	else if (text[0] == '\0')
		snprintf(text, sizeof(text), "supervisor killed by signal %d "
		    "(%s)", si->si_status, strsignal(si->si_status));
	if (reason != NULL && size > 0)
		snprintf(reason, size, "%s", text);
	plugin_fail(p, r, "%s", text);
	return (r);
}

int
kp_plugin_wait(struct kp_plugin *p, int timeout_ms, char *reason,
    size_t size)
{
	siginfo_t	 si;
	int		 waited = 0, wr;

	if (!plugin_valid(p))
		return (KP_EINVAL);
	if (reason != NULL && size > 0)
		reason[0] = '\0';
	/* WNOWAIT: kp_stop() still reaps it. Polled: a pidfd would be one
	 * more fd in the driver's process, for a wait this rare. */
	for (;;) {
		memset(&si, 0, sizeof(si));
		wr = waitid(P_PID, p->sup_pid, &si, WEXITED | WNOHANG |
		    WNOWAIT);
		if (wr == 0 && si.si_pid == p->sup_pid)
			return (wait_reason(p, &si, reason, size));
		if (wr == -1 && errno == ECHILD) {
			/* Reaped by the driver's own SIGCHLD handling. */
			si.si_code = CLD_KILLED;
			si.si_status = SIGKILL;
			return (wait_reason(p, &si, reason, size));
		}
		if (timeout_ms >= 0 && waited >= timeout_ms)
			return (plugin_fail(p, KP_ETIMEDOUT, "kp_plugin_wait: "
			    "the plugin is running"));
		usleep(20000);
		waited += 20;
	}
}

/* A request answered by a Result, for the driver API in other files. */
int
api_request(struct kp_plugin *p, const Kpipc__Msg *m, const char *fn)
{
	Kpipc__Msg	*reply = NULL;
	int		 r;

	r = request(p, m, &reply, KP_REQUEST_TIMEOUT_MS);
	return (result_of(p, fn, r, reply));
}

int
api_fail(struct kp_plugin *p, int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)msg_vfmt(p->errbuf, sizeof(p->errbuf), fmt, ap);
	va_end(ap);
	return (code);
}

const char *
kp_plugin_last_error(const struct kp_plugin *p)
{
	return (plugin_valid(p) ? p->errbuf : "");
}

int
kp_registration_status(struct kp_plugin *p, enum kp_registration_state *st,
    char *err, size_t errsize)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__RegStatusQuery	 q = KPIPC__REG_STATUS_QUERY__INIT;
	Kpipc__Msg		*reply = NULL;
	int			 r;

	if (!plugin_valid(p) || st == NULL)
		return (KP_EINVAL);
	m.m_case = KPIPC__MSG__M_REG_STATUS_QUERY;
	m.reg_status_query = &q;
	if ((r = request(p, &m, &reply, KP_REQUEST_TIMEOUT_MS)) != 0)
		return (plugin_fail(p, r, "kp_registration_status: "
		    "supervisor: %s", kp_strerror(r)));
	if (reply->m_case != KPIPC__MSG__M_REG_STATUS_REPLY) {
		ipc_free(reply);
		return (plugin_fail(p, KP_EPIPE, "kp_registration_status: "
		    "unexpected reply"));
	}
	*st = reply->reg_status_reply->state;
	if (err != NULL && errsize > 0)
		snprintf(err, errsize, "%s", reply->reg_status_reply->error);
	ipc_free(reply);
	return (0);
}

int
kp_publish_resources(struct kp_plugin *p, const struct kp_resources *res)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Publish	*pub = NULL, *prev = NULL;
	Kpipc__Publish	 shell = KPIPC__PUBLISH__INIT;
	Kpipc__Msg	*reply = NULL;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	if (!plugin_valid(p))
		return (KP_EINVAL);
	/* Before the rules: a call from the error function while kp_stop()
	 * runs must not queue another report for it. */
	if (atomic_load(&p->stopping))
		return (plugin_fail(p, KP_EPIPE, "kp_publish_resources: the "
		    "plugin is stopping"));
	if (!p->has_kube)
		return (plugin_fail(p, KP_ENOCLIENT, "kp_publish_resources: "
		    "no KubeClient found to publish resources (set "
		    "kp_kube_client_in_cluster or kp_kube_client_kubeconfig)"));
	if (!p->has_node)
		return (plugin_fail(p, KP_ENONODE, "kp_publish_resources: "
		    "no NodeName was set to publish resources (kp_node_name)"));
	if (res == NULL)
		return (plugin_fail(p, KP_EINVAL, "kp_publish_resources: "
		    "resources: NULL"));
	if ((r = pack_resources(res, &pub, err, sizeof(err))) != 0)
		return (plugin_fail(p, r, "kp_publish_resources: %s", err));
	if ((r = validate_publish(pub, err, sizeof(err))) != 0 ||
	    (r = validate_reconcile(pub, p->reconcile_pool, err,
	    sizeof(err))) != 0) {
		pack_free(pub);
		return (plugin_fail(p, r, "kp_publish_resources: %s", err));
	}
	/* The rules that leave pools out, and the send, in one piece:
	 * the state a pool left out keeps is the one sent last. */
	pthread_mutex_lock(&p->pub_lock);
	if ((r = publish_rules(p, pub, &shell, &prev, err,
	    sizeof(err))) < 0) {
		pthread_mutex_unlock(&p->pub_lock);
		pack_free(pub);
		return (plugin_fail(p, r, "kp_publish_resources: %s", err));
	}
	m.m_case = KPIPC__MSG__M_PUBLISH;
	m.publish = r == 1 ? &shell : pub;
	r = request(p, &m, &reply, KP_REQUEST_TIMEOUT_MS);
	if (r == 0 && reply->m_case == KPIPC__MSG__M_RESULT &&
	    reply->result->code == 0)
		publish_rules_sent(p, m.publish);
	pthread_mutex_unlock(&p->pub_lock);
	free(shell.pools);
	free(shell.keep_pools);
	if (prev != NULL)
		kpipc__publish__free_unpacked(prev, NULL);
	pack_free(pub);
	return (result_of(p, "kp_publish_resources", r, reply));
}

int
kp_publish_status(struct kp_plugin *p, struct kp_publish_status *out)
{
	Kpipc__Msg			 m = KPIPC__MSG__INIT;
	Kpipc__PublishStatusQuery	 q = KPIPC__PUBLISH_STATUS_QUERY__INIT;
	Kpipc__Msg			*reply = NULL;
	const Kpipc__PublishStatus	*ps;
	int				 r;

	if (!plugin_valid(p) || out == NULL)
		return (KP_EINVAL);
	memset(out, 0, sizeof(*out));
	if (!p->has_kube)
		return (plugin_fail(p, KP_ENOCLIENT, "kp_publish_status: no "
		    "Kubernetes access configured"));
	m.m_case = KPIPC__MSG__M_PUBLISH_STATUS_QUERY;
	m.publish_status_query = &q;
	if ((r = request(p, &m, &reply, KP_REQUEST_TIMEOUT_MS)) != 0)
		return (plugin_fail(p, r, "kp_publish_status: supervisor: %s",
		    kp_strerror(r)));
	if (reply->m_case != KPIPC__MSG__M_PUBLISH_STATUS) {
		ipc_free(reply);
		return (plugin_fail(p, KP_EPIPE, "kp_publish_status: "
		    "unexpected reply"));
	}
	ps = reply->publish_status;
	memset(out, 0, sizeof(*out));
	out->last_sync = ps->last_sync;
	out->pending_pools = ps->pending_pools;
	out->creates = ps->creates;
	out->updates = ps->updates;
	out->deletes = ps->deletes;
	out->publisher_running = ps->publisher_running;
	snprintf(out->last_error, sizeof(out->last_error), "%s",
	    ps->last_error);
	ipc_free(reply);
	return (0);
}
