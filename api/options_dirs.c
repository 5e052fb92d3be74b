/*
 * options_dirs.c - the directory options of the Go helper v0.33+
 * (RegistrarDirectoryPath, RegistrarSocketFilename,
 * PluginDataDirectoryPath, PluginSocket) and a kubelet root directory for
 * nodes whose kubelet runs with --root-dir. kp_start() derives the socket
 * paths from them (opt_dirs_resolve) when the 1.32 path options are not
 * set: <root>/plugins_registry/<driver>-reg.sock and
 * <root>/plugins/<driver>/dra.sock by default, as upstream.
 *
 * Runs in: the driver process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "api/api.h"
#include "base/fdio.h"
#include "ipc/child.h"

#define DEFAULT_ROOT	"/var/lib/kubelet"

static const char *
root_of(const struct kp_options *o)
{
	return (o->kubelet_root[0] != '\0' ? o->kubelet_root : DEFAULT_ROOT);
}

/* An absolute directory without trailing '/' or "."/".." components. */
static int
check_dir(struct kp_options *o, const char *what, const char *dir)
{
	char		 q[OPT_QUOTE_SIZE];
	const char	*p;
	size_t		 len;

	opt_quote(dir, q, sizeof(q));
	if (dir == NULL || dir[0] != '/')
		return (opt_fail(o, KP_EINVAL, "%s: %s must be an absolute "
		    "path", what, q));
	if ((len = strlen(dir)) >= KP_SUN_PATH_MAX - 1)
		return (opt_fail(o, KP_ENAMETOOLONG, "%s: %s is %zu bytes: a "
		    "socket in it would not fit in sun_path (108 bytes)", what,
		    q, len));
	if (len > 1 && dir[len - 1] == '/')
		return (opt_fail(o, KP_EINVAL, "%s: %s must not end in '/'",
		    what, q));
	for (p = dir; (p = strchr(p, '/')) != NULL; p++)
		if (strncmp(p, "//", 2) == 0 || strncmp(p, "/./", 3) == 0 ||
		    strcmp(p, "/.") == 0 || strncmp(p, "/../", 4) == 0 ||
		    strcmp(p, "/..") == 0)
			return (opt_fail(o, KP_EINVAL, "%s: %s must be a clean "
			    "path (no '//', '.' or '..' components)", what, q));
	return (0);
}

int
opt_check_dir(struct kp_options *o, const char *what, const char *dir)
{
	return (check_dir(o, what, dir));
}

/* A socket file name: no '/', not starting with '.'. */
static int
check_file(struct kp_options *o, const char *what, const char *name)
{
	char	 q[OPT_QUOTE_SIZE];

	opt_quote(name, q, sizeof(q));
	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL)
		return (opt_fail(o, KP_EINVAL, "%s: %s must be a file name "
		    "(not empty, no '/')", what, q));
	if (name[0] == '.')
		return (opt_fail(o, KP_EINVAL, "%s: %s must not start with "
		    "'.' (kubelet ignores such files)", what, q));
	if (strlen(name) >= KP_SUN_PATH_MAX - 1)
		return (opt_fail(o, KP_ENAMETOOLONG, "%s: %s is too long for "
		    "sun_path (108 bytes)", what, q));
	return (0);
}

/* dir lexically inside root (both clean, absolute). */
static int
inside(const char *dir, const char *root)
{
	size_t	 n = strlen(root);

	if (strcmp(root, "/") == 0)
		return (1);
	return (strncmp(dir, root, n) == 0 && (dir[n] == '/' ||
	    dir[n] == '\0'));
}

/* A socket path dir/name must be < 108 bytes (sun_path with its NUL). */
static int
check_join(struct kp_options *o, const char *what, const char *dir,
    const char *name)
{
	size_t	 n = strlen(dir) + 1 + strlen(name);

	if (n > KP_SUN_PATH_MAX)
		/* The rule first: a long path would push it past the
		 * end of the message (KP_ERROR_SIZE). */
		return (opt_fail(o, KP_ENAMETOOLONG, "%s: a socket path "
		    "of %zu bytes, at most %d fit in sun_path; use a shorter "
		    "directory: %s/%s", what, n, KP_SUN_PATH_MAX, dir, name));
	return (0);
}

