/*
 * test_claims.c - publisher/claims.c without a server: claims_parse()
 * turns a ResourceClaim body into the reply the nodeserver gets.
 */
#include <stdlib.h>
#include <string.h>

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
	claims_reply_free(&r);
	CHECK(r.result == NULL && r.n_results == 0);

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
	return (test_done("test_claims"));
}
