/*
 * heartbeat.c - the registrar's answer to the supervisor's heartbeat: a
 * Pong with the gRPC counters, sent by the reader of the supervisor's
 * channel (registration.c reg_reader), a thread beside the gRPC threads,
 * so a stuck handler does not silence it while the process is alive; a
 * stopped or dead process (SIGSTOP, a deadlock of the whole process) is
 * what it reveals.
 */
#include <pthread.h>

#include "base/log.h"
#include "registrar/registrar.h"

void
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
