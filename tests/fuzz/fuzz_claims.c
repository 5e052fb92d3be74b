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
 *  - a Status message is never NULL and never empty.
 * Run: ./tests/fuzz/fuzz_claims -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"
#include "publisher/slices.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_reply(int rc, const Kpipc__ClaimGet *g, const Kpipc__ClaimReply *r)
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
	check_reply(rc, &g, &r);
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
