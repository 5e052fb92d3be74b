/*
 * monitor.c - the privileges of the process every child is forked from
 * (the supervisor today, the monitor of DESIGN section 1 once it is
 * split): after its set-up and before it reads a child's first frame it
 * sets NO_NEW_PRIVS, keeps only the capabilities it and its children's
 * set-up need (caps.c), leaves its working directory and loads its own
 * seccomp filter, the union of every table (seccomp.c): a filter is
 * inherited by every child forked after it.
 *
 * And the nodeserver's init hook, which runs under that filter before the
 * nodeserver's own sandbox: the declared capabilities are raised for it,
 * and a call outside the supervisor's filter fails with EPERM (as in a
 * prepare hook) and is named in the log, not a silent death by SIGSYS.
 *
 * Runs in: the supervisor (policy_supervisor), the nodeserver before its
 * init hook (policy_init_*).
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

/*
 * Code that is not ours about to run under the monitor's filter (the init
 * hook; the driver's main() run again in an exec'd nodeserver or
 * registrar, ipc/role_exec_main.c): a call outside it returns EPERM
 * (eperm 1; 0: the process dies of it, named) and is recorded for
 * policy_denied_end().
 */
void
policy_denied_begin(const char *role, int logfd, int eperm)
{
	struct sigaction	 sa;
	sigset_t		 set;

	pol_sigsys_setup(role, logfd, eperm);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pol_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGSYS, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	pol_denied_begin();
}

/*
 * Each syscall the monitor's filter refused since policy_denied_begin()
 * logged as a warning of what ("init hook: sandbox denied bpf (EPERM):
 * ..."); when failed, named in err (errsize bytes) too.
 */
void
policy_denied_end(const char *what, int failed, char *err, size_t errsize)
{
	int	 nrs[POL_DENIED_MAX];
	size_t	 i, n, len;
	char	 name[64];

	n = pol_denied_end(nrs, POL_DENIED_MAX);
	for (i = 0; i < n; i++) {
		if (pol_syscall_name(nrs[i], name, sizeof(name)) != 0)
			snprintf(name, sizeof(name), "syscall #%d", nrs[i]);
		log_warnx("%s: sandbox denied %s (EPERM): the supervisor's "
		    "filter; add it with kp_sandbox_syscall() if the driver "
		    "needs it", what, name);
		if (!failed || err == NULL)
			continue;
		len = strlen(err);
		if (len < errsize)
			snprintf(err + len, errsize - len, "; sandbox denied "
			    "%s", name);
	}
}

/*
 * Before the nodeserver's init hook: its declared capabilities effective,
 * and a call outside the supervisor's filter returns EPERM to the hook
 * (enforce mode) or ends the nodeserver with the call named (strict),
 * recorded for policy_init_end().
 */
void
policy_init_begin(const struct child_env *env)
{
	const struct policy_opts	*po = &env->cfg->policy;
	char				 err[KP_ERROR_SIZE];

	(void)pol_init_caps(po, err, sizeof(err));
	if (po->mode == KP_SANDBOX_OFF || po->mode == KP_SANDBOX_COMPLAIN)
		return;
	policy_denied_begin("nodeserver", env->logfd,
	    po->mode == KP_SANDBOX_ENFORCE);
}

/*
 * After the init hook: each syscall the supervisor's filter refused is
 * logged; a failed hook's message (err, of errsize) names them too.
 */
void
policy_init_end(const struct child_env *env, int failed, char *err,
    size_t errsize)
{
	if (env->cfg->policy.mode != KP_SANDBOX_ENFORCE)
		return;
	policy_denied_end("init hook", failed, err, errsize);
}
