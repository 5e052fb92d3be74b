/*
 * options_policy.c - the validating setters of the sandbox options
 * (struct policy_opts in policy/policy.h, part of struct kp_options).
 * Names are checked against libcap-ng and libseccomp when set, so a typo
 * fails here, not at kp_start() in a child.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"
#include "base/cdi.h"
#include "policy/policy.h"

#define O_SB_MODE	"kp_sandbox_mode (beyond upstream)"
#define O_SB_CAP	"kp_sandbox_capability (beyond upstream)"
#define O_SB_SYSCALL	"kp_sandbox_syscall (beyond upstream)"
#define O_PO_MAINSC	"kp_policy_main_syscall (beyond upstream)"
#define O_PO_MAINIOC	"kp_policy_main_ioctl (beyond upstream)"
#define O_PO_CONFINE	"kp_policy_main_confine (beyond upstream)"
#define O_SB_HIDE	"kp_sandbox_hide_path (beyond upstream)"
#define O_SB_USER	"kp_sandbox_user (beyond upstream)"
#define O_SB_STATE	"kp_sandbox_state_dir (beyond upstream)"
#define O_SB_READ	"kp_sandbox_read_path (beyond upstream)"
#define O_CDI_DIR	"kp_cdi_directory (CDIDirectory)"
#define O_SB_UIDBASE	"kp_sandbox_uid_base (beyond upstream)"
#define O_CDI_DEV	"kp_cdi_allow_device_prefix (beyond upstream)"
#define O_CDI_MNT	"kp_cdi_allow_mount_prefix (beyond upstream)"
#define O_CDI_HOOK	"kp_cdi_allow_hook (beyond upstream)"

void
pol_opts_init(struct policy_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->mode = KP_SANDBOX_ENFORCE;
	po->uid_base = KP_SANDBOX_UID_BASE;
}

/* A name as messages show it: at most 64 printable bytes. */
static const char *
shown(const char *s, char *buf, size_t size)
{
	size_t	 i;

	if (s == NULL)
		return ("NULL");
	for (i = 0; s[i] != '\0' && i < 64 && i + 1 < size; i++)
		buf[i] = (s[i] < 0x20 || s[i] >= 0x7f) ? '?' : s[i];
	buf[i] = '\0';
	return (buf);
}

int
kp_sandbox_mode(struct kp_options *opts, enum kp_sandbox_mode mode)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (mode != KP_SANDBOX_ENFORCE && mode != KP_SANDBOX_COMPLAIN &&
	    mode != KP_SANDBOX_OFF && mode != KP_SANDBOX_STRICT)
		return (opt_fail(opts, KP_EINVAL, "%s: mode %d is not "
		    "KP_SANDBOX_ENFORCE, KP_SANDBOX_STRICT, KP_SANDBOX_COMPLAIN "
		    "or KP_SANDBOX_OFF", O_SB_MODE, (int)mode));
	opts->policy.mode = mode;
	return (0);
}

int
kp_sandbox_exec(struct kp_options *opts, int on)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (on != 0 && on != 1)
		return (opt_fail(opts, KP_EINVAL, "kp_sandbox_exec: on is %d, "
		    "expected 1 (exec, the default) or 0 (fork)", on));
	opts->fork_hooks = !on;
	return (0);
}

int
kp_sandbox_capability(struct kp_options *opts, const char *name)
{
	char	 b[80];
	int	 cap;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((cap = pol_cap_number(name)) < 0 || cap > 63)
		return (opt_fail(opts, KP_EINVAL, "%s: \"%s\" is not a "
		    "capability name (e.g. CAP_SYS_ADMIN) or number",
		    O_SB_CAP, shown(name, b, sizeof(b))));
	opts->policy.ns_caps |= 1ULL << cap;
	return (0);
}

/* Add a syscall by name to list (no duplicates); the setter's error
 * otherwise. */
static int
syscall_add(struct kp_options *opts, const char *what, int *list, size_t *n,
    const char *name)
{
	char	 b[80];
	size_t	 i;
	int	 nr;

	if ((nr = pol_syscall_number(name)) < 0)
		return (opt_fail(opts, KP_EINVAL, "%s: \"%s\" is not a "
		    "system call on this architecture", what,
		    shown(name, b, sizeof(b))));
	for (i = 0; i < *n; i++)
		if (list[i] == nr)
			return (0);
	if (*n == POL_MAX_SYSCALLS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d extra "
		    "system calls", what, POL_MAX_SYSCALLS));
	list[(*n)++] = nr;
	return (0);
}

