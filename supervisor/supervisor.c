/*
 * supervisor.c - supervisor_main(): the single-threaded poll loop that owns
 * the listening sockets, forks the children in order, relays what they may
 * send (after the state table and field rules allowed it), restarts them
 * with backoff, and stops everything when the driver asks or goes away.
 * It never calls grpc_init or curl_global_init and never reads credentials.
 *
 * Runs in: the supervisor, forked by kp_start() with the driver's
 * privileges (root on a node: it creates the children's sandboxes), then,
 * after its set-up, only the capabilities it needs, NO_NEW_PRIVS and a
 * seccomp filter of its own (policy/monitor.c, docs/security.md); one
 * thread.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"
#include "supervisor/supervisor.h"

/* Fixed pollfd slots (ntpd's PFD_*): signals, the driver, then two per
 * child. */
#define PFD_SIGNAL	0
#define PFD_DRIVER	1
#define PFD_EVENTS	2	/* POLLOUT only: events to the driver */
#define PFD_CTL(i)	(3 + 3 * (i))
#define PFD_LOG(i)	(4 + 3 * (i))
#define PFD_ERR(i)	(5 + 3 * (i))
#define PFD_REPAIR	(3 + 3 * ROLE_COUNT)	/* inotify (repair.c) */
#define PFD_CDIWATCH	(4 + 3 * ROLE_COUNT)	/* inotify (cdi_watch.c) */
#define PFD_STDERR	(5 + 3 * ROLE_COUNT)	/* POLLOUT only: our lines
						 * waiting (base/log.c) */
#define PFD_LISTEN(k)	(6 + 3 * ROLE_COUNT + (k))	/* POLLRDHUP only:
					 * a child shut a listener down */
#define PFD_MAX		(6 + 3 * ROLE_COUNT + SUP_LISTENERS)


static void	sup_start_next(struct sup *);
static void	sup_start_publisher(struct sup *);

/*
 * Signals arrive on a signalfd in its own poll slot: nothing runs in
 * signal context, and a pending SIGCHLD is seen even while other fds keep
 * poll() busy (ppoll() would not deliver it then).
 */
static int
sup_signals(void)
{
	static const int	 sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	struct sigaction	 sa;
	sigset_t		 set;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&set, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	return (signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
}

static void
sup_read_signals(struct sup *sup)
{
	struct signalfd_siginfo	 si;

	while (read(sup->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			sup->got_chld = 1;
		else
			sup->got_term = 1;
	}
}

int
sup_reply_driver(struct sup *sup, int code, const char *msg)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Result	 res = KPIPC__RESULT__INIT;

	res.code = code;
	res.message = (char *)msg;
	m.m_case = KPIPC__MSG__M_RESULT;
	m.result = &res;
	return (ipc_queue(&sup->driver, &m));
}

/* The start failed: tell kp_start() why, then stop everything. */
static void
sup_fail_start(struct sup *sup, int code, const char *msg)
{
	if (sup->phase >= PHASE_RUNNING)
		return;
	log_errorx("start failed: %s", msg);
	termlog_write(sup->cfg, msg);
	sup_reply_driver(sup, code, msg);
	sup->exit_code = 1;
	sup_begin_stop(sup);
}

/* Queue a frame for a child; one that stopped reading is a violation. */
void
sup_queue(struct sup *sup, struct child *c, const Kpipc__Msg *m)
{
	if (c->pid <= 0 || c->ctl.fd == -1)
		return;
	if (ipc_queue(&c->ctl, m) != 0)
		sup_child_violation(sup, c, "not reading its channel");
}

void
sup_child_violation(struct sup *sup, struct child *c, const char *why)
{
	char	 msg[KP_ERROR_SIZE];

	log_errorx("%s: protocol violation: %s; killing it", c->name, why);
	c->violated = 1;
	child_kill(c, SIGKILL);
	if (sup->phase == PHASE_RUNNING)
		chan_error(sup, KP_EPROTO, 1, "%s: protocol violation: %s; "
		    "killed, restarting it", c->name, why);
	snprintf(msg, sizeof(msg), "%s: protocol violation: %s", c->name,
	    why);
	sup_fail_start(sup, KP_EPROTO, msg);
}

void
sup_begin_stop(struct sup *sup)
{
	if (sup->phase == PHASE_STOPPING)
		return;
	sup->phase = PHASE_STOPPING;
	/* The registration socket goes first: kubelet deregisters. */
	sock_remove(&sup->reg_sock);
	/* Then the calls in flight finish (drain.c). */
	drain_begin(sup);
}

/* Fork c; a failure fails the start. */
static void
sup_spawn_start(struct sup *sup, struct child *c)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	if ((r = child_spawn(sup, c)) != 0) {
		snprintf(err, sizeof(err), "fork %s: %s", c->name,
		    kp_strerror(r));
		sup_fail_start(sup, r, err);
	}
}

