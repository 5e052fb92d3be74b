/*
 * test_dra.c - the DRA translation layer through dra_prepare() and
 * dra_unprepare(), without gRPC. Requests are written byte by byte here
 * (not with our codec); responses are read back with each version's own
 * generated code where the versions differ (share_id).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "nodeserver/dra.h"
#include "dra_v1.pb-c.h"
#include "dra_v1beta1.pb-c.h"
#include "dra_v1alpha4.pb-c.h"
#include "test.h"

typedef V1T(NodePrepareResourcesResponse)
    PrepResp;
typedef V1T(NodePrepareResourceResponse)
    PrepClaim;
typedef V1T(NodeUnprepareResourcesResponse)
    UnprepResp;

static const enum dra_version versions[] = { DRA_V1ALPHA4, DRA_V1BETA1,
    DRA_V1 };

/* ---- requests, encoded by hand: Claim{1 ns, 2 uid, 3 name} in field 1 */

struct wire {
	uint8_t	b[4096];
	size_t	n;
};

static void
wire_str(struct wire *w, int field, const char *s)
{
	size_t	len = strlen(s);

	w->b[w->n++] = (uint8_t)(field << 3 | 2);
	w->b[w->n++] = (uint8_t)len;		/* short strings only */
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

static void
wire_claim(struct wire *w, const char *ns, const char *uid, const char *name)
{
	struct wire	c = { .n = 0 };

	wire_str(&c, 1, ns);
	wire_str(&c, 2, uid);
	wire_str(&c, 3, name);
	w->b[w->n++] = 1 << 3 | 2;
	w->b[w->n++] = (uint8_t)c.n;
	memcpy(w->b + w->n, c.b, c.n);
	w->n += c.n;
}

/* Claims "ns"/"c<i>" with UIDs "u<i>", i = 1..n. */
static void
wire_claims(struct wire *w, int n)
{
	char	uid[16], name[16];
	int	i;

	w->n = 0;
	for (i = 1; i <= n; i++) {
		snprintf(uid, sizeof(uid), "u%d", i);
		snprintf(name, sizeof(name), "c%d", i);
		wire_claim(w, "ns", uid, name);
	}
}

/* ---- the test driver */

struct seen {
	char	uid[32];
	size_t	n_results;
	char	pool[32];
	char	request[32];
	char	config[64];
	int	has_config;
};

static struct {
	int		 calls;
	size_t		 n;
	struct seen	 claims[8];
	const char	*fail_uid;	/* per-claim error for this UID */
	int		 fail_all;	/* hook returns an error */
	int		 bad_device;	/* add a device without pool */
	int		 extra_every;	/* claims i % extra_every == 0 */
	int		 extra;		/* get this many more devices */
	int		 slow;		/* serialization test */
	atomic_int	 inside;
	atomic_int	 overlap;
	int		 cancel_seen;
} drv;

static void
record(const struct kp_claim *claims, size_t n)
{
	size_t	i;

	drv.calls++;
	drv.n = n;
	for (i = 0; i < n && i < 8; i++) {
		memset(&drv.claims[i], 0, sizeof(drv.claims[i]));
		snprintf(drv.claims[i].uid, 32, "%s", claims[i].uid);
		drv.claims[i].n_results = claims[i].n_results;
		if (claims[i].n_results > 0) {
			snprintf(drv.claims[i].pool, 32, "%s",
			    claims[i].results[0].pool);
			snprintf(drv.claims[i].request, 32, "%s",
			    claims[i].results[0].request);
		}
		drv.claims[i].has_config = claims[i].config_json != NULL;
		if (claims[i].config_json != NULL)
			snprintf(drv.claims[i].config, 64, "%s",
			    claims[i].config_json);
	}
}

/* Wait up to ms for another hook to be inside too. */
static void
wait_for_company(int ms)
{
	struct timespec	ts = { 0, 1000000 };
	int		i;

	if (atomic_fetch_add(&drv.inside, 1) > 0)
		atomic_store(&drv.overlap, 1);
	for (i = 0; i < ms && atomic_load(&drv.overlap) == 0; i++)
		nanosleep(&ts, NULL);
	atomic_fetch_sub(&drv.inside, 1);
}

static int
t_prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 d;
	const char			*req[] = { "req/sub" };
	const char			*cdi[1];
	char				 dev[32], id[64], share[32];
	size_t				 i;

	if (drv.slow) {
		wait_for_company(300);
		return (0);
	}
	record(claims, n);
	drv.cancel_seen = kp_prepare_cancelled(res);
	if (drv.fail_all) {
		snprintf(errbuf, errsize, "driver says no");
		return (KP_EHOOK);
	}
	for (i = 0; i < n; i++) {
		snprintf(dev, sizeof(dev), "dev-%s", claims[i].uid);
		snprintf(id, sizeof(id), "vendor.com/class=%s", claims[i].uid);
		snprintf(share, sizeof(share), "share-%s", claims[i].uid);
		cdi[0] = id;
		memset(&d, 0, sizeof(d));
		d.struct_size = sizeof(d);
		d.request_names = req;
		d.n_request_names = 1;
		d.pool_name = drv.bad_device && i == 0 ? "" : "pool";
		d.device_name = dev;
		d.cdi_device_ids = cdi;
		d.n_cdi_device_ids = 1;
		d.share_id = share;
		if (kp_prepare_add_device(res, i, &d) != 0 &&
		    !(drv.bad_device && i == 0))
			return (KP_EIO);
		if (drv.extra_every > 0 && i % (size_t)drv.extra_every == 0)
			for (int k = 0; k < drv.extra; k++)
				if (kp_prepare_add_device(res, i, &d) != 0)
					return (KP_EIO);
		if (drv.fail_uid != NULL &&
		    strcmp(claims[i].uid, drv.fail_uid) == 0)
			kp_prepare_claim_error(res, i, "boom");
	}
	return (0);
}

