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
 * empty read-only tmpfs over the service-account token directory, over
 * every directory the driver hides (/dev/null over a file), over each
 * directory that holds a publisher's credential file (its kubeconfig and
 * every file the kubeconfig names, as the publisher's READY reported
 * them: this process never parses credentials) and over kubelet's plugin
 * directories but its own (ns.c). Directories, not files: a token
 * refresher renames a new file onto the old name, and a rename detaches
 * a mount on the file it replaces in every namespace; it leaves one on
 * the directory. What the nodeserver may read or write beneath a hidden
 * directory (keep_open()) is bound back into the tmpfs.
 *
 * publisher: a private mount namespace with a private /proc and without
 * kubelet's plugin directories; it reads its credential files.
 *
 * Every child then changes to "/": a working directory inherited from the
 * driver would reach a hidden directory by relative paths (a mount over
 * a directory does not move a process already in it).
 *
 * Mount namespaces need CAP_SYS_ADMIN; without it the paths stay
 * readable and a warning says so (the publisher refuses to start when a
 * credential file would then be readable by the nodeserver:
 * publisher/kcfg_hide.c).
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

#define HIDE_FLAGS	(MS_NOSUID | MS_NODEV | MS_NOEXEC)

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

/*
 * A path the nodeserver keeps beneath a hidden directory: its real path
 * and an O_PATH fd opened before any mount, so that a bind of it shows
 * the directory itself, not what a mount covers there since.
 */
struct keep {
	char	*path;
	int	 fd;
	int	 dir;
};

#define KEEP_MAX	(POL_MAX_STATE_DIRS + POL_MAX_PATHS + 16)
#define KEEP_TMPFS	"size=64k,nr_inodes=256"

/* 1 if real path p lies strictly beneath real directory d. */
static int
beneath(const char *p, const char *d)
{
	size_t	 n = strlen(d);

	if (strcmp(d, "/") == 0)
		return (p[1] != '\0');
	return (strncmp(p, d, n) == 0 && p[n] == '/');
}

/*
 * Make the path of k inside the tmpfs just mounted on dir (directories
 * 0700 while it is built, k itself a directory or an empty file) and
 * bind k there, recursively: a hidden directory beneath k, mounted
 * earlier (deepest first), stays covered in the bind.
 */
static int
keep_bind(const char *dir, const struct keep *k, char *err, size_t errsize)
{
	char		 t[PATH_MAX], src[64];
	const char	*c = k->path + strlen(dir);
	size_t		 n, len;
	int		 fd, last;

	snprintf(t, sizeof(t), "%s", strcmp(dir, "/") == 0 ? "" : dir);
	for (;;) {
		c += strspn(c, "/");
		n = strcspn(c, "/");
		last = c[n] == '\0';
		len = strlen(t);
		if (len + 1 + n >= sizeof(t))
			goto fail;
		snprintf(t + len, sizeof(t) - len, "/%.*s", (int)n, c);
		if (!last || k->dir) {
			if (mkdir(t, 0700) == -1 && errno != EEXIST)
				goto fail;
		} else if ((fd = open(t, O_WRONLY | O_CREAT | O_NOFOLLOW |
		    O_CLOEXEC, 0600)) == -1)
			goto fail;
		else
			close(fd);
		if (last)
			break;
		c += n;
	}
	snprintf(src, sizeof(src), "/proc/self/fd/%d", k->fd);
	if (mount(src, t, NULL, MS_BIND | MS_REC, NULL) == -1)
		goto fail;
	return (0);
fail:
	snprintf(err, errsize, "hide %s but %s: %s", dir, k->path,
	    strerror(errno));
	return (KP_ESANDBOX);
}

/* Search only (0111) for the directories made on the way to k. */
static int
keep_seal(const char *dir, const struct keep *k)
{
	char	 t[PATH_MAX], *slash;

	snprintf(t, sizeof(t), "%s", k->path);
	while ((slash = strrchr(t, '/')) != NULL) {
		*slash = '\0';
		if (!beneath(t, dir))
			break;
		if (chmod(t, 0111) == -1)
			return (-1);
	}
	return (chmod(dir, 0111));
}

