/*
 * test_claim_info.c - nodeserver/claim_info.c: kp_claim_info() built from
 * the publisher's claim JSON (every field, hostile shapes), the registry
 * of running hook calls, kp_claim_capacity()'s 1.38 look-up, and the ABI
 * rule: a driver compiled against a header with fewer fields reads every
 * field it knows from this library; one compiled against a newer header
 * learns with KP_HAS() which fields this library has.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/quantity.h"
#include "nodeserver/dra.h"
#include "test.h"

#define DRV	"gpu.example.com"

static const char *full =
    "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\","
    "\"metadata\":{\"name\":\"c1\",\"namespace\":\"ns\",\"uid\":\"u-1\","
    "\"labels\":{\"app\":\"a\",\"n\":5},\"annotations\":{\"x/y\":\"z\"}},"
    "\"spec\":{},\"status\":{\"allocation\":{\"devices\":{\"results\":["
    "{\"request\":\"gpu/small\",\"driver\":\"gpu.example.com\",\"pool\":"
    "\"p\",\"device\":\"d0\",\"adminAccess\":true,\"shareID\":\"s-1\","
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":7},{\"operator\":"
    "\"Exists\"}],\"bindingConditions\":[\"A\",\"B\"],"
    "\"bindingFailureConditions\":[\"F\"],\"consumedCapacity\":{"
    "\"memory\":\"1536Mi\",\"gpu.example.com/memory\":\"2Gi\",\"cores\":"
    "\"250m\",\"bad\":\"x1\",\"num\":5}},"
    "{\"request\":\"nic\",\"driver\":\"nic.example.com\",\"pool\":\"p\","
    "\"device\":\"n0\"},"
    "{\"request\":\"gpu2\",\"driver\":\"gpu.example.com\",\"pool\":\"p\","
    "\"device\":\"d1\"}],"
    "\"config\":[{\"source\":\"FromClass\",\"opaque\":{\"driver\":"
    "\"gpu.example.com\",\"parameters\":{\"a\":1}}},{\"source\":\"FromClaim\","
    "\"requests\":[\"nic\"],\"opaque\":{\"driver\":\"nic.example.com\"}}]},"
    "\"nodeSelector\":{\"nodeSelectorTerms\":[{}]}},"
    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"pod-0\",\"uid\":"
    "\"p-1\"}]}}";

static const struct kp_claim claim = { "ns", "c1", "u-1", NULL, 0, NULL,
    NULL, 0 };
/* Looked up without a UID (kubelet always sends one; here the JSON
 * need not carry it). */
static const struct kp_claim anyuid = { "ns", "c1", "", NULL, 0, NULL,
    NULL, 0 };

/*
 * What a driver compiled against an older header sees: the same structs
 * with fewer fields (the first ones, as a release that had only them).
 */
struct old_claim_result {
	size_t struct_size;
	const char *request;
	const char *base_request;
	const char *subrequest;
	const char *driver;
	const char *pool;
	const char *device;
	int admin_access;
};
struct old_claim_info {
	size_t struct_size;
	const char *namespace_;
	const char *name;
	const char *uid;
	const char *api_version;
	unsigned int absent;
	const struct old_claim_result *const *results;
	size_t n_results;
};

/* And against a newer header: one field more than this library has. */
struct next_claim_info {
	size_t struct_size;
	const char *namespace_;
	const char *name;
	const char *uid;
	const char *api_version;
	unsigned int absent;
	const struct kp_claim_result *const *results;
	size_t n_results;
	const struct kp_claim_config *const *configs;
	size_t n_configs;
	const struct kp_key_value *const *labels;
	size_t n_labels;
	const struct kp_key_value *const *annotations;
	size_t n_annotations;
	const struct kp_consumer_ref *const *reserved_for;
	size_t n_reserved_for;
	const char *node_selector;
	const void *node_selector_json;
	const char *json;
	size_t json_len;
	const void *json_obj;
	const char *from_a_later_release;
};