static int
t_unprepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	size_t	i;

	if (drv.slow) {
		wait_for_company(300);
		return (0);
	}
	record(claims, n);
	if (drv.fail_all) {
		snprintf(errbuf, errsize, "cannot unprepare");
		return (KP_EHOOK);
	}
	for (i = 0; i < n; i++)
		if (drv.fail_uid != NULL &&
		    strcmp(claims[i].uid, drv.fail_uid) == 0)
			CHECK_EQ(kp_unprepare_claim_error(res, i, "stuck"), 0);
	return (0);
}

static struct kp_options	opts;
static struct kp_hooks		hooks = { NULL, t_prepare, t_unprepare,
				    NULL };

static void
reset(struct dra_ctx *ctx)
{
	memset(&drv, 0, sizeof(drv));
	memset(&opts, 0, sizeof(opts));
	opts.v1 = opts.v1beta1 = 1;
	opts.serialize = 1;
	dra_free(ctx);
	CHECK_EQ(dra_init(ctx, &opts, &hooks), 0);
}

/* ---- response helpers (v1 messages read every version: same wire) */

static int
prepare(struct dra_ctx *ctx, enum dra_version v, const struct wire *w,
    PrepResp **out, char *msg)
{
	uint8_t	*resp;
	size_t	 len;
	int	 st;

	*out = NULL;
	st = dra_prepare(ctx, v, w->b, w->n, NULL, NULL, &resp, &len, msg,
	    KP_ERROR_SIZE);
	if (st == RPC_OK) {
		*out = V1(node_prepare_resources_response__unpack)(NULL, len,
		    resp);
		CHECK(*out != NULL);
	} else
		CHECK(resp == NULL);
	free(resp);
	return (st);
}

static const PrepClaim *
entry(const PrepResp *r, const char *uid)
{
	size_t	i;

	for (i = 0; r != NULL && i < r->n_claims; i++)
		if (strcmp(r->claims[i]->key, uid) == 0)
			return (r->claims[i]->value);
	return (NULL);
}

static void
resp_free(PrepResp *r)
{
	if (r != NULL)
		V1(node_prepare_resources_response__free_unpacked)(r, NULL);
}

/* ---- tests */

