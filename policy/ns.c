/*
 * ns.c - what a child's private mount namespace shows of processes and of
 * kubelet's plugin directories.
 *
 * /proc: every child is pid 1 of its own pid namespace (the supervisor
 * creates it so, supervisor/children.c); a fresh proc mounted on /proc
 * then lists that namespace only: the child itself and its threads. No
 * sibling, no supervisor, no host process, so no /proc/<pid>/mem or
 * /proc/<pid>/root to open (hidepid is moot). nosuid, nodev, noexec.
 *
 * Kubelet's directories: kubelet keeps every plugin's registration socket
 * in <root>/plugins_registry and every plugin's DRA socket and data under
 * <root>/plugins/<name>/ (CSI staging mounts of other pods included). A
 * child needs none of it: it serves on a listening fd it inherited. They
 * are derived from the socket options: the registrar socket's directory,
 * and the parent of the DRA socket's directory. A directory is hidden
 * only when its name is kubelet's ("plugins_registry", "plugins"): a test
 * or an unusual layout with the sockets in /tmp must not hide /tmp. Paths
 * that are not given (listener fds without a path) are skipped.
 *
 * The nodeserver keeps its own data directory, the DRA socket's (drivers
 * keep checkpoints there): it is opened before plugins/ is covered by a
 * tmpfs, then bound back into the tmpfs at the same place, and the tmpfs
 * is made read-only. Every sibling is gone; the own directory is the
 * same directory as on the host (writes show there).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"

#define PLUGINS_REGISTRY	"plugins_registry"
#define PLUGINS			"plugins"
#define HIDE_FLAGS		(MS_NOSUID | MS_NODEV | MS_NOEXEC)

/*
 * Mount a fresh proc on /proc. Only in a pid namespace of our own (pid 1):
 * elsewhere a new proc shows the same processes as the old one.
 */
int
pol_ns_proc(char *err, size_t errsize)
{
	if (getpid() != 1) {
		log_info(1, "sandbox: no pid namespace of its own: /proc "
		    "stays the host's");
		return (0);
	}
	if (mount("proc", "/proc", "proc", HIDE_FLAGS, NULL) == -1) {
		snprintf(err, errsize, "mount a private /proc: %s",
		    strerror(errno));
		return (KP_ESANDBOX);
	}
	return (0);
}

/* The directory part of path into out ("" when none or "/"). */
static void
dir_of(const char *path, char *out, size_t size)
{
	const char	*slash;

	out[0] = '\0';
	if (path == NULL || (slash = strrchr(path, '/')) == NULL ||
	    slash == path || (size_t)(slash - path) >= size)
		return;
	snprintf(out, size, "%.*s", (int)(slash - path), path);
}

/* 1 if the last component of dir is name. */
static int
named(const char *dir, const char *name)
{
	const char	*slash = strrchr(dir, '/');

	return (slash != NULL && strcmp(slash + 1, name) == 0);
}

/* Cover plugins/ with a tmpfs, then bind own (a child of it) back. */
static int
hide_plugins_keep(const char *plugins, const char *own, char *err,
    size_t errsize)
{
	char		 target[PATH_MAX], src[64];
	const char	*base = own + strlen(plugins) + 1;
	int		 fd, r = 0;

	if (strchr(base, '/') != NULL) {
		snprintf(err, errsize, "%s is not directly in %s", own,
		    plugins);
		return (KP_ESANDBOX);
	}
	if ((fd = open(own, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return (pol_hide(plugins, err, errsize));
		snprintf(err, errsize, "open %s: %s", own, strerror(errno));
		return (KP_ESANDBOX);
	}
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	snprintf(target, sizeof(target), "%s/%s", plugins, base);
	if (mount("kp-hidden", plugins, "tmpfs", HIDE_FLAGS,
	    "size=16k,nr_inodes=16,mode=0755") == -1 ||
	    mkdir(target, 0755) == -1 ||
	    mount(src, target, NULL, MS_BIND | MS_REC, NULL) == -1 ||
	    mount(NULL, plugins, NULL, MS_REMOUNT | MS_RDONLY | HIDE_FLAGS,
	    "size=16k,nr_inodes=16,mode=0755") == -1) {
		snprintf(err, errsize, "hide %s but %s: %s", plugins, own,
		    strerror(errno));
		r = KP_ESANDBOX;
	} else
		log_info(2, "sandbox: %s hidden but %s", plugins, own);
	close(fd);
	return (r);
}

/*
 * Hide kubelet's plugins_registry/ and plugins/ from role (nodeserver,
 * publisher), in its private mount namespace; the nodeserver keeps its
 * own directory under plugins/.
 */
int
pol_ns_kubelet_dirs(enum kp_role role, const struct kp_options *cfg,
    char *err, size_t errsize)
{
	char	 reg[PATH_MAX], own[PATH_MAX], plugins[PATH_MAX];
	int	 r;

	dir_of(cfg->registrar_socket_path, reg, sizeof(reg));
	dir_of(cfg->plugin_socket_path, own, sizeof(own));
	dir_of(own, plugins, sizeof(plugins));
	/* The registry first: it may lie inside plugins/ (not kubelet's
	 * layout, but then it is still hidden). */
	if (reg[0] != '\0' && named(reg, PLUGINS_REGISTRY) &&
	    strcmp(reg, own) != 0 && (r = pol_hide(reg, err, errsize)) != 0)
		return (r);
	if (plugins[0] == '\0' || !named(plugins, PLUGINS))
		return (0);
	if (role != ROLE_NODESERVER)
		return (pol_hide(plugins, err, errsize));
	return (hide_plugins_keep(plugins, own, err, errsize));
}