/* Start the next role in order, or report success to kp_start(). */
static void
sup_start_next(struct sup *sup)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	switch (sup->phase) {
	case PHASE_START_OBSERVER:
		sup_start_publisher(sup);
		break;
	case PHASE_START_PUBLISHER:
		sup->phase = PHASE_START_NODESERVER;
		/* kp_dra_service(0): no nodeserver, go on at once. */
		if (!sup->children[ROLE_NODESERVER].enabled) {
			sup_start_next(sup);
			break;
		}
		sup_spawn_start(sup, &sup->children[ROLE_NODESERVER]);
		break;
	case PHASE_START_NODESERVER:
		sup->phase = PHASE_START_REGISTRAR;
		/* kp_registration_service(0): no socket, no registrar. */
		if (!sup->children[ROLE_REGISTRAR].enabled) {
			sup_start_next(sup);
			break;
		}
		/* The registration socket appears only now: kubelet never
		 * learns an endpoint that does not serve yet. */
		if (sup->reg_sock.fd == -1 && (r = sock_listen(&sup->reg_sock,
		    sup->cfg->registrar_socket_path, sup->cfg->socket_mode,
		    err, sizeof(err))) != 0) {
			sup_fail_start(sup, r, err);
			return;
		}
		sup_spawn_start(sup, &sup->children[ROLE_REGISTRAR]);
		break;
	case PHASE_START_REGISTRAR:
		sup->phase = PHASE_RUNNING;
		log_info(1, "plugin %s started", sup->cfg->driver_name);
		sup_reply_driver(sup, 0, "");
		break;
	default:
		break;
	}
}

/* The publisher when configured, else the nodeserver. */
static void
sup_start_publisher(struct sup *sup)
{
	if (sup->children[ROLE_PUBLISHER].enabled) {
		sup->phase = PHASE_START_PUBLISHER;
		sup_spawn_start(sup, &sup->children[ROLE_PUBLISHER]);
	} else {
		sup->phase = PHASE_START_PUBLISHER;
		sup_start_next(sup);
	}
}

/*
 * The first role to start: the observer when configured (its port answers
 * 503 while the others start), then the publisher.
 */
static void
sup_start_first(struct sup *sup)
{
	if (sup->children[ROLE_OBSERVER].enabled) {
		sup->phase = PHASE_START_OBSERVER;
		sup_spawn_start(sup, &sup->children[ROLE_OBSERVER]);
	} else
		sup_start_publisher(sup);
}

static void
sup_reap(struct sup *sup)
{
	struct child	*c;
	char		 msg[KP_ERROR_SIZE];
	pid_t		 pid;
	int		 status, i, starting;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0, c = NULL; i < ROLE_COUNT; i++)
			if (sup->children[i].pid == pid)
				c = &sup->children[i];
		if (c == NULL)
			continue;
		starting = c->state == CS_STARTING;
		child_reaped(sup, c, status);
		events_child_exit(sup, c, status);
		if (c->role == ROLE_PUBLISHER) {
			relay_claims_abort(sup);
			if (sup->phase == PHASE_RUNNING)
				chan_status(sup, IPC_EVENT_PUBLISH);
		}
		if (sup->phase == PHASE_STOPPING)
			continue;
		if (sup->phase < PHASE_RUNNING) {
			snprintf(msg, sizeof(msg), "%s exited during start "
			    "(status 0x%x)", c->name, status);
			sup_fail_start(sup, KP_ECHILD, msg);
			continue;
		}
		(void)starting;
		child_schedule_restart(sup, c);
	}
}