static void
test_prepare_three(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	PrepResp	*r;
	const PrepClaim	*c;
	char		 msg[KP_ERROR_SIZE], uid[8], dev[16];
	int		 i;

	reset(ctx);
	wire_claims(&w, 3);
	drv.fail_uid = "u2";
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_OK);
	CHECK_EQ(drv.calls, 1);
	CHECK_EQ(drv.n, 3);
	CHECK_EQ(r != NULL ? r->n_claims : 0, 3);
	for (i = 1; i <= 3; i++) {
		snprintf(uid, sizeof(uid), "u%d", i);
		snprintf(dev, sizeof(dev), "dev-u%d", i);
		c = entry(r, uid);
		CHECK(c != NULL);
		if (c == NULL)
			continue;
		if (i == 2) {
			CHECK_STREQ(c->error, "boom");
			CHECK_EQ(c->n_devices, 0);
			continue;
		}
		CHECK_STREQ(c->error, "");
		CHECK_EQ(c->n_devices, 1);
		if (c->n_devices != 1)
			continue;
		CHECK_STREQ(c->devices[0]->pool_name, "pool");
		CHECK_STREQ(c->devices[0]->device_name, dev);
		CHECK_EQ(c->devices[0]->n_request_names, 1);
		CHECK_STREQ(c->devices[0]->request_names[0], "req");
		CHECK_EQ(c->devices[0]->n_cdi_device_ids, 1);
		CHECK_CONTAINS(c->devices[0]->cdi_device_ids[0], uid);
	}
	resp_free(r);
}

/*
 * Many claims in one call, one UID twice: the decoder's arena outgrows
 * its first chunk, a claim's devices outgrow the room for one in the
 * results' block, and a failed claim drops devices in either place.
 */
static void
test_prepare_many(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	PrepResp	*r;
	const PrepClaim	*c;
	char		 msg[KP_ERROR_SIZE], uid[16];
	int		 i, n = 150;

	reset(ctx);
	wire_claims(&w, n);
	wire_claim(&w, "ns", "u7", "c7");	/* the same claim again */
	drv.extra_every = 3;
	drv.extra = 5;		/* 6 devices: one, then 4, then 8 */
	drv.fail_uid = "u4";	/* 6 devices, dropped */
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_OK);
	CHECK_EQ(drv.n, (size_t)n);
	CHECK_EQ(r != NULL ? r->n_claims : 0, (size_t)n);
	for (i = 1; i <= n; i++) {
		snprintf(uid, sizeof(uid), "u%d", i);
		c = entry(r, uid);
		CHECK(c != NULL);
		if (c == NULL)
			continue;
		if (i == 4) {
			CHECK_STREQ(c->error, "boom");
			CHECK_EQ(c->n_devices, 0);
			continue;
		}
		CHECK_STREQ(c->error, "");
		CHECK_EQ(c->n_devices, (i - 1) % 3 == 0 ? 6u : 1u);
		if (c->n_devices > 0)
			CHECK_CONTAINS(c->devices[c->n_devices - 1]->
			    cdi_device_ids[0], uid);
	}
	resp_free(r);
}

static void
test_prepare_failures(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	PrepResp	*r;
	char		 msg[KP_ERROR_SIZE];
	const uint8_t	 junk[] = { 0x0a, 0x7f, 0x01 };
	size_t		 i;
	static const struct {
		int		 before;	/* valid claims first */
		const char	*ns, *uid, *name, *want;
	} bad[] = {
		{ 1, "ns", "", "c2", "claims[1].uid: required" },
		{ 2, "", "u3", "c3", "claims[2].namespace: required" },
		{ 0, "ns", "u1", "", "claims[0].name: required" },
		{ 0, "ns", "u1", "../etc", "claims[0].name: must be a DNS" },
		{ 0, "NS", "u1", "c1", "claims[0].namespace: must be a DNS" },
		{ 0, "ns", "u/1", "c1", "claims[0] ns/c1: uid \"u/1\": at most 128" },
		{ 0, "ns", ".", "c1", "claims[0] ns/c1: uid \".\": at most" },
		{ 0, "ns", "..", "c1", "claims[0] ns/c1: uid \"..\": at most" },
		{ 0, "ns", "...", "c1", "claims[0] ns/c1: uid \"...\": at most" },
		{ 0, "ns", ".hidden", "c1", "starting and ending with a letter" },
		{ 0, "ns", "a\nb", "c1", "claims[0] ns/c1: uid \"a?b\": at most" },
		{ 0, "ns", "a\x1b[31m", "c1", "uid \"a?[31m\"" }
	};

	reset(ctx);
	wire_claims(&w, 2);
	drv.fail_all = 1;
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_INTERNAL);
	CHECK_STREQ(msg, "prepare resource claims: driver says no");

	reset(ctx);
	memcpy(w.b, junk, sizeof(junk));
	w.n = sizeof(junk);
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_INVALID_ARGUMENT);
	CHECK_CONTAINS(msg, dra_version(v)->prepare_path);
	CHECK_CONTAINS(msg, "malformed");
	CHECK_EQ(drv.calls, 0);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wire_claims(&w, bad[i].before);
		wire_claim(&w, bad[i].ns, bad[i].uid, bad[i].name);
		CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_INVALID_ARGUMENT);
		CHECK_CONTAINS(msg, bad[i].want);
	}
	CHECK_EQ(drv.calls, 0);
}

