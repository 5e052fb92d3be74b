/*
 * children.c - the broker's view of the children: the role table, starts
 * and signals asked of the monitor (which forks and signals; the broker
 * cannot), the answers, and restart backoff (100 ms doubling to 3.2 s,
 * reset after 60 s up).
 *
 * Runs in: the broker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fdio.h"
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
	struct child	*c;
	int		 i;

	/* children[i] is role i (enum kp_role); the monitor has the
	 * roles' main functions, the broker only their names. */
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		memset(c, 0, sizeof(*c));
		c->role = (enum kp_role)i;
		c->name = ipc_role_name(c->role);
		c->enabled = child_role_configured(sup->cfg, c->role);
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
}

/* The monitor's control channel (ipc/mon.h): every start and signal of a
 * child is a request there. */
static int	mon_fd = -1;

void
child_mon_init(int fd)
{
	mon_fd = fd;
}

/*
 * The driver's latest state (kp_state_set) for a nodeserver to be
 * started, as a sealed memfd the monitor hands to it unread: -1 when
 * none or on failure (the nodeserver then gets it as its first frame).
 */
static int
child_state_fd(struct sup *sup, uint64_t *gen)
{
	const ProtobufCBinaryData	*d;
	int				 fd;

	if (sup->state == NULL || sup->state->state_set->data.len == 0)
		return (-1);
	d = &sup->state->state_set->data;
	if ((fd = memfd_create("kp-state", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1)
		return (-1);
	if (fd_write_all(fd, d->data, d->len) == -1 || fcntl(fd, F_ADD_SEALS,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == -1) {
		close(fd);
		return (-1);
	}
	*gen = sup->state->state_set->generation;
	return (fd);
}

/*
 * Ask the monitor to start the child of role c (MON_SPAWN); its answer,
 * MON_STARTED with the broker's ends of the child's channels or
 * MON_SPAWN_FAILED, arrives on the control channel (child_started()).
 */
int
child_spawn(struct sup *sup, struct child *c)
{
	struct mon_msg	 m;
	int		 sfd = -1, r;

	if (c->spawning || c->pid > 0)
		return (0);
	mon_init(&m, MON_SPAWN);
	m.role = c->role;
	if (c->role == ROLE_NODESERVER)
		sfd = child_state_fd(sup, &m.gen);
	r = mon_send(sup->mon, &m, &sfd, sfd != -1);
	if (sfd != -1)
		close(sfd);
	if (r != 0)
		return (KP_EIO);
	c->spawning = 1;
	return (0);
}

/* MON_STARTED: the child runs; its channels are ours. */
void
child_started(struct sup *sup, const struct mon_msg *m, const int *fds,
    size_t n)
{
	struct child	*c;
	size_t		 i;

	if (n != 3 || m->role < 0 || m->role >= ROLE_COUNT ||
	    !sup->children[m->role].spawning || m->pid <= 0) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		log_errorx("monitor: STARTED for no start asked");
		return;
	}
	c = &sup->children[m->role];
	c->spawning = 0;
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(fds[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(fds[2], F_SETFL, O_NONBLOCK);
	ipc_chan_close(&c->ctl);
	c->ctl.fd = fds[0];
	c->logfd = fds[1];
	c->errfd = fds[2];
	c->errlen = 0;
	c->pid = m->pid;
	c->journal_told = 0;	/* a new process: its own journal read */
	c->state = CS_STARTING;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	log_info(2, "started %s, pid %d", c->name, (int)c->pid);
	if (c->role == ROLE_NODESERVER)
		sup->state_pending = sup->state != NULL;
}

/* MON_SPAWN_FAILED: as a failed fork. */
void
child_spawn_failed(struct sup *sup, const struct mon_msg *m)
{
	struct child	*c;

	if (m->role < 0 || m->role >= ROLE_COUNT)
		return;
	c = &sup->children[m->role];
	c->spawning = 0;
	log_warnx("%s cannot be started: %s", c->name, m->text);
	if (sup->phase < PHASE_RUNNING) {
		sup_fail_start(sup, m->arg < 0 ? m->arg : KP_EIO, m->text);
		return;
	}
	if (sup->phase == PHASE_RUNNING) {
		chan_error(sup, KP_ECHILD, 0, "%s cannot be restarted: %s",
		    c->name, m->text);
		child_schedule_restart(sup, c);
	}
}

/* A signal for c, by the monitor, to the pid we know. */
void
child_signal(struct child *c, int sig)
{
	struct mon_msg	 m;

	if (c->pid <= 0)
		return;
	mon_init(&m, MON_KILL);
	m.role = c->role;
	m.pid = c->pid;
	m.arg = sig;
	(void)mon_send(mon_fd, &m, NULL, 0);
}

void
child_kill(struct child *c, int sig)
{
	child_signal(c, sig);
	if (sig == SIGKILL || sig == SIGTERM)
		c->state = CS_STOPPING;
}

static void
child_log_exit(struct child *c, int status)
{
	/* Killed for not answering: heal.c logged why. */
	if (c->hung) {
		log_info(1, "%s (hung) ended, status 0x%x", c->name, status);
		return;
	}
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
	/* What it logged and wrote on stderr before it died (the fds may
	 * be resting; a pass reads 16 KiB) comes before the line about its
	 * end. */
	logrelay_close_log(sup, c);
	sup_drain_stderr(sup, c, 1);
	child_log_exit(c, status);
	status_child_down(sup, c, status, c->violated);
	c->violated = 0;
	c->hung = 0;
	c->start_failed = 0;
	ipc_chan_close(&c->ctl);
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
	struct mon_msg	 m;
	size_t		 i;

	if (c->role != ROLE_PUBLISHER)
		return (r->n_hide_paths == 0 ? 0 : -1);
	/* ipc_check() bounded the count and the lengths; the monitor
	 * forks the nodeservers. */
	mon_init(&m, MON_HIDE);
	for (i = 0; i < r->n_hide_paths && i < KP_IPC_MAX_HIDE; i++)
		snprintf(m.paths[i], sizeof(m.paths[i]), "%s",
		    r->hide_paths[i]);
	m.n = (uint32_t)i;
	(void)mon_send(sup->mon, &m, NULL, 0);
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