/* k[i] is beneath dir and not beneath another such keep. */
static int
keep_topmost(const char *dir, const struct keep *k, size_t nk, size_t i)
{
	size_t	 j;

	if (!beneath(k[i].path, dir))
		return (0);
	for (j = 0; j < nk; j++)
		if (j != i && beneath(k[j].path, dir) &&
		    beneath(k[i].path, k[j].path))
			return (0);
	return (1);
}

/*
 * Hide path: an empty read-only tmpfs of mode 0 over a directory, or of
 * mode 0111 holding the keeps beneath it bound back; /dev/null over a
 * file. A path that does not exist is skipped.
 */
static int
hide_keep(const char *path, const struct keep *k, size_t nk, char *err,
    size_t errsize)
{
	struct stat	 st;
	size_t		 i, n;
	int		 r;

	if (stat(path, &st) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return (0);	/* nothing to hide */
		snprintf(err, errsize, "hide %s: %s", path, strerror(errno));
		return (KP_ESANDBOX);
	}
	for (i = n = 0; i < nk; i++)
		n += keep_topmost(path, k, nk, i);
	if (!S_ISDIR(st.st_mode)) {
		if ((r = mount("/dev/null", path, NULL, MS_BIND, NULL)) == 0)
			r = mount(NULL, path, NULL, MS_BIND | MS_REMOUNT |
			    MS_RDONLY, NULL);
	} else if (n == 0)
		r = mount("kp-hidden", path, "tmpfs", MS_RDONLY | HIDE_FLAGS,
		    "size=4k,nr_inodes=1,mode=0");
	else {
		if (mount("kp-hidden", path, "tmpfs", HIDE_FLAGS, KEEP_TMPFS
		    ",mode=0700") == -1)
			goto fail;
		for (i = 0; i < nk; i++)
			if (keep_topmost(path, k, nk, i) &&
			    (r = keep_bind(path, &k[i], err, errsize)) != 0)
				return (r);
		for (i = 0; i < nk; i++)
			if (keep_topmost(path, k, nk, i) &&
			    keep_seal(path, &k[i]) == -1)
				goto fail;
		r = mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY |
		    HIDE_FLAGS, KEEP_TMPFS);
	}
	if (r == -1)
		goto fail;
	log_info(2, "sandbox: %s hidden%s", path, n > 0 ? " but what the "
	    "nodeserver may read or write beneath it" : "");
	return (0);
fail:
	snprintf(err, errsize, "hide %s: %s", path, strerror(errno));
	return (KP_ESANDBOX);
}

int
pol_hide(const char *path, char *err, size_t errsize)
{
	return (hide_keep(path, NULL, 0, err, errsize));
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
	size_t	 x = strlen(*(char *const *)a);
	size_t	 y = strlen(*(char *const *)b);

	return (x < y ? 1 : x > y ? -1 : strcmp(*(char *const *)a,
	    *(char *const *)b));
}

/* Add the real path of p to the n keeps in k, opened now; skip a path
 * that does not exist or is there already. */