static void
test_duplicates(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	PrepResp	*r;
	char		 msg[KP_ERROR_SIZE];

	reset(ctx);
	wire_claims(&w, 2);
	wire_claim(&w, "ns", "u1", "c1");
	wire_claim(&w, "ns", "u2", "c2");
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_OK);
	CHECK_EQ(drv.calls, 1);
	CHECK_EQ(drv.n, 2);
	CHECK_STREQ(drv.claims[0].uid, "u1");
	CHECK_STREQ(drv.claims[1].uid, "u2");
	CHECK_EQ(r != NULL ? r->n_claims : 0, 2);
	resp_free(r);

	wire_claims(&w, 2);
	wire_claim(&w, "ns", "u1", "other");
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_INVALID_ARGUMENT);
	CHECK_CONTAINS(msg, "claims[2].uid: repeats claims[0]");
}

#define V1B1(f)	k8s__io__kubelet__pkg__apis__dra__v1beta1__##f
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesResponse
    B1Resp;
typedef V1alpha3__NodePrepareResourcesResponse A4Resp;

/* share_id: on the wire for v1 only; older versions read it as nothing. */
static void
test_share_id(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire		 w;
	uint8_t			*resp;
	size_t			 len;
	char			 msg[KP_ERROR_SIZE];
	PrepResp		*r;
	const V1T(Device)	*d = NULL;
	B1Resp			*b;
	A4Resp			*a;

	reset(ctx);
	wire_claims(&w, 1);
	CHECK_EQ(dra_prepare(ctx, v, w.b, w.n, NULL, NULL, &resp, &len, msg,
	    sizeof(msg)), RPC_OK);
	r = V1(node_prepare_resources_response__unpack)(NULL, len, resp);
	if (r != NULL && r->n_claims == 1 &&
	    r->claims[0]->value->n_devices == 1)
		d = r->claims[0]->value->devices[0];
	CHECK(d != NULL);
	if (d != NULL && v == DRA_V1) {
		CHECK_EQ(d->_share_id_case, V1_SHARE_ID_SET);
		CHECK_STREQ(d->share_id, "share-u1");
	} else if (d != NULL)
		CHECK_EQ(d->_share_id_case, V1_SHARE_ID_NOT_SET);
	resp_free(r);
	/* Each older version's own decoder sees no unknown field. */
	if (v == DRA_V1BETA1) {
		b = V1B1(node_prepare_resources_response__unpack)(NULL, len,
		    resp);
		CHECK(b != NULL && b->n_claims == 1);
		if (b != NULL && b->n_claims == 1)
			CHECK_EQ(b->claims[0]->value->devices[0]->base.
			    n_unknown_fields, 0);
		V1B1(node_prepare_resources_response__free_unpacked)(b, NULL);
	} else if (v == DRA_V1ALPHA4) {
		a = v1alpha3__node_prepare_resources_response__unpack(NULL, len,
		    resp);
		CHECK(a != NULL && a->n_claims == 1);
		if (a != NULL && a->n_claims == 1)
			CHECK_EQ(a->claims[0]->value->devices[0]->base.
			    n_unknown_fields, 0);
		v1alpha3__node_prepare_resources_response__free_unpacked(a,
		    NULL);
	}
	free(resp);
}

