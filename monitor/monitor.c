/*
 * monitor.c - monitor_main(): the process kp_start() forks, and the only
 * one of the plugin that keeps a capability. Its poll loop reads signals
 * and fixed-layout frames of the broker (ipc/mon.h), each checked against
 * what the monitor knows (which role runs with which pid, whether the
 * plugin is stopping); a frame that breaks a rule ends the plugin, since
 * only a compromised or broken broker sends one. It never reads a child's
 * channel: each child's ends go to the broker at its start.
 *
 * What the broker may make it do: start a role that is not running (at
 * most every MON_SPAWN_MIN_MS), signal a child by its current pid with
 * SIGTERM or SIGKILL, name up to KP_IPC_MAX_HIDE paths the next
 * nodeservers hide, remove the registration socket at the stop, write the
 * termination message, end the plugin, and put or remove spec files of
 * this driver's names in the CDI directory (cdi_put.c).
 *
 * Runs in: the monitor, after its set-up with only the capabilities of
 * docs/security.md, NO_NEW_PRIVS and its own seccomp filter
 * (policy/monitor.c); one thread.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/sigfd.h"
#include "monitor/monitor.h"
#include "policy/policy.h"

#define PFD_SIGNAL	0
#define PFD_CTL		1
#define PFD_FILES	2
#define PFD_REPAIR	3
#define PFD_STDERR	4
#define PFD_LISTEN(k)	(5 + (k))	/* POLLRDHUP: a child shut one */
#define PFD_MAX		(5 + SUP_LISTENERS)

#define MON_FATAL_MAX	16	/* termination messages a broker may write */
#define MON_STOP_SLACK_MS 5000	/* past the broker's own stop limits */
#define MON_CHECK_MS	10000	/* the poll's longest sleep: its timers
				 * (repair.c, the stop) are due sooner */

static int
mon_signals(void)
{
	static const int	 sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };

	return (sigfd_open(sigs, sizeof(sigs) / sizeof(sigs[0])));
}

/* A frame to the broker; a broker that is gone or full is not waited
 * for (the monitor never blocks on it). */
void
mon_tell(struct mon *mon, enum mon_type type, int role, int pid, int arg,
    const char *fmt, ...)
{
	struct mon_msg	 m;
	va_list		 ap;

	if (mon->ctl == -1)
		return;
	mon_init(&m, type);
	m.role = role;
	m.pid = pid;
	m.arg = arg;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(m.text, sizeof(m.text), fmt, ap);
		va_end(ap);
	}
	if (mon_send(mon->ctl, &m, NULL, 0) != 0)
		log_warnx("monitor: a frame to the broker was lost (type %d)",
		    (int)type);
}

/* Stop the plugin with code: the broker drains and says MON_DONE; past
 * the deadline everything is killed. */
void
mon_stop(struct mon *mon, int code)
{
	if (code != 0)
		mon->exit_code = code;
	if (!mon->stopping) {
		mon->stopping = 1;
		clock_gettime(CLOCK_MONOTONIC, &mon->stop_deadline);
		ts_after_ms(&mon->stop_deadline, mon->cfg->shutdown_grace_ms +
		    3 * 5000 + MON_STOP_SLACK_MS);
	}
	mon_tell(mon, MON_STOP, 0, 0, code, NULL);
}

/* The broker broke a rule: it is compromised or broken; end it all. */
void
mon_violation(struct mon *mon, const char *why)
{
	char	 msg[KP_ERROR_SIZE];

	snprintf(msg, sizeof(msg), "broker: protocol violation: %.200s; "
	    "stopping the plugin", why);
	log_errorx("%s", msg);
	mon_fatal_text(msg);
	termlog_write(mon->cfg, msg);
	mon->exit_code = 1;
	mon->done = 1;
}

/* *nfds is 0 once the state fd is taken; the caller closes the rest,
 * so a refused start (a rule, MON_SPAWN_MIN_MS) leaks no fd. */
