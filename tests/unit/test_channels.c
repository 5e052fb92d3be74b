/*
 * test_channels.c - the channels between the driver process, the library
 * and the hooks: field rules of StateSet, Event and PublishStatus.errors
 * (ipc/check.c), who may send them (ipc/rules.c), the nodeserver's state
 * table (nodeserver/state.c: order, sizes, the getter outside the
 * nodeserver), the parsed opaque configuration (nodeserver/dra_alloc.c)
 * and the setters' handle checks.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "nodeserver/state.h"
#include "test.h"

static void
test_state_rules(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__StateSet	 st = KPIPC__STATE_SET__INIT;
	static uint8_t	 data[KP_STATE_MAX + 1];
	char		 err[KP_ERROR_SIZE];
	int		 r;

	m.m_case = KPIPC__MSG__M_STATE_SET;
	m.state_set = &st;
	st.data.data = data;
	st.data.len = 3;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "state_set.generation: must be at least 1");
	st.generation = 1;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	st.data.len = KP_STATE_MAX;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	st.data.len = KP_STATE_MAX + 1;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "exceed KP_STATE_MAX (262144 bytes)");
	st.data.len = 0;
	st.data.data = NULL;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);

	/* From the driver only: no child may send state, in any state. */
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY,
	    KPIPC__MSG__M_STATE_SET, err, sizeof(err)), 0);
	for (r = ROLE_NODESERVER; r <= ROLE_PUBLISHER; r++) {
		CHECK_EQ(ipc_rule_check((enum kp_role)r, CS_READY,
		    KPIPC__MSG__M_STATE_SET, err, sizeof(err)), KP_EPROTO);
		CHECK_CONTAINS(err, "unpermitted frame state_set");
		CHECK_EQ(ipc_rule_check((enum kp_role)r, CS_STARTING,
		    KPIPC__MSG__M_STATE_SET, err, sizeof(err)), KP_EPROTO);
		/* Refused before the frame is even unpacked. */
		CHECK_EQ(ipc_rule_gate((enum kp_role)r, CS_READY,
		    KPIPC__MSG__M_STATE_SET, 16, err, sizeof(err)), KP_EPROTO);
		/* Events flow from the supervisor only. */
		CHECK_EQ(ipc_rule_check((enum kp_role)r, CS_READY,
		    KPIPC__MSG__M_EVENT, err, sizeof(err)), KP_EPROTO);
	}
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY, KPIPC__MSG__M_EVENT,
	    err, sizeof(err)), KP_EPROTO);
	CHECK_STREQ(ipc_case_name(KPIPC__MSG__M_STATE_SET), "state_set");
	CHECK_STREQ(ipc_case_name(KPIPC__MSG__M_EVENT), "event");
}

static void
test_event_rules(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Event	 e = KPIPC__EVENT__INIT;
	char		 err[KP_ERROR_SIZE], big[KP_ERROR_SIZE + 1];

	m.m_case = KPIPC__MSG__M_EVENT;
	m.event = &e;
	e.kind = IPC_EVENT_ERROR;
	e.code = KP_EKUBE;
	e.message = "publisher: x";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	e.code = 0;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "event.code 0: not a KP_E* code");
	e.kind = IPC_EVENT_REGISTRATION;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	e.kind = 9;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "event.kind 9: out of range");
	e.kind = IPC_EVENT_PUBLISH;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	e.message = big;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "event.message: longer than");
}

static void
test_publish_errors(void)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__PublishStatus	 ps = KPIPC__PUBLISH_STATUS__INIT;
	char			*errs[KP_IPC_MAX_PUB_ERRORS + 1];
	char			 big[1100], err[KP_ERROR_SIZE];
	size_t			 i;

	for (i = 0; i <= KP_IPC_MAX_PUB_ERRORS; i++)
		errs[i] = "create slice: injected";
	m.m_case = KPIPC__MSG__M_PUBLISH_STATUS;
	m.publish_status = &ps;
	ps.last_error = "";
	ps.errors = errs;
	ps.n_errors = KP_IPC_MAX_PUB_ERRORS;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	ps.n_errors = KP_IPC_MAX_PUB_ERRORS + 1;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "publish_status.errors: more than 8");
	memset(big, 'e', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errs[2] = big;
	ps.n_errors = 3;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "publish_status.errors[2]: longer than 1024");
}

/* A StateSet frame as the reader thread would hand it over (owned). */
static Kpipc__Msg *
state_msg(uint64_t gen, const char *text)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__StateSet	 st = KPIPC__STATE_SET__INIT;
	uint8_t		 buf[256];
	size_t		 n;

	st.generation = gen;
	st.data.data = (uint8_t *)text;
	st.data.len = strlen(text);
	m.m_case = KPIPC__MSG__M_STATE_SET;
	m.state_set = &st;
	n = kpipc__msg__pack(&m, buf);
	return (kpipc__msg__unpack(NULL, n, buf));
}

static int	 calls;
static uint64_t	 last_gen;

static void
on_state(void *user, const void *data, size_t len, uint64_t gen)
{
	calls++;
	last_gen = gen;
	CHECK(user == &calls);
}