static int
fake_lookup(void *user, const char *ns, const char *name, const char *uid,
    struct dra_claim_alloc *out, char *err, size_t errsize)
{
	(*(int *)user)++;
	if (strcmp(uid, "u2") == 0) {
		dra_claim_alloc_add(out, "req", "half", "done", 0);
		snprintf(err, errsize, "claim %s/%s got replaced", ns, name);
		return (1);
	}
	if (dra_claim_alloc_add(out, "req/sub", "pool-a", "gpu-0", 1) != 0 ||
	    dra_claim_alloc_config(out, "[{\"a\":1}]", "d",
	    err, errsize) != 0)
		return (1);
	return (0);
}

static void
test_lookup(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	PrepResp	*r;
	const PrepClaim	*c;
	char		 msg[KP_ERROR_SIZE];
	int		 lookups = 0;

	reset(ctx);
	ctx->lookup = fake_lookup;
	ctx->lookup_user = &lookups;
	wire_claims(&w, 3);
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_OK);
	CHECK_EQ(lookups, 3);
	CHECK_EQ(drv.n, 2);
	CHECK_STREQ(drv.claims[0].uid, "u1");
	CHECK_STREQ(drv.claims[1].uid, "u3");
	CHECK_EQ(drv.claims[1].n_results, 1);
	CHECK_STREQ(drv.claims[1].pool, "pool-a");
	CHECK_STREQ(drv.claims[1].request, "req/sub");
	CHECK_STREQ(drv.claims[1].config, "[{\"a\":1}]");
	CHECK_EQ(r != NULL ? r->n_claims : 0, 3);
	c = entry(r, "u2");
	CHECK(c != NULL && strcmp(c->error, "claim ns/c2 got replaced") == 0);
	c = entry(r, "u3");
	CHECK(c != NULL && c->error[0] == '\0' && c->n_devices == 1);
	resp_free(r);

	/* No Kubernetes access: the hook gets bare claims. */
	reset(ctx);
	CHECK_EQ(prepare(ctx, v, &w, &r, msg), RPC_OK);
	CHECK_EQ(drv.n, 3);
	CHECK_EQ(drv.claims[0].n_results, 0);
	CHECK_EQ(drv.claims[0].has_config, 0);
	resp_free(r);
}

static void
test_unprepare(struct dra_ctx *ctx, enum dra_version v)
{
	struct wire	 w;
	UnprepResp	*r;
	uint8_t		*resp;
	size_t		 len, i;
	char		 msg[KP_ERROR_SIZE];
	int		 lookups = 0;

	reset(ctx);
	ctx->lookup = fake_lookup;
	ctx->lookup_user = &lookups;
	drv.fail_uid = "u3";
	wire_claims(&w, 3);
	CHECK_EQ(dra_unprepare(ctx, v, w.b, w.n, NULL, NULL, &resp, &len, msg,
	    sizeof(msg)), RPC_OK);
	CHECK_EQ(lookups, 0);
	CHECK_EQ(drv.n, 3);
	r = V1(node_unprepare_resources_response__unpack)(NULL, len, resp);
	CHECK(r != NULL && r->n_claims == 3);
	for (i = 0; r != NULL && i < r->n_claims; i++)
		CHECK_STREQ(r->claims[i]->value->error,
		    strcmp(r->claims[i]->key, "u3") == 0 ? "stuck" : "");
	V1(node_unprepare_resources_response__free_unpacked)(r, NULL);
	free(resp);

	drv.fail_all = 1;
	CHECK_EQ(dra_unprepare(ctx, v, w.b, w.n, NULL, NULL, &resp, &len, msg,
	    sizeof(msg)), RPC_INTERNAL);
	CHECK_STREQ(msg, "unprepare resource claims: cannot unprepare");
	w.n = 2;
	CHECK_EQ(dra_unprepare(ctx, v, w.b, w.n, NULL, NULL, &resp, &len, msg,
	    sizeof(msg)), RPC_INVALID_ARGUMENT);
	CHECK_CONTAINS(msg, dra_version(v)->unprepare_path);
}