/*
 * 1.37 kubelets refuse a DRA endpoint outside their root directory; so do
 * we, once a root is known (set explicitly).
 */
static int
check_inside_root(struct kp_options *o, const char *what, const char *dir)
{
	if (o->kubelet_root[0] == '\0' || dir[0] == '\0' ||
	    inside(dir, o->kubelet_root))
		return (0);
	return (opt_fail(o, KP_EINVAL, "%s: must be inside the kubelet root "
	    "directory (kp_kubelet_root_dir; kubelets 1.37+ refuse other "
	    "endpoints): \"%s\" is not inside \"%s\"", what, dir,
	    o->kubelet_root));
}

int
kp_kubelet_root_dir(struct kp_options *o, const char *dir)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if ((rc = check_dir(o, OPT_ROOT, dir)) != 0)
		return (rc);
	if (o->plugin_dir[0] != '\0' && !inside(o->plugin_dir, dir))
		return (opt_fail(o, KP_EINVAL, "%s: \"%s\" does not contain "
		    "the plugin data directory \"%s\" (%s); kubelets 1.37+ "
		    "refuse endpoints outside their root", OPT_ROOT, dir,
		    o->plugin_dir, OPT_PLUGIN_DIR));
	snprintf(o->kubelet_root, sizeof(o->kubelet_root), "%s", dir);
	return (0);
}

int
kp_registrar_directory_path(struct kp_options *o, const char *dir)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if ((rc = check_dir(o, OPT_REG_DIR, dir)) != 0 ||
	    (o->registrar_file[0] != '\0' &&
	    (rc = check_join(o, OPT_REG_DIR, dir, o->registrar_file)) != 0))
		return (rc);
	snprintf(o->registrar_dir, sizeof(o->registrar_dir), "%s", dir);
	return (0);
}

int
kp_registrar_socket_filename(struct kp_options *o, const char *name)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if (o->rolling_uid[0] != '\0')
		return (opt_fail(o, KP_EINVAL, "%s: rolling updates and "
		    "explicit registration socket filename are mutually "
		    "exclusive (kp_rolling_update is set)", OPT_REG_FILE));
	if ((rc = check_file(o, OPT_REG_FILE, name)) != 0 ||
	    (o->registrar_dir[0] != '\0' &&
	    (rc = check_join(o, OPT_REG_FILE, o->registrar_dir, name)) != 0))
		return (rc);
	snprintf(o->registrar_file, sizeof(o->registrar_file), "%s", name);
	return (0);
}

int
kp_plugin_data_directory_path(struct kp_options *o, const char *dir)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if ((rc = check_dir(o, OPT_PLUGIN_DIR, dir)) != 0 ||
	    (rc = check_inside_root(o, OPT_PLUGIN_DIR, dir)) != 0 ||
	    (rc = check_join(o, OPT_PLUGIN_DIR, dir, o->plugin_file[0] ?
	    o->plugin_file : "dra.sock")) != 0)
		return (rc);
	snprintf(o->plugin_dir, sizeof(o->plugin_dir), "%s", dir);
	return (0);
}

int
kp_plugin_socket(struct kp_options *o, const char *name)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if ((rc = check_file(o, OPT_PLUGIN_FILE, name)) != 0 ||
	    (o->plugin_dir[0] != '\0' &&
	    (rc = check_join(o, OPT_PLUGIN_FILE, o->plugin_dir, name)) != 0))
		return (rc);
	snprintf(o->plugin_file, sizeof(o->plugin_file), "%s", name);
	return (0);
}

/*
 * A directory the plugin needs: create the data directory (0750) if its
 * parent exists; never the registry (kubelet creates it: a missing one
 * means kubelet watches elsewhere). Writable and searchable, or
 * KP_EACCES; missing, KP_ENOENT; both naming the path and the option.
 */