/* Returns 1 when it kept m (a request waiting), else the caller frees m. */
static int
sup_handle_child(struct sup *sup, struct child *c, Kpipc__Msg *m)
{
	switch (m->m_case) {
	case KPIPC__MSG__M_READY:
		if (child_ready(sup, c, m->ready) != 0) {
			sup_child_violation(sup, c, "hide_paths in the READY "
			    "of a role other than the publisher");
			break;
		}
		c->state = CS_READY;
		status_child_ok(sup, c);
		log_info(c->restarts ? 0 : 2, "%s ready, pid %d%s", c->name,
		    (int)c->pid, c->restarts ? " (restarted)" : "");
		if (c->role == ROLE_PUBLISHER && sup->desired != NULL)
			sup_queue(sup, c, sup->desired);
		if (c->role == ROLE_PUBLISHER) {
			relay_claims_tick(sup);	/* look-ups that waited */
			chan_status(sup, IPC_EVENT_PUBLISH);	/* running */
		}
		health_child_ready(sup, c);
		relay_reg_errors_ready(sup, c);
		if (sup->phase < PHASE_RUNNING)
			sup_start_next(sup);
		break;
	case KPIPC__MSG__M_START_FAILED:
		c->state = CS_STOPPING;
		c->start_failed = 1;
		/* Logged once: here for a restart, by sup_fail_start()
		 * while starting (the message names the child). */
		if (sup->phase == PHASE_RUNNING) {
			log_errorx("%s cannot restart: %s", c->name,
			    m->start_failed->result->message);
			chan_error(sup, KP_ECHILD, 0, "%s cannot restart: %s",
			    c->name, m->start_failed->result->message);
		}
		sup_fail_start(sup, KP_ECHILD,
		    m->start_failed->result->message);
		break;
	case KPIPC__MSG__M_REG_STATUS:
		relay_reg_status(sup, m->reg_status);
		break;
	case KPIPC__MSG__M_CLAIM_GET:
		relay_claim_get(sup, m);
		break;
	case KPIPC__MSG__M_CLAIM_REPLY:
		relay_claim_reply(sup, c, m);
		break;
	case KPIPC__MSG__M_PUBLISH_STATUS:
		relay_publish_status(sup, m->publish_status);
		break;
	case KPIPC__MSG__M_HEALTH_STALE:
		health_relay_stale(sup, m->health_stale);
		break;
	case KPIPC__MSG__M_EVENT_ASK:
		events_ask(sup, c, m->event_ask);
		break;
	case KPIPC__MSG__M_PONG:
		status_pong(sup, c, m->pong);
		break;
	case KPIPC__MSG__M_CDI_WRITE:
	case KPIPC__MSG__M_CDI_REMOVE:
	case KPIPC__MSG__M_CDI_LIST:
	case KPIPC__MSG__M_METADATA_WRITE:
	case KPIPC__MSG__M_METADATA_REMOVE:
		return (cdi_queue_add(sup, c, m));
	default:
		/* NOTREACHED: ipc_rule_check() allowed only the above. */
		sup_child_violation(sup, c, "unhandled frame");
	}
	return (0);
}

/* Read c's channel and handle its frames (also the entry of
 * tests/fuzz/fuzz_sup_handlers.c). */
void
sup_dispatch_child(struct sup *sup, struct child *c)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	if ((r = ipc_read(&c->ctl)) == KP_EPIPE) {
		/* The child is exiting; stop polling its end until it is
		 * reaped, then handle what it sent before. */
		close(c->ctl.fd);
		c->ctl.fd = -1;
	} else if (r < 0 && c->state == CS_STOPPING) {
		close(c->ctl.fd);	/* already being killed */
		c->ctl.fd = -1;
		return;
	} else if (r < 0) {
		sup_child_violation(sup, c, r == KP_EPROTO ?
		    "file descriptor passed" : "read failed");
		return;
	}
	while ((c->state == CS_STARTING || c->state == CS_READY) &&
	    (r = ipc_next(&c->ctl, &m, err, sizeof(err))) != 0) {
		if (r < 0) {
			sup_child_violation(sup, c, err);
			return;
		}
		if (ipc_rule_check(c->role, c->state, m->m_case, err,
		    sizeof(err)) != 0) {
			ipc_free(m);
			sup_child_violation(sup, c, err);
			return;
		}
		if (!sup_handle_child(sup, c, m))
			ipc_free(m);
	}
}