static void
test_full(void)
{
	struct dra_arena_chunk		*ar = NULL;
	struct kp_claim_info		*ci;
	const struct kp_claim_result	*r;
	const struct old_claim_info	*old;
	const struct next_claim_info	*next;
	json_t				*root;

	CHECK_EQ(ci_parse(&ar, full, strlen(full), "resource.k8s.io/v1", DRV,
	    &claim, &root, &ci), 0);
	CHECK(ci != NULL && root != NULL);
	if (ci == NULL)
		return;
	CHECK_EQ(ci->struct_size, sizeof(*ci));
	CHECK_STREQ(ci->uid, "u-1");
	CHECK_STREQ(ci->api_version, "resource.k8s.io/v1");
	CHECK_EQ(ci->absent, 0);
	CHECK_EQ(ci->n_results, 2);
	r = ci->results[0];
	CHECK_STREQ(r->request, "gpu/small");
	CHECK_STREQ(r->base_request, "gpu");
	CHECK_STREQ(r->subrequest, "small");
	CHECK_STREQ(r->driver, DRV);
	CHECK_STREQ(r->device, "d0");
	CHECK_EQ(r->admin_access, 1);
	CHECK_STREQ(r->share_id, "s-1");
	CHECK_EQ(r->index, 0);
	CHECK_EQ(r->n_tolerations, 2);
	CHECK_STREQ(r->tolerations[0]->effect, "NoExecute");
	CHECK_EQ(r->tolerations[0]->has_toleration_seconds, 1);
	CHECK_EQ(r->tolerations[0]->toleration_seconds, 7);
	CHECK_STREQ(r->tolerations[1]->key, "");
	CHECK_EQ(r->tolerations[1]->has_toleration_seconds, 0);
	CHECK_EQ(r->n_binding_conditions, 2);
	CHECK_STREQ(r->binding_conditions[1], "B");
	CHECK_EQ(r->n_binding_failure_conditions, 1);
	/* "num" (not a string) left out; "bad" kept, marked invalid. */
	CHECK_EQ(r->n_consumed_capacity, 4);
	CHECK_STREQ(r->consumed_capacity[0]->name, "memory");
	CHECK_EQ(r->consumed_capacity[0]->value, 1536LL << 20);
	CHECK_EQ(r->consumed_capacity[0]->milli_value, (1536LL << 20) * 1000);
	CHECK_EQ(r->consumed_capacity[2]->value, 1);
	CHECK_EQ(r->consumed_capacity[2]->milli_value, 250);
	CHECK_EQ(r->consumed_capacity[2]->overflow, 0);
	CHECK_EQ(r->consumed_capacity[3]->invalid, 1);
	CHECK_EQ(r->consumed_capacity[3]->overflow, 0);
	CHECK_EQ(r->consumed_capacity[3]->value, 0);
	/* 1.38 look-up: qualified wins; short or qualified asked. */
	CHECK_STREQ(kp_claim_capacity(r, "memory")->quantity, "2Gi");
	CHECK_STREQ(kp_claim_capacity(r, DRV "/memory")->quantity, "2Gi");
	CHECK_STREQ(kp_claim_capacity(r, DRV "/cores")->quantity, "250m");
	CHECK(kp_claim_capacity(r, "other.example.com/memory") == NULL);
	CHECK(kp_claim_capacity(r, "nope") == NULL);
	CHECK(kp_claim_capacity(NULL, "memory") == NULL);
	r = ci->results[1];
	CHECK_STREQ(r->device, "d1");
	CHECK_EQ(r->index, 2);
	CHECK(r->subrequest == NULL && r->share_id == NULL);
	CHECK_EQ(r->n_tolerations + r->n_consumed_capacity, 0);
	CHECK_EQ(ci->n_configs, 1);
	CHECK_STREQ(ci->configs[0]->source, "FromClass");
	CHECK_STREQ(ci->configs[0]->parameters, "{\"a\":1}");
	CHECK(json_is_object(kp_claim_config_parameters(ci->configs[0])));
	CHECK_EQ(ci->n_labels, 1);	/* "n": 5 is no label */
	CHECK_STREQ(ci->labels[0]->value, "a");
	CHECK_EQ(ci->n_annotations, 1);
	CHECK_EQ(ci->n_reserved_for, 1);
	CHECK_STREQ(ci->reserved_for[0]->resource, "pods");
	CHECK_STREQ(ci->reserved_for[0]->api_group, "");
	CHECK_STREQ(ci->node_selector, "{\"nodeSelectorTerms\":[{}]}");
	CHECK(kp_claim_json(ci) == root);
	CHECK_EQ(ci->json_len, strlen(full));

	/* An older driver reads its fields where they always were. */
	old = (const struct old_claim_info *)(const void *)ci;
	CHECK(old->struct_size >= sizeof(*old));
	CHECK_STREQ(old->uid, "u-1");
	CHECK_EQ(old->n_results, 2);
	CHECK_STREQ(old->results[0]->device, "d0");
	CHECK_EQ(old->results[0]->admin_access, 1);
	CHECK_STREQ(old->results[1]->base_request, "gpu2");
	CHECK_EQ(KP_HAS(old, n_results), 1);
	/* A newer one learns what this library lacks. */
	next = (const struct next_claim_info *)(const void *)ci;
	CHECK_EQ(KP_HAS(next, json_obj), 1);
	CHECK_EQ(KP_HAS(next, from_a_later_release), 0);
	CHECK_EQ(KP_HAS(ci->results[0], index), 1);
	json_decref(root);
	dra_arena_free(ar);
}

