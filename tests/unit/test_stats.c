/*
 * test_stats.c - the heartbeat's counters (ipc/stats.c) and the
 * observer's rendering (observer/render.c): which role may report what,
 * the bounds a hostile child cannot pass, that the observer may send
 * nothing but READY, and the Prometheus text of a snapshot (escaping).
 */
#include "test.h"

#include "ipc/ipc.h"
#include "observer/observer.h"

static Kpipc__RpcStat *
rpc(const char *method, int code, uint64_t n)
{
	static uint64_t		 buckets[4][KP_STATS_LAT_BOUNDS + 1];
	static Kpipc__RpcStat	 r[4];
	static int		 k;
	Kpipc__RpcStat		*x = &r[k % 4];

	kpipc__rpc_stat__init(x);
	memset(buckets[k % 4], 0, sizeof(buckets[0]));
	buckets[k % 4][0] = n;
	x->method = (char *)method;
	x->code = code;
	x->count = n;
	x->n_buckets = KP_STATS_LAT_BOUNDS + 1;
	x->buckets = buckets[k % 4];
	k++;
	return (x);
}

static void
test_pong(void)
{
	Kpipc__Pong		 p = KPIPC__PONG__INIT;
	Kpipc__RpcStat		*rs[1];
	Kpipc__ApiStat		 a = KPIPC__API_STAT__INIT, *ap[1] = { &a };
	Kpipc__PoolStat		 pl = KPIPC__POOL_STAT__INIT, *pp[1] = { &pl };
	Kpipc__DenialStat	 d = KPIPC__DENIAL_STAT__INIT, *dp[1] = { &d };
	char			 err[256];

	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)), 0);
	/* Methods: only those the role serves. */
	rs[0] = rpc("/pluginregistration.Registration/GetInfo", 0, 3);
	p.rpc = rs;
	p.n_rpc = 1;
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)), 0);
	CHECK_EQ(ipc_check_pong(ROLE_NODESERVER, &p, err, sizeof(err)),
	    KP_EPROTO);
	CHECK(strstr(err, "not a method the nodeserver serves") != NULL);
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)),
	    KP_EPROTO);
	rs[0] = rpc("/evil/Method\n{x=\"1\"}", 0, 1);
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	/* Codes, buckets, sums. */
	rs[0] = rpc("/pluginregistration.Registration/GetInfo", 17, 1);
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	rs[0] = rpc("/pluginregistration.Registration/GetInfo", 0, 1);
	rs[0]->count = 2;
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	CHECK(strstr(err, "do not add up") != NULL);
	rs[0] = rpc("/pluginregistration.Registration/GetInfo", 0, 1);
	rs[0]->n_buckets = 3;
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	rs[0] = rpc("/pluginregistration.Registration/GetInfo", 0, 1);
	rs[0]->seconds = -1;
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	p.n_rpc = KP_STATS_METHODS * KP_STATS_CODES + 1;
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	p.n_rpc = 0;
	/* The publisher's API requests and pools, nobody else's. */
	a.verb = "GET";
	a.code = 200;
	a.count = 1;
	p.api = ap;
	p.n_api = 1;
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)), 0);
	CHECK_EQ(ipc_check_pong(ROLE_NODESERVER, &p, err, sizeof(err)),
	    KP_EPROTO);
	a.verb = "TRACE";
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)),
	    KP_EPROTO);
	a.verb = "GET";
	a.code = 600;
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)),
	    KP_EPROTO);
	a.code = 0;	/* no response */
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)), 0);
	pl.pool = "node-1/gpus";
	pl.slices = 2;
	p.pools = pp;
	p.n_pools = 1;
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)), 0);
	pl.pool = "Bad\"Pool";
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)),
	    KP_EPROTO);
	pl.pool = "";
	CHECK_EQ(ipc_check_pong(ROLE_PUBLISHER, &p, err, sizeof(err)),
	    KP_EPROTO);
	p.n_pools = 0;
	p.n_api = 0;
	/* Denials: the nodeserver's, syscall names only. */
	d.syscall = "socket";
	d.count = 4;
	p.denials = dp;
	p.n_denials = 1;
	CHECK_EQ(ipc_check_pong(ROLE_NODESERVER, &p, err, sizeof(err)), 0);
	CHECK_EQ(ipc_check_pong(ROLE_REGISTRAR, &p, err, sizeof(err)),
	    KP_EPROTO);
	d.syscall = "socket\"}";
	CHECK_EQ(ipc_check_pong(ROLE_NODESERVER, &p, err, sizeof(err)),
	    KP_EPROTO);
	p.n_denials = 0;
	/* The observer reports nothing at all. */
	CHECK_EQ(ipc_check_pong(ROLE_OBSERVER, &p, err, sizeof(err)), 0);
	p.lock_waits = 1;
	CHECK_EQ(ipc_check_pong(ROLE_OBSERVER, &p, err, sizeof(err)),
	    KP_EPROTO);
}

/* The observer sends READY or START_FAILED while starting, then only
 * Pongs (without counters: test_pong). */
