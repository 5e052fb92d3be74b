/*
 * test_claims.c - publisher/claims.c without a server: claims_parse()
 * turns a ResourceClaim body into the reply the nodeserver gets.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "publisher/publisher.h"
#include "test.h"
#include "ipc/ipc.h"

static const char *claim =
    "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\","
    "\"metadata\":{\"name\":\"c1\",\"namespace\":\"ns\",\"uid\":\"u-1\"},"
    "\"spec\":{},\"status\":{\"allocation\":{\"devices\":{\"results\":["
    "{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\","
    "\"device\":\"gpu-0\"},"
    "{\"request\":\"nic\",\"driver\":\"nic.example.com\",\"pool\":\"p\","
    "\"device\":\"nic-0\"},"
    "{\"request\":\"gpu2\",\"driver\":\"gpu.example.com\",\"pool\":"
    "\"node-1\",\"device\":\"gpu-1\",\"adminAccess\":true}],"
    "\"config\":[{\"source\":\"FromClass\",\"opaque\":{\"driver\":"
    "\"gpu.example.com\",\"parameters\":{\"a\":1}}},"
    "{\"source\":\"FromClaim\",\"requests\":[\"nic\"],\"opaque\":{"
    "\"driver\":\"nic.example.com\",\"parameters\":{\"b\":2}}},"
    "{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{"
    "\"driver\":\"gpu.example.com\",\"parameters\":{\"c\":[3]}}}]}}}}";

static void
get(Kpipc__ClaimGet *g, const char *uid)
{
	kpipc__claim_get__init(g);
	g->id = 42;
	g->namespace_ = "ns";
	g->name = "c1";
	g->uid = (char *)uid;
}

int
main(void)
{
	Kpipc__ClaimGet		g;
	Kpipc__ClaimReply	r = KPIPC__CLAIM_REPLY__INIT;

	get(&g, "u-1");
	CHECK_EQ(claims_parse(claim, "gpu.example.com", &g, &r), 0);
	CHECK_EQ(r.id, 42);
	CHECK(r.result != NULL && r.result->code == 0);
	CHECK_STREQ(r.result->message, "");
	CHECK_EQ(r.n_results, 2);
	if (r.n_results == 2) {
		CHECK_STREQ(r.results[0]->request, "gpu");
		CHECK_STREQ(r.results[0]->pool, "node-1");
		CHECK_STREQ(r.results[0]->device, "gpu-0");
		CHECK_EQ(r.results[0]->admin_access, 0);
		CHECK_STREQ(r.results[1]->device, "gpu-1");
		CHECK_EQ(r.results[1]->admin_access, 1);
	}
	CHECK_STREQ(r.config_json, "[{\"source\":\"FromClass\","
	    "\"parameters\":{\"a\":1}},{\"source\":\"FromClaim\","
	    "\"requests\":[\"gpu\"],\"parameters\":{\"c\":[3]}}]");
	/* The whole claim for kp_claim_info(), compact, same content. */
	{
		json_t	*a = json_loads(claim, 0, NULL);
		json_t	*b = json_loads(r.claim_json, 0, NULL);

		CHECK(a != NULL && json_equal(a, b));
		CHECK(strchr(r.claim_json, '\n') == NULL);
		json_decref(a);
		json_decref(b);
	}
	claims_reply_free(&r);
	CHECK(r.result == NULL && r.n_results == 0);
	CHECK(r.claim_json == protobuf_c_empty_string);

	/* Another driver's view; no config for it: an empty array. */
	CHECK_EQ(claims_parse(claim, "other.example.com", &g, &r), 0);
	CHECK_EQ(r.n_results, 0);
	CHECK_STREQ(r.config_json, "[]");
	claims_reply_free(&r);

	/* Replaced: another UID. */
	get(&g, "u-2");
	CHECK_EQ(claims_parse(claim, "gpu.example.com", &g, &r), KP_ENOENT);
	CHECK(r.result != NULL && r.result->code == KP_ENOENT);
	CHECK_STREQ(r.result->message, "claim ns/c1 got replaced");
	CHECK_EQ(r.n_results, 0);
	claims_reply_free(&r);

	/* The right UID in an answer for another namespace or name (a
	 * hostile or broken API server, a proxy mixing up paths). */
	{
		static const char *const wrong[] = {
		    "{\"metadata\":{\"name\":\"c2\",\"namespace\":\"ns\","
		    "\"uid\":\"u-1\"},\"status\":{\"allocation\":{}}}",
		    "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"kube\","
		    "\"uid\":\"u-1\"},\"status\":{\"allocation\":{}}}",
		};
		size_t	 k;

		for (k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++) {
			CHECK_EQ(claims_parse(wrong[k], "gpu.example.com", &g,
			    &r), KP_ENOENT);
			CHECK_STREQ(r.result->message,
			    "claim ns/c1 got replaced");
			CHECK_EQ(r.n_results, 0);
			claims_reply_free(&r);
		}
		/* A key twice: jansson would keep the first, Go the last;
		 * refused either way round. */
		CHECK_EQ(claims_parse("{\"metadata\":{\"uid\":\"u-2\","
		    "\"uid\":\"u-1\"},\"status\":{\"allocation\":{}}}",
		    "gpu.example.com", &g, &r), KP_EPROTO);
		claims_reply_free(&r);
		CHECK_EQ(claims_parse("{\"metadata\":{\"uid\":\"u-1\","
		    "\"uid\":\"u-2\"},\"status\":{\"allocation\":{}}}",
		    "gpu.example.com", &g, &r), KP_EPROTO);
		claims_reply_free(&r);
		/* Invalid UTF-8, a NUL escape: not JSON jansson takes. */
		CHECK_EQ(claims_parse("{\"metadata\":{\"uid\":\"u-1\","
		    "\"name\":\"c\xff" "1\"},\"status\":{\"allocation\":{}}}",
		    "gpu.example.com", &g, &r), KP_EPROTO);
		claims_reply_free(&r);
		CHECK_EQ(claims_parse("{\"metadata\":{\"uid\":\"u-1\\u0000"
		    "x\"},\"status\":{\"allocation\":{}}}",
		    "gpu.example.com", &g, &r), KP_EPROTO);
		claims_reply_free(&r);
	}

	/* Not allocated. */
	get(&g, "u-1");
	CHECK_EQ(claims_parse("{\"metadata\":{\"uid\":\"u-1\"},\"status\":{}}",
	    "gpu.example.com", &g, &r), KP_EINVAL);
	CHECK_STREQ(r.result->message, "claim ns/c1 not allocated");
	claims_reply_free(&r);

	/* Garbage. */
	CHECK_EQ(claims_parse("not json", "gpu.example.com", &g, &r),
	    KP_EPROTO);
	CHECK_STREQ(r.result->message, "claim ns/c1: not a ResourceClaim");
	claims_reply_free(&r);
	CHECK_EQ(claims_parse("[1]", "gpu.example.com", &g, &r), KP_EPROTO);
	claims_reply_free(&r);

	/* Names the supervisor would refuse: an API error for the claim,
	 * never a reply that gets the publisher killed. */
	{
		char	 body[1024], dev[70];
		Kpipc__Msg m = KPIPC__MSG__INIT;
		char	 err[KP_ERROR_SIZE];

		memset(dev, 'd', 64);
		dev[64] = '\0';
		snprintf(body, sizeof(body), "{\"metadata\":{\"uid\":\"u-1\"},"
		    "\"status\":{\"allocation\":{\"devices\":{\"results\":"
		    "[{\"request\":\"r\",\"driver\":\"gpu.example.com\","
		    "\"pool\":\"p\",\"device\":\"%s\"}]}}}}", dev);
		CHECK_EQ(claims_parse(body, "gpu.example.com", &g, &r),
		    KP_EKUBE);
		CHECK_STREQ(r.result->message, "claim ns/c1: results[0].device "
		    "longer than 63 bytes");
		m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
		m.claim_reply = &r;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
		claims_reply_free(&r);
	}
	/* A template's claim: its pod claim name goes along, when it is a
	 * DNS label (device metadata mounts under it); else left out. */
	{
		static const char *const pods[][2] = {
			{ "my-gpu", "my-gpu" }, { "../x", "" }, { "A", "" },
		};
		char	 body[1024];
		size_t	 k;

		for (k = 0; k < 3; k++) {
			snprintf(body, sizeof(body), "{\"metadata\":{\"uid\":"
			    "\"u-1\",\"annotations\":{\"resource.kubernetes."
			    "io/pod-claim-name\":\"%s\"}},\"status\":{"
			    "\"allocation\":{\"devices\":{\"results\":[]}}}}",
			    pods[k][0]);
			CHECK_EQ(claims_parse(body, "gpu.example.com", &g, &r),
			    0);
			CHECK_STREQ(r.pod_claim_name, pods[k][1]);
			claims_reply_free(&r);
		}
	}
	/* What a compromised nodeserver may ask: only names that cannot
	 * change the GET's path or query (ipc/check.c, before the
	 * supervisor forwards a look-up). Each of these is refused. */
	{
		static const char *const bad[][3] = {
			{ "a/b", "c", "u-1" }, { "..", "c", "u-1" },
			{ "%2F", "c", "u-1" }, { "a?b", "c", "u-1" },
			{ "a#b", "c", "u-1" }, { "a\nb", "c", "u-1" },
			{ "A", "c", "u-1" }, { "", "c", "u-1" },
			{ "a.b", "c", "u-1" }, { "-a", "c", "u-1" },
			{ "ns", "x/../y", "u-1" }, { "ns", "..", "u-1" },
			{ "ns", ".", "u-1" }, { "ns", "a..b", "u-1" },
			{ "ns", "%2e%2e", "u-1" }, { "ns", "a?watch=1", "u-1" },
			{ "ns", "a#", "u-1" }, { "ns", "a\x01" "b", "u-1" },
			{ "ns", "a b", "u-1" }, { "ns", "a.", "u-1" },
			{ "ns", "", "u-1" }, { "ns", "c", "" },
			{ "ns", "c", "u/1" }, { "ns", "c", ".." },
			{ "ns", "c", "u\r\n1" }, { "ns", "c", "-u" },
		};
		Kpipc__Msg	 m = KPIPC__MSG__INIT;
		Kpipc__ClaimGet	 q = KPIPC__CLAIM_GET__INIT;
		char		 err[KP_ERROR_SIZE], big[300];
		size_t		 k;

		m.m_case = KPIPC__MSG__M_CLAIM_GET;
		m.claim_get = &q;
		q.namespace_ = "kube-system";
		q.name = "a.b-c.d";
		q.uid = "0a1b2c3d-4e5f-4000-8000-00000000000a";
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			q.namespace_ = (char *)bad[k][0];
			q.name = (char *)bad[k][1];
			q.uid = (char *)bad[k][2];
			CHECK(ipc_check(&m, err, sizeof(err)) != 0);
		}
		/* Over the lengths: a 64-byte namespace, a 254-byte name, a
		 * 129-byte UID. */
		memset(big, 'a', sizeof(big));
		big[64] = '\0';
		q.namespace_ = big;
		q.name = "c";
		q.uid = "u-1";
		CHECK(ipc_check(&m, err, sizeof(err)) != 0);
		big[64] = 'a';
		big[254] = '\0';
		q.namespace_ = "ns";
		q.name = big;
		CHECK(ipc_check(&m, err, sizeof(err)) != 0);
		big[254] = 'a';
		big[129] = '\0';
		q.name = "c";
		q.uid = big;
		CHECK(ipc_check(&m, err, sizeof(err)) != 0);
		big[128] = '\0';
		q.uid = big;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
		/* Before any of that, the frame: the nodeserver's alone, once
		 * READY, at most 1 KiB (huge names never reach the unpack). */
		CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_READY,
		    KPIPC__MSG__M_CLAIM_GET, 1024, err, sizeof(err)), 0);
		CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_READY,
		    KPIPC__MSG__M_CLAIM_GET, 1025, err, sizeof(err)), KP_EPROTO);
		CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_STARTING,
		    KPIPC__MSG__M_CLAIM_GET, 64, err, sizeof(err)), KP_EPROTO);
		CHECK_EQ(ipc_rule_gate(ROLE_REGISTRAR, CS_READY,
		    KPIPC__MSG__M_CLAIM_GET, 64, err, sizeof(err)), KP_EPROTO);
		CHECK_EQ(ipc_rule_gate(ROLE_PUBLISHER, CS_READY,
		    KPIPC__MSG__M_CLAIM_GET, 64, err, sizeof(err)), KP_EPROTO);
	}
	/* Too large to pass on: the claim alone (1100 KiB), or with its
	 * copy of this driver's configuration (511 KiB twice, plus a
	 * 20 KiB annotation), beyond a child's frame: an API error, never
	 * a frame the supervisor would take for an attack. */
	{
		static const size_t par[2] = { 1100 * 1024, 511 * 1024 };
		static const char *const drv[2] = { "other.example.com",
		    "gpu.example.com" };
		char	*body = malloc(1200 * 1024), err[KP_ERROR_SIZE];
		Kpipc__Msg m = KPIPC__MSG__INIT;
		size_t	 k;
		int	 off;

		for (k = 0; body != NULL && k < 2; k++) {
			off = snprintf(body, 512, "{\"metadata\":{\"uid\":"
			    "\"u-1\",\"annotations\":{\"a\":\"");
			memset(body + off, 'y', 20 * 1024);
			off += 20 * 1024;
			off += snprintf(body + off, 512, "\"}},\"status\":{"
			    "\"allocation\":{\"devices\":{\"config\":[{"
			    "\"opaque\":{\"driver\":\"%s\",\"parameters\":"
			    "\"", drv[k]);
			memset(body + off, 'x', par[k]);
			snprintf(body + off + par[k], 64, "\"}}]}}}}");
			get(&g, "u-1");
			CHECK_EQ(claims_parse(body, "gpu.example.com", &g, &r),
			    KP_EKUBE);
			CHECK_CONTAINS(r.result->message, k == 0 ?
			    "larger than 1 MiB as compact JSON" :
			    "together larger than 1 MiB");
			CHECK(r.claim_json[0] == '\0' && r.n_results == 0);
			m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
			m.claim_reply = &r;
			CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
			claims_reply_free(&r);
		}
		free(body);
	}
	/* A withdrawal (issue 28): 1 to 64 ids, none 0; the nodeserver's
	 * once READY, at most 1 KiB; no other child may send one. */
	{
		uint64_t		 ids[65];
		Kpipc__Msg		 m = KPIPC__MSG__INIT;
		Kpipc__ClaimCancel	 cc = KPIPC__CLAIM_CANCEL__INIT;
		char			 err[KP_ERROR_SIZE];
		size_t			 k;

		for (k = 0; k < 65; k++)
			ids[k] = k + 1;
		m.m_case = KPIPC__MSG__M_CLAIM_CANCEL;
		m.claim_cancel = &cc;
		cc.ids = ids;
		cc.n_ids = 64;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
		cc.n_ids = 65;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
		CHECK_CONTAINS(err, "claim_cancel.ids: 65 ids");
		cc.n_ids = 0;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
		ids[3] = 0;
		cc.n_ids = 5;
		CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
		CHECK_CONTAINS(err, "claim_cancel.ids[3]");
		CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_READY,
		    KPIPC__MSG__M_CLAIM_CANCEL, 1024, err, sizeof(err)), 0);
		CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_READY,
		    KPIPC__MSG__M_CLAIM_CANCEL, 1025, err, sizeof(err)),
		    KP_EPROTO);
		CHECK_EQ(ipc_rule_gate(ROLE_PUBLISHER, CS_READY,
		    KPIPC__MSG__M_CLAIM_CANCEL, 64, err, sizeof(err)),
		    KP_EPROTO);
		CHECK_EQ(ipc_rule_gate(ROLE_REGISTRAR, CS_READY,
		    KPIPC__MSG__M_CLAIM_CANCEL, 64, err, sizeof(err)),
		    KP_EPROTO);
	}
	return (test_done("test_claims"));
}