static void
sup_drain_log(struct sup *sup, struct child *c, int hup)
{
	uint8_t		 buf[KP_LOG_MAX + 64];
	char		 err[KP_ERROR_SIZE];
	Kpipc__Msg	*m;
	ssize_t		 n;
	int		 budget = 64;	/* lines per pass: no starvation */

	while (c->logfd != -1 && budget-- > 0) {
		n = recv(c->logfd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if ((n == 0 && hup) || (n == -1 && errno != EAGAIN &&
		    errno != EINTR)) {
			/* The child closed its end (SOCK_SEQPACKET tells,
			 * with POLLHUP): stop polling it, or the loop would
			 * spin. */
			close(c->logfd);
			c->logfd = -1;
			return;
		}
		if (n == 0)
			continue;	/* an empty datagram: nothing */
		if (n < 0)
			return;
		if ((size_t)n > sizeof(buf) || (m = ipc_unpack(buf, (size_t)n,
		    err, sizeof(err))) == NULL) {
			sup_child_violation(sup, c, "malformed log datagram");
			return;
		}
		if (m->m_case != KPIPC__MSG__M_LOG ||
		    ipc_check(m, err, sizeof(err)) != 0) {
			ipc_free(m);
			sup_child_violation(sup, c, "non-log frame on the "
			    "log channel");
			return;
		}
		if ((m->log->level != KP_LOG_INFO ||
		    log_enabled(m->log->verbosity)) && charge_log_allowed(c))
			log_emit(c->name, (int)c->pid, m->log->level,
			    m->log->verbosity, m->log->text);
		ipc_free(m);
	}
}

/* One line of a child's stderr, as a warning of that child's. */
static void
sup_stderr_line(struct child *c, const char *line)
{
	char	 text[sizeof(c->errline) + 16];

	if (!charge_log_allowed(c))
		return;
	snprintf(text, sizeof(text), "stderr: %s", line);
	log_emit(c->name, (int)c->pid, KP_LOG_WARNING, 0, text);
}

/*
 * A child's stderr (children.c child_stdio) becomes log lines: a line at
 * a time, longer ones cut at sizeof(errline), each sanitised by log_emit
 * and rate-limited with the child's other lines. final: the child was
 * reaped; read what is left, flush the partial line, close the pipe.
 */
void
sup_drain_stderr(struct sup *sup, struct child *c, int final)
{
	char	 buf[4096];
	ssize_t	 n;
	size_t	 i;
	int	 budget = 16;	/* reads per pass: no starvation */

	while (c->errfd != -1 && (final || budget-- > 0)) {
		n = read(c->errfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || final || errno != EAGAIN) {
				close(c->errfd);
				c->errfd = -1;
			}
			break;
		}
		for (i = 0; i < (size_t)n; i++) {
			if (buf[i] != '\n')
				c->errline[c->errlen++] = buf[i];
			if (buf[i] == '\n' ||
			    c->errlen == sizeof(c->errline) - 1) {
				c->errline[c->errlen] = '\0';
				sup_stderr_line(c, c->errline);
				c->errlen = 0;
			}
		}
	}
	if (final && c->errlen > 0) {
		c->errline[c->errlen] = '\0';
		sup_stderr_line(c, c->errline);
		c->errlen = 0;
	}
}

static void
sup_dispatch_driver(struct sup *sup)
{
	Kpipc__Msg		*m;
	Kpipc__Msg		 out = KPIPC__MSG__INIT;
	Kpipc__RegStatusReply	 rs = KPIPC__REG_STATUS_REPLY__INIT;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	if ((r = ipc_read(&sup->driver)) < 0) {
		/* The driver process is gone (or broke the protocol). */
		if (sup->phase != PHASE_STOPPING)
			log_info(1, "driver process gone: stopping");
		sup->driver.fd = (close(sup->driver.fd), -1);
		sup_begin_stop(sup);
		return;
	}
	while ((r = ipc_next(&sup->driver, &m, err, sizeof(err))) > 0) {
		if (sup->phase != PHASE_RUNNING || ipc_rule_check(ROLE_DRIVER,
		    CS_READY, m->m_case, err, sizeof(err)) != 0) {
			ipc_free(m);
			continue;
		}
		switch (m->m_case) {
		case KPIPC__MSG__M_REG_STATUS_QUERY:
			rs.state = sup->reg_state;
			rs.error = sup->reg_error;
			out.m_case = KPIPC__MSG__M_REG_STATUS_REPLY;
			out.reg_status_reply = &rs;
			(void)ipc_queue(&sup->driver, &out);
			break;
		case KPIPC__MSG__M_PUBLISH:
			relay_publish(sup, m);
			m = NULL;	/* kept as the desired state */
			break;
		case KPIPC__MSG__M_PUBLISH_STATUS_QUERY:
			relay_publish_status_reply(sup);
			break;
		case KPIPC__MSG__M_HEALTH_REPORT:
			health_relay_report(sup, m);
			m = NULL;	/* kept for a restarted nodeserver */
			break;
		case KPIPC__MSG__M_STATE_SET:
			chan_state_set(sup, m);
			m = NULL;	/* kept, or freed after the reply */
			break;
		case KPIPC__MSG__M_REG_ERROR:
			relay_reg_error(sup, m->reg_error);
			break;
		case KPIPC__MSG__M_METADATA_UPDATE:
			metadata_update(sup, m);
			break;
		case KPIPC__MSG__M_STOP:
			sup->stop_replied = 1;
			sup_begin_stop(sup);
			break;
		default:
			break;
		}
		ipc_free(m);
	}
}

