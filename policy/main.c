/*
 * main.c - the driver process's own filter (kp_policy_main_confine):
 * the pod's profile (oci.c) loaded by the driver process on itself, on
 * every thread, once kp_start() started the plugin. A privileged pod
 * (deploy/components/device-driver) gets no profile from its container
 * runtime; with this its main() and every thread of it are bound by the
 * same allowlist the profile would have been, the monitor and the
 * children by their own filters.
 *
 * Runs in: the driver process (api/api.c kp_start), never in a child.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cap-ng.h>

#include "base/log.h"
#include "policy/policy.h"

/*
 * Called by kp_start() in the driver process after the plugin started.
 * CAP_SYS_ADMIN in the effective set (root in a privileged pod) loads
 * the filter as it is; without it NO_NEW_PRIVS is set first, as the
 * kernel requires (seccomp(2)), which every later exec of the process
 * keeps. Mode off loads nothing (logged). KP_ESANDBOX or KP_ENOMEM with
 * the reason in err: nothing is loaded then.
 */
int
policy_main(const struct kp_options *cfg, char *err, size_t errsize)
{
	const struct policy_opts	*po = &cfg->policy;
	struct pol_filter		*f;
	int				 r, admin;

	err[0] = '\0';
	if (po->mode == KP_SANDBOX_OFF) {
		log_errorx("SANDBOX OFF: kp_policy_main_confine loads no "
		    "filter on the driver process");
		return (0);
	}
	if ((r = pol_filter_build_main(po, &f, err, errsize)) != 0)
		return (r);
	admin = capng_get_caps_process() == 0 &&
	    capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_ADMIN);
	r = pol_filter_load_tsync(f, !admin, err, errsize);
	pol_filter_free(f);
	if (r != 0)
		return (r);
	log_info(1, "sandbox: driver process, seccomp %s on every thread "
	    "(the pod's profile%s)", po->mode == KP_SANDBOX_COMPLAIN ?
	    "complain" : "enforce", admin ? "" : "; NO_NEW_PRIVS set");
	return (0);
}
