/*
 * role_ids.c - the uid and gid a role runs as, for those outside the
 * child that must know it beforehand (the supervisor chowns the state
 * directories to the nodeserver's).
 *
 * XXX(merge): replaced by the ns branch (its pol_role_ids() knows the
 * per-role default uids); until then the kp_sandbox_user() setting, else
 * the caller's ids, which is what pol_ids_caps() applies today.
 *
 * Runs in: the driver process (kp_start), before the supervisor forks.
 */
#include <unistd.h>

#include "policy/policy.h"

int
pol_role_ids(enum kp_role role, const struct policy_opts *po, uid_t *uid,
    gid_t *gid)
{
	if (role < 0 || role >= ROLE_COUNT)
		return (KP_EINVAL);
	if (po->user[role].set) {
		*uid = po->user[role].uid;
		*gid = po->user[role].gid;
	} else {
		*uid = getuid();
		*gid = getgid();
	}
	return (0);
}
