/*
 * denied.c - code that is not ours running under the monitor's filter,
 * before a child's own sandbox: the nodeserver's init hook (with its
 * declared capabilities raised) and the driver's main() run again in an
 * exec'd nodeserver or registrar (ipc/role_exec_main.c). A call outside
 * the filter fails with EPERM (as in a prepare hook) and is named in the
 * log, not a silent death by SIGSYS.
 *
 * Runs in: the nodeserver and the registrar, before their sandbox.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "policy/policy.h"

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
		/* main() run again: the call is the driver process's own,
		 * not the hooks' (docs/driver-guide.md, "main()'s own calls"). */
		if (strstr(what, "main()") != NULL)
			log_warnx("%s: sandbox denied %s (EPERM): the "
			    "supervisor's filter; make main()'s own calls after "
			    "kp_start() returns (kp_policy_main_syscall() or "
			    "kp_policy_main_ioctl() for the pod's profile), or "
			    "kp_sandbox_syscall() if the hooks need it", what,
			    name);
		else
			log_warnx("%s: sandbox denied %s (EPERM): the "
			    "supervisor's filter; add it with "
			    "kp_sandbox_syscall() if the driver needs it", what,
			    name);
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