static void
test_advertised(void)
{
	struct kp_options	 o;
	char			 got[128];
	size_t			 n, i;
	int			 mask;
	static const char	*want[8] = {
		"",
		"v1alpha3.NodeService 1.0.0",
		"v1beta1.DRAPlugin",
		"v1beta1.DRAPlugin v1alpha3.NodeService 1.0.0",
		"v1.DRAPlugin",
		"v1.DRAPlugin v1alpha3.NodeService 1.0.0",
		"v1.DRAPlugin v1beta1.DRAPlugin",
		"v1.DRAPlugin v1beta1.DRAPlugin v1alpha3.NodeService 1.0.0"
	};

	for (mask = 0; mask < 8; mask++) {
		memset(&o, 0, sizeof(o));
		o.health_off = 1;	/* health entries: test_health.c */
		o.v1alpha4 = mask & 1;
		o.v1beta1 = (mask >> 1) & 1;
		o.v1 = (mask >> 2) & 1;
		opt_advertise(&o);
		n = o.n_advertised;
		got[0] = '\0';
		for (i = 0; i < n; i++) {
			if (i > 0)
				strcat(got, " ");
			strcat(got, o.advertised[i]);
		}
		CHECK_STREQ(got, want[mask]);
	}
	o.v1alpha4 = o.v1beta1 = o.v1 = 1;
	opt_advertise(&o);
	CHECK_EQ(o.n_advertised, 4);
}

static void
test_methods(struct dra_ctx *ctx)
{
	struct rpc_method	m[8];
	size_t			n;

	reset(ctx);
	n = dra_methods(ctx, m, 8);
	CHECK_EQ(n, 4);
	CHECK_STREQ(m[0].path,
	    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources");
	CHECK_STREQ(m[3].path, "/k8s.io.kubelet.pkg.apis.dra.v1beta1."
	    "DRAPlugin/NodeUnprepareResources");
	CHECK(m[0].handler != NULL && m[0].format_request != NULL);
	opts.v1alpha4 = 1;
	n = dra_methods(ctx, m, 8);
	CHECK_EQ(n, 6);
	CHECK_STREQ(m[4].path, "/v1alpha3.Node/NodePrepareResources");
	CHECK_EQ(dra_methods(ctx, m, 3), 2);
}

static void
test_format(struct dra_ctx *ctx)
{
	struct wire	 w;
	uint8_t		*resp;
	size_t		 len;
	char		 msg[KP_ERROR_SIZE], out[512], small[16];

	wire_claims(&w, 1);
	dra_format_request(w.b, w.n, out, sizeof(out));
	CHECK_STREQ(out,
	    "{claims:[{namespace:\"ns\",uid:\"u1\",name:\"c1\"}]}");
	dra_format_request(w.b, w.n, small, sizeof(small));
	CHECK_STREQ(small, "{claims:[{na...");
	dra_format_request((const uint8_t *)"\x0a\x7f", 2, out, sizeof(out));
	CHECK_CONTAINS(out, "malformed");
	reset(ctx);
	drv.fail_uid = "u1";
	CHECK_EQ(dra_prepare(ctx, DRA_V1, w.b, w.n, NULL, NULL, &resp, &len,
	    msg, sizeof(msg)), RPC_OK);
	dra_format_prepare_response(resp, len, out, sizeof(out));
	CHECK_STREQ(out, "{claims:{\"u1\":{devices:[],error:\"boom\"}}}");
	free(resp);
	drv.fail_uid = NULL;
	CHECK_EQ(dra_prepare(ctx, DRA_V1, w.b, w.n, NULL, NULL, &resp, &len,
	    msg, sizeof(msg)), RPC_OK);
	dra_format_prepare_response(resp, len, out, sizeof(out));
	CHECK_STREQ(out, "{claims:{\"u1\":{devices:[{pool_name:\"pool\","
	    "device_name:\"dev-u1\",request_names:[\"req\"],cdi_device_ids:"
	    "[\"vendor.com/class=u1\"],share_id:\"share-u1\"}]}}}");
	free(resp);
}

/* Builders: bad input fails the claim; errors are cut and made UTF-8. */
static int
b_prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	d = { KP_PREPARED_DEVICE_INIT,
					    .pool_name = "p", .device_name = "d" };
	char				long_msg[3000];
	const char			*nul_names[] = { NULL };

	CHECK_EQ(kp_prepare_add_device(res, n, &d), KP_EINVAL);
	CHECK_EQ(kp_prepare_add_device(NULL, 0, &d), KP_EINVAL);
	CHECK_EQ(kp_prepare_claim_error(res, 7, "x"), KP_EINVAL);
	CHECK_EQ(kp_prepare_cancelled(NULL), 0);
	drv.cancel_seen = kp_prepare_cancelled(res);
	d.device_name = NULL;
	CHECK_EQ(kp_prepare_add_device(res, 0, &d), KP_EINVAL);
	d.device_name = "d";
	d.request_names = nul_names;
	d.n_request_names = 1;
	CHECK_EQ(kp_prepare_add_device(res, 1, &d), KP_EINVAL);
	memset(long_msg, 'e', sizeof(long_msg));
	long_msg[0] = '\xff';
	long_msg[sizeof(long_msg) - 1] = '\0';
	CHECK_EQ(kp_prepare_claim_error(res, 2, long_msg), 0);
	CHECK_EQ(kp_prepare_claim_error(res, 3, ""), KP_EINVAL);
	return (0);
}

