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
#include "ipc/child.h"

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

/* Whether union u has name, and with which rank (0: not at all). */
static int
union_rank(const struct pol_union *u, const char *name)
{
	size_t	 i;

	for (i = 0; i < u->n; i++)
		if (strcmp(u->e[i].name, name) == 0)
			return (u->e[i].rank);
	return (0);
}

#define LOOP_RULE	"{\"names\": [\"ioctl\"], \"action\": " \
	"\"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 1, \"value\": " \
	"4294967295, \"valueTwo\": 19586, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}"

/*
 * kp_policy_main_syscall() and kp_policy_main_ioctl(): validated when set,
 * in the pod's profile (the union with POL_UNION_DRIVER), never in the
 * supervisor's union (its filter, which the init hook and a main() run
 * again in a child run under); a nodeserver extra is in both.
 */
static void
main_needs(void)
{
	struct kp_options	*o;
	struct pol_union	*u;
	char			*json, *def, name[64];
	size_t			 i;
	int			 nr;

	CHECK(kp_options_new(&o) == 0);
	CHECK(kp_policy_main_syscall(NULL, "mknodat") == KP_EINVAL);
	CHECK(kp_policy_main_ioctl(NULL, 0x4C82) == KP_EINVAL);
	CHECK(kp_policy_main_syscall(o, "no_such_call") == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_policy_main_syscall");
	CHECK_CONTAINS(kp_options_last_error(o), "\"no_such_call\" is not a "
	    "system call");
	CHECK(kp_policy_main_syscall(o, NULL) == KP_EINVAL);
	CHECK(kp_policy_main_ioctl(o, 0) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "request 0 names no "
	    "command");
	CHECK(kp_policy_main_ioctl(o, 0x100004C82UL) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "0x100004c82 is wider than "
	    "32 bits");
	CHECK_EQ(o->policy.n_main_syscalls, 0);
	CHECK_EQ(o->policy.n_main_ioctls, 0);
	/* Nothing declared: the export is the defaults'. */
	CHECK(kp_policy_export_oci(o, &json) == 0);
	CHECK(kp_policy_export_oci(NULL, &def) == 0);
	CHECK_STREQ(json, def);
	free(json);
	CHECK(strstr(def, "19586") == NULL);

	CHECK(kp_policy_main_syscall(o, "mknodat") == 0);
	CHECK(kp_policy_main_syscall(o, "mknodat") == 0);
	CHECK_EQ(o->policy.n_main_syscalls, 1);
	CHECK(kp_policy_main_ioctl(o, 0x4C82) == 0);	/* LOOP_CTL_GET_FREE */
	CHECK(kp_policy_main_ioctl(o, 0x4C82) == 0);
	CHECK(kp_policy_main_ioctl(o, 0x541B) == 0);	/* FIONREAD, ours */
	CHECK_EQ(o->policy.n_main_ioctls, 2);
	CHECK(kp_policy_export_oci(o, &json) == 0);
	CHECK(strstr(def, "\"mknodat\"") == NULL);
	CHECK(strstr(json, "\"mknodat\""));
	CHECK(strstr(json, LOOP_RULE));
	/* FIONREAD once: the library's rule, not repeated. */
	CHECK(strstr(json, "\"valueTwo\": 21531,") != NULL);
	CHECK(strstr(strstr(json, "\"valueTwo\": 21531,") + 1,
	    "\"valueTwo\": 21531,") == NULL);
	/* ioctl stays an argument rule: only the commands named. */
	CHECK(strstr(json, "\"ioctl\", ") == NULL);
	CHECK(strstr(json, ", \"ioctl\"") == NULL);
	free(json);

	/* The supervisor's filter (the union without the driver) has none
	 * of them; the pod's union has both. */
	CHECK(pol_union_build(&o->policy, 0, &u) == 0);
	CHECK_EQ(union_rank(u, "mknodat"), 0);
	CHECK_EQ(union_rank(u, "ioctl"), 2);
	free(u);
	CHECK(pol_union_build(&o->policy, POL_UNION_DRIVER, &u) == 0);
	CHECK_EQ(union_rank(u, "mknodat"), 3);
	CHECK_EQ(union_rank(u, "ioctl"), 2);
	free(u);

	/* main() allowed every ioctl: no argument rule left, so no
	 * command rules either. */
	CHECK(kp_policy_main_syscall(o, "ioctl") == 0);
	CHECK(kp_policy_export_oci(o, &json) == 0);
	CHECK(strstr(json, "19586") == NULL);
	CHECK(strstr(json, "\"ioctl\""));
	CHECK(strstr(json, "{\"names\": [\"ioctl\"]") == NULL);
	free(json);
	kp_options_free(o);

	/* Bounded. */
	CHECK(kp_options_new(&o) == 0);
	for (i = 0; i < POL_MAX_IOCTLS; i++)
		CHECK(kp_policy_main_ioctl(o, 0x1000 + i) == 0);
	CHECK(kp_policy_main_ioctl(o, 0x2000) == KP_ENOMEM);
	CHECK_CONTAINS(kp_options_last_error(o), "at most 32 ioctl commands");
	for (i = 0, nr = 0; i < POL_MAX_SYSCALLS && nr < 1024; nr++)
		if (pol_syscall_name(nr, name, sizeof(name)) == 0) {
			CHECK(kp_policy_main_syscall(o, name) == 0);
			i++;
		}
	CHECK_EQ(o->policy.n_main_syscalls, POL_MAX_SYSCALLS);
	while (pol_syscall_name(nr, name, sizeof(name)) != 0)
		nr++;
	CHECK(kp_policy_main_syscall(o, name) == KP_ENOMEM);
	CHECK_CONTAINS(kp_options_last_error(o), "at most 64 extra system "
	    "calls");
	kp_options_free(o);
	free(def);
}

/*
 * kp_policy_main_confine(): 0 or 1 only, off by default; part of the
 * options an exec'd nodeserver's main() run must match (child_opts_diff
 * names the policy), so a main() that confines only sometimes is caught.
 * The filter itself, loaded: test_seccomp.c main_confined().
 */
static void
main_confine(void)
{
	struct kp_options	*a, *b;
	uint8_t			*fa, *fb;
	size_t			 la, lb;
	char			 err[KP_ERROR_SIZE];

	CHECK(kp_policy_main_confine(NULL, 1) == KP_EINVAL);
	CHECK(kp_options_new(&a) == 0);
	CHECK_EQ(a->policy.main_confine, 0);
	CHECK(kp_policy_main_confine(a, 2) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(a), "kp_policy_main_confine "
	    "(beyond upstream): on is 2, not 0 or 1");
	CHECK(kp_policy_main_confine(a, -1) == KP_EINVAL);
	CHECK_EQ(a->policy.main_confine, 0);
	CHECK(kp_policy_main_confine(a, 1) == 0);
	CHECK_EQ(a->policy.main_confine, 1);
	CHECK(kp_policy_main_confine(a, 0) == 0);
	CHECK_EQ(a->policy.main_confine, 0);

	CHECK(kp_options_new(&b) == 0);
	CHECK(kp_driver_name(a, "loop.example.com") == 0);
	CHECK(kp_driver_name(b, "loop.example.com") == 0);
	CHECK(kp_policy_main_confine(b, 1) == 0);
	CHECK_EQ(child_opts_flatten(a, &fa, &la, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_CONTAINS(err, "policy differs");
	free(fb);
	CHECK(kp_policy_main_confine(a, 1) == 0);
	CHECK_EQ(child_opts_flatten(a, &fb, &lb, err, sizeof(err)), 0);
	free(fa);
	CHECK_EQ(child_opts_flatten(b, &fa, &la, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)), 0);
	free(fa);
	free(fb);
	kp_options_free(a);
	kp_options_free(b);
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
	main_needs();
	main_confine();
	return (test_done("test_policy"));
}