static void
mon_spawn(struct mon *mon, const struct mon_msg *m, int *fds, size_t *nfds)
{
	struct mon_child	*c;
	char			 err[KP_ERROR_SIZE];
	int			 ch[3], r, i;

	if (m->role < 0 || m->role >= ROLE_COUNT ||
	    !child_role_configured(mon->cfg, m->role) ||
	    (m->role == ROLE_OBSERVER && mon->http_fd == -1) || (*nfds > 0 &&
	    m->role != ROLE_NODESERVER)) {
		mon_violation(mon, "SPAWN of a role not configured");
		return;
	}
	c = &mon->children[m->role];
	if (c->pid > 0 || mon->stopping) {
		mon_violation(mon, c->pid > 0 ? "SPAWN of a running role" :
		    "SPAWN while stopping");
		return;
	}
	if (c->spawned.tv_sec != 0 &&
	    -ts_ms_until(&c->spawned) < MON_SPAWN_MIN_MS) {
		mon_tell(mon, MON_SPAWN_FAILED, m->role, 0, KP_EBUSY, "%s: "
		    "started again within %d ms", c->name, MON_SPAWN_MIN_MS);
		return;
	}
	if (m->role == ROLE_NODESERVER) {
		if (mon->state_fd != -1)
			close(mon->state_fd);
		mon->state_fd = *nfds > 0 ? fds[0] : -1;
		mon->state_gen = m->gen;
		*nfds = 0;
	}
	/* The registration socket appears only when the registrar first
	 * starts: kubelet never learns an endpoint that does not serve. */
	if (m->role == ROLE_REGISTRAR && mon->reg_sock.fd == -1 &&
	    (r = sock_listen(&mon->reg_sock, mon->cfg->registrar_socket_path,
	    mon->cfg->socket_mode, err, sizeof(err))) != 0) {
		mon_tell(mon, MON_SPAWN_FAILED, m->role, 0, r, "%s", err);
		return;
	}
	if ((r = spawn_child(mon, c, ch, err, sizeof(err))) != 0) {
		mon_tell(mon, MON_SPAWN_FAILED, m->role, 0, r, "%s", err);
		return;
	}
	{
		struct mon_msg	 s;

		mon_init(&s, MON_STARTED);
		s.role = m->role;
		s.pid = (int32_t)c->pid;
		if (mon_send(mon->ctl, &s, ch, 3) != 0)
			log_warnx("monitor: STARTED of %s not delivered",
			    c->name);
	}
	for (i = 0; i < 3; i++)
		close(ch[i]);
}

static void
mon_kill(struct mon *mon, const struct mon_msg *m)
{
	struct mon_child	*c;

	if (m->role < 0 || m->role >= ROLE_COUNT ||
	    (m->arg != SIGTERM && m->arg != SIGKILL)) {
		mon_violation(mon, "KILL of an unknown role or with another "
		    "signal than SIGTERM or SIGKILL");
		return;
	}
	c = &mon->children[m->role];
	/* An older pid: the child was reaped meanwhile (EXITED is on its
	 * way); never a process that is not this role's child now. */
	if (c->pid <= 0 || m->pid != c->pid)
		return;
	(void)kill(c->pid, m->arg);
}

static void
mon_hide(struct mon *mon, const struct mon_msg *m)
{
	uint32_t	 i;

	for (i = 0; i < m->n; i++)
		if (m->paths[i][0] != '/') {
			mon_violation(mon, "HIDE of a path that is not "
			    "absolute");
			return;
		}
	for (i = 0; i < m->n; i++)
		memcpy(mon->pub_hide[i], m->paths[i], KP_IPC_PATH_MAX);
	mon->n_pub_hide = m->n;
}