/* Shapes a hostile publisher may send: wrong types are absent fields. */
static void
test_hostile(void)
{
	static const char *const odd[] = {
		"{}",
		"{\"metadata\":5,\"status\":[]}",
		"{\"status\":{\"allocation\":{\"devices\":{\"results\":5,"
		    "\"config\":{}}},\"reservedFor\":\"x\"}}",
		"{\"status\":{\"allocation\":{\"devices\":{\"results\":[5,"
		    "null,{\"driver\":\"gpu.example.com\",\"request\":5,"
		    "\"tolerations\":[1,{}],\"consumedCapacity\":[],"
		    "\"bindingConditions\":[1,\"x\"],\"shareID\":3}]}}}}",
		"{\"status\":{\"allocation\":{\"devices\":{\"config\":[1,"
		    "{\"opaque\":{\"driver\":\"gpu.example.com\",\"parameters\":"
		    "null},\"requests\":[null]}]},\"nodeSelector\":null}}}",
	};
	struct dra_arena_chunk	*ar;
	struct kp_claim_info	*ci;
	json_t			*root;
	size_t			 i;

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		ar = NULL;
		CHECK_EQ(ci_parse(&ar, odd[i], strlen(odd[i]),
		    "resource.k8s.io/v1", DRV, &anyuid, &root, &ci), 0);
		CHECK(ci != NULL);
		json_decref(root);
		dra_arena_free(ar);
	}
	/* The fourth: one result of ours, every wrong field empty. */
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, odd[3], strlen(odd[3]), "resource.k8s.io/v1",
	    DRV, &anyuid, &root, &ci), 0);
	if (ci != NULL && ci->n_results == 1) {
		CHECK_STREQ(ci->results[0]->request, "");
		CHECK(ci->results[0]->share_id == NULL);
		CHECK_EQ(ci->results[0]->n_tolerations, 2);
		CHECK_STREQ(ci->results[0]->tolerations[0]->operator_, "");
		CHECK_STREQ(ci->results[0]->binding_conditions[0], "");
	} else
		CHECK(0);
	json_decref(root);
	dra_arena_free(ar);
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, "[1]", 3, "resource.k8s.io/v1", DRV, &anyuid,
	    &root, &ci), KP_EPROTO);
	json_decref(root);
	dra_arena_free(ar);
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, "{\"a\":1,\"a\":2}", 13, "resource.k8s.io/v1",
	    DRV, &anyuid, &root, &ci), KP_EPROTO);
	dra_arena_free(ar);
	ar = NULL;
	/* Nothing fetched: names only, everything absent. */
	CHECK_EQ(ci_parse(&ar, NULL, 0, NULL, DRV, &anyuid, &root, &ci), 0);
	CHECK(ci != NULL && ci->json == NULL && ci->api_version == NULL &&
	    (ci->absent & KP_CLAIM_ABSENT_ALLOCATION) != 0);
	dra_arena_free(ar);
	/* Older versions: what they cannot carry, unless it is there. */
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, full, strlen(full), "resource.k8s.io/v1beta1",
	    DRV, &anyuid, &root, &ci), 0);
	CHECK_EQ(ci->absent, 0);	/* all set in full */
	json_decref(root);
	dra_arena_free(ar);
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, "{}", 2, "resource.k8s.io/v1beta1", DRV,
	    &anyuid, &root, &ci), 0);
	CHECK_EQ(ci->absent, KP_CLAIM_ABSENT_TOLERATIONS |
	    KP_CLAIM_ABSENT_BINDING_CONDITIONS | KP_CLAIM_ABSENT_SHARE_ID |
	    KP_CLAIM_ABSENT_CONSUMED_CAPACITY);
	json_decref(root);
	dra_arena_free(ar);
	ar = NULL;
	CHECK_EQ(ci_parse(&ar, "{}", 2, "resource.k8s.io/v1beta2", DRV,
	    &anyuid, &root, &ci), 0);
	CHECK_EQ(ci->absent, KP_CLAIM_ABSENT_BINDING_CONDITIONS |
	    KP_CLAIM_ABSENT_SHARE_ID | KP_CLAIM_ABSENT_CONSUMED_CAPACITY);
	json_decref(root);
	dra_arena_free(ar);
}

