/*
 * pub_stats.c - the publisher's counters for /metrics: API-server requests
 * by HTTP verb and status (each attempt, as client-go's
 * rest_client_requests_total), and its answer to the supervisor's
 * heartbeat, sent from its main loop (publisher.c) with the slices of
 * each pool.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "publisher/pub.h"

#define API_CODES	8	/* distinct codes kept per verb */

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int		 code;
	uint64_t	 count;
}			 api[KP_STATS_VERBS][API_CODES];

/* One attempt of method got status (0: no response). */
void
pub_stats_api(const char *method, long status)
{
	int	 v = kp_stats_verb_index(method), i, code;

	if (v == -1)
		return;
	code = status >= 100 && status <= 599 ? (int)status : 0;
	pthread_mutex_lock(&lock);
	for (i = 0; i < API_CODES; i++)
		if (api[v][i].count == 0 || api[v][i].code == code)
			break;
	if (i == API_CODES)
		i = API_CODES - 1;	/* rare: a ninth code shares the last */
	if (api[v][i].count == 0)
		api[v][i].code = code;
	api[v][i].count++;
	pthread_mutex_unlock(&lock);
}

void
pub_pong(struct pub *p, uint64_t seq)
{
	static char		 names[KP_STATS_POOLS][KP_IPC_MAX_POOL + 1];
	uint32_t		 counts[KP_STATS_POOLS];
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Pong		 pong = KPIPC__PONG__INIT;
	Kpipc__ApiStat		 as[KP_STATS_VERBS * API_CODES];
	Kpipc__ApiStat		*ap[KP_STATS_VERBS * API_CODES];
	Kpipc__PoolStat		 ps[KP_STATS_POOLS];
	Kpipc__PoolStat		*pp[KP_STATS_POOLS];
	size_t			 n = 0, i;
	int			 v, c;

	pong.seq = seq;
	pthread_mutex_lock(&lock);
	for (v = 0; v < KP_STATS_VERBS; v++)
		for (c = 0; c < API_CODES && api[v][c].count > 0; c++) {
			kpipc__api_stat__init(&as[n]);
			as[n].verb = (char *)kp_stats_verb(v);
			as[n].code = api[v][c].code;
			as[n].count = api[v][c].count;
			ap[n] = &as[n];
			n++;
			api[v][c].count = 0;
		}
	pthread_mutex_unlock(&lock);
	pong.api = ap;
	pong.n_api = n;
	pthread_mutex_lock(&p->lock);
	n = slice_ctl_pools(p->ctl, names, counts, KP_STATS_POOLS);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < n; i++) {
		kpipc__pool_stat__init(&ps[i]);
		ps[i].pool = names[i];
		ps[i].slices = counts[i];
		pp[i] = &ps[i];
	}
	pong.pools = pp;
	pong.n_pools = n;
	m.m_case = KPIPC__MSG__M_PONG;
	m.pong = &pong;
	if (pub_send(p, &m) != 0)
		log_warnx("cannot answer the supervisor's heartbeat");
}