static int
sup_timeout(struct sup *sup)
{
	long long	 t = 1000, d;
	int		 i;

	if (sup->phase < PHASE_RUNNING)
		t = ts_ms_until(&sup->start_deadline);
	else if (sup->phase == PHASE_STOPPING)
		t = ts_ms_until(&sup->stop_deadline);
	for (i = 0; i < ROLE_COUNT && sup->phase == PHASE_RUNNING; i++) {
		if (!sup->children[i].enabled || sup->children[i].pid > 0)
			continue;
		d = ts_ms_until(&sup->children[i].restart_at);
		if (d < t)
			t = d;
	}
	if ((d = relay_claims_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = cdi_queue_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = repair_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = status_next_ms(sup)) >= 0 && d < t)
		t = d;
	return (t < 0 ? 0 : t > 1000 ? 1000 : (int)t);
}

static void
sup_timers(struct sup *sup)
{
	struct child	*c;
	int		 i;

	if (sup->phase < PHASE_RUNNING &&
	    ts_ms_until(&sup->start_deadline) <= 0)
		sup_fail_start(sup, KP_ETIMEDOUT, "plugin processes did not "
		    "report ready within 30 s");
	/* In every phase: an init hook's specs may wait too. */
	cdi_queue_tick(sup);
	charge_tick(sup);
	if (sup->phase == PHASE_RUNNING) {
		relay_claims_tick(sup);
		status_tick(sup);
	}
	/* Lifecycle (issue 14): drain.c, repair.c. */
	drain_tick(sup);
	repair_tick(sup);
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (sup->phase == PHASE_STOPPING && c->pid > 0 &&
		    ts_ms_until(&sup->stop_deadline) <= 0) {
			log_warnx("%s did not stop in time: SIGKILL", c->name);
			child_kill(c, SIGKILL);
		}
		/* A restarted child that never says READY (an init hook
		 * that blocks) is killed and restarted, not waited for. */
		if (sup->phase == PHASE_RUNNING && c->pid > 0 &&
		    c->state == CS_STARTING &&
		    -ts_ms_until(&c->started) >= KP_START_TIMEOUT_MS) {
			log_errorx("%s did not report ready within %d s: "
			    "SIGKILL", c->name, KP_START_TIMEOUT_MS / 1000);
			child_kill(c, SIGKILL);
		}
		if (sup->phase == PHASE_RUNNING && c->enabled && c->pid <= 0 &&
		    ts_ms_until(&c->restart_at) <= 0 && child_spawn(sup, c)) {
			chan_error(sup, KP_ECHILD, 0, "%s cannot be restarted: "
			    "fork failed", c->name);
			child_schedule_restart(sup, c);
		}
	}
}

/* The listener of slot i (SUP_LISTEN_*); -1: none. */
static int
sup_listener(const struct sup *sup, int i)
{
	return (i == SUP_LISTEN_DRA ? sup->plugin_sock.fd :
	    i == SUP_LISTEN_REG ? sup->reg_sock.fd : sup->http_fd);
}