static void
test_ns_state(void)
{
	struct kp_options	 cfg;
	struct child_env	 env;
	struct ns_state		 s;
	char			 buf[16];
	size_t			 len;
	uint64_t		 gen;

	/* Outside the nodeserver the hook call is refused. */
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), &len, &gen), KP_ENOTSUP);
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), NULL, &gen), KP_EINVAL);

	memset(&cfg, 0, sizeof(cfg));
	cfg.state_fn = on_state;
	cfg.state_user = &calls;
	memset(&env, 0, sizeof(env));
	env.cfg = &cfg;
	/* What the supervisor held when it forked: there before any hook. */
	env.state = (const uint8_t *)"fork";
	env.state_len = 4;
	env.state_gen = 3;
	CHECK_EQ(ns_state_init(&s, &env), 0);
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), &len, &gen), 0);
	CHECK_EQ(len, 4);
	CHECK_EQ(gen, 3);
	CHECK(memcmp(buf, "fork", 4) == 0);
	CHECK_EQ(calls, 0);	/* the start state is no change */

	/* Older and repeated generations are ignored, newer ones taken. */
	ns_state_ipc(&s, state_msg(2, "old"));
	ns_state_ipc(&s, state_msg(3, "same"));
	CHECK_EQ(calls, 0);
	ns_state_ipc(&s, state_msg(4, "newer state"));
	CHECK_EQ(calls, 1);
	CHECK_EQ(last_gen, 4);
	CHECK_EQ(kp_hook_state_get(buf, 4, &len, &gen), KP_ENOSPC);
	CHECK_EQ(len, 11);
	CHECK_EQ(gen, 0);
	CHECK_EQ(kp_hook_state_get(NULL, 0, &len, NULL), KP_ENOSPC);
	CHECK_EQ(len, 11);
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), &len, &gen), 0);
	CHECK_EQ(gen, 4);
	CHECK(memcmp(buf, "newer state", 11) == 0);
	ns_state_ipc(&s, state_msg(5, ""));
	CHECK_EQ(kp_hook_state_get(NULL, 0, &len, &gen), 0);
	CHECK_EQ(len, 0);
	CHECK_EQ(gen, 5);
	ns_state_free(&s);

	/* A nodeserver forked before any kp_state_set. */
	memset(&env, 0, sizeof(env));
	env.cfg = &cfg;
	CHECK_EQ(ns_state_init(&s, &env), 0);
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), &len, &gen), KP_ENOENT);
	ns_state_free(&s);
	CHECK_EQ(kp_hook_state_get(buf, sizeof(buf), &len, &gen), KP_ENOTSUP);
}

static void
test_configs(void)
{
	struct dra_claim_alloc	 a;
	char			 err[KP_ERROR_SIZE];
	const json_t		*pj;

	memset(&a, 0, sizeof(a));
	CHECK_EQ(dra_claim_alloc_config(&a, "[{\"source\":\"FromClass\","
	    "\"parameters\":{\"mode\":\"slow\"}},{\"source\":\"FromClaim\","
	    "\"requests\":[\"a\",\"b\"]}]", "d.example.com", err,
	    sizeof(err)), 0);
	CHECK_EQ(a.n_configs, 2);
	CHECK_STREQ(a.configs[0].source, "FromClass");
	CHECK_EQ(a.configs[0].n_requests, 0);
	CHECK_STREQ(a.configs[0].driver, "d.example.com");
	CHECK_STREQ(a.configs[0].parameters, "{\"mode\":\"slow\"}");
	pj = kp_config_parameters(&a.configs[0]);
	CHECK_STREQ(json_string_value(json_object_get(pj, "mode")), "slow");
	CHECK_EQ(a.configs[1].n_requests, 2);
	CHECK_STREQ(a.configs[1].requests[1], "b");
	CHECK_STREQ(a.configs[1].parameters, "null");
	CHECK(kp_config_parameters(&a.configs[1]) == NULL);
	CHECK_STREQ(a.config_json, "[{\"source\":\"FromClass\","
	    "\"parameters\":{\"mode\":\"slow\"}},{\"source\":\"FromClaim\","
	    "\"requests\":[\"a\",\"b\"]}]");
	/* Replacing frees the old view (valgrind, ASan). */
	CHECK_EQ(dra_claim_alloc_config(&a, "[]", "d", err, sizeof(err)), 0);
	CHECK_EQ(a.n_configs, 0);
	CHECK_EQ(dra_claim_alloc_config(&a, "{}", "d", err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "opaque configuration: not a JSON array");
	CHECK_EQ(dra_claim_alloc_config(&a, "[1]", "d", err, sizeof(err)),
	    KP_EPROTO);
	CHECK_CONTAINS(err, "config[0]: not an object");
	CHECK_EQ(dra_claim_alloc_config(&a, "[{},{\"requests\":[1]}]", "d",
	    err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "config[1]: requests: not an array of strings");
	CHECK_EQ(dra_claim_alloc_config(&a, "[{\"source\":7}]", "d", err,
	    sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "config[0]: source: not a string");
	CHECK_EQ(dra_claim_alloc_config(&a, NULL, "d", err, sizeof(err)), 0);
	CHECK(a.config_json == NULL);
	dra_claim_alloc_free(&a);
}

static void
test_setters(void)
{
	struct kp_options	*o;

	CHECK_EQ(kp_state_set(NULL, "x", 1), KP_EINVAL);
	CHECK_EQ(kp_status_fd(NULL), KP_EINVAL);
	CHECK_EQ(kp_state_callback(NULL, on_state, NULL), KP_EINVAL);
	CHECK_EQ(kp_error_callback(NULL, NULL, NULL), KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_state_callback(o, on_state, &calls), 0);
	CHECK_EQ(kp_error_callback(o, NULL, &calls), 0);
	kp_options_free(o);
}

int
main(void)
{
	test_state_rules();
	test_event_rules();
	test_publish_errors();
	test_ns_state();
	test_configs();
	test_setters();
	return (test_done("test_channels"));
}
