/*
 * policy.c - policy_apply(): the sandbox of a child, in the fixed order of
 * STYLE 3: (fds were closed and the pid namespace entered at fork)
 * filesystem and mount namespace, NO_NEW_PRIVS, user and capabilities,
 * Landlock, not dumpable, seccomp. The filter is built first, while the
 * child is still privileged (it allocates and resolves names), and loaded
 * last.
 *
 * Runs in: each child, at the end of its privileged set-up (policy/ is
 * the sandbox; the supervisor only exports it as an OCI profile).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"
#include "base/config.h"

static struct pol_filter	*loaded;	/* lives as long as the child */

/* Threads of this process: field 20 of /proc/self/stat; 1 if unknown. */
static int
thread_count(void)
{
	char	 buf[1024], *p;
	FILE	*f;
	int	 i, n = 1;
	size_t	 len;

	if ((f = fopen("/proc/self/stat", "re")) == NULL)
		return (1);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return (1);
	/* after ") ": field 3 (state) ... field 20 (num_threads) */
	for (i = 3, p += 2; i < 20 && p != NULL; i++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	if (p != NULL)
		n = (int)strtol(p, NULL, 10);
	return (n > 0 ? n : 1);
}

static const char *
mode_name(int mode)
{
	return (mode == KP_SANDBOX_COMPLAIN ? "complain" :
	    mode == KP_SANDBOX_OFF ? "off" :
	    mode == KP_SANDBOX_STRICT ? "strict" : "enforce");
}

/*
 * Sandbox this child as role; logfd carries the SIGSYS report. On failure
 * returns KP_ESANDBOX (or KP_ENOMEM) with the reason in err; the caller
 * must then not serve (rpc_serve_fail).
 */
/*
 * The publisher parses what the API server sends: a last bound behind its
 * body limits and json_guard(), so a parse that still blows up fails its
 * malloc instead of taking the node's memory. Measured in the e2e tests
 * (publish, faults): VmData 62-74 MiB, VmPeak ~300-365 MiB (thread stacks
 * and glibc arenas are reserved address space, hence RLIMIT_DATA, not
 * RLIMIT_AS); 1 GiB leaves room for libcurl, OpenSSL and its threads.
 * ASan reserves terabytes of shadow: no limit in that build.
 */
#define POL_PUBLISHER_DATA	(1024ul * 1024 * 1024)

static int
pol_data_limit(enum kp_role role, char *err, size_t errsize)
{
/* (clang has no __SANITIZE_ADDRESS__: the build's own flag, too) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(KP_SANITIZE_SYSCALLS)
	struct rlimit	 rl = { POL_PUBLISHER_DATA, POL_PUBLISHER_DATA };

	if (role == ROLE_PUBLISHER && setrlimit(RLIMIT_DATA, &rl) == -1) {
		snprintf(err, errsize, "RLIMIT_DATA: %s", strerror(errno));
		return (KP_ESANDBOX);
	}
#else
	(void)role;
	(void)err;
	(void)errsize;
#endif
	return (0);
}

int
policy_apply(enum kp_role role, const struct child_env *env, char *err,
    size_t errsize)
{
	const struct policy_opts	*po = &env->cfg->policy;
	int				 logfd = env->logfd;
	struct pol_filter		*f = NULL;
	struct rlimit			 core = { 0, 0 };
	uid_t				 uid;
	int				 r, n;

	err[0] = '\0';
	/* capset and setresuid's effect on capabilities are per thread:
	 * a thread started earlier (by an init hook) would keep them. */
	if ((n = thread_count()) > 1) {
		snprintf(err, errsize, "%d threads before the sandbox: the "
		    "init hook must not leave threads running", n);
		return (KP_ESANDBOX);
	}
	if (po->mode != KP_SANDBOX_OFF &&
	    (r = pol_filter_build(role, po, logfd, &f, err, errsize)) != 0)
		return (r);
	if ((r = pol_fs(role, env, err, errsize)) != 0)
		goto fail;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errsize, "PR_SET_NO_NEW_PRIVS: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	if ((r = pol_ids_caps(role, po, env->ctl.fd, err, errsize)) != 0)
		goto fail;
	/* After the ids (its rules are opened as the role's uid), before
	 * the filter (its syscalls are in no allowlist); in every mode. */
	if ((r = pol_landlock(role, po, err, errsize)) != 0)
		goto fail;
	/* A violation ends in SIGSYS, whose default action dumps core. */
	(void)setrlimit(RLIMIT_CORE, &core);
	if ((r = pol_data_limit(role, err, errsize)) != 0)
		goto fail;
	/*
	 * Not dumpable, last before the filter: the uid change above resets
	 * the flag to fs.suid_dumpable (which may be 1 or 2), so it is set
	 * after it. Then this process's /proc/<pid>/{mem,environ,fd,root,
	 * maps...} are root's and closed to every other process of any uid
	 * without CAP_SYS_PTRACE; the process itself still reads its own
	 * /proc/self/maps (ASan does) through the same-thread-group check.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(err, errsize, "PR_SET_DUMPABLE: %s", strerror(errno));
		r = KP_ESANDBOX;
		goto fail;
	}
	uid = getuid();
	if (po->mode == KP_SANDBOX_OFF) {
		log_errorx("SANDBOX OFF: no seccomp filter in the %s "
		    "(kp_sandbox_mode KP_SANDBOX_OFF is for debugging only)",
		    ipc_role_name(role));
		return (0);
	}
	if ((r = pol_filter_load(f, err, errsize)) != 0)
		goto fail;
	loaded = f;
	if (po->mode == KP_SANDBOX_COMPLAIN)
		log_warnx("sandbox in complain mode: syscalls outside the "
		    "%s allowlist are logged, not denied", ipc_role_name(role));
	log_info(2, "sandbox: %s, uid %u, seccomp %s", ipc_role_name(role),
	    (unsigned)uid, mode_name(po->mode));
	return (0);
fail:
	pol_filter_free(f);
	return (r);
}