int
kp_sandbox_syscall(struct kp_options *opts, const char *name)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (syscall_add(opts, O_SB_SYSCALL, po->ns_syscalls,
	    &po->n_ns_syscalls, name));
}

/*
 * The driver process's own needs: only pol_oci_json() reads them (the
 * pod's profile). Not the supervisor's filter either: the nodeserver's
 * init hook and a main() run again in a child run under it.
 */
int
kp_policy_main_syscall(struct kp_options *opts, const char *name)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (syscall_add(opts, O_PO_MAINSC, po->main_syscalls,
	    &po->n_main_syscalls, name));
}

int
kp_policy_main_ioctl(struct kp_options *opts, unsigned long request)
{
	struct policy_opts	*po;
	size_t			 i;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	/* The kernel's ioctl takes cmd as an unsigned int: a wider value
	 * would name another command than the one the driver meant. */
	if (request == 0 || request > 0xffffffffUL)
		return (opt_fail(opts, KP_EINVAL, "%s: request %#lx %s",
		    O_PO_MAINIOC, request, request == 0 ? "names no command" :
		    "is wider than 32 bits (the kernel reads an ioctl command "
		    "as an unsigned int)"));
	for (i = 0; i < po->n_main_ioctls; i++)
		if (po->main_ioctls[i] == (uint32_t)request)
			return (0);
	if (po->n_main_ioctls == POL_MAX_IOCTLS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d ioctl "
		    "commands", O_PO_MAINIOC, POL_MAX_IOCTLS));
	po->main_ioctls[po->n_main_ioctls++] = (uint32_t)request;
	return (0);
}

/* Read by kp_start() in the driver process (policy/main.c). */
int
kp_policy_main_confine(struct kp_options *opts, int on)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (on != 0 && on != 1)
		return (opt_fail(opts, KP_EINVAL, "%s: on is %d, not 0 or 1",
		    O_PO_CONFINE, on));
	opts->policy.main_confine = on;
	return (0);
}

int
kp_sandbox_hide_path(struct kp_options *opts, const char *path)
{
	struct policy_opts	*po;
	char			 b[80];
	size_t			 i;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	if (path == NULL || path[0] != '/')
		return (opt_fail(opts, KP_EINVAL, "%s: \"%s\" is not an "
		    "absolute path", O_SB_HIDE, shown(path, b, sizeof(b))));
	if (strlen(path) >= POL_PATH_MAX)
		return (opt_fail(opts, KP_ENAMETOOLONG, "%s: path longer "
		    "than %d bytes", O_SB_HIDE, POL_PATH_MAX - 1));
	for (i = 0; i < po->n_hidden; i++)
		if (strcmp(po->hidden[i], path) == 0)
			return (0);
	if (po->n_hidden == POL_MAX_PATHS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d hidden "
		    "paths", O_SB_HIDE, POL_MAX_PATHS));
	snprintf(po->hidden[po->n_hidden++], POL_PATH_MAX, "%s", path);
	return (0);
}

int
kp_sandbox_user(struct kp_options *opts, enum kp_process proc, uid_t uid,
    gid_t gid)
{
	enum kp_role	 role;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	switch (proc) {
	case KP_PROCESS_NODESERVER:
		role = ROLE_NODESERVER;
		break;
	case KP_PROCESS_REGISTRAR:
		role = ROLE_REGISTRAR;
		break;
	case KP_PROCESS_PUBLISHER:
		role = ROLE_PUBLISHER;
		break;
	case KP_PROCESS_OBSERVER:
		role = ROLE_OBSERVER;
		break;
	default:
		return (opt_fail(opts, KP_EINVAL, "%s: process %d is not "
		    "KP_PROCESS_NODESERVER, _REGISTRAR, _PUBLISHER or "
		    "_OBSERVER",
		    O_SB_USER, (int)proc));
	}
	if (uid == (uid_t)-1 || gid == (gid_t)-1)
		return (opt_fail(opts, KP_EINVAL, "%s: uid and gid must not "
		    "be -1", O_SB_USER));
	opts->policy.user[role].uid = uid;
	opts->policy.user[role].gid = gid;
	opts->policy.user[role].set = 1;
	return (0);
}

