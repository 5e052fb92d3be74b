/*
 * stats.c - this process's gRPC counters for /metrics: calls by method
 * and status code, their latency by bucket, calls in progress. Kept here,
 * where every call starts and is answered, and taken by the loop that
 * answers the supervisor's heartbeat (rpc_stats_take), which sends what
 * changed since the last answer.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/rpc_int.h"

struct rpc_stat {
	uint64_t	 count;
	uint64_t	 buckets[KP_STATS_LAT_BOUNDS + 1];
	double		 seconds;
};

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpc_stat	 stats[KP_STATS_METHODS][KP_STATS_CODES];
static uint32_t		 in_flight[KP_STATS_METHODS];

static int64_t
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* A call of a registered method arrived. */
void
rpc_stats_start(struct rpc_call *call)
{
	int	 m = kp_stats_method_index(rpc_call_method(call));

	call->stats_method = m;
	if (m == -1)
		return;
	call->t0_us = now_us();
	pthread_mutex_lock(&lock);
	in_flight[m]++;
	pthread_mutex_unlock(&lock);
}

/* The call was answered with status, or (status -1) went without an
 * answer: it is no longer in progress, and only an answer is counted. */
void
rpc_stats_end(struct rpc_call *call, int status)
{
	int	 m = call->stats_method;
	double	 s;
	size_t	 b;

	if (m == -1)
		return;
	call->stats_method = -1;
	s = (double)(now_us() - call->t0_us) / 1e6;
	for (b = 0; b < KP_STATS_LAT_BOUNDS && s > kp_stats_lat_bounds[b];
	    b++)
		;
	pthread_mutex_lock(&lock);
	if (in_flight[m] > 0)
		in_flight[m]--;
	if (status >= 0 && status < KP_STATS_CODES) {
		stats[m][status].count++;
		stats[m][status].buckets[b]++;
		stats[m][status].seconds += s;
	}
	pthread_mutex_unlock(&lock);
}

/*
 * Move the counters since the last call into p (rpc and in_flight), and
 * zero them. The lists are allocated; rpc_stats_free() frees them. On
 * allocation failure nothing is taken (the counters stay for next time).
 */
int
rpc_stats_take(Kpipc__Pong *p)
{
	Kpipc__RpcStat	**rs;
	Kpipc__InFlight	**fl;
	size_t		 n = 0, nf = 0, m, c, cap;
	char		*mem;

	cap = KP_STATS_METHODS * KP_STATS_CODES;
	rs = calloc(cap, sizeof(*rs));
	fl = calloc(KP_STATS_METHODS, sizeof(*fl));
	mem = calloc(cap, sizeof(Kpipc__RpcStat) + (KP_STATS_LAT_BOUNDS + 1) *
	    sizeof(uint64_t));
	if (rs == NULL || fl == NULL || mem == NULL) {
		free(rs);
		free(fl);
		free(mem);
		return (KP_ENOMEM);
	}
	p->rpc = rs;
	p->in_flight = fl;
	pthread_mutex_lock(&lock);
	for (m = 0; m < KP_STATS_METHODS; m++) {
		for (c = 0; c < KP_STATS_CODES; c++) {
			struct rpc_stat	*st = &stats[m][c];
			Kpipc__RpcStat	*r;

			if (st->count == 0)
				continue;
			r = (Kpipc__RpcStat *)(mem + n * (sizeof(*r) +
			    (KP_STATS_LAT_BOUNDS + 1) * sizeof(uint64_t)));
			kpipc__rpc_stat__init(r);
			r->method = (char *)kp_stats_method((int)m);
			r->code = (int32_t)c;
			r->count = st->count;
			r->n_buckets = KP_STATS_LAT_BOUNDS + 1;
			r->buckets = (uint64_t *)(r + 1);
			memcpy(r->buckets, st->buckets, sizeof(st->buckets));
			r->seconds = st->seconds;
			rs[n++] = r;
			memset(st, 0, sizeof(*st));
		}
		if (in_flight[m] > 0) {
			Kpipc__InFlight *f = malloc(sizeof(*f));

			if (f == NULL)
				continue;
			kpipc__in_flight__init(f);
			f->method = (char *)kp_stats_method((int)m);
			f->calls = in_flight[m];
			fl[nf++] = f;
		}
	}
	pthread_mutex_unlock(&lock);
	p->n_rpc = n;
	p->n_in_flight = nf;
	if (n == 0) {
		free(mem);
		free(rs);
		p->rpc = NULL;
	}
	return (0);
}

void
rpc_stats_free(Kpipc__Pong *p)
{
	size_t	 i;

	if (p->n_rpc > 0)
		free(p->rpc[0]);	/* the block of every entry */
	free(p->rpc);
	for (i = 0; i < p->n_in_flight; i++)
		free(p->in_flight[i]);
	free(p->in_flight);
	p->rpc = NULL;
	p->in_flight = NULL;
	p->n_rpc = p->n_in_flight = 0;
}