/* struct_size and CDI device IDs: claims 0-2 fail, 3 succeeds. */
static int
b2_prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	const char	*bad[] = { "vendor.com/class=ok", "not a cdi id" };
	const char	*good[] = { "vendor.com/class=dev-0:a.b_c" };
	struct {
		struct kp_prepared_device	d;
		void				*later;	/* a newer field */
	}		 newer;

	memset(&newer, 0, sizeof(newer));
	newer.d = (struct kp_prepared_device){ KP_PREPARED_DEVICE_INIT,
	    .pool_name = "p", .device_name = "d" };
	newer.d.struct_size = 0;
	CHECK_EQ(kp_prepare_add_device(res, 0, &newer.d), KP_EINVAL);
	newer.d.struct_size = sizeof(newer.d);
	newer.d.cdi_device_ids = bad;
	newer.d.n_cdi_device_ids = 2;
	CHECK_EQ(kp_prepare_add_device(res, 1, &newer.d), KP_EINVAL);
	newer.d.struct_size = sizeof(newer);
	newer.d.cdi_device_ids = good;
	newer.d.n_cdi_device_ids = 1;
	newer.later = &newer;
	CHECK_EQ(kp_prepare_add_device(res, 2, &newer.d), KP_EINVAL);
	newer.later = NULL;
	CHECK_EQ(kp_prepare_add_device(res, 3, &newer.d), 0);
	return (0);
}

static int
cancel_yes(void *arg)
{
	return (*(int *)arg);
}