/* ------------------------------------------------------------------------
 * The nodeserver's files: state directories, read paths, the CDI
 * directory (docs/security.md, "The nodeserver's filesystem").
 */

/*
 * Paths are checked by name_path_problem() (base/names.c): the path means
 * what it says, so Landlock rules and the supervisor's checks apply to
 * exactly that inode.
 */

/* Add path to list (no duplicates); the setter's error otherwise. */
static int
path_add(struct kp_options *opts, const char *what, char list[][POL_PATH_MAX],
    size_t *n, size_t max, const char *path)
{
	const char	*why;
	char		 b[80];
	size_t		 i;

	if ((why = name_path_problem(path)) != NULL)
		return (opt_fail(opts, path != NULL && strlen(path) >=
		    POL_PATH_MAX ? KP_ENAMETOOLONG : KP_EINVAL, "%s: \"%s\" %s",
		    what, shown(path, b, sizeof(b)), why));
	for (i = 0; i < *n; i++)
		if (strcmp(list[i], path) == 0)
			return (0);
	if (*n == max)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %zu paths", what,
		    max));
	snprintf(list[(*n)++], POL_PATH_MAX, "%s", path);
	return (0);
}

int
kp_sandbox_state_dir(struct kp_options *opts, const char *path)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (path_add(opts, O_SB_STATE, po->state_dirs, &po->n_state_dirs,
	    POL_MAX_STATE_DIRS, path));
}

int
kp_sandbox_read_path(struct kp_options *opts, const char *path)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (path_add(opts, O_SB_READ, po->read_paths, &po->n_read_paths,
	    POL_MAX_PATHS, path));
}

int
kp_cdi_directory(struct kp_options *opts, const char *path)
{
	const char	*why;
	char		 b[80];

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((why = name_path_problem(path)) != NULL)
		return (opt_fail(opts, path != NULL && strlen(path) >=
		    POL_PATH_MAX ? KP_ENAMETOOLONG : KP_EINVAL, "%s: \"%s\" %s",
		    O_CDI_DIR, shown(path, b, sizeof(b)), why));
	snprintf(opts->policy.cdi_dir, sizeof(opts->policy.cdi_dir), "%s",
	    path);
	return (0);
}

/* ------------------------------------------------------------------------
 * What a CDI spec may ask of the container runtime (docs/security.md, "The
 * CDI spec broker"): the supervisor refuses any other device node, mount
 * or hook (supervisor/cdi_check.c).
 */

/* A prefix is a directory: the rules of name_path_problem(), one trailing
 * '/' allowed and dropped. */
static int
prefix_add(struct kp_options *opts, const char *what,
    char list[][POL_PATH_MAX], size_t *n, const char *path)
{
	char	 p[POL_PATH_MAX];
	size_t	 len;

	if (path != NULL && (len = strlen(path)) > 1 && len < POL_PATH_MAX &&
	    path[len - 1] == '/') {
		memcpy(p, path, len - 1);
		p[len - 1] = '\0';
		path = p;
	}
	return (path_add(opts, what, list, n, POL_MAX_CDI_ALLOW, path));
}

/*
 * Whether a device prefix reads as a file name's beginning rather than a
 * directory: "/dev/loop" for /dev/loop0, loop1, ... names none of them (a
 * node must lie beneath the prefix). A path that exists and is not a
 * directory is such a mistake, and so is one that does not exist while
 * its directory holds names that begin with it; one that does not exist
 * otherwise is taken (/dev/vfio appears when vfio is loaded). At most
 * 4096 entries of the directory are read. 0 if taken, 1 if not a
 * directory, 2 if the beginning of names.
 */
static int
not_a_dir(const char *p)
{
	struct dirent	*de;
	struct stat	 st;
	char		 dir[POL_PATH_MAX];
	const char	*base = strrchr(p, '/') + 1;
	size_t		 n = strlen(base), i;
	DIR		*d;
	int		 hit = 0;

	if (stat(p, &st) == 0)
		return (S_ISDIR(st.st_mode) ? 0 : 1);
	if (errno != ENOENT)
		return (0);
	snprintf(dir, sizeof(dir), "%.*s", base - p > 1 ? (int)(base - p - 1) :
	    1, p);
	if ((d = opendir(dir)) == NULL)
		return (0);
	for (i = 0; !hit && i < 4096 && (de = readdir(d)) != NULL; i++)
		hit = strncmp(de->d_name, base, n) == 0;
	closedir(d);
	return (hit ? 2 : 0);
}