void
mon_dispatch(struct mon *mon)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 fds[MON_MAX_FDS], r, budget = 64;
	size_t		 n, i;

	while (!mon->done && budget-- > 0) {
		if ((r = mon_recv(mon->ctl, &m, fds, &n, err,
		    sizeof(err))) == 0)
			return;
		if (r == KP_EPIPE || r == KP_EIO) {
			close(mon->ctl);	/* the broker ends; reaped */
			mon->ctl = -1;
			return;
		}
		if (r < 0) {
			mon_violation(mon, err);
			return;
		}
		switch (m.type) {
		case MON_SPAWN:
			mon_spawn(mon, &m, fds, &n);
			break;
		case MON_KILL:
			mon_kill(mon, &m);
			break;
		case MON_HIDE:
			mon_hide(mon, &m);
			break;
		case MON_RUNNING:
			mon->running = 1;
			break;
		case MON_STOPPING:
			if (!mon->stopping)
				mon_stop(mon, 0);
			/* The registration socket goes first: kubelet
			 * deregisters. */
			sock_remove(&mon->reg_sock);
			break;
		case MON_FATAL:
			if (mon->fatal_n++ < MON_FATAL_MAX) {
				mon_fatal_text(m.text);
				termlog_write(mon->cfg, m.text);
			}
			break;
		case MON_DONE:
			/* Only the end of a stop (MON_STOPPING first); a stop
			 * the monitor did not ask for never ends with 0. */
			if (!mon->stopping) {
				mon_violation(mon, "DONE without a stop");
				break;
			}
			mon->exit_code = m.arg != 0 ? m.arg :
			    mon->exit_code;
			mon->done = 1;
			break;
		default:
			mon_violation(mon, "a frame type the broker may not "
			    "send on its control channel");
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
}

static void
mon_reap(struct mon *mon)
{
	pid_t	 pid;
	int	 status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == mon->broker_pid) {
			mon->broker_pid = -1;
			/* Its last frames, MON_DONE among them, were sent
			 * before it exited, but its SIGCHLD is read first when
			 * both arrive in one poll round (mon_poll): read them
			 * now, or a clean stop is taken for a broker's death
			 * (its reason and exit code overwritten). */
			if (!mon->done && mon->ctl != -1)
				mon_dispatch(mon);
			if (!mon->done) {
				char	 msg[KP_ERROR_SIZE];

				snprintf(msg, sizeof(msg), "the broker ended "
				    "(wait status 0x%x) before the plugin "
				    "stopped", status);
				log_errorx("%s", msg);
				if (!mon->stopping || mon->exit_code != 0) {
					mon_fatal_text(msg);
					termlog_write(mon->cfg, msg);
				}
				mon->exit_code = mon->exit_code ? mon->exit_code :
				    (WIFEXITED(status) ? WEXITSTATUS(status) :
				    1);
				if (mon->exit_code == 0)
					mon->exit_code = 1;
				mon->done = 1;
			}
			continue;
		}
		for (i = 0; i < ROLE_COUNT; i++)
			if (mon->children[i].pid == pid) {
				mon->children[i].pid = -1;
				mon_tell(mon, MON_EXITED, i, (int)pid, status,
				    NULL);
			}
	}
}