static int
ensure_dir(struct kp_options *o, const char *what, const char *dir,
    int create)
{
	struct stat	 st;

	/* In an exec'd nodeserver (role_exec_main.c) the monitor owns the
	 * directories: a kubelet directory gone for a moment must not fail
	 * a restart, and it creates nothing. */
	if (role_exec_pending() != ROLE_COUNT)
		return (0);
	if (stat(dir, &st) == -1) {
		if (errno == ENOENT && create && mkdir(dir, 0750) == 0) {
			log_info(1, "created %s (%s)", dir, what);
			return (0);
		}
		/* The advice before the paths: a long path would cut it
		 * at KP_ERROR_SIZE. */
		if (errno == ENOENT && strcmp(what, OPT_FLOCK_DIR) == 0)
			return (opt_fail(o, KP_ENOENT, "%s: %s does not exist",
			    what, dir));
		if (errno == ENOENT)
			return (opt_fail(o, KP_ENOENT, "%s (kubelet creates "
			    "plugins/ and plugins_registry/ on a node: create "
			    "them, or set kp_kubelet_root_dir): %s does not "
			    "exist%s", what, dir,
			    create ? ", nor does its parent" : ""));
		return (opt_fail(o, opt_errno_code(errno), "%s: %s: %s", what,
		    dir, strerror(errno)));
	}
	if (!S_ISDIR(st.st_mode))
		return (opt_fail(o, KP_ENOENT, "%s: %s is not a directory",
		    what, dir));
	if (access(dir, W_OK | X_OK) == -1)
		return (opt_fail(o, KP_EACCES, "%s: %s: not writable by this "
		    "process (%s)", what, dir, strerror(errno)));
	/* The supervisor binds and re-binds the sockets here without
	 * CAP_DAC_OVERRIDE (docs/security.md "Capabilities"). */
	if (geteuid() == 0 && !fd_dir_mode_writable(&st))
		return (opt_fail(o, KP_EACCES, "%s: %s (uid %u, mode %03o) "
		    "must be writable by root through its mode: the "
		    "supervisor keeps no CAP_DAC_OVERRIDE (make it root's, "
		    "as kubelet's directories are)", what, dir,
		    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777)));
	return (0);
}

/* dir/name into *field (owned), marking it derived. */
static int
derive(struct kp_options *o, const char *what, char **field, int *derived,
    const char *dir, const char *name)
{
	char	 path[KP_SUN_PATH_MAX + 64];
	int	 rc;

	if ((rc = check_join(o, what, dir, name)) != 0)
		return (rc);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	free(*field);
	if ((*field = strdup(path)) == NULL)
		return (opt_fail(o, KP_ENOMEM, "%s: out of memory", what));
	*derived = 1;
	return (0);
}

/*
 * At kp_start(), before opt_check(): the socket paths from the directory
 * options and their defaults, where no 1.32 path option (which overrides)
 * and no listener is set; the directories exist (or are created) and are
 * writable. Also the start checks that the directory model adds.
 */
