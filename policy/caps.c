/*
 * caps.c - the user and the capabilities of a child (libcap-ng): the
 * bounding set is cut first, while the child still holds CAP_SETPCAP, then
 * the ids change (keeping the permitted set across setresuid), then the
 * effective/permitted/inheritable sets become exactly the kept ones and
 * the ambient set is cleared.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cap-ng.h>

#include "base/log.h"
#include "ipc/child.h"
#include "policy/policy.h"

/*
 * A capability's number from "CAP_SYS_ADMIN", "cap_sys_admin",
 * "sys_admin" or "21"; -1 if it names none libcap-ng knows.
 */
int
pol_cap_number(const char *name)
{
	char	 low[64];
	char	*end;
	long	 v;
	size_t	 i;

	if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof(low))
		return (-1);
	if (isdigit((unsigned char)name[0])) {
		errno = 0;
		v = strtol(name, &end, 10);
		if (errno != 0 || *end != '\0' || v < 0 || v > 63 ||
		    capng_capability_to_name((unsigned int)v) == NULL)
			return (-1);
		return ((int)v);
	}
	for (i = 0; name[i] != '\0'; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = '\0';
	if (strncmp(low, "cap_", 4) == 0)
		return (capng_name_to_capability(low + 4));
	return (capng_name_to_capability(low));
}

/* Change to uid/gid keeping the permitted capabilities; no supplementary
 * groups (root's would otherwise stay). */
