/*
 * supervisor.c - broker_main(): the single-threaded poll loop that has the
 * monitor start the children in order, relays what they may send (after
 * the state table and field rules allowed it), has them restarted with
 * backoff, and stops everything when the driver asks or goes away. It
 * never calls grpc_init or curl_global_init and never reads credentials.
 *
 * Runs in: the broker, forked by the monitor (monitor/broker.c); after
 * its set-up its own uid, no capability, NO_NEW_PRIVS, Landlock and a
 * seccomp filter of its own (policy/broker.c, docs/security.md); one
 * thread. (The directory keeps the name "supervisor": the broker is what
 * the supervisor was, minus everything privileged.)
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
#include "base/sigfd.h"
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
#define PFD_MON		(3 + 3 * ROLE_COUNT)	/* the monitor (ipc/mon.h) */
#define PFD_CDIWATCH	(4 + 3 * ROLE_COUNT)	/* inotify (cdi_watch.c) */
#define PFD_STDERR	(5 + 3 * ROLE_COUNT)	/* POLLOUT only: our lines
						 * waiting (base/log.c) */
#define PFD_MAX		(6 + 3 * ROLE_COUNT)


static void	sup_start_next(struct sup *);
static void	sup_start_publisher(struct sup *);

/* SIGTERM from the monitor (or a stop): on a signalfd (base/sigfd.c). */
static int
sup_signals(void)
{
	static const int	 sigs[] = { SIGTERM, SIGINT, SIGHUP };

	return (sigfd_open(sigs, sizeof(sigs) / sizeof(sigs[0])));
}