int
opt_dirs_resolve(struct kp_options *o)
{
	char	 dir[KP_SUN_PATH_MAX + 64], name[KP_SUN_PATH_MAX + 64];
	char	 pdir[KP_SUN_PATH_MAX + 64];
	int	 rc;

	if (o->driver_name == NULL)
		return (0);	/* opt_check() names it */
	if (o->kube_mode != KP_KUBE_NONE && o->node_name == NULL)
		return (opt_fail(o, KP_EINVAL, "%s: must be set when Kubernetes "
		    "access is configured (kp_kube_client_*): ResourceSlices "
		    "and claim look-ups are per node", OPT_NODE));
	if ((rc = opt_rolling_check(o)) != 0)
		return (rc);
	if (o->plugin_path_derived) {
		free(o->plugin_socket_path);
		o->plugin_socket_path = NULL;
		o->plugin_path_derived = 0;
	}
	if (o->registrar_path_derived) {
		free(o->registrar_socket_path);
		o->registrar_socket_path = NULL;
		o->registrar_path_derived = 0;
	}
	if (o->plugin_dir[0] != '\0')
		snprintf(pdir, sizeof(pdir), "%s", o->plugin_dir);
	else
		snprintf(pdir, sizeof(pdir), "%s/plugins/%s", root_of(o),
		    o->driver_name);
	if (o->plugin_socket_path == NULL && o->plugin_listener < 0) {
		/* upstream: dra.sock, dra-<uid>.sock with rolling updates
		 * (ours shortened where upstream's would not fit);
		 * an explicit PluginSocket wins over both. */
		if (o->plugin_file[0] != '\0')
			snprintf(name, sizeof(name), "%s", o->plugin_file);
		else if (o->rolling_uid[0] != '\0') {
			/* Shortened when the path would not fit: a long
			 * driver name is in pdir (rolling_name.c). */
			if ((rc = rolling_plugin_socket_file(pdir,
			    o->rolling_uid, name, sizeof(name))) != 0)
				return (opt_fail(o, rc, "%s: cannot derive the "
				    "DRA socket name in %s", OPT_ROLLING, pdir));
		} else
			snprintf(name, sizeof(name), "dra.sock");
		/* With the DRA service off the path is still advertised
		 * (upstream computes the endpoint either way), so it is
		 * checked, but nothing is created. */
		if ((rc = check_inside_root(o, OPT_PLUGIN_DIR, pdir)) != 0 ||
		    (rc = derive(o, OPT_PLUGIN_DIR, &o->plugin_socket_path,
		    &o->plugin_path_derived, pdir, name)) != 0 ||
		    (!o->dra_off && (rc = ensure_dir(o, OPT_PLUGIN_DIR, pdir,
		    1)) != 0))
			return (rc);
	}
	if (o->registrar_socket_path == NULL && o->registrar_listener < 0 &&
	    !o->registration_off) {
		if (o->registrar_dir[0] != '\0')
			snprintf(dir, sizeof(dir), "%s", o->registrar_dir);
		else
			snprintf(dir, sizeof(dir), "%s/plugins_registry",
			    root_of(o));
		if (o->registrar_file[0] != '\0')
			snprintf(name, sizeof(name), "%s", o->registrar_file);
		else if (o->rolling_uid[0] != '\0') {
			if ((rc = kp_rolling_update_registrar_socket_file(dir,
			    o->driver_name, o->rolling_uid, name,
			    sizeof(name))) != 0)
				return (opt_fail(o, rc, "%s: cannot derive the "
				    "registration socket name in %s", OPT_ROLLING,
				    dir));
		} else
			snprintf(name, sizeof(name), "%s-reg.sock",
			    o->driver_name);
		if ((rc = derive(o, OPT_REG_DIR, &o->registrar_socket_path,
		    &o->registrar_path_derived, dir, name)) != 0 ||
		    (rc = ensure_dir(o, OPT_REG_DIR, dir, 0)) != 0)
			return (rc);
	}
	/*
	 * The lock that serializes hooks across instances: upstream takes
	 * it only with rolling updates (otherwise one instance runs and an
	 * in-process mutex is enough), in FlockDirectoryPath, by default
	 * the plugin data directory. The supervisor opens it.
	 */
	o->lock_path[0] = '\0';
	if (o->rolling_uid[0] != '\0' && o->serialize && !o->dra_off) {
		if (o->flock_dir[0] != '\0') {
			snprintf(dir, sizeof(dir), "%s", o->flock_dir);
			if ((rc = ensure_dir(o, OPT_FLOCK_DIR, dir, 0)) != 0)
				return (rc);
		} else {
			snprintf(dir, sizeof(dir), "%s", pdir);
			if ((rc = ensure_dir(o, OPT_PLUGIN_DIR, dir, 1)) != 0)
				return (rc);
		}
		snprintf(o->lock_path, sizeof(o->lock_path), "%s/%s", dir,
		    KP_LOCK_FILE);
	}
	return (0);
}