static void
test_builders(struct dra_ctx *ctx)
{
	struct kp_hooks	 bh = { NULL, b_prepare, t_unprepare, NULL };
	struct wire	 w;
	PrepResp	*r;
	const PrepClaim	*c;
	uint8_t		*resp;
	size_t		 len;
	char		 msg[KP_ERROR_SIZE];
	int		 cancel = 0;

	reset(ctx);
	ctx->hooks = &bh;
	wire_claims(&w, 4);
	CHECK_EQ(dra_prepare(ctx, DRA_V1, w.b, w.n, cancel_yes, &cancel,
	    &resp, &len, msg, sizeof(msg)), RPC_OK);
	CHECK_EQ(drv.cancel_seen, 0);
	r = V1(node_prepare_resources_response__unpack)(NULL, len, resp);
	c = entry(r, "u1");
	CHECK(c != NULL && strcmp(c->error,
	    "invalid device: device_name required") == 0);
	c = entry(r, "u2");
	CHECK(c != NULL && strcmp(c->error,
	    "invalid device: bad request_names") == 0);
	c = entry(r, "u3");
	CHECK(c != NULL && strlen(c->error) == DRA_MAX_ERROR - 1 &&
	    c->error[0] == '?');
	c = entry(r, "u4");
	CHECK(c != NULL && c->error[0] != '\0');
	resp_free(r);
	free(resp);

	/* struct_size read as the caller compiled it; CDI IDs checked. */
	bh.prepare = b2_prepare;
	CHECK_EQ(dra_prepare(ctx, DRA_V1, w.b, w.n, cancel_yes, &cancel,
	    &resp, &len, msg, sizeof(msg)), RPC_OK);
	r = V1(node_prepare_resources_response__unpack)(NULL, len, resp);
	c = entry(r, "u1");
	CHECK(c != NULL && strstr(c->error, "struct_size is 0: initialise "
	    "it with KP_PREPARED_DEVICE_INIT") != NULL);
	c = entry(r, "u2");
	CHECK(c != NULL && strstr(c->error, "invalid device d: "
	    "cdi_device_ids[1] \"not a cdi id\": not <vendor>/<class>="
	    "<name>") != NULL);
	c = entry(r, "u3");
	CHECK(c != NULL && strstr(c->error, "a field this library does not "
	    "know is set") != NULL);
	c = entry(r, "u4");
	CHECK(c != NULL && c->error[0] == '\0' && c->n_devices == 1 &&
	    strcmp(c->devices[0]->cdi_device_ids[0],
	    "vendor.com/class=dev-0:a.b_c") == 0);
	resp_free(r);
	free(resp);

	/* Cancelled before the hook: it does not run. */
	cancel = 1;
	drv.calls = 0;
	ctx->hooks = &hooks;
	CHECK_EQ(dra_prepare(ctx, DRA_V1, w.b, w.n, cancel_yes, &cancel,
	    &resp, &len, msg, sizeof(msg)), RPC_CANCELLED);
	CHECK_EQ(drv.calls, 0);
	CHECK(resp == NULL);
}

struct runner {
	struct dra_ctx	*ctx;
	struct wire	*w;
	int		 prepare;
	int		 st;
};

static void *
run(void *arg)
{
	struct runner	*r = arg;
	uint8_t		*resp;
	size_t		 len;
	char		 msg[KP_ERROR_SIZE];

	if (r->prepare)
		r->st = dra_prepare(r->ctx, DRA_V1, r->w->b, r->w->n, NULL,
		    NULL, &resp, &len, msg, sizeof(msg));
	else
		r->st = dra_unprepare(r->ctx, DRA_V1BETA1, r->w->b, r->w->n,
		    NULL, NULL, &resp, &len, msg, sizeof(msg));
	free(resp);
	return (NULL);
}

/* Two calls at once: overlap only without serialize. */
static int
overlapped(struct dra_ctx *ctx, int serialize)
{
	struct wire	 w;
	struct runner	 a, b;
	pthread_t	 ta, tb;

	reset(ctx);
	opts.serialize = serialize;
	drv.slow = 1;
	wire_claims(&w, 1);
	a = (struct runner){ ctx, &w, 1, -1 };
	b = (struct runner){ ctx, &w, 0, -1 };
	pthread_create(&ta, NULL, run, &a);
	pthread_create(&tb, NULL, run, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.st, RPC_OK);
	CHECK_EQ(b.st, RPC_OK);
	return (atomic_load(&drv.overlap));
}

static void
test_serialize(struct dra_ctx *ctx)
{
	CHECK_EQ(overlapped(ctx, 1), 0);
	CHECK_EQ(overlapped(ctx, 0), 1);	/* the detector works */
}

int
main(void)
{
	struct dra_ctx	ctx;
	size_t		i;

	memset(&ctx, 0, sizeof(ctx));
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		test_prepare_three(&ctx, versions[i]);
		test_prepare_many(&ctx, versions[i]);
		test_prepare_failures(&ctx, versions[i]);
		test_duplicates(&ctx, versions[i]);
		test_share_id(&ctx, versions[i]);
		test_lookup(&ctx, versions[i]);
		test_unprepare(&ctx, versions[i]);
	}
	test_advertised();
	test_methods(&ctx);
	test_format(&ctx);
	test_builders(&ctx);
	test_serialize(&ctx);
	dra_free(&ctx);
	return (test_done("test_dra"));
}
