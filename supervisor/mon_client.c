/*
 * mon_client.c - the broker's side of the monitor's channels (ipc/mon.h):
 * what the monitor reports (a child started, failed to start or ended; a
 * socket's state; stop) and what the broker asks that needs privilege
 * (CDI spec files, the CDI directory again).
 *
 * Runs in: the broker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "supervisor/supervisor.h"

#define MON_CALL_MS	10000	/* the monitor answers at once; a wait
				 * this long means it is stuck or gone */

void
sup_mon_tell(struct sup *sup, enum mon_type type, int role, int pid,
    int arg, const char *text)
{
	struct mon_msg	 m;

	if (sup->mon == -1)
		return;
	mon_init(&m, type);
	m.role = role;
	m.pid = pid;
	m.arg = arg;
	if (text != NULL)
		snprintf(m.text, sizeof(m.text), "%s", text);
	if (mon_send(sup->mon, &m, NULL, 0) != 0)
		log_warnx("a frame to the monitor was lost (type %d)",
		    (int)type);
}

/* MON_SOCKET: the Events, the health and the restarts it calls for. */
static void
sup_mon_socket(struct sup *sup, const struct mon_msg *m)
{
	struct child	*c;

	switch (m->arg) {
	case MON_SOCK_OK:
	case MON_SOCK_BAD:
		status_set_socket(sup, m->role, m->arg == MON_SOCK_OK,
		    m->text);
		break;
	case MON_SOCK_LOST:
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "%s",
		    m->text);
		break;
	case MON_SOCK_SHUT:
		/* The monitor killed the holder: a violation of its. */
		c = &sup->children[m->role == 0 ? ROLE_NODESERVER :
		    m->role == 1 ? ROLE_REGISTRAR : ROLE_OBSERVER];
		if (c->pid > 0 && c->pid == m->pid) {
			log_errorx("%s: protocol violation: shut down its "
			    "listening socket; killing it (the monitor "
			    "did)", c->name);
			c->violated = 1;
			c->state = CS_STOPPING;
			if (sup->phase == PHASE_RUNNING)
				chan_error(sup, KP_EPROTO, 1, "%s: protocol "
				    "violation: shut down its listening "
				    "socket; killed, restarting it", c->name);
		}
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_RECREATED,
		    "%s", m->text);
		if (m->role == SUP_LISTEN_DRA)
			child_kill(&sup->children[ROLE_REGISTRAR], SIGTERM);
		break;
	case MON_SOCK_RECREATED:
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_RECREATED,
		    "%s", m->text);
		/* The nodeserver on the new listener (drained), and the
		 * registrar on the new registration socket: kubelet
		 * registers again and dials the new one. */
		if (m->role == SUP_LISTEN_DRA)
			drain_restart(sup, &sup->children[ROLE_NODESERVER]);
		child_kill(&sup->children[ROLE_REGISTRAR], SIGTERM);
		break;
	default:
		break;
	}
}

/* What the monitor sent on the control channel. */
void
sup_mon_read(struct sup *sup)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 fds[MON_MAX_FDS], r, budget = 64;
	size_t		 n, i;

	while (sup->mon != -1 && budget-- > 0) {
		if ((r = mon_recv(sup->mon, &m, fds, &n, err,
		    sizeof(err))) == 0)
			return;
		if (r < 0) {
			/* The monitor is gone (its children with it): no
			 * process can be started or signalled any more. */
			log_errorx("the monitor's channel ended (%s): stopping",
			    r == KP_EPIPE ? "closed" : err);
			close(sup->mon);
			sup->mon = -1;
			child_mon_init(-1);
			sup->exit_code = 1;
			for (i = 0; i < ROLE_COUNT; i++) {
				sup->children[i].pid = -1;
				sup->children[i].spawning = 0;
			}
			sup_begin_stop(sup);
			return;
		}
		switch (m.type) {
		case MON_STARTED:
			child_started(sup, &m, fds, n);
			continue;	/* it took the fds */
		case MON_SPAWN_FAILED:
			child_spawn_failed(sup, &m);
			break;
		case MON_EXITED:
			child_exited(sup, &m);
			break;
		case MON_SOCKET:
			if (m.role >= 0 && m.role <= 2)
				sup_mon_socket(sup, &m);
			break;
		case MON_STOP:
			if (m.arg != 0)
				sup->exit_code = m.arg;
			sup_begin_stop(sup);
			break;
		default:
			log_errorx("monitor: frame type %u ignored", m.type);
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
}

/* A request on the files channel: 0, or KP_EIO with err. */
static int
call(struct sup *sup, struct mon_msg *req, int fd, int *rfd, char *err,
    size_t errsize)
{
	struct mon_msg	 res;
	int		 r;

	if ((r = mon_call(sup->mon_files, req, &fd, fd != -1, &res, rfd,
	    MON_CALL_MS, err, errsize)) != 0)
		return (KP_EIO);
	if (res.arg != 0) {
		snprintf(err, errsize, "%s", res.text[0] != '\0' ? res.text :
		    strerror(res.arg));
		if (*rfd != -1)
			close(*rfd);
		*rfd = -1;
		return (KP_EIO);
	}
	return (0);
}

/* Spec name with data written (as root, 0644) by the monitor. */
int
sup_mon_put(struct sup *sup, const char *name, const uint8_t *data,
    size_t len, char *err, size_t errsize)
{
	struct mon_msg	 m;
	int		 fd, rfd, r;

	if ((fd = memfd_create("kp-cdi", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 || fd_write_all(fd, data, len) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1) {
		snprintf(err, errsize, "CDI spec %s: memfd: %s", name,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return (KP_EIO);
	}
	mon_init(&m, MON_PUT);
	snprintf(m.text, sizeof(m.text), "%s", name);
	r = call(sup, &m, fd, &rfd, err, errsize);
	close(fd);
	return (r);
}

int
sup_mon_remove(struct sup *sup, const char *name, char *err, size_t errsize)
{
	struct mon_msg	 m;
	int		 rfd;

	mon_init(&m, MON_REMOVE);
	snprintf(m.text, sizeof(m.text), "%s", name);
	return (call(sup, &m, -1, &rfd, err, errsize));
}

/* The CDI directory, made again by the monitor: its new fd, or -1. */
int
sup_mon_reopen(struct sup *sup)
{
	struct mon_msg	 m;
	char		 err[KP_ERROR_SIZE];
	int		 rfd;

	mon_init(&m, MON_REOPEN);
	if (call(sup, &m, -1, &rfd, err, sizeof(err)) != 0) {
		log_warnx("CDI directory: %s", err);
		return (-1);
	}
	return (rfd);
}