static int
change_ids(uid_t uid, gid_t gid, int ctl, char *err, size_t errsize)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1 ||
	    setgroups(0, NULL) == -1 ||
	    setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1) {
		snprintf(err, errsize, "cannot change to uid %u gid %u: %s",
		    (unsigned)uid, (unsigned)gid, strerror(errno));
		return (KP_ESANDBOX);
	}
	(void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	/* A uid change clears the parent-death signal: set it again, or a
	 * child outlives a killed supervisor (and holds its socket). Then
	 * check the supervisor did not die before: getppid() says nothing
	 * in a pid namespace (0), the control channel does. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
	    child_supervisor_gone(ctl)) {
		snprintf(err, errsize, "the supervisor is gone");
		return (KP_ESANDBOX);
	}
	return (0);
}

/*
 * Set role's user and capabilities: the registrar and the publisher keep
 * none, the nodeserver those the driver declared (when this process has
 * them; a missing one is a warning).
 */
int
pol_ids_caps(enum kp_role role, const struct policy_opts *po, int ctl,
    char *err, size_t errsize)
{
	uint64_t	 keep = 0;
	uid_t		 uid = geteuid();
	gid_t		 gid = getegid();
	int		 change = 0, setpcap, cap;

	capng_get_caps_process();
	setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	for (cap = 0; role == ROLE_NODESERVER && cap < 64; cap++) {
		if ((po->ns_caps & (1ULL << cap)) == 0)
			continue;
		if (capng_have_capability(CAPNG_PERMITTED, cap))
			keep |= 1ULL << cap;
		else
			log_warnx("sandbox: capability %s declared for the "
			    "nodeserver but not held by this process",
			    capng_capability_to_name(cap));
	}
	if ((change = pol_role_ids(role, po, &uid, &gid)) < 0) {
		snprintf(err, errsize, "no ids for role %d", (int)role);
		return (KP_ESANDBOX);
	}
	change = change == 0;
	if (!change)
		log_warnx("sandbox: not started as root: the %s keeps uid %u "
		    "(every process shares it; no uid of its own)",
		    ipc_role_name(role), (unsigned)uid);

	capng_clear(CAPNG_SELECT_BOTH);
	for (cap = 0; cap < 64; cap++)
		if (keep & (1ULL << cap))
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE |
			    CAPNG_PERMITTED | CAPNG_BOUNDING_SET, cap);
	if (setpcap && capng_apply(CAPNG_SELECT_BOUNDS) != 0) {
		snprintf(err, errsize, "cannot drop the capability "
		    "bounding set");
		return (KP_ESANDBOX);
	}
	if (!setpcap)
		log_info(1, "sandbox: no CAP_SETPCAP: the capability "
		    "bounding set stays (NO_NEW_PRIVS makes it moot)");
	if (change && change_ids(uid, gid, ctl, err, errsize) != 0)
		return (KP_ESANDBOX);
	if (capng_apply(CAPNG_SELECT_CAPS) != 0) {
		snprintf(err, errsize, "cannot set the capabilities");
		return (KP_ESANDBOX);
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return (0);
}

/*
 * What the supervisor keeps: each is used by it or by a child's set-up
 * before the child's own drop (docs/security.md, "Capabilities").
 */
static const int sup_caps[] = {
	CAP_CHOWN,	/* the state directories to the nodeserver */
	CAP_KILL,	/* signals to children of other uids */
	CAP_SETGID,	/* a child's setgroups, setresgid */
	CAP_SETUID,	/* a child's setresuid */
	CAP_SETPCAP,	/* bounding sets: its own, then each child's */
	CAP_SYS_CHROOT,	/* the registrar's and observer's empty root */
	CAP_SYS_ADMIN	/* a pid namespace per child (unshare, setns),
			 * their mount namespaces and mounts */
};

/*
 * The supervisor's capabilities after its set-up: effective = the set
 * above; permitted = bounding = that set plus the nodeserver's declared
 * ones (kp_sandbox_capability), which its init hook raises
 * (pol_init_caps) and the nodeserver keeps; inheritable and ambient
 * empty. Only what this process holds is kept (a container may grant
 * less). Without CAP_SETPCAP (not root) there is nothing to drop.
 */
int
pol_supervisor_caps(const struct policy_opts *po, char *err, size_t errsize)
{
	uint64_t	 keep = 0, pass = 0;
	size_t		 i;
	int		 cap;

	capng_get_caps_process();
	if (!capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP)) {
		if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
			log_warnx("supervisor: no CAP_SETPCAP: its "
			    "capability bounding set stays");
		return (0);
	}
	/* Only what is held: a capability cannot be gained here. */
	for (i = 0; i < sizeof(sup_caps) / sizeof(sup_caps[0]); i++)
		if (capng_have_capability(CAPNG_PERMITTED, sup_caps[i]))
			keep |= 1ULL << sup_caps[i];
	for (cap = 0; cap < 64; cap++)
		if ((po->ns_caps & (1ULL << cap)) &&
		    capng_have_capability(CAPNG_PERMITTED, cap))
			pass |= 1ULL << cap;
	capng_clear(CAPNG_SELECT_BOTH);
	for (cap = 0; cap < 64; cap++) {
		if (keep & (1ULL << cap))
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE |
			    CAPNG_PERMITTED | CAPNG_BOUNDING_SET, cap);
		else if (pass & (1ULL << cap))
			capng_update(CAPNG_ADD, CAPNG_PERMITTED |
			    CAPNG_BOUNDING_SET, cap);
	}
	if (capng_apply(CAPNG_SELECT_BOUNDS) != 0 ||
	    capng_apply(CAPNG_SELECT_CAPS) != 0) {
		snprintf(err, errsize, "supervisor: cannot drop its "
		    "capabilities");
		return (KP_ESANDBOX);
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return (0);
}

/*
 * The nodeserver's init hook runs with the supervisor's set and the
 * declared capabilities effective (the supervisor holds them permitted
 * only). Failing that is no error: policy_apply() warns about a declared
 * capability that is missing.
 */
int
pol_init_caps(const struct policy_opts *po, char *err, size_t errsize)
{
	int	 cap, n = 0;

	(void)err;
	(void)errsize;
	capng_get_caps_process();
	for (cap = 0; cap < 64; cap++)
		if ((po->ns_caps & (1ULL << cap)) &&
		    capng_have_capability(CAPNG_PERMITTED, cap)) {
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE, cap);
			n++;
		}
	if (n > 0 && capng_apply(CAPNG_SELECT_CAPS) != 0)
		log_warnx("init hook: cannot raise the declared capabilities");
	return (0);
}
