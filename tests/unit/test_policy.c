/*
 * test_policy.c - the sandbox tables and options: every name in every
 * table resolves on this architecture, the tables are consistent within
 * groups (checked loosely: no duplicate, no role rule shadowing base), the
 * setters validate, and the OCI profile is well-formed enough to carry
 * the tables (the e2e suite parses it as JSON).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "policy/policy.h"
#include "api/api.h"

static void
check_table(const char *what, const struct pol_rule *t, size_t n)
{
	size_t	 i, j;

	for (i = 0; i < n; i++) {
		if (pol_syscall_number(t[i].name) < 0) {
			fprintf(stderr, "%s: unknown syscall %s\n", what,
			    t[i].name);
			CHECK(0);
		}
		for (j = i + 1; j < n; j++)
			if (strcmp(t[i].name, t[j].name) == 0) {
				fprintf(stderr, "%s: %s twice\n", what,
				    t[i].name);
				CHECK(0);
			}
	}
}

/* A name must not be both allowed by base and denied by a role. */
static int
in_table(const struct pol_rule *t, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return (1);
	return (0);
}

static int
fcntl_allows(int cmd)
{
	size_t	 i;

	for (i = 0; i < pol_n_fcntl_allowed; i++)
		if (pol_fcntl_allowed[i] == cmd)
			return (1);
	return (0);
}

/* The argument rule of name in role's table; -1 if not listed. */
static int
rule_arg(enum kp_role role, const char *name)
{
	const struct pol_rule	*t;
	size_t			 n, i;

	t = pol_table(role, &n);
	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return ((int)t[i].arg);
	return (-1);
}

