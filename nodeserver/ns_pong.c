/*
 * ns_pong.c - the nodeserver's answer to the supervisor's heartbeat, from
 * its reader thread (ns_wrap.c): the gRPC counters (rpc/stats.c), waits
 * for the serialization lock, and the syscalls the sandbox denied to the
 * hooks, each as what changed since the last answer.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "nodeserver/dra.h"
#include "nodeserver/ns_wrap.h"
#include "policy/policy.h"

/* Only the reader thread calls ns_pong(): no lock for these. */
static unsigned long	 denied_sent[POL_NAMES_MAX];
static uint64_t		 waits_sent, wait_ns_sent;

static size_t
ns_denials(Kpipc__DenialStat *ds, Kpipc__DenialStat **dp)
{
	unsigned long	 c;
	size_t		 n = 0;
	int		 nr;

	for (nr = 0; nr < POL_NAMES_MAX && n < KP_STATS_DENIALS; nr++) {
		if ((c = pol_denied_count(nr)) == denied_sent[nr] ||
		    pol_sigsys_name(nr) == NULL)
			continue;
		kpipc__denial_stat__init(&ds[n]);
		ds[n].syscall = (char *)pol_sigsys_name(nr);
		ds[n].count = c - denied_sent[nr];
		denied_sent[nr] = c;
		dp[n] = &ds[n];
		n++;
	}
	return (n);
}

void
ns_pong(struct ns_wrap *w, uint64_t seq)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Pong		 p = KPIPC__PONG__INIT;
	Kpipc__DenialStat	 ds[KP_STATS_DENIALS];
	Kpipc__DenialStat	*dp[KP_STATS_DENIALS];
	uint64_t		 waits = atomic_load(&dra_lock_waits);
	uint64_t		 ns = atomic_load(&dra_lock_wait_ns);

	p.seq = seq;
	(void)rpc_stats_take(&p);
	p.lock_waits = waits - waits_sent;
	p.lock_wait_seconds = (double)(ns - wait_ns_sent) / 1e9;
	waits_sent = waits;
	wait_ns_sent = ns;
	p.denials = dp;
	p.n_denials = ns_denials(ds, dp);
	m.m_case = KPIPC__MSG__M_PONG;
	m.pong = &p;
	if (ns_wrap_send(w, &m) != 0)
		log_warnx("cannot answer the supervisor's heartbeat");
	p.denials = NULL;
	p.n_denials = 0;
	rpc_stats_free(&p);
}
