/*
 * observer.c - observer_main(): the child that serves /healthz, /readyz and
 * /metrics on the TCP listener the supervisor bound (kp_http_endpoint).
 * It knows only what the supervisor's Status snapshots say; it never
 * talks to kubelet, the API server or the hooks, and it sends the
 * supervisor nothing but READY, the heartbeat's answer without counters
 * (a stopped observer is replaced: supervisor/heal.c) and log lines: any
 * other frame from it is a violation (ipc/rules.c). A compromised
 * observer can lie on its HTTP port and nothing more.
 *
 * Runs in: the observer child, sandboxed like the registrar: its own
 * non-root uid, no capabilities, an empty root, Landlock without any file
 * or TCP bind/connect right, seccomp (policy/syscalls.c observer[]).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "ipc/child.h"
#include "observer/observer.h"
#include "policy/policy.h"

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* The heartbeat's answer: the Ping's number, no counters. */
static int
obs_pong(struct child_env *env, uint64_t seq)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Pong	 p = KPIPC__PONG__INIT;

	p.seq = seq;
	m.m_case = KPIPC__MSG__M_PONG;
	m.pong = &p;
	return (ipc_send(&env->ctl, &m));
}

/* Frames from the supervisor; 0, or -1 when it is gone. */
static int
obs_read_ctl(struct child_env *env, struct obs_state *st)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	int		 r, gone = 0;

	if (ipc_read(&env->ctl) < 0)
		return (-1);
	while ((r = ipc_next(&env->ctl, &m, err, sizeof(err))) > 0) {
		if (m->m_case == KPIPC__MSG__M_STATUS &&
		    obs_state_update(st, m->status, now_ms()) != 0)
			log_warnx("status snapshot too large for /metrics: "
			    "kept the last one");
		if (m->m_case == KPIPC__MSG__M_PING &&
		    obs_pong(env, m->ping->seq) != 0)
			gone = 1;
		ipc_free(m);
	}
	return (r < 0 || gone ? -1 : 0);
}

static int
obs_loop(struct child_env *env, struct obs_http *h, int epfd, int sigfd,
    struct obs_state *st)
{
	struct pollfd	 pfd[4];
	int		 t;

	pfd[0].fd = env->ctl.fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = epfd;
	pfd[1].events = POLLIN;
	pfd[2].fd = sigfd;
	pfd[2].events = POLLIN;
	/* The listener shut down (a TCP listener then reports POLLHUP for
	 * ever, also in libmicrohttpd's epoll set): nothing can connect; exit
	 * rather than spin, the supervisor binds a new one. */
	pfd[3].fd = env->listen_fd;
	pfd[3].events = POLLRDHUP;
	for (;;) {
		t = obs_http_timeout_ms(h);
		if (poll(pfd, 4, t < 0 ? 1000 : t) == -1 && errno != EINTR)
			return (KP_EXIT_SERVE);
		if (pfd[2].revents & POLLIN)
			return (KP_EXIT_OK);
		if (pfd[3].revents & (POLLHUP | POLLRDHUP | POLLERR)) {
			log_warnx("listening socket shut down: no connection "
			    "can arrive; exiting");
			return (KP_EXIT_SERVE);
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    obs_read_ctl(env, st) != 0)
			return (KP_EXIT_IPC);
		obs_http_run(h, now_ms());
	}
}

int
observer_main(struct child_env *env)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Ready		 ready = KPIPC__READY__INIT;
	struct obs_state	 st;
	struct obs_http		*h = NULL;
	sigset_t		 set;
	char			 err[KP_ERROR_SIZE];
	int			 sigfd, epfd = -1, code;

	memset(&st, 0, sizeof(st));
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if ((sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1)
		return (child_start_fail(env, KP_EIO, "signalfd: %s",
		    strerror(errno)));
	/* libmicrohttpd is mapped here only, and before the sandbox
	 * (observer/mhd_dl.h). */
	if ((code = mhd_dl_load(err, sizeof(err))) != 0)
		return (child_start_fail(env, code, "%s", err));
	if (policy_apply(ROLE_OBSERVER, env, err, sizeof(err)) != 0)
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	if ((code = obs_http_start(env->listen_fd, &st, &h, &epfd, err,
	    sizeof(err))) != 0)
		return (child_start_fail(env, code, "%s", err));
	ready.pid = getpid();
	m.m_case = KPIPC__MSG__M_READY;
	m.ready = &ready;
	if (ipc_send(&env->ctl, &m) != 0) {
		obs_http_stop(h);
		return (KP_EXIT_IPC);
	}
	code = obs_loop(env, h, epfd, sigfd, &st);
	log_info(2, "stopping");
	obs_http_stop(h);
	obs_state_free(&st);
	close(sigfd);
	return (code);
}