int
kp_cdi_allow_device_prefix(struct kp_options *opts, const char *prefix)
{
	struct policy_opts	*po;
	char			 b[80];
	size_t			 n;
	int			 r, why;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	n = po->n_cdi_dev;
	if ((r = prefix_add(opts, O_CDI_DEV, po->cdi_dev, &po->n_cdi_dev,
	    prefix)) != 0 || po->n_cdi_dev == n)
		return (r);
	if ((why = not_a_dir(po->cdi_dev[n])) != 0) {
		shown(po->cdi_dev[n], b, sizeof(b));
		po->n_cdi_dev--;
		memset(po->cdi_dev[n], 0, sizeof(po->cdi_dev[n]));
		if (why == 1)
			return (opt_fail(opts, KP_EINVAL, "%s: \"%s\" is not "
			    "a directory (a prefix takes the files beneath "
			    "one; for this node: kp_cdi_allow_device(\"%s\"))",
			    O_CDI_DEV, b, b));
		return (opt_fail(opts, KP_EINVAL, "%s: \"%s\" names no "
		    "directory, only the start of file names (for those "
		    "nodes: kp_cdi_allow_device(\"%s[0-9]*\"))", O_CDI_DEV,
		    b, b));
	}
	return (0);
}

int
kp_cdi_allow_mount_prefix(struct kp_options *opts, const char *prefix)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (prefix_add(opts, O_CDI_MNT, po->cdi_mnt, &po->n_cdi_mnt,
	    prefix));
}

int
kp_cdi_allow_hook(struct kp_options *opts, const char *path)
{
	struct policy_opts	*po;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	po = &opts->policy;
	return (path_add(opts, O_CDI_HOOK, po->cdi_hook, &po->n_cdi_hook,
	    POL_MAX_CDI_ALLOW, path));
}

/* p is dir or lies beneath it, as written (dir may end in '/', as CDI
 * prefixes do). */
static int
within_text(const char *dir, const char *p)
{
	size_t	 n = strlen(dir);

	if (n > 1 && dir[n - 1] == '/')
		n--;
	return (p != NULL && strncmp(p, dir, n) == 0 &&
	    (p[n] == '\0' || p[n] == '/'));
}

/*
 * p with its longest existing prefix resolved (realpath(3)), the rest as
 * written: a path that does not exist yet (a state directory the
 * supervisor creates) is still compared where it will be.
 */
static void
resolved(const char *p, char *out, size_t size)
{
	char	 head[PATH_MAX], *r, *slash;

	snprintf(head, sizeof(head), "%s", p);
	for (;;) {
		if ((r = realpath(head, NULL)) != NULL) {
			snprintf(out, size, "%s%s", strcmp(r, "/") == 0 &&
			    p[strlen(head)] != '\0' ? "" : r, p + strlen(head));
			free(r);
			return;
		}
		if ((slash = strrchr(head, '/')) == NULL || slash == head)
			break;
		*slash = '\0';
	}
	snprintf(out, size, "%s", p);
}

/*
 * p is dir or lies beneath it, as written or once symbolic links on the
 * way are resolved: /var/run is a link to /run on most hosts, and a CDI
 * prefix or device rule reached through a link into a state directory
 * would let the nodeserver's links there decide what it names (red team,
 * issue 26; tests/unit/test_redteam_issue26.c).
 */
static int
within(const char *dir, const char *p)
{
	char	 a[PATH_MAX], b[PATH_MAX];

	if (p == NULL)
		return (0);
	if (within_text(dir, p))
		return (1);
	resolved(dir, a, sizeof(a));
	resolved(p, b, sizeof(b));
	return (within_text(a, b));
}

/*
 * At kp_start(): a state directory is handed to the nodeserver (chowned,
 * writable under Landlock), so it must not hold what the nodeserver must
 * not replace: the CDI directory (specs go through the supervisor, under
 * the driver's prefix), the kubelet sockets, the kubeconfig.
 */