static void
sup_poll(struct sup *sup)
{
	struct pollfd	 pfd[PFD_MAX];
	struct child	*c;
	int		 i, t = sup_timeout(sup);

	pfd[PFD_SIGNAL].fd = sup->sigfd;
	pfd[PFD_SIGNAL].events = POLLIN;
	pfd[PFD_DRIVER].fd = sup->driver.fd;
	pfd[PFD_DRIVER].events = POLLIN | (sup->driver.wlen ? POLLOUT : 0);
	pfd[PFD_EVENTS].fd = sup->events.wlen ? sup->events.fd : -1;
	pfd[PFD_EVENTS].events = POLLOUT;
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		pfd[PFD_CTL(i)].fd = c->ctl.fd;
		pfd[PFD_CTL(i)].events = POLLIN | (c->ctl.wlen ? POLLOUT : 0);
		pfd[PFD_LOG(i)].fd = c->logfd;
		pfd[PFD_LOG(i)].events = POLLIN;
		pfd[PFD_ERR(i)].fd = c->errfd;
		pfd[PFD_ERR(i)].events = POLLIN;
	}
	pfd[PFD_REPAIR].fd = sup->repair_fd;
	pfd[PFD_REPAIR].events = POLLIN;
	pfd[PFD_CDIWATCH].fd = sup->cdi_wfd;
	pfd[PFD_CDIWATCH].events = POLLIN;
	pfd[PFD_STDERR].fd = log_stderr_pending();
	pfd[PFD_STDERR].events = POLLOUT;
	/* Not while stopping: a listener shut down then would spin. */
	for (i = 0; i < SUP_LISTENERS; i++) {
		pfd[PFD_LISTEN(i)].fd = sup->phase == PHASE_STOPPING ? -1 :
		    sup_listener(sup, i);
		pfd[PFD_LISTEN(i)].events = POLLRDHUP;
	}
	if (poll(pfd, PFD_MAX, t) == -1) {
		if (errno != EINTR)
			log_warn("poll");
		return;
	}
	if (pfd[PFD_SIGNAL].revents & POLLIN)
		sup_read_signals(sup);
	if (pfd[PFD_REPAIR].revents & POLLIN)
		repair_read(sup);
	if (pfd[PFD_CDIWATCH].revents & POLLIN)
		cdi_watch_read(sup);
	if (pfd[PFD_STDERR].revents & (POLLOUT | POLLERR | POLLHUP))
		log_stderr_flush();
	/* (one repair may have replaced another slot's listener) */
	for (i = 0; i < SUP_LISTENERS; i++)
		if ((pfd[PFD_LISTEN(i)].revents & (POLLRDHUP | POLLHUP |
		    POLLERR)) && pfd[PFD_LISTEN(i)].fd == sup_listener(sup, i))
			repair_listener_shut(sup, i);
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (pfd[PFD_LOG(i)].revents & (POLLIN | POLLHUP))
			sup_drain_log(sup, c, (pfd[PFD_LOG(i)].revents &
			    POLLHUP) != 0);
		if (pfd[PFD_ERR(i)].revents & (POLLIN | POLLHUP))
			sup_drain_stderr(sup, c, 0);
		if (pfd[PFD_CTL(i)].revents & (POLLIN | POLLHUP | POLLERR))
			sup_dispatch_child(sup, c);
		if (c->ctl.fd != -1 && ipc_flush(&c->ctl) != 0)
			c->ctl.wlen = 0;	/* dying child; reaped soon */
		chan_state_flush(sup, c);
	}
	if (pfd[PFD_EVENTS].revents & (POLLOUT | POLLHUP | POLLERR))
		chan_events_flush(sup);
	if (pfd[PFD_DRIVER].revents & (POLLIN | POLLHUP | POLLERR))
		sup_dispatch_driver(sup);
}

static int
sup_all_stopped(const struct sup *sup)
{
	int	 i;

	for (i = 0; i < ROLE_COUNT; i++)
		if (sup->children[i].pid > 0)
			return (0);
	return (1);
}

static void
sup_finish(struct sup *sup)
{
	int	 i;

	sock_remove(&sup->reg_sock);
	sock_remove(&sup->plugin_sock);
	if (sup->stop_replied && sup->driver.fd != -1)
		sup_reply_driver(sup, 0, "");
	/* Blocking now: the loop is over. */
	while (sup->driver.fd != -1 && sup->driver.wlen > 0) {
		struct pollfd p = { .fd = sup->driver.fd, .events = POLLOUT };

		if (poll(&p, 1, 1000) <= 0 || ipc_flush(&sup->driver) != 0)
			break;
	}
	for (i = 0; i < ROLE_COUNT; i++)
		ipc_chan_close(&sup->children[i].ctl);
	ipc_chan_close(&sup->driver);
	ipc_chan_close(&sup->events);
	ipc_free(sup->state);
	ipc_free(sup->desired);
	ipc_free(sup->health);
	files_close(sup);
	status_free(sup);
	if (sup->http_fd != -1)
		close(sup->http_fd);
	lock_close(sup);
	repair_close(sup);
	close(sup->sigfd);
	if (sup->pidns_fd != -1)
		close(sup->pidns_fd);
	log_info(1, "supervisor stopped");
	log_stderr_drain(1000);
}

