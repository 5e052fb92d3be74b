/*
 * broker.c - the broker's sandbox (monitor/broker.c forks it): after its
 * privileged set-up (the state and metadata directories prepared) and
 * before it reads a child's first frame, in the order of policy.c: the
 * filter built, NO_NEW_PRIVS, its own uid and gid with no capability in
 * any set (bounding and ambient included), Landlock (the CDI directory
 * read, the metadata directory written, nothing else), not dumpable, no
 * core, its own seccomp filter (syscalls.c broker[]: no process, no
 * socket, no exec, no mount, signals only to itself).
 *
 * It is in a pid namespace of its own (spawn_fork), so it can name no
 * other process for kill(2) or F_SETOWN; it shares no uid with another
 * process of the plugin (policy/ids.c).
 *
 * Runs in: the broker.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"

int
policy_broker(const struct kp_options *cfg, int mon_fd, char *err,
    size_t errsize)
{
	const struct policy_opts	*po = &cfg->policy;
	struct pol_filter		*f = NULL;
	struct rlimit			 core = { 0, 0 };
	int				 r;

	err[0] = '\0';
	if (po->mode != KP_SANDBOX_OFF &&
	    (r = pol_filter_build(ROLE_BROKER, po, -1, &f, err,
	    errsize)) != 0)
		return (r);
	if (cfg->metadata && (r = pol_landlock_write(cfg->metadata_dir)) != 0) {
		snprintf(err, errsize, "broker: metadata directory %s: %s",
		    cfg->metadata_dir, kp_strerror(r));
		goto fail;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errsize, "broker: PR_SET_NO_NEW_PRIVS: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	if ((r = pol_ids_caps(ROLE_BROKER, po, mon_fd, err, errsize)) != 0 ||
	    (r = pol_landlock(ROLE_BROKER, po, err, errsize)) != 0)
		goto fail;
	(void)setrlimit(RLIMIT_CORE, &core);
	/* After the uid change, which resets it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(err, errsize, "broker: PR_SET_DUMPABLE: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	if (po->mode == KP_SANDBOX_OFF) {
		log_errorx("SANDBOX OFF: no seccomp filter in the broker");
		return (0);
	}
	if ((r = pol_filter_load(f, err, errsize)) != 0)
		goto fail;
	pol_filter_free(f);
	log_info(2, "sandbox: broker, uid %u, seccomp %s", (unsigned)getuid(),
	    po->mode == KP_SANDBOX_COMPLAIN ? "complain" : "enforce");
	return (0);
fail:
	pol_filter_free(f);
	return (r);
}