static void
keep_add(struct keep *k, size_t *n, const char *p)
{
	struct stat	 st;
	char		*real;
	size_t		 i;
	int		 fd;

	if (p == NULL || p[0] != '/' || *n == KEEP_MAX ||
	    (real = realpath(p, NULL)) == NULL)
		return;
	for (i = 0; i < *n; i++)
		if (strcmp(k[i].path, real) == 0) {
			free(real);
			return;
		}
	if ((fd = open(real, O_PATH | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		if (fd != -1)
			close(fd);
		free(real);
		return;
	}
	k[*n].path = real;
	k[*n].fd = fd;
	k[*n].dir = S_ISDIR(st.st_mode);
	(*n)++;
}

/*
 * What the nodeserver may read or write, kept visible when a hidden
 * directory holds it: its state directories, its read paths, its own
 * data directory (the DRA socket's), Landlock's default read set.
 */
static size_t
keep_open(const struct child_env *env, struct keep *k)
{
	const struct policy_opts	*po = &env->cfg->policy;
	const char *const		*def;
	char				 own[PATH_MAX], *slash;
	size_t				 i, n = 0, ndef;

	for (i = 0; i < po->n_state_dirs; i++)
		keep_add(k, &n, po->state_dirs[i]);
	for (i = 0; i < po->n_read_paths; i++)
		keep_add(k, &n, po->read_paths[i]);
	if (env->cfg->plugin_socket_path != NULL) {
		snprintf(own, sizeof(own), "%s", env->cfg->plugin_socket_path);
		if ((slash = strrchr(own, '/')) != NULL && slash != own) {
			*slash = '\0';
			keep_add(k, &n, own);
		}
	}
	def = pol_landlock_ns_reads(&ndef);
	for (i = 0; i < ndef; i++)
		keep_add(k, &n, def[i]);
	return (n);
}

static void
keep_close(struct keep *k, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		close(k[i].fd);
		free(k[i].path);
	}
}

static int
hide_paths(const struct child_env *env, char *err, size_t errsize)
{
	const struct policy_opts	*po = &env->cfg->policy;
	const char			*given[1 + POL_MAX_PATHS +
					    KP_IPC_MAX_HIDE];
	char				*paths[1 + POL_MAX_PATHS +
					    KP_IPC_MAX_HIDE];
	struct keep			 keeps[KEEP_MAX];
	struct stat			 st;
	size_t				 i, j, n, nk;
	int				 r = 0;

	if (!have_cap(CAP_SYS_ADMIN)) {
		/* Each item ends in ", ": none is empty whichever apply. */
		log_warnx("sandbox: no CAP_SYS_ADMIN (not root): the "
		    "nodeserver cannot hide %s%s%skubelet's plugin "
		    "directories or other processes in /proc from the "
		    "driver's hooks", stat(POL_TOKEN_DIR, &st) == 0 ?
		    POL_TOKEN_DIR ", " : "", env->n_hide > 0 ?
		    "the publisher's credential directories, " : "",
		    po->n_hidden > 0 ? "the hidden paths, " : "");
		return (0);
	}
	if ((r = private_ns(err, errsize)) != 0 ||
	    (r = pol_ns_proc(err, errsize)) != 0)
		return (r);
	/*
	 * The token directory, the driver's hidden paths and the
	 * directories of the publisher's credential files, by real path
	 * (the keeps' are real too), deepest first: a path beneath one
	 * already covered by the empty mode-0 tmpfs could no longer be
	 * looked up without CAP_DAC_OVERRIDE, which a container's root
	 * lacks, and a keep bound back must carry the covers beneath it.
	 */
	n = 0;
	given[n++] = POL_TOKEN_DIR;
	for (i = 0; i < po->n_hidden; i++)
		given[n++] = po->hidden[i];
	for (i = 0; i < env->n_hide; i++)
		given[n++] = env->hide[i];
	for (i = j = 0; i < n; i++)
		if ((paths[j] = realpath(given[i], NULL)) != NULL)
			j++;
	n = j;
	qsort(paths, n, sizeof(paths[0]), deeper_first);
	nk = keep_open(env, keeps);
	for (i = 0; r == 0 && i < n; i++)
		if (i == 0 || strcmp(paths[i], paths[i - 1]) != 0)
			r = hide_keep(paths[i], keeps, nk, err, errsize);
	keep_close(keeps, nk);
	for (i = 0; i < n; i++)
		free(paths[i]);
	if (r != 0)
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
	int	 r;

	switch (role) {
	case ROLE_REGISTRAR:
	case ROLE_OBSERVER:
		r = empty_root(role, err, errsize);
		break;
	case ROLE_NODESERVER:
		r = hide_paths(env, err, errsize);
		break;
	case ROLE_PUBLISHER:
		r = publisher_ns(env, err, errsize);
		break;
	default:
		r = 0;
		break;
	}
	/* The working directory the driver (or an init hook) left: it
	 * may lie in a hidden directory, reachable by relative paths. */
	if (r == 0 && chdir("/") == -1) {
		snprintf(err, errsize, "chdir /: %s", strerror(errno));
		r = KP_ESANDBOX;
	}
	return (r);
}

/* 1 if this process can make a mount namespace to hide paths in. */
int
pol_fs_can_hide(void)
{
	return (have_cap(CAP_SYS_ADMIN));
}
