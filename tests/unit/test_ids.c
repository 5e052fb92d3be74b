/*
 * test_ids.c - identities and namespaces, the parts a unit can reach:
 * kp_sandbox_uid_base() validates, pol_role_ids() gives every role its
 * own non-root ids (root) or the caller's (not root), kp_sandbox_user()
 * overrides one role, and ipc_check() refuses a READY whose hide_paths
 * a nodeserver could not safely mount over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "policy/policy.h"
#include "api/api.h"

static void
test_uid_base(void)
{
	struct kp_options	*o;

	CHECK(kp_options_new(&o) == 0);
	CHECK_EQ(o->policy.uid_base, KP_SANDBOX_UID_BASE);
	CHECK_EQ(KP_SANDBOX_UID_BASE, 61000);
	CHECK(kp_sandbox_uid_base(NULL, 70000) == KP_EINVAL);
	CHECK(kp_sandbox_uid_base(o, 0) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_sandbox_uid_base");
	CHECK_CONTAINS(kp_options_last_error(o), "root");
	CHECK_EQ(o->policy.uid_base, KP_SANDBOX_UID_BASE);
	/* base + 4 (the broker's) must stay below (uid_t)-1 */
	CHECK(kp_sandbox_uid_base(o, (uid_t)-1) == KP_EINVAL);
	CHECK(kp_sandbox_uid_base(o, (uid_t)-5) == KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "no room");
	CHECK(kp_sandbox_uid_base(o, (uid_t)-6) == 0);
	CHECK_EQ(o->policy.uid_base, (uid_t)-6);
	CHECK(kp_sandbox_uid_base(o, 1) == 0);
	CHECK(kp_sandbox_uid_base(o, 200000) == 0);
	CHECK_EQ(o->policy.uid_base, 200000);
	kp_options_free(o);
}

static void
test_role_ids(void)
{
	struct kp_options	*o;
	uid_t			 u[ROLE_COUNT];
	gid_t			 g[ROLE_COUNT];
	int			 r, i, j;

	CHECK(kp_options_new(&o) == 0);
	for (i = 0; i < ROLE_COUNT; i++) {
		r = pol_role_ids((enum kp_role)i, &o->policy, &u[i], &g[i]);
		if (geteuid() == 0) {
			CHECK_EQ(r, 0);
			CHECK(u[i] != 0 && g[i] != 0);
			CHECK(u[i] >= KP_SANDBOX_UID_BASE &&
			    u[i] < KP_SANDBOX_UID_BASE + POL_ID_COUNT);
			CHECK_EQ(u[i], g[i]);
		} else {
			/* not root: the caller's ids stay */
			CHECK_EQ(r, 1);
			CHECK_EQ(u[i], geteuid());
			CHECK_EQ(g[i], getegid());
		}
	}
	if (geteuid() == 0) {
		CHECK_EQ(u[ROLE_NODESERVER], 61000);
		CHECK_EQ(u[ROLE_REGISTRAR], 61001);
		CHECK_EQ(u[ROLE_PUBLISHER], 61002);
		for (i = 0; i < ROLE_COUNT; i++)
			for (j = i + 1; j < ROLE_COUNT; j++)
				CHECK(u[i] != u[j] && g[i] != g[j]);
		CHECK(kp_sandbox_uid_base(o, 5000) == 0);
		CHECK(pol_role_ids(ROLE_PUBLISHER, &o->policy, &u[0],
		    &g[0]) == 0);
		CHECK_EQ(u[0], 5002);
		CHECK_EQ(g[0], 5002);
	}
	/* kp_sandbox_user() wins, root or not. */
	CHECK(kp_sandbox_user(o, KP_PROCESS_REGISTRAR, 4242, 4343) == 0);
	CHECK(pol_role_ids(ROLE_REGISTRAR, &o->policy, &u[0], &g[0]) == 0);
	CHECK_EQ(u[0], 4242);
	CHECK_EQ(g[0], 4343);
	/* Roles that are not sandboxed have no ids. */
	CHECK(pol_role_ids(ROLE_SUPERVISOR, &o->policy, &u[0], &g[0]) ==
	    KP_EINVAL);
	CHECK(pol_role_ids(ROLE_DRIVER, &o->policy, &u[0], &g[0]) ==
	    KP_EINVAL);
	kp_options_free(o);
}

static int
ready_check(const char **paths, size_t n, char *err, size_t errsize)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Ready	 rd = KPIPC__READY__INIT;

	rd.pid = 1;
	rd.hide_paths = (char **)paths;
	rd.n_hide_paths = n;
	m.m_case = KPIPC__MSG__M_READY;
	m.ready = &rd;
	err[0] = '\0';
	return (ipc_check(&m, err, errsize));
}

static void
test_ready_paths(void)
{
	static const char	*good[] = { "/etc/kubernetes/kubelet.conf",
				    "/var/lib/kubelet/pki/x.pem", "/a/.b/..c" };
	static const char	*bad[] = { "", "relative", "/", "/a/../b",
				    "/a/..", "/./a", "/a/./b", "/a\nb",
				    "/a\x7f" };
	const char		*many[KP_IPC_MAX_HIDE + 1];
	char			 err[256], longp[KP_IPC_PATH_MAX + 1];
	size_t			 i;

	CHECK(ready_check(good, 3, err, sizeof(err)) == 0);
	CHECK(ready_check(NULL, 0, err, sizeof(err)) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(ready_check(&bad[i], 1, err, sizeof(err)) ==
		    KP_EPROTO);
		CHECK_CONTAINS(err, "ready.hide_paths[0]");
	}
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	many[0] = longp;
	CHECK(ready_check(many, 1, err, sizeof(err)) == KP_EPROTO);
	CHECK_CONTAINS(err, "longer than 255");
	longp[KP_IPC_PATH_MAX - 1] = '\0';	/* 255 bytes: fits */
	CHECK(ready_check(many, 1, err, sizeof(err)) == 0);
	for (i = 0; i < KP_IPC_MAX_HIDE + 1; i++)
		many[i] = "/etc/x";
	CHECK(ready_check(many, KP_IPC_MAX_HIDE, err, sizeof(err)) == 0);
	CHECK(ready_check(many, KP_IPC_MAX_HIDE + 1, err, sizeof(err)) ==
	    KP_EPROTO);
	CHECK_CONTAINS(err, "more than 10");
}

int
main(void)
{
	test_uid_base();
	test_role_ids();
	test_ready_paths();
	return (test_done("test_ids"));
}
