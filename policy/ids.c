/*
 * ids.c - which uid and gid each sandboxed role runs as. Started as root,
 * every role gets its own non-root ids, uid_base + its POL_ID_OFF_* (see
 * KP_SANDBOX_UID_BASE in the public header for why 61000), so no two
 * processes share a uid: same-uid is what lets one process open another's
 * /proc/<pid>/mem or signal it. No user database is read (a distroless
 * image has none; a name lookup would load NSS modules into a process
 * about to be sandboxed). kp_sandbox_user() overrides one role.
 *
 * Runs in: each child (policy/caps.c) and in whatever asks which uid a
 * role will have (e.g. to hand it a directory).
 */
#include <unistd.h>

#include "policy/policy.h"

/*
 * The ids role will run as: returns 0 with *uid and *gid when the child will
 * change to them, 1 with the caller's effective ids when it keeps them
 * (not started as root and nothing configured), KP_EINVAL for a role
 * that is not sandboxed.
 */
int
pol_role_ids(enum kp_role role, const struct policy_opts *po, uid_t *uid,
    gid_t *gid)
{
	unsigned	 off;

	switch (role) {
	case ROLE_NODESERVER:
		off = POL_ID_OFF_NODESERVER;
		break;
	case ROLE_REGISTRAR:
		off = POL_ID_OFF_REGISTRAR;
		break;
	case ROLE_PUBLISHER:
		off = POL_ID_OFF_PUBLISHER;
		break;
	case ROLE_OBSERVER:
		off = POL_ID_OFF_OBSERVER;
		break;
	case ROLE_BROKER:
		off = POL_ID_OFF_BROKER;
		break;
	default:
		return (KP_EINVAL);
	}
	if (role < ROLE_COUNT && po->user[role].set) {
		*uid = po->user[role].uid;
		*gid = po->user[role].gid;
		return (0);
	}
	if (geteuid() != 0 || po->uid_base == 0) {
		*uid = geteuid();
		*gid = getegid();
		return (1);
	}
	/* kp_sandbox_uid_base() left room for every offset. */
	*uid = po->uid_base + off;
	*gid = (gid_t)(po->uid_base + off);
	return (0);
}