int
pol_opts_check(struct kp_options *opts)
{
	const struct policy_opts	*po = &opts->policy;
	const char			*cdi, *d;
	size_t				 i, j;

	cdi = po->cdi_dir[0] != '\0' ? po->cdi_dir : POL_CDI_DIR;
	for (i = 0; i < po->n_state_dirs; i++) {
		d = po->state_dirs[i];
		/* The nodeserver owns what is in a state directory: one
		 * beneath another would be a path it controls, which the
		 * supervisor (root) creates and chowns at every start. */
		for (j = 0; j < po->n_state_dirs; j++)
			if (j != i && within(po->state_dirs[j], d))
				return (opt_fail(opts, KP_EINVAL, "%s: %s lies "
				    "beneath the state directory %s: state "
				    "directories must not nest (the nodeserver "
				    "controls what is inside one)", O_SB_STATE,
				    d, po->state_dirs[j]));
		/* A CDI device or mount prefix over what the nodeserver
		 * writes: it would plant a symlink there (to /dev/mem, to
		 * /), and the runtime resolves a spec's host paths on the
		 * host, following links. */
		for (j = 0; j < po->n_cdi_dev + po->n_cdi_mnt; j++) {
			const char *x = j < po->n_cdi_dev ? po->cdi_dev[j] :
			    po->cdi_mnt[j - po->n_cdi_dev];

			if (within(d, x) || within(x, d))
				return (opt_fail(opts, KP_EINVAL, "%s: %s and "
				    "the CDI %s prefix %s must not contain one "
				    "another (the nodeserver writes the state "
				    "directory; the runtime follows its links)",
				    O_SB_STATE, d, j < po->n_cdi_dev ?
				    "device" : "mount", x));
		}
		/* The same of a device rule's directory: a link or a node
		 * planted there at a name the rule matches. */
		for (j = 0; j < po->n_cdi_devs; j++) {
			const char	*x = po->cdi_devs[j].pattern;
			char		 dir[POL_PATH_MAX];
			int		 k = cdi_dev_dir_len(x);

			snprintf(dir, sizeof(dir), "%.*s", k > 0 ? k : 1, x);
			if (within(d, dir))
				return (opt_fail(opts, KP_EINVAL, "%s: %s "
				    "holds the directory of the CDI device "
				    "rule %s (the nodeserver writes the state "
				    "directory; the runtime follows its links)",
				    O_SB_STATE, d, x));
		}
		if (within(d, cdi) || within(cdi, d))
			return (opt_fail(opts, KP_EINVAL, "%s: %s and the CDI "
			    "directory %s must not contain one another (CDI "
			    "specs are written by the supervisor, see "
			    "kp_cdi_spec_write)", O_SB_STATE, d, cdi));
		if (within(d, opts->plugin_socket_path) ||
		    within(d, opts->registrar_socket_path))
			return (opt_fail(opts, KP_EINVAL, "%s: %s must not "
			    "contain the plugin or registrar socket (the "
			    "nodeserver could remove it)", O_SB_STATE, d));
		if (within(d, opts->kubeconfig))
			return (opt_fail(opts, KP_EINVAL, "%s: %s must not "
			    "contain the kubeconfig", O_SB_STATE, d));
	}
	return (0);
}

int
kp_sandbox_uid_base(struct kp_options *opts, uid_t base)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (base == 0)
		return (opt_fail(opts, KP_EINVAL, "%s: base 0 would run a "
		    "process as root", O_SB_UIDBASE));
	/* Every offset must fit, and none may reach (uid_t)-1, which
	 * setresuid() reads as "unchanged". */
	if (base > (uid_t)-1 - POL_ID_COUNT)
		return (opt_fail(opts, KP_EINVAL, "%s: base %u leaves no room "
		    "for the %d role ids below %u", O_SB_UIDBASE,
		    (unsigned)base, POL_ID_COUNT, (unsigned)(uid_t)-1));
	opts->policy.uid_base = base;
	return (0);
}

int
kp_policy_export_oci(const struct kp_options *opts, char **out)
{
	struct policy_opts	 def;

	if (out == NULL)
		return (KP_EINVAL);
	*out = NULL;
	if (opts != NULL && !opt_valid_handle(opts))
		return (KP_EINVAL);
	if (opts == NULL)
		pol_opts_init(&def);
	return (pol_oci_json(opts != NULL ? &opts->policy : &def, out));
}