static void
sup_read_signals(struct sup *sup)
{
	struct signalfd_siginfo	 si;

	while (read(sup->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
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
void
sup_fail_start(struct sup *sup, int code, const char *msg)
{
	if (sup->phase >= PHASE_RUNNING)
		return;
	log_errorx("start failed: %s", msg);
	sup_mon_tell(sup, MON_FATAL, 0, 0, 0, msg);
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
	/* The registration socket goes first (the monitor removes it):
	 * kubelet deregisters. */
	sup_mon_tell(sup, MON_STOPPING, 0, 0, 0, NULL);
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
		/* kp_state_initial(): not before its state is here. */
		if (sup->cfg->initial_state_set && sup->state == NULL) {
			sup->await_state = 1;
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
		/* The monitor binds the registration socket only now:
		 * kubelet never learns an endpoint that does not serve. */
		sup_spawn_start(sup, &sup->children[ROLE_REGISTRAR]);
		break;
	case PHASE_START_REGISTRAR:
		sup->phase = PHASE_RUNNING;
		sup_mon_tell(sup, MON_RUNNING, 0, 0, 0, NULL);
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

/* MON_EXITED: a child was reaped by the monitor. */
void
child_exited(struct sup *sup, const struct mon_msg *m)
{
	struct child	*c;
	char		 msg[KP_ERROR_SIZE];

	if (m->role < 0 || m->role >= ROLE_COUNT ||
	    sup->children[m->role].pid != m->pid || m->pid <= 0)
		return;
	c = &sup->children[m->role];
	child_reaped(sup, c, m->arg);
	events_child_exit(sup, c, m->arg);
	if (c->role == ROLE_PUBLISHER) {
		relay_claims_abort(sup);
		if (sup->phase == PHASE_RUNNING)
			chan_status(sup, IPC_EVENT_PUBLISH);
	}
	if (sup->phase == PHASE_STOPPING)
		return;
	if (sup->phase < PHASE_RUNNING) {
		snprintf(msg, sizeof(msg), "%s exited during start "
		    "(status 0x%x)", c->name, m->arg);
		sup_fail_start(sup, KP_ECHILD, msg);
		return;
	}
	child_schedule_restart(sup, c);
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
	case KPIPC__MSG__M_CLAIM_CANCEL:
		/* A scan of every look-up for each of up to 64 ids: charged,
		 * so a flood of them cannot keep this thread busy. One
		 * dropped only lets its look-ups run to their answer. */
		if (charge_take(&c->cancels, KP_CANCEL_QPS, KP_CANCEL_BURST))
			relay_claim_cancel(sup, m->claim_cancel);
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
		/* While starting, only kp_state_initial()'s state. */
		if ((sup->phase != PHASE_RUNNING && !(sup->phase <
		    PHASE_RUNNING && m->m_case == KPIPC__MSG__M_STATE_SET &&
		    sup->cfg->initial_state_set && sup->state == NULL)) ||
		    ipc_rule_check(ROLE_DRIVER,
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
			if (sup->await_state && sup->state != NULL) {
				sup->await_state = 0;
				sup_spawn_start(sup,
				    &sup->children[ROLE_NODESERVER]);
			}
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
	/* A deadline past is acted on once (sup_timers); what follows
	 * waits for the monitor, which may never answer (hung): a
	 * second's poll, not a spin at 0. */
	if (t <= 0)
		t = 1000;
	for (i = 0; i < ROLE_COUNT && sup->phase == PHASE_RUNNING; i++) {
		if (!sup->children[i].enabled || sup->children[i].pid > 0 ||
		    sup->children[i].spawning)
			continue;
		d = ts_ms_until(&sup->children[i].restart_at);
		if (d < t)
			t = d;
	}
	if ((d = relay_claims_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = cdi_queue_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = status_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = logrelay_next_ms(sup)) >= 0 && d < t)
		t = d;
	if ((d = drain_next_ms(sup)) >= 0 && d < t)
		t = d;
	/* The heartbeat's period at most: nothing else here is
	 * periodic; every other timer is due sooner. */
	return (t < 0 ? 0 : t > KP_HEARTBEAT_MS ? KP_HEARTBEAT_MS : (int)t);
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
	/* Lifecycle (issue 14): drain.c; the sockets are the monitor's. */
	drain_tick(sup);
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		/* Once: the child is reaped a tick or more later, and a
		 * warning every tick until then read as a second stop. */
		if (sup->phase == PHASE_STOPPING && c->pid > 0 &&
		    !c->stop_killed && ts_ms_until(&sup->stop_deadline) <= 0) {
			log_warnx("%s did not stop in time: SIGKILL", c->name);
			child_kill(c, SIGKILL);
			c->stop_killed = 1;
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
		    !c->spawning && ts_ms_until(&c->restart_at) <= 0 &&
		    child_spawn(sup, c)) {
			chan_error(sup, KP_ECHILD, 0, "%s cannot be restarted: "
			    "the monitor is gone", c->name);
			child_schedule_restart(sup, c);
		}
	}
}

static void
sup_poll(struct sup *sup)
{
	struct pollfd	 pfd[PFD_MAX];
	struct child	*c;
	int		 i, rest, t = sup_timeout(sup);

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
		/* Resting after a read: lines are read in batches
		 * (logrelay.c). */
		rest = logrelay_resting(c);
		pfd[PFD_LOG(i)].fd = rest ? -1 : c->logfd;
		/* POLLRDHUP: a child's shutdown(SHUT_WR) is an EOF with
		 * POLLIN but never POLLHUP (the socket stays connected). */
		pfd[PFD_LOG(i)].events = POLLIN | POLLRDHUP;
		pfd[PFD_ERR(i)].fd = rest ? -1 : c->errfd;
		pfd[PFD_ERR(i)].events = POLLIN;
	}
	pfd[PFD_MON].fd = sup->mon;
	pfd[PFD_MON].events = POLLIN;
	pfd[PFD_CDIWATCH].fd = sup->cdi_wfd;
	pfd[PFD_CDIWATCH].events = POLLIN;
	pfd[PFD_STDERR].fd = log_stderr_pending();
	pfd[PFD_STDERR].events = POLLOUT;
	if (poll(pfd, PFD_MAX, t) == -1) {
		if (errno != EINTR)
			log_warn("poll");
		return;
	}
	if (pfd[PFD_SIGNAL].revents & POLLIN)
		sup_read_signals(sup);
	if (pfd[PFD_CDIWATCH].revents & POLLIN)
		cdi_watch_read(sup);
	if (pfd[PFD_STDERR].revents & (POLLOUT | POLLERR | POLLHUP))
		log_stderr_flush();
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (pfd[PFD_LOG(i)].revents & (POLLIN | POLLHUP | POLLRDHUP))
			logrelay_read_log(sup, c, (pfd[PFD_LOG(i)].revents &
			    (POLLHUP | POLLRDHUP)) != 0);
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
	/* After the children's slots: an EXITED closes a child's channels,
	 * whose events of this round must not be read on a closed fd (and
	 * what the child sent before it died is read first). */
	if (pfd[PFD_MON].revents & (POLLIN | POLLHUP | POLLERR))
		sup_mon_read(sup);
	if (pfd[PFD_DRIVER].revents & (POLLIN | POLLHUP | POLLERR))
		sup_dispatch_driver(sup);
}

static int
sup_all_stopped(const struct sup *sup)
{
	int	 i;

	for (i = 0; i < ROLE_COUNT; i++)
		if (sup->children[i].pid > 0 || sup->children[i].spawning)
			return (0);
	return (1);
}

static void
sup_finish(struct sup *sup)
{
	int	 i;

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
	close(sup->sigfd);
	log_info(1, "broker stopped");
	log_stderr_drain(1000);
	/* Last: the monitor removes the socket files and ends. */
	sup_mon_tell(sup, MON_DONE, 0, 0, sup->exit_code, NULL);
}

/* The start failed before the loop: kp_start() learns why. */
static int
sup_fail_early(struct sup *sup, int code, const char *msg)
{
	log_errorx("start failed: %s", msg);
	log_stderr_drain(1000);
	sup_reply_driver(sup, code, msg);
	(void)ipc_flush(&sup->driver);
	files_close(sup);
	status_free(sup);
	/* The monitor takes DONE only at the end of a stop. */
	sup_mon_tell(sup, MON_FATAL, 0, 0, 0, msg);
	sup_mon_tell(sup, MON_STOPPING, 0, 0, 0, NULL);
	sup_mon_tell(sup, MON_DONE, 0, 0, 1, NULL);
	return (1);
}

int
broker_main(const struct kp_options *cfg, int driver_fd, int events_fd,
    int mon_fd, int files_fd)
{
	struct sup	 sup;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	memset(&sup, 0, sizeof(sup));
	sup.cfg = cfg;
	ipc_chan_init(&sup.driver, driver_fd, KP_IPC_MAX_FRAME);
	ipc_chan_init(&sup.events, events_fd, KP_IPC_SMALL_FRAME);
	sup.mon = mon_fd;
	sup.mon_files = files_fd;
	sup.cdi_owner = geteuid();	/* the monitor's, who writes them */
	sup.meta_fd = sup.cdi_fd = sup.cdi_wfd = -1;
	child_mon_init(mon_fd);
	sup.claim_tokens = relay_claim_burst(&sup);
	clock_gettime(CLOCK_MONOTONIC, &sup.claim_refill);
	log_procinit("broker");
	/* The driver's log function is in the driver process. */
	if (cfg->log_forward)
		log_init(cfg->log_verbosity, chan_log, &sup);
	/* A driver whose stderr is read slowly must not stall this loop:
	 * lines that do not fit are dropped and counted (base/log.c).
	 * Batched: the loop writes each pass's lines at its end. */
	log_stderr_nonblocking();
	log_stderr_batch();
	if ((sup.sigfd = sup_signals()) == -1)
		return (sup_fail_early(&sup, KP_EIO, "broker: signalfd "
		    "failed"));
	/* The nodeserver's directories, before it exists; the metadata
	 * directory becomes the broker's. */
	if ((r = files_prepare(&sup, err, sizeof(err))) != 0)
		return (sup_fail_early(&sup, r, err));
	child_table_init(&sup);
	if (status_init(&sup) != 0)
		return (sup_fail_early(&sup, KP_ENOMEM, "broker: out of "
		    "memory"));
	/* Set up: from here on its own uid, no capability, NO_NEW_PRIVS,
	 * Landlock and its own filter (policy/broker.c). */
	metadata_own(&sup);
	if ((r = policy_broker(cfg, mon_fd, err, sizeof(err))) != 0) {
		char	 msg[KP_ERROR_SIZE];

		/* Worded as a child's sandbox failure (KP_ECHILD, "<role>:
		 * sandbox: ..."): the broker is one more sandboxed process. */
		snprintf(msg, sizeof(msg), "broker: sandbox: %.200s", err);
		return (sup_fail_early(&sup, KP_ECHILD, msg));
	}
	clock_gettime(CLOCK_MONOTONIC, &sup.start_deadline);
	ts_after_ms(&sup.start_deadline, KP_START_TIMEOUT_MS);
	sup_start_first(&sup);

	for (;;) {
		sup_poll(&sup);
		if (sup.got_term) {
			sup.got_term = 0;
			log_info(1, "broker signalled: stopping");
			sup_begin_stop(&sup);
		}
		sup_timers(&sup);
		if (sup.driver.fd != -1 && ipc_flush(&sup.driver) != 0)
			sup.driver.wlen = 0;
		chan_events_flush(&sup);
		/* The lines of this pass, in as few writes as fit. */
		log_stderr_flush();
		if (sup.phase == PHASE_STOPPING && sup_all_stopped(&sup))
			break;
	}
	sup_finish(&sup);
	return (sup.exit_code);
}