int
supervisor_main(const struct kp_options *cfg, const struct kp_hooks *hooks,
    int driver_fd, int events_fd, struct sup_socket *plugin_sock,
    struct sup_socket *reg_sock, int http_fd)
{
	struct sup	 sup;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	memset(&sup, 0, sizeof(sup));
	sup.cfg = cfg;
	sup.hooks = hooks;
	ipc_chan_init(&sup.driver, driver_fd, KP_IPC_MAX_FRAME);
	ipc_chan_init(&sup.events, events_fd, KP_IPC_SMALL_FRAME);
	sup.plugin_sock = *plugin_sock;
	sup.reg_sock = *reg_sock;
	sup.http_fd = http_fd;
	sup.claim_tokens = relay_claim_burst(&sup);
	clock_gettime(CLOCK_MONOTONIC, &sup.claim_refill);
	log_procinit("supervisor");
	/* A driver whose stderr is read slowly must not stall this loop:
	 * lines that do not fit are dropped and counted (base/log.c). */
	log_stderr_nonblocking();
	child_set_name("supervisor");
	/* Nothing may open this process's /proc/<pid>/mem, environ or fd
	 * (it holds every channel): no process of the same uid, and none
	 * of the children, which start non-dumpable too (inherited). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		log_warn("PR_SET_DUMPABLE");
	child_ns_init(&sup);
	if ((sup.sigfd = sup_signals()) == -1) {
		sup_reply_driver(&sup, KP_EIO, "supervisor: signalfd failed");
		(void)ipc_flush(&sup.driver);
		return (1);
	}
	/* The nodeserver's directories and lock file, before it exists. */
	sup.lock_fd = -1;
	if ((r = files_prepare(&sup, err, sizeof(err))) != 0 ||
	    (r = lock_open(&sup, err, sizeof(err))) != 0) {
		log_errorx("start failed: %s", err);
		sup_reply_driver(&sup, r, err);
		(void)ipc_flush(&sup.driver);
		files_close(&sup);
		lock_close(&sup);
		sock_remove(&sup.plugin_sock);
		return (1);
	}
	child_table_init(&sup);
	repair_init(&sup);
	if (status_init(&sup) != 0) {
		sup_reply_driver(&sup, KP_ENOMEM, "supervisor: out of memory");
		(void)ipc_flush(&sup.driver);
		files_close(&sup);
		sock_remove(&sup.plugin_sock);
		return (1);
	}
	/* Set up: from here on only the capabilities it needs, NO_NEW_PRIVS
	 * and its own filter, which every child inherits (policy/). */
	if ((r = policy_supervisor(cfg, err, sizeof(err))) != 0) {
		log_errorx("start failed: %s", err);
		sup_reply_driver(&sup, r, err);
		(void)ipc_flush(&sup.driver);
		files_close(&sup);
		sock_remove(&sup.plugin_sock);
		return (1);
	}
	clock_gettime(CLOCK_MONOTONIC, &sup.start_deadline);
	ts_after_ms(&sup.start_deadline, KP_START_TIMEOUT_MS);
	sup_start_first(&sup);

	for (;;) {
		sup_poll(&sup);
		if (sup.got_chld) {
			sup.got_chld = 0;
			sup_reap(&sup);
		}
		if (sup.got_term) {
			sup.got_term = 0;
			log_info(1, "supervisor signalled: stopping");
			sup_begin_stop(&sup);
		}
		sup_timers(&sup);
		if (sup.driver.fd != -1 && ipc_flush(&sup.driver) != 0)
			sup.driver.wlen = 0;
		chan_events_flush(&sup);
		if (sup.phase == PHASE_STOPPING && sup_all_stopped(&sup))
			break;
	}
	sup_finish(&sup);
	return (sup.exit_code);
}
