/*
 * monitor.c - the privileges of the process every child is forked from
 * (the supervisor today, the monitor of DESIGN section 1 once it is
 * split): after its set-up and before it reads a child's first frame it
 * sets NO_NEW_PRIVS, keeps only the capabilities it and its children's
 * set-up need (caps.c), leaves its working directory and loads its own
 * seccomp filter, the union of every table (seccomp.c): a filter is
 * inherited by every child forked after it.
 *
 * Runs in: the monitor (policy_supervisor). What runs under its filter
 * before a child's own is denied.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"

/*
 * Called once by the supervisor, single-threaded, before it forks its
 * first child. Mode off loads no filter (logged); complain logs what the
 * filter would refuse to the kernel's audit log. On failure returns
 * KP_ESANDBOX or KP_ENOMEM with the reason in err: the start fails.
 */
int
policy_supervisor(const struct kp_options *cfg, char *err, size_t errsize)
{
	const struct policy_opts	*po = &cfg->policy;
	struct pol_filter		*f = NULL;
	int				 r;

	err[0] = '\0';
	if (po->mode != KP_SANDBOX_OFF &&
	    (r = pol_filter_build_union(po, &f, err, errsize)) != 0)
		return (r);
	/*
	 * NO_NEW_PRIVS: the publisher and the observer are exec'd
	 * (supervisor/child_exec.c), and an exec then gains no capability
	 * beyond our permitted set and no setuid id; every child inherits
	 * it and sets it again.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errsize, "supervisor: PR_SET_NO_NEW_PRIVS: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	if ((r = pol_supervisor_caps(po, err, errsize)) != 0)
		goto fail;
	/* Relative paths no longer name the driver's working directory. */
	if (chdir("/") == -1) {
		snprintf(err, errsize, "supervisor: chdir /: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	if (po->mode == KP_SANDBOX_OFF) {
		log_errorx("SANDBOX OFF: no seccomp filter in the supervisor");
		return (0);
	}
	if ((r = pol_filter_load(f, err, errsize)) != 0)
		goto fail;
	/* The kernel holds the loaded program; no child needs the copy. */
	pol_filter_free(f);
	log_info(2, "sandbox: supervisor, seccomp %s",
	    po->mode == KP_SANDBOX_COMPLAIN ? "complain" : "enforce");
	return (0);
fail:
	pol_filter_free(f);
	return (r);
}
