/*
 * heartbeat.c - the registrar's only reader of the supervisor's channel:
 * it answers each Ping with a Pong carrying the gRPC counters. It runs on
 * a thread of its own, beside the gRPC threads, so a stuck handler does
 * not silence it while the process is alive; a stopped or dead process
 * (SIGSTOP, a deadlock of the whole process) is what it reveals.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "registrar/registrar.h"

static void
reg_pong(struct reg_state *rs, uint64_t seq)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Pong	 p = KPIPC__PONG__INIT;

	p.seq = seq;
	(void)rpc_stats_take(&p);
	m.m_case = KPIPC__MSG__M_PONG;
	m.pong = &p;
	pthread_mutex_lock(&rs->ctl_lock);
	if (ipc_send(rs->ctl, &m) != 0)
		log_warnx("cannot answer the supervisor's heartbeat");
	pthread_mutex_unlock(&rs->ctl_lock);
	rpc_stats_free(&p);
}

static void *
reg_heartbeat(void *arg)
{
	struct reg_state	*rs = arg;
	struct pollfd		 pfd[2];
	Kpipc__Msg		*m;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	pfd[0].fd = rs->ctl->fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = rs->hb_stop[0];
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0 || ipc_read(rs->ctl) < 0)
			break;
		while ((r = ipc_next(rs->ctl, &m, err, sizeof(err))) > 0) {
			if (m->m_case == KPIPC__MSG__M_PING)
				reg_pong(rs, m->ping->seq);
			ipc_free(m);
		}
		if (r < 0)
			break;
	}
	return (NULL);
}

/* Threads of this process never take signals but SIGSYS (policy/). */
int
reg_heartbeat_start(struct reg_state *rs)
{
	sigset_t	 all, old;
	int		 r;

	if (pipe2(rs->hb_stop, O_CLOEXEC) == -1)
		return (KP_EIO);
	sigfillset(&all);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&rs->hb, NULL, reg_heartbeat, rs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		close(rs->hb_stop[0]);
		close(rs->hb_stop[1]);
		return (KP_ENOMEM);
	}
	rs->hb_started = 1;
	return (0);
}

void
reg_heartbeat_stop(struct reg_state *rs)
{
	if (!rs->hb_started)
		return;
	(void)!write(rs->hb_stop[1], "x", 1);
	pthread_join(rs->hb, NULL);
	close(rs->hb_stop[0]);
	close(rs->hb_stop[1]);
	rs->hb_started = 0;
}
