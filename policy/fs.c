/*
 * fs.c - what a child sees of the filesystem.
 *
 * registrar: its root becomes an empty directory that no longer exists: a
 * fresh mkdtemp() directory is entered, removed, and chrooted into (a
 * removed directory stays empty: nothing can be created in it), so there
 * is nothing to clean up and nothing to read, not even /proc. Needs
 * CAP_SYS_CHROOT.
 *
 * nodeserver: a private mount namespace (slave of the host's, so mounts
 * made later on the host still show) with a private /proc (ns.c), an
 * empty read-only tmpfs over the service-account token directory and
 * over every directory the driver hides (/dev/null over a file), the
 * publisher's credential files (its kubeconfig and every file the
 * kubeconfig names, as the publisher's READY reported them: this process
 * never parses credentials) and kubelet's plugin directories but its own
 * (ns.c).
 *
 * publisher: a private mount namespace with a private /proc and without
 * kubelet's plugin directories; it reads its credential files.
 *
 * Mount namespaces need CAP_SYS_ADMIN; without it the paths stay
 * readable and a warning says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cap-ng.h>

#include "base/log.h"
#include "policy/policy.h"

static int
have_cap(int cap)
{
	capng_get_caps_process();
	return (capng_have_capability(CAPNG_EFFECTIVE, cap));
}

static int
empty_root(enum kp_role role, char *err, size_t errsize)
{
	static const char	*bases[] = { "/tmp", "/dev/shm", "/run" };
	char			 dir[64];
	size_t			 i;

	if (!have_cap(CAP_SYS_CHROOT)) {
		log_warnx("sandbox: no CAP_SYS_CHROOT (not root): the %s "
		    "keeps the filesystem view; its seccomp filter still "
		    "fails every open with EACCES", ipc_role_name(role));
		return (0);
	}
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/kp-empty-XXXXXX", bases[i]);
		if (mkdtemp(dir) != NULL)
			break;
	}
	if (i == sizeof(bases) / sizeof(bases[0])) {
		snprintf(err, errsize, "no directory for an empty root "
		    "(/tmp, /dev/shm, /run): %s", strerror(errno));
		return (KP_ESANDBOX);
	}
	if (chmod(dir, 0555) == -1 || chdir(dir) == -1 ||
	    rmdir(dir) == -1 || chroot(".") == -1 || chdir("/") == -1) {
		snprintf(err, errsize, "empty root %s: %s", dir,
		    strerror(errno));
		(void)rmdir(dir);
		return (KP_ESANDBOX);
	}
	return (0);
}

int
pol_hide(const char *path, char *err, size_t errsize)
{
	struct stat	 st;
	int		 r;

	if (stat(path, &st) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return (0);	/* nothing to hide */
		snprintf(err, errsize, "hide %s: %s", path, strerror(errno));
		return (KP_ESANDBOX);
	}
	if (S_ISDIR(st.st_mode))
		r = mount("kp-hidden", path, "tmpfs", MS_RDONLY | MS_NOSUID |
		    MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=1,mode=0");
	else if ((r = mount("/dev/null", path, NULL, MS_BIND, NULL)) == 0)
		r = mount(NULL, path, NULL, MS_BIND | MS_REMOUNT |
		    MS_RDONLY, NULL);
	if (r == -1) {
		snprintf(err, errsize, "hide %s: %s", path, strerror(errno));
		return (KP_ESANDBOX);
	}
	log_info(2, "sandbox: %s hidden", path);
	return (0);
}

/* A private mount namespace, slave of the host's. */
static int
private_ns(char *err, size_t errsize)
{
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == -1) {
		snprintf(err, errsize, "private mount namespace: %s",
		    strerror(errno));
		return (KP_ESANDBOX);
	}
	return (0);
}

/* qsort: longer paths (deeper, for nested ones) first. */
static int
deeper_first(const void *a, const void *b)
{
	size_t	 x = strlen(*(const char *const *)a);
	size_t	 y = strlen(*(const char *const *)b);

	return (x < y ? 1 : x > y ? -1 : 0);
}

static int
hide_paths(const struct child_env *env, char *err, size_t errsize)
{
	const struct policy_opts	*po = &env->cfg->policy;
	const char			*paths[1 + POL_MAX_PATHS +
					    KP_IPC_MAX_HIDE];
	struct stat			 st;
	size_t				 i, n;
	int				 r;

	if (!have_cap(CAP_SYS_ADMIN)) {
		/* Each item ends in ", ": none is empty whichever apply. */
		log_warnx("sandbox: no CAP_SYS_ADMIN (not root): the "
		    "nodeserver cannot hide %s%s%skubelet's plugin "
		    "directories or other processes in /proc from the "
		    "driver's hooks", stat(POL_TOKEN_DIR, &st) == 0 ?
		    POL_TOKEN_DIR ", " : "", env->n_hide > 0 ?
		    "the publisher's credential files, " : "",
		    po->n_hidden > 0 ? "the hidden paths, " : "");
		return (0);
	}
	if ((r = private_ns(err, errsize)) != 0 ||
	    (r = pol_ns_proc(err, errsize)) != 0)
		return (r);
	/*
	 * The token directory, the driver's hidden paths and the
	 * publisher's credential files (hidden file by file: a directory of
	 * them may hold what the driver needs; docs/security.md says how to
	 * hide more), deepest first: a path beneath one already covered by
	 * the empty mode-0 tmpfs could no longer be looked up without
	 * CAP_DAC_OVERRIDE, which a container's root lacks.
	 */
	n = 0;
	paths[n++] = POL_TOKEN_DIR;
	for (i = 0; i < po->n_hidden; i++)
		paths[n++] = po->hidden[i];
	for (i = 0; i < env->n_hide; i++)
		paths[n++] = env->hide[i];
	qsort(paths, n, sizeof(paths[0]), deeper_first);
	for (i = 0; i < n; i++)
		if ((r = pol_hide(paths[i], err, errsize)) != 0)
			return (r);
	return (pol_ns_kubelet_dirs(ROLE_NODESERVER, env->cfg, err, errsize));
}

static int
publisher_ns(const struct child_env *env, char *err, size_t errsize)
{
	int	 r;

	if (!have_cap(CAP_SYS_ADMIN)) {
		log_warnx("sandbox: no CAP_SYS_ADMIN (not root): the "
		    "publisher sees kubelet's plugin directories and every "
		    "process in /proc");
		return (0);
	}
	if ((r = private_ns(err, errsize)) != 0 ||
	    (r = pol_ns_proc(err, errsize)) != 0)
		return (r);
	return (pol_ns_kubelet_dirs(ROLE_PUBLISHER, env->cfg, err, errsize));
}

int
pol_fs(enum kp_role role, const struct child_env *env, char *err,
    size_t errsize)
{
	switch (role) {
	case ROLE_REGISTRAR:
	case ROLE_OBSERVER:
		return (empty_root(role, err, errsize));
	case ROLE_NODESERVER:
		return (hide_paths(env, err, errsize));
	case ROLE_PUBLISHER:
		return (publisher_ns(env, err, errsize));
	default:
		return (0);
	}
}