int
main(void)
{
	static const enum kp_role roles[] = { ROLE_REGISTRAR,
	    ROLE_NODESERVER, ROLE_PUBLISHER, ROLE_OBSERVER, ROLE_SUPERVISOR };
	const struct pol_rule	*b, *t;
	struct kp_options	*o;
	char			*json;
	size_t			 nb, n, i, k;

	b = pol_table_base(&nb);
	check_table("base", b, nb);
	CHECK(nb > 20);
	for (k = 0; k < sizeof(roles) / sizeof(roles[0]); k++) {
		t = pol_table(roles[k], &n);
		CHECK(t != NULL && n > 0);
		check_table(ipc_role_name(roles[k]), t, n);
		for (i = 0; roles[k] != ROLE_SUPERVISOR && i < n; i++)
			if (in_table(b, nb, t[i].name)) {
				fprintf(stderr, "%s: %s also in base\n",
				    ipc_role_name(roles[k]), t[i].name);
				CHECK(0);
			}
	}
	/* The registrar may not open files; clone3 falls back; no fork. */
	t = pol_table(ROLE_REGISTRAR, &n);
	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, "openat") == 0)
			CHECK(t[i].action == POL_EACCES);
	for (i = 0; i < nb; i++) {
		if (strcmp(b[i].name, "clone3") == 0)
			CHECK(b[i].action == POL_ENOSYS);
		if (strcmp(b[i].name, "clone") == 0)
			CHECK(b[i].arg == POL_ARG_CLONE_THREAD);
		CHECK(strcmp(b[i].name, "fork") != 0);
		CHECK(strcmp(b[i].name, "execve") != 0);
	}

	/* fcntl: argument-filtered in every role, without the commands that
	 * signal other processes. */
	for (i = 0, k = 0; i < nb; i++)
		if (strcmp(b[i].name, "fcntl") == 0) {
			CHECK(b[i].arg == POL_ARG_FCNTL);
			k++;
		}
	CHECK_EQ(k, 1);
	for (i = 0; i < pol_n_fcntl_allowed; i++) {
		CHECK(pol_fcntl_allowed[i] != F_SETOWN);
		CHECK(pol_fcntl_allowed[i] != F_SETOWN_EX);
		CHECK(pol_fcntl_allowed[i] != F_SETSIG);
		CHECK(pol_fcntl_allowed[i] != F_SETLEASE);
		CHECK(pol_fcntl_allowed[i] != F_NOTIFY);
	}
	CHECK(fcntl_allows(F_GETFL) && fcntl_allows(F_SETFL) &&
	    fcntl_allows(F_GETFD) && fcntl_allows(F_SETFD) &&
	    fcntl_allows(F_DUPFD_CLOEXEC) && fcntl_allows(F_SETLKW) &&
	    fcntl_allows(F_OFD_SETLK) && fcntl_allows(F_ADD_SEALS));
	/* The publisher's sockets, the registrar's fstat. */
	CHECK(rule_arg(ROLE_PUBLISHER, "socket") == POL_ARG_SOCKET_INET);
	CHECK(rule_arg(ROLE_PUBLISHER, "socketpair") ==
	    POL_ARG_SOCKETPAIR_STREAM);
	CHECK(rule_arg(ROLE_REGISTRAR, "newfstatat") == POL_ARG_FD_EMPTY_PATH);
	CHECK(rule_arg(ROLE_NODESERVER, "socket") == -1);
	CHECK(rule_arg(ROLE_REGISTRAR, "socket") == -1);
	/* The observer: no socket, connect or bind of its own. */
	CHECK(rule_arg(ROLE_OBSERVER, "socket") == -1);
	CHECK(rule_arg(ROLE_OBSERVER, "connect") == -1);
	CHECK(rule_arg(ROLE_OBSERVER, "bind") == -1);
	CHECK(rule_arg(ROLE_OBSERVER, "accept4") == POL_ARG_NONE);

	/* Capability names. */
	CHECK(pol_cap_number("CAP_SYS_ADMIN") == 21);
	CHECK(pol_cap_number("cap_net_admin") == 12);
	CHECK(pol_cap_number("sys_admin") == 21);
	CHECK(pol_cap_number("21") == 21);
	CHECK(pol_cap_number("CAP_NOPE") < 0);
	CHECK(pol_cap_number("99") < 0);
	CHECK(pol_cap_number("") < 0);

	/* Setters. */
	CHECK(kp_options_new(&o) == 0);
	CHECK(o->policy.mode == KP_SANDBOX_ENFORCE);
	CHECK(kp_sandbox_mode(o, KP_SANDBOX_COMPLAIN) == 0);
	CHECK(kp_sandbox_mode(o, (enum kp_sandbox_mode)7) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_sandbox_mode");
	CHECK_CONTAINS(kp_options_last_error(o), "KP_SANDBOX_STRICT");
	CHECK(o->policy.mode == KP_SANDBOX_COMPLAIN);
	CHECK(kp_sandbox_mode(o, KP_SANDBOX_STRICT) == 0);
	CHECK(o->policy.mode == KP_SANDBOX_STRICT);
	CHECK(kp_sandbox_mode(o, KP_SANDBOX_COMPLAIN) == 0);
	CHECK(kp_sandbox_capability(o, "CAP_SYS_ADMIN") == 0);
	CHECK(o->policy.ns_caps == (1ULL << 21));
	CHECK(kp_sandbox_capability(o, "CAP_WHATEVER") == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "CAP_WHATEVER");
	CHECK(kp_sandbox_capability(o, NULL) == KP_EINVAL);
	CHECK(kp_sandbox_syscall(o, "getcpu") == 0);
	CHECK(kp_sandbox_syscall(o, "getcpu") == 0);
	CHECK(o->policy.n_ns_syscalls == 1);
	CHECK(kp_sandbox_syscall(o, "no_such_call") == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "no_such_call");
	CHECK(kp_sandbox_hide_path(o, "relative/x") == KP_EINVAL);
	CHECK(kp_sandbox_hide_path(o, "/srv/keys") == 0);
	CHECK(o->policy.n_hidden == 1);
	CHECK(kp_sandbox_user(o, KP_PROCESS_NODESERVER, 1000, 1000) ==
	    0);
	CHECK(o->policy.user[ROLE_NODESERVER].set);
	CHECK(kp_sandbox_user(o, KP_PROCESS_REGISTRAR, (uid_t)-1, 1) ==
	    KP_EINVAL);
	CHECK(kp_sandbox_user(o, (enum kp_process)9, 1, 1) ==
	    KP_EINVAL);
	CHECK(kp_sandbox_mode(NULL, KP_SANDBOX_OFF) == KP_EINVAL);

	/* The OCI profile carries the tables and the driver's extras. */
	CHECK(kp_policy_export_oci(o, NULL) == KP_EINVAL);
	CHECK(kp_policy_export_oci(o, &json) == 0);
	CHECK(strstr(json, "\"defaultAction\": \"SCMP_ACT_ERRNO\""));
	CHECK(strstr(json, "\"getcpu\""));
	CHECK(strstr(json, "\"accept4\""));
	CHECK(strstr(json, "\"errnoRet\": 38"));
	CHECK(strstr(json, "\"ptrace\"") == NULL);
	/* fcntl only with its command list: F_GETFL (3), not F_SETOWN. */
	CHECK(strstr(json, "\"names\": [\"fcntl\"], \"action\": "
	    "\"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 1, \"value\": "
	    "4294967295, \"valueTwo\": 3,"));
	CHECK(strstr(json, "\"valueTwo\": 8, \"op\"") == NULL);
	free(json);
	CHECK(kp_policy_export_oci(NULL, &json) == 0);
	CHECK(strstr(json, "\"getcpu\"") == NULL);
	free(json);
	kp_options_free(o);
	return (test_done("test_policy"));
}