/* What one claim may cost is bounded before it is parsed. */
static void
test_values(void)
{
	struct dra_arena_chunk	*ar = NULL;
	struct kp_claim_info	*ci;
	json_t			*root;
	char			*j;
	size_t			 i, n = 0, cap = 8 * KP_CLAIM_MAX_VALUES + 64;

	if ((j = malloc(cap)) == NULL)
		return;
	/* The object, its key and its array: 3 values; then one per
	 * element. */
	n += (size_t)snprintf(j, cap, "{\"a\":[");
	for (i = 0; i < KP_CLAIM_MAX_VALUES - 3; i++)
		n += (size_t)snprintf(j + n, cap - n, "%s0", i ? "," : "");
	snprintf(j + n, cap - n, "]}");
	CHECK_EQ(ci_parse(&ar, j, strlen(j), "resource.k8s.io/v1", DRV,
	    &anyuid, &root, &ci), 0);
	json_decref(root);
	dra_arena_free(ar);
	ar = NULL;
	/* One more: refused, nothing allocated by jansson. */
	snprintf(j + n, cap - n, ",true]}");
	CHECK_EQ(ci_parse(&ar, j, strlen(j), "resource.k8s.io/v1", DRV,
	    &anyuid, &root, &ci), KP_ENOSPC);
	CHECK(root == NULL);
	dra_arena_free(ar);
	ar = NULL;
	/* Brackets, commas and quotes inside strings are no values. */
	n = (size_t)snprintf(j, cap, "{\"s\":\"");
	for (i = 0; i < KP_CLAIM_MAX_VALUES; i++)
		n += (size_t)snprintf(j + n, cap - n, "[,\\\"");
	snprintf(j + n, cap - n, "\"}");
	CHECK_EQ(ci_parse(&ar, j, strlen(j), "resource.k8s.io/v1", DRV,
	    &anyuid, &root, &ci), 0);
	json_decref(root);
	dra_arena_free(ar);
	free(j);
}

/* kp_claim_info() finds claims of running calls only. */
static void
test_registry(void)
{
	struct kp_claim		 claims[3] = { claim, claim, claim };
	struct dra_claim_alloc	 al[3];
	struct ci_call		 call;
	struct kp_claim		 copy = claims[1];
	const struct kp_claim_info *ci;

	memset(al, 0, sizeof(al));
	al[0].claim_json = (char *)full;
	al[0].claim_json_len = strlen(full);
	al[0].api_version = "resource.k8s.io/v1";
	claims[0].uid = "u-9";	/* the JSON of another claim below */
	al[1].claim_json = (char *)full;
	al[1].claim_json_len = strlen(full);
	al[1].api_version = "resource.k8s.io/v1";
	al[2].claim_json = (char *)"not json";
	al[2].claim_json_len = 8;
	al[2].api_version = "resource.k8s.io/v1";
	CHECK(kp_claim_info(&claims[1]) == NULL);
	ci_call_begin(&call, claims, 3, al, DRV);
	ci = kp_claim_info(&claims[1]);
	CHECK(ci != NULL && ci->n_results == 2);
	CHECK(ci != NULL && strcmp(ci->uid, "u-1") == 0);
	CHECK(kp_claim_info(&claims[1]) == ci);
	CHECK(kp_claim_info(&claims[0]) == NULL);	/* another claim's */
	CHECK(kp_claim_info(&claims[0]) == NULL);	/* failed: cached */
	CHECK(kp_claim_info(&claims[2]) == NULL);	/* does not parse */
	CHECK(kp_claim_info(&copy) == NULL);
	CHECK(kp_claim_info((const struct kp_claim *)(const void *)
	    ((const char *)&claims[1] + 8)) == NULL);
	CHECK(kp_claim_info(NULL) == NULL);
	ci_call_end(&call);
	CHECK(kp_claim_info(&claims[1]) == NULL);
}

static void
test_scaled(void)
{
	int64_t	v;

	CHECK_EQ(qty_value_scaled("1.5", 3, &v), 0);
	CHECK_EQ(v, 1500);
	CHECK_EQ(qty_value_scaled("1n", 3, &v), 0);
	CHECK_EQ(v, 1);		/* rounded up */
	CHECK_EQ(qty_value_scaled("-1n", 3, &v), 0);
	CHECK_EQ(v, -1);	/* away from zero */
	CHECK_EQ(qty_value_scaled("9E", 3, &v), KP_ENOTSUP);
	CHECK_EQ(qty_value_scaled("9E", 0, &v), 0);
	CHECK_EQ(qty_value_scaled("x", 3, &v), KP_EINVAL);
	CHECK_EQ(qty_value_scaled("1", 10, &v), KP_EINVAL);
}

int
main(void)
{
	test_full();
	test_hostile();
	test_registry();
	test_values();
	test_scaled();
	return (test_done("test_claim_info"));
}
