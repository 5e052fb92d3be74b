/*
 * fuzz_claims.c - libFuzzer target for the publisher's decoder of a
 * ResourceClaim the API server returned: the input, as a C string, is the
 * body of a 200 answer to claims_parse() (with and without a UID to
 * match, for two drivers) and of an error answer to conv_status_message().
 * Invariants checked (trap on a breach):
 *  - the reply carries the look-up's id and a result whose code is the
 *    return value, 0 or one of the documented codes;
 *  - on success config_json is a JSON array and every result has its
 *    three strings;
 *  - the reply, framed as the publisher sends it, passes the supervisor's
 *    ipc_check() for every input (a violation there would get the
 *    publisher killed);
 *  - a Status message is never NULL and never empty;
 *  - the nodeserver's kp_claim_info() builder (nodeserver/claim_info.c
 *    ci_parse) reads every claim_json a successful reply carries, and
 *    reads it the same for each API version, with every string set.
 * Run: ./tests/fuzz/fuzz_claims -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "publisher/slices.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_result(const struct kp_claim_result *x, const char *driver)
{
	size_t	i;

	if (x->struct_size != sizeof(*x) || x->request == NULL ||
	    x->base_request == NULL || x->pool == NULL ||
	    x->device == NULL || strcmp(x->driver, driver) != 0)
		__builtin_trap();
	for (i = 0; i < x->n_tolerations; i++)
		if (x->tolerations[i]->key == NULL ||
		    x->tolerations[i]->operator_ == NULL)
			__builtin_trap();
	for (i = 0; i < x->n_consumed_capacity; i++)
		if (x->consumed_capacity[i]->quantity == NULL ||
		    (x->consumed_capacity[i]->overflow &&
		    x->consumed_capacity[i]->value != INT64_MAX &&
		    x->consumed_capacity[i]->value != INT64_MIN) ||
		    (x->consumed_capacity[i]->milli_overflow &&
		    x->consumed_capacity[i]->milli_value != INT64_MAX &&
		    x->consumed_capacity[i]->milli_value != INT64_MIN) ||
		    (x->consumed_capacity[i]->invalid &&
		    (x->consumed_capacity[i]->value != 0 ||
		    x->consumed_capacity[i]->overflow)))
			__builtin_trap();
	for (i = 0; i < x->n_binding_conditions; i++)
		if (x->binding_conditions[i] == NULL)
			__builtin_trap();
	(void)kp_claim_capacity(x, "memory");
}

static void
check_info(const Kpipc__ClaimReply *r, const Kpipc__ClaimGet *g,
    const char *driver)
{
	static const char *const vs[] = { "resource.k8s.io/v1",
	    "resource.k8s.io/v1beta1" };
	struct kp_claim		 c = { g->namespace_, g->name, g->uid, NULL, 0,
				    NULL, NULL, 0 };
	struct dra_arena_chunk	*ar;
	struct kp_claim_info	*ci;
	json_t			*root;
	size_t			 v, i;

	for (v = 0; v < 2; v++) {
		ar = NULL;
		if (ci_parse(&ar, r->claim_json, strlen(r->claim_json), vs[v],
		    driver, &c, &root, &ci) != 0 || ci == NULL ||
		    ci->json_len != strlen(r->claim_json))
			__builtin_trap();
		/* The builder's results are the publisher's, in order. */
		if (ci->n_results != r->n_results)
			__builtin_trap();
		for (i = 0; i < ci->n_results; i++) {
			check_result(ci->results[i], driver);
			if (strcmp(ci->results[i]->device,
			    r->results[i]->device) != 0)
				__builtin_trap();
		}
		for (i = 0; i < ci->n_labels; i++)
			if (ci->labels[i]->value == NULL)
				__builtin_trap();
		for (i = 0; i < ci->n_reserved_for; i++)
			if (ci->reserved_for[i]->uid == NULL)
				__builtin_trap();
		for (i = 0; i < ci->n_configs; i++)
			if (ci->configs[i]->parameters == NULL)
				__builtin_trap();
		json_decref(root);
		dra_arena_free(ar);
	}
}

static void
check_reply(int rc, const Kpipc__ClaimGet *g, const Kpipc__ClaimReply *r,
    const char *driver)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	json_t		*j;
	char		 err[KP_ERROR_SIZE];
	size_t		 i;

	if (r->id != g->id || r->result == NULL || r->result->code != rc ||
	    r->result->message == NULL)
		__builtin_trap();
	if (rc != 0 && rc != KP_ENOENT && rc != KP_EINVAL &&
	    rc != KP_EPROTO && rc != KP_ENOMEM && rc != KP_EKUBE)
		__builtin_trap();
	if (rc == 0) {
		j = json_loads(r->config_json, 0, NULL);
		if (!json_is_array(j))
			__builtin_trap();
		json_decref(j);
		for (i = 0; i < r->n_results; i++)
			if (r->results[i]->request == NULL ||
			    r->results[i]->pool == NULL ||
			    r->results[i]->device == NULL)
				__builtin_trap();
	}
	if (rc == 0)
		check_info(r, g, driver);
	m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
	m.claim_reply = (Kpipc__ClaimReply *)r;
	/* The supervisor accepts every reply: one it refused would get
	 * the publisher killed (corpus: long_request). */
	if (ipc_check(&m, err, sizeof(err)) != 0)
		__builtin_trap();
}

static void
parse(const char *body, const char *driver, const char *uid)
{
	Kpipc__ClaimGet		g = KPIPC__CLAIM_GET__INIT;
	Kpipc__ClaimReply	r = KPIPC__CLAIM_REPLY__INIT;
	int			rc;

	g.id = 42;
	g.namespace_ = "default";
	g.name = "gpu-claim";
	g.uid = (char *)uid;
	rc = claims_parse(body, driver, &g, &r);
	check_reply(rc, &g, &r, driver);
	claims_reply_free(&r);
	if (r.result != NULL || r.n_results != 0 ||
	    r.config_json != protobuf_c_empty_string)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s, *m;

	if ((s = malloc(size + 1)) == NULL)
		return (0);
	memcpy(s, data, size);
	s[size] = '\0';
	parse(s, "gpu.example.com", "");
	parse(s, "gpu.example.com", "0b5d2a9c-57e3-4c4e-9f6e-3f1f0c6d1a2b");
	parse(s, "nic.example.com", "");
	if ((m = conv_status_message(s, 500)) == NULL || m[0] == '\0')
		__builtin_trap();
	free(m);
	free(s);
	return (0);
}