static void
test_observer_rules(void)
{
	static const int	 cases[] = {
	    KPIPC__MSG__M_REG_STATUS, KPIPC__MSG__M_CLAIM_GET,
	    KPIPC__MSG__M_CLAIM_REPLY, KPIPC__MSG__M_PUBLISH_STATUS,
	    KPIPC__MSG__M_CDI_WRITE, KPIPC__MSG__M_HEALTH_STALE,
	    KPIPC__MSG__M_STATUS, KPIPC__MSG__M_PING, KPIPC__MSG__M_PUBLISH,
	    KPIPC__MSG__M_STOP, KPIPC__MSG__M_RESULT };
	char			 err[256];
	size_t			 i;
	int			 s;

	CHECK_EQ(ipc_rule_gate(ROLE_OBSERVER, CS_STARTING,
	    KPIPC__MSG__M_READY, 100, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_OBSERVER, CS_READY, KPIPC__MSG__M_READY,
	    err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_OBSERVER, CS_READY, KPIPC__MSG__M_PONG,
	    err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_OBSERVER, CS_STARTING,
	    KPIPC__MSG__M_PONG, err, sizeof(err)), KP_EPROTO);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (s = CS_STOPPED; s <= CS_STOPPING; s++)
			CHECK_EQ(ipc_rule_check(ROLE_OBSERVER,
			    (enum child_state)s, cases[i], err, sizeof(err)),
			    KP_EPROTO);
	CHECK(strstr(err, "from the observer") != NULL);
	/* The supervisor's own frames come from no child. */
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_STATUS, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_PING, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_STARTING,
	    KPIPC__MSG__M_PONG, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_gate(ROLE_PUBLISHER, CS_READY, KPIPC__MSG__M_PONG,
	    64 * 1024 + 1, err, sizeof(err)), KP_EPROTO);
}

static void
test_render(void)
{
	Kpipc__Status	 st = KPIPC__STATUS__INIT;
	Kpipc__Family	 f = KPIPC__FAMILY__INIT, *fp[2] = { &f, NULL };
	Kpipc__Family	 bad = KPIPC__FAMILY__INIT;
	Kpipc__Sample	 s1 = KPIPC__SAMPLE__INIT, s2 = KPIPC__SAMPLE__INIT;
	Kpipc__Sample	*sp[2] = { &s1, &s2 };
	char		*l1[] = { "pool", "a\"b\\c\nd" };
	struct obs_state os;
	struct obs_reply r;
	char		*page;
	size_t		 len;

	f.name = "kubeletplugin_resourceslices";
	f.help = "Slices\nper pool.";
	f.type = "gauge";
	f.samples = sp;
	f.n_samples = 2;
	s1.labels = l1;
	s1.n_labels = 2;
	s1.value = 3;
	s2.value = 0.25;
	bad.name = "bad name";
	bad.type = "gauge";
	fp[1] = &bad;
	st.families = fp;
	st.n_families = 2;
	CHECK_EQ(obs_render_metrics(&st, &page, &len), 0);
	CHECK_STREQ(page,
	    "# HELP kubeletplugin_resourceslices Slices\\nper pool.\n"
	    "# TYPE kubeletplugin_resourceslices gauge\n"
	    "kubeletplugin_resourceslices{pool=\"a\\\"b\\\\c\\nd\"} 3\n"
	    "kubeletplugin_resourceslices 0.25\n");
	CHECK_EQ(len, strlen(page));
	free(page);

	/* Health from the snapshot, and its age. */
	memset(&os, 0, sizeof(os));
	obs_route(&os, "GET", "/healthz", 0, &r);
	CHECK_EQ(r.status, 503);
	st.live = 0;
	st.live_reason = "nodeserver has not answered\nthe heartbeat";
	st.ready = 0;
	st.ready_reason = "";
	CHECK_EQ(obs_state_update(&os, &st, 1000), 0);
	obs_route(&os, "GET", "/healthz", 1500, &r);
	CHECK_EQ(r.status, 503);
	CHECK_STREQ(r.body, "nodeserver has not answered the heartbeat\n");
	st.live = 1;
	st.ready = 0;
	st.ready_reason = "not registered with kubelet yet";
	CHECK_EQ(obs_state_update(&os, &st, 2000), 0);
	obs_route(&os, "GET", "/healthz", 2500, &r);
	CHECK_EQ(r.status, 200);
	CHECK_STREQ(r.body, "ok\n");
	obs_route(&os, "GET", "/readyz", 2500, &r);
	CHECK_EQ(r.status, 503);
	/* A supervisor that stopped sending: health fails. */
	obs_route(&os, "GET", "/healthz", 2000 + OBS_STALE_MS + 1000, &r);
	CHECK_EQ(r.status, 503);
	CHECK(strstr(r.body, "the supervisor has not reported for 6 s") !=
	    NULL);
	obs_route(&os, "GET", "/metrics", 2500, &r);
	CHECK_EQ(r.status, 200);
	CHECK_EQ(r.len, os.metrics_len);
	obs_route(&os, "DELETE", "/metrics", 2500, &r);
	CHECK_EQ(r.status, 405);
	obs_route(&os, "GET", "/metrics/../healthz", 2500, &r);
	CHECK_EQ(r.status, 404);
	obs_route(&os, NULL, NULL, 2500, &r);
	CHECK_EQ(r.status, 400);
	obs_state_free(&os);
}

int
main(void)
{
	test_pong();
	test_observer_rules();
	test_render();
	return (test_done("test_stats"));
}