static void
mon_read_signals(struct mon *mon)
{
	struct signalfd_siginfo	 si;
	int			 chld = 0;

	while (read(mon->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			chld = 1;
		else if (!mon->stopping) {
			log_info(1, "monitor signalled: stopping");
			mon_stop(mon, 0);
		}
	}
	if (chld)
		mon_reap(mon);
}

/* The listener of slot i (SUP_LISTEN_*); -1: none. */
static int
mon_listener(const struct mon *mon, int i)
{
	return (i == SUP_LISTEN_DRA ? mon->plugin_sock.fd :
	    i == SUP_LISTEN_REG ? mon->reg_sock.fd : mon->http_fd);
}

static int
mon_timeout(struct mon *mon)
{
	long long	 t = MON_CHECK_MS, d;

	if (mon->stopping && (d = ts_ms_until(&mon->stop_deadline)) < t)
		t = d;
	if ((d = repair_next_ms(mon)) >= 0 && d < t)
		t = d;
	return (t < 0 ? 0 : (int)t);
}

static void
mon_poll(struct mon *mon)
{
	struct pollfd	 pfd[PFD_MAX];
	int		 i;

	pfd[PFD_SIGNAL].fd = mon->sigfd;
	pfd[PFD_SIGNAL].events = POLLIN;
	pfd[PFD_CTL].fd = mon->ctl;
	pfd[PFD_CTL].events = POLLIN;
	pfd[PFD_FILES].fd = mon->files;
	pfd[PFD_FILES].events = POLLIN;
	pfd[PFD_REPAIR].fd = mon->repair_fd;
	pfd[PFD_REPAIR].events = POLLIN;
	pfd[PFD_STDERR].fd = log_stderr_pending();
	pfd[PFD_STDERR].events = POLLOUT;
	/* Not while stopping: a listener shut down then would spin. */
	for (i = 0; i < SUP_LISTENERS; i++) {
		pfd[PFD_LISTEN(i)].fd = mon->stopping ? -1 :
		    mon_listener(mon, i);
		pfd[PFD_LISTEN(i)].events = POLLRDHUP;
	}
	if (poll(pfd, PFD_MAX, mon_timeout(mon)) == -1) {
		if (errno != EINTR)
			log_warn("poll");
		return;
	}
	if (pfd[PFD_SIGNAL].revents & POLLIN)
		mon_read_signals(mon);
	if (pfd[PFD_REPAIR].revents & POLLIN)
		repair_read(mon);
	if (pfd[PFD_STDERR].revents & (POLLOUT | POLLERR | POLLHUP))
		log_stderr_flush();
	for (i = 0; i < SUP_LISTENERS; i++)
		if ((pfd[PFD_LISTEN(i)].revents & (POLLRDHUP | POLLHUP |
		    POLLERR)) && pfd[PFD_LISTEN(i)].fd == mon_listener(mon, i))
			repair_listener_shut(mon, i);
	if (pfd[PFD_CTL].revents & (POLLIN | POLLHUP | POLLERR))
		mon_dispatch(mon);
	if (pfd[PFD_FILES].revents & (POLLIN | POLLHUP | POLLERR))
		cdi_put_serve(mon);
}

static void
mon_timers(struct mon *mon)
{
	int	 i;

	if (mon->running && !mon->stopping) {
		repair_tick(mon);
		repair_check_sockets(mon);
	}
	if (mon->stopping && ts_ms_until(&mon->stop_deadline) <= 0) {
		/* A broker that never finished its stop: not a clean end. */
		mon_violation(mon, "the stop did not finish in time; SIGKILL "
		    "to every process");
		if (mon->broker_pid > 0)
			(void)kill(mon->broker_pid, SIGKILL);
		for (i = 0; i < ROLE_COUNT; i++)
			if (mon->children[i].pid > 0)
				(void)kill(mon->children[i].pid, SIGKILL);
		mon->done = 1;
	}
}

/* The end: no process of ours left, the socket files removed. */
static void
mon_finish(struct mon *mon)
{
	struct timespec	 until;
	int		 i, left;

	clock_gettime(CLOCK_MONOTONIC, &until);
	ts_after_ms(&until, 1000);
	/* The broker said DONE and exits now; anything else is killed. */
	for (;;) {
		for (i = 0, left = mon->broker_pid > 0; i < ROLE_COUNT; i++)
			if (mon->children[i].pid > 0) {
				(void)kill(mon->children[i].pid, SIGKILL);
				left = 1;
			}
		if (!left)
			break;
		if (ts_ms_until(&until) <= 0 && mon->broker_pid > 0)
			(void)kill(mon->broker_pid, SIGKILL);
		(void)poll(NULL, 0, 10);
		mon_reap(mon);
	}
	sock_remove(&mon->reg_sock);
	sock_remove(&mon->plugin_sock);
	if (mon->ctl != -1)
		close(mon->ctl);
	if (mon->files != -1)
		close(mon->files);
	if (mon->http_fd != -1)
		close(mon->http_fd);
	if (mon->cdi_fd != -1)
		close(mon->cdi_fd);
	if (mon->state_fd != -1)
		close(mon->state_fd);
	lock_close(mon);
	repair_close(mon);
	close(mon->sigfd);
	if (mon->pidns_fd != -1)
		close(mon->pidns_fd);
	log_info(1, "monitor stopped");
	log_stderr_drain(1000);
}

/* The start failed before the broker ran: kp_start() learns why. */
static int
mon_fail_early(int driver_fd, int code, const char *msg)
{
	struct ipc_chan	 ch;

	log_errorx("start failed: %s", msg);
	ipc_chan_init(&ch, driver_fd, KP_IPC_SMALL_FRAME);
	(void)ipc_send_result(&ch, code, msg);
	ipc_chan_close(&ch);
	return (1);
}

int
monitor_main(const struct kp_options *cfg, const struct kp_hooks *hooks,
    int driver_fd, int events_fd, struct sup_socket *plugin_sock,
    struct sup_socket *reg_sock, int http_fd)
{
	struct mon	 mon;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	memset(&mon, 0, sizeof(mon));
	mon.cfg = cfg;
	mon.hooks = hooks;
	mon.plugin_sock = *plugin_sock;
	mon.reg_sock = *reg_sock;
	mon.http_fd = http_fd;
	mon.ctl = mon.files = mon.lock_fd = mon.cdi_fd = mon.state_fd = -1;
	mon.repair_fd = -1;
	mon.broker_pid = -1;
	mon.sock_ok[0] = mon.sock_ok[1] = 1;
	log_procinit("monitor");
	/* No driver code runs in the monitor: its own lines go to stderr
	 * even when the driver set a log function (the broker's and the
	 * children's reach it in the driver process, api/events.c). */
	log_init(cfg->log_verbosity, NULL, NULL);
	/* A driver whose stderr is read slowly must not stall this loop:
	 * lines that do not fit are dropped and counted (base/log.c). */
	log_stderr_nonblocking();
	child_set_name("monitor");
	/* Nothing may open this process's /proc/<pid>/mem, environ or fd:
	 * no process of the same uid, and no child or broker, which start
	 * non-dumpable too (inherited). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		log_warn("PR_SET_DUMPABLE");
	spawn_ns_init(&mon);
	spawn_table_init(&mon);
	if ((mon.sigfd = mon_signals()) == -1) {
		sock_remove(&mon.plugin_sock);
		return (mon_fail_early(driver_fd, KP_EIO, "monitor: signalfd "
		    "failed"));
	}
	if ((r = lock_open(&mon, err, sizeof(err))) != 0) {
		sock_remove(&mon.plugin_sock);
		return (mon_fail_early(driver_fd, r, err));
	}
	repair_init(&mon);
	/*
	 * The broker first: it prepares the state and metadata directories
	 * as root with every capability the driver had (a state directory a
	 * nodeserver made 0777 is taken back by chmod, which needs FOWNER)
	 * and then drops to none; the monitor drops right after the fork.
	 * It takes the driver's channels; the monitor keeps none.
	 */
	if ((r = broker_spawn(&mon, driver_fd, events_fd, err,
	    sizeof(err))) != 0) {
		sock_remove(&mon.plugin_sock);
		return (mon_fail_early(driver_fd, r, err));
	}
	if ((r = policy_supervisor(cfg, err, sizeof(err))) != 0) {
		(void)kill(mon.broker_pid, SIGKILL);
		(void)waitpid(mon.broker_pid, NULL, 0);
		sock_remove(&mon.plugin_sock);
		return (mon_fail_early(driver_fd, r, err));
	}
	close(driver_fd);
	close(events_fd);
	while (!mon.done) {
		mon_poll(&mon);
		mon_timers(&mon);
		if (mon.ctl == -1 && mon.broker_pid > 0 && !mon.done) {
			/* Its channel ended: it exits; reap it. */
			(void)poll(NULL, 0, 5);
			mon_reap(&mon);
		}
	}
	mon_finish(&mon);
	return (mon.exit_code);
}
