/*
 * kcfg_hide.c - which directories the nodeserver must not see, for the
 * publisher's READY: each directory that holds the kubeconfig or a file it
 * names (token, CA, client certificate and key), once by the path as
 * named (its symlinks resolved: a projected volume swaps a "..data"
 * symlink inside that directory) and once by the file's real path.
 * Directories, not files: a token refresher renames a new file onto the
 * old name, and that detaches a mount on the old file in every mount
 * namespace (policy/fs.c covers each directory with a tmpfs).
 *
 * The start fails, naming the options, where a credential would stay
 * readable by the nodeserver or hiding it would take what the nodeserver
 * owns:
 *  - a file directly in "/" (its directory cannot be hidden);
 *  - a directory that is, or lies beneath, a kp_sandbox_state_dir() (the
 *    nodeserver owns what is there), or is the DRA socket's directory
 *    (its own data directory, bound back into its view);
 *  - no mount namespace for the nodeserver (no CAP_SYS_ADMIN) while its
 *    uid may read the file (cred_readable()) and Landlock does not keep
 *    it out (no Landlock in this kernel, or the file lies beneath the
 *    nodeserver's read set).
 * Without a nodeserver (kp_dra_service off) nothing is hidden or checked.
 *
 * Runs in: the publisher, after the kubeconfig is parsed and before its
 * sandbox (realpath needs lstat and readlink).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "policy/policy.h"
#include "publisher/publisher.h"

/* One credential file and what the messages call it. */
struct cred {
	const char	*what;
	const char	*path;
};

/* 1 if real path p is real directory d or lies beneath it. */
static int
within(const char *p, const char *d)
{
	size_t	 n = strlen(d);

	if (strcmp(d, "/") == 0)
		return (1);
	return (strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/'));
}

/* 1 if real path p is the real path of given, or lies beneath it. */
static int
within_real(const char *p, const char *given)
{
	char	 r[PATH_MAX];

	return (given != NULL && realpath(given, r) != NULL && within(p, r));
}

static const char *
cred_option(const struct kp_options *cfg)
{
	return (cfg->kube_mode == KP_KUBE_KUBECONFIG ?
	    "kp_kube_client_kubeconfig" : "kp_kube_client_in_cluster");
}

/* Add directory dir (real) of credential c, refusing the places above. */
static int
hide_add(struct kcfg_hide *h, const struct kp_options *cfg,
    const struct cred *c, const char *dir, char *err, size_t errsize)
{
	const struct policy_opts	*po = &cfg->policy;
	char				 own[PATH_MAX], *slash;
	size_t				 i;

	if (strcmp(dir, "/") == 0) {
		snprintf(err, errsize, "%s %s (%s) lies directly in /, which "
		    "cannot be hidden from the nodeserver: move it into a "
		    "directory of its own", c->what, c->path, cred_option(cfg));
		return (KP_ESANDBOX);
	}
	for (i = 0; i < po->n_state_dirs; i++)
		if (within_real(dir, po->state_dirs[i])) {
			snprintf(err, errsize, "%s %s (%s) lies in %s, within "
			    "the state directory %s (kp_sandbox_state_dir), "
			    "which the nodeserver owns: keep credentials out "
			    "of the state directories", c->what, c->path,
			    cred_option(cfg), dir, po->state_dirs[i]);
			return (KP_ESANDBOX);
		}
	snprintf(own, sizeof(own), "%s", cfg->plugin_socket_path != NULL ?
	    cfg->plugin_socket_path : "");
	if ((slash = strrchr(own, '/')) != NULL && slash != own) {
		*slash = '\0';
		if (within_real(dir, own) && within_real(own, dir)) {
			snprintf(err, errsize, "%s %s (%s) lies in %s, the DRA "
			    "socket's directory (kp_plugin_data_directory_path),"
			    " which the nodeserver keeps: move it elsewhere",
			    c->what, c->path, cred_option(cfg), dir);
			return (KP_ESANDBOX);
		}
	}
	for (i = 0; i < h->n; i++)
		if (strcmp(h->path[i], dir) == 0)
			return (0);
	if (h->n == KP_IPC_MAX_HIDE || strlen(dir) >= KP_IPC_PATH_MAX) {
		snprintf(err, errsize, "%s %s (%s): its directory %s is one "
		    "too many to hide from the nodeserver (at most %d, each "
		    "under %d bytes)", c->what, c->path, cred_option(cfg), dir,
		    KP_IPC_MAX_HIDE, KP_IPC_PATH_MAX);
		return (KP_ESANDBOX);
	}
	snprintf(h->path[h->n], KP_IPC_PATH_MAX, "%s", dir);
	h->ptr[h->n] = h->path[h->n];
	h->n++;
	return (0);
}

/*
 * The directory of each symbolic link met on the way to c's file (real
 * path real) that leads beneath that same directory: a projected
 * volume's <vol>/token -> ..data/token and <vol>/..data -> ..<time>,
 * which kubelet swaps to a new directory at every refresh. The directory
 * as named and the real one leave <vol> itself open when the file is
 * named through a link from elsewhere (/etc/kp/token -> <vol>/token) or
 * through ..data: the next refresh served the new token there to the
 * nodeserver. A link leading out of its directory (/var/run -> ../run)
 * is no such swap point, and its directory (/var) is not hidden; nor is
 * "/". At most 40 links, as the kernel.
 */
static int
hide_links(struct kcfg_hide *h, const struct kp_options *cfg,
    const struct cred *c, const char *real, char *err, size_t errsize)
{
	char		 cur[PATH_MAX], rest[PATH_MAX], tmp[PATH_MAX];
	char		 link[PATH_MAX], comp[NAME_MAX + 1], *p, *slash;
	struct stat	 st;
	size_t		 n, len;
	ssize_t		 ln;
	int		 hops = 0, r;

	if (c->path[0] == '/')
		snprintf(cur, sizeof(cur), "/");
	else if (getcwd(cur, sizeof(cur)) == NULL)
		goto fail;
	snprintf(rest, sizeof(rest), "%s", c->path);
	p = rest;
	for (;;) {
		p += strspn(p, "/");
		if ((n = strcspn(p, "/")) == 0)
			return (0);
		if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if ((slash = strrchr(cur, '/')) != NULL)
				slash[slash == cur ? 1 : 0] = '\0';
			continue;
		}
		len = strlen(cur);
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s%s", cur,
		    strcmp(cur, "/") == 0 ? "" : "/", comp) >= sizeof(tmp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		if (lstat(tmp, &st) == -1)
			goto fail;
		if (!S_ISLNK(st.st_mode)) {
			snprintf(cur, sizeof(cur), "%s", tmp);
			continue;
		}
		if (++hops > 40) {
			errno = ELOOP;
			goto fail;
		}
		if ((ln = readlink(tmp, link, sizeof(link) - 1)) <= 0)
			goto fail;
		link[ln] = '\0';
		if (len > 1 && within(real, cur) &&
		    (r = hide_add(h, cfg, c, cur, err, errsize)) != 0)
			return (r);
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", link, p) >=
		    sizeof(tmp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		snprintf(rest, sizeof(rest), "%s", tmp);
		p = rest;
		if (link[0] == '/')
			snprintf(cur, sizeof(cur), "/");
	}
fail:
	snprintf(err, errsize, "%s %s: %s", c->what, c->path,
	    strerror(errno));
	return (KP_ESANDBOX);
}

/* The directory of c as named, the directory of its real path, and
 * those of the links on the way that a swap would reopen. */
static int
hide_cred(struct kcfg_hide *h, const struct kp_options *cfg,
    const struct cred *c, char *err, size_t errsize)
{
	char	 named[PATH_MAX], real[PATH_MAX], dir[PATH_MAX], *slash;
	int	 r;

	snprintf(dir, sizeof(dir), "%s", c->path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir ? 1 : 0] = '\0';
	if (realpath(dir, named) == NULL || realpath(c->path, real) == NULL) {
		snprintf(err, errsize, "%s %s: %s", c->what, c->path,
		    strerror(errno));
		return (KP_ESANDBOX);
	}
	if ((r = hide_add(h, cfg, c, named, err, errsize)) != 0)
		return (r);
	if ((r = hide_links(h, cfg, c, real, err, errsize)) != 0)
		return (r);
	slash = strrchr(real, '/');
	slash[slash == real ? 1 : 0] = '\0';
	return (hide_add(h, cfg, c, real, err, errsize));
}

/* 1 if st grants bit (4 read, 1 search) to uid, gid or groups. */
static int
mode_grants(const struct stat *st, unsigned bit, uid_t uid, gid_t gid,
    const gid_t *groups, int ngroups)
{
	int	 i;

	if (st->st_uid == uid)
		return ((st->st_mode & (bit << 6)) != 0);
	for (i = -1; i < ngroups; i++)
		if (st->st_gid == (i < 0 ? gid : groups[i]))
			return ((st->st_mode & (bit << 3)) != 0);
	return ((st->st_mode & bit) != 0);
}

/* 1 if p may carry an ACL: it has one, or we cannot tell (a container's
 * seccomp profile refusing getxattr). */
static int
has_acl(const char *p)
{
	return (getxattr(p, "system.posix_acl_access", NULL, 0) >= 0 ||
	    (errno != ENODATA && errno != ENOTSUP));
}

/*
 * 1 if the nodeserver (uid, gid, groups, its kp_sandbox_capability() set)
 * may read path: CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH kept, or the
 * file's mode grants it read and each directory above it search, by
 * owner, group and other bits. An ACL (system.posix_acl_access) on any of
 * them, or one that cannot be read, counts as granting.
 */
static int
cred_readable(const char *path, const struct policy_opts *po, uid_t uid,
    gid_t gid, const gid_t *groups, int ngroups)
{
	struct stat	 st;
	char		 p[PATH_MAX], *slash;
	unsigned	 bit = 4;

	if ((po->ns_caps & (1ULL << pol_cap_number("CAP_DAC_OVERRIDE") |
	    1ULL << pol_cap_number("CAP_DAC_READ_SEARCH"))) != 0)
		return (1);
	if (realpath(path, p) == NULL)
		return (0);
	for (;;) {
		if (stat(p[0] != '\0' ? p : "/", &st) == -1)
			return (0);
		if (!has_acl(p[0] != '\0' ? p : "/") &&
		    !mode_grants(&st, bit, uid, gid, groups, ngroups))
			return (0);
		if (p[0] == '\0' || (slash = strrchr(p, '/')) == NULL)
			return (1);
		*slash = '\0';
		bit = 1;
	}
}

/* What of the nodeserver's Landlock read set holds path (real); NULL:
 * none. */
static const char *
ns_read_set(const char *path, const struct policy_opts *po)
{
	const char *const	*def;
	size_t			 i, n;

	def = pol_landlock_ns_reads(&n);
	for (i = 0; i < n; i++)
		if (within_real(path, def[i]))
			return (def[i]);
	for (i = 0; i < po->n_read_paths; i++)
		if (within_real(path, po->read_paths[i]))
			return (po->read_paths[i]);
	return (NULL);
}

/*
 * Without a mount namespace for the nodeserver nothing is hidden: refuse
 * a credential file that its uid may read and Landlock does not keep out.
 */
static int
check_unhidden(const struct kp_options *cfg, const struct cred *c,
    size_t n, char *err, size_t errsize)
{
	const struct policy_opts	*po = &cfg->policy;
	gid_t				 groups[64];
	char				 real[PATH_MAX], why[320];
	const char			*by;
	uid_t				 uid;
	gid_t				 gid;
	size_t				 i;
	int				 ng = 0, abi = pol_landlock_abi();

	/* Ids kept (not root): the caller's groups too. */
	if (pol_role_ids(ROLE_NODESERVER, po, &uid, &gid) == 1 &&
	    (ng = getgroups(64, groups)) < 0)
		ng = 0;
	for (i = 0; i < n; i++) {
		if (c[i].path == NULL || realpath(c[i].path, real) == NULL ||
		    !cred_readable(real, po, uid, gid, groups, ng))
			continue;
		by = ns_read_set(real, po);
		if (abi > 0 && by == NULL)
			continue;
		if (abi <= 0)
			snprintf(why, sizeof(why), "this kernel has no "
			    "Landlock");
		else
			snprintf(why, sizeof(why), "its Landlock read set "
			    "holds it (%s: kp_sandbox_read_path or the default "
			    "set)", by);
		snprintf(err, errsize, "the nodeserver (uid %u, gid %u) could "
		    "read %s %s (%s): without CAP_SYS_ADMIN it gets no mount "
		    "namespace to hide it in, and %s; make the file "
		    "unreadable for that uid and gid, or start as root",
		    (unsigned)uid, (unsigned)gid, c[i].what, c[i].path,
		    cred_option(cfg), why);
		return (KP_ESANDBOX);
	}
	return (0);
}

int
kcfg_hide_list(const struct kube_config *kc, const struct kp_options *cfg,
    struct kcfg_hide *h, char *err, size_t errsize)
{
	const struct cred	 c[] = {
		{ "the kubeconfig", cfg->kube_mode == KP_KUBE_KUBECONFIG ?
		    cfg->kubeconfig : NULL },
		{ "the token file", kc->token_file },
		{ "the CA file", kc->ca_file },
		{ "the client certificate", kc->cert_file },
		{ "the client key", kc->key_file },
	};
	size_t			 i, n = sizeof(c) / sizeof(c[0]);
	int			 r;

	memset(h, 0, sizeof(*h));
	if (cfg->dra_off)
		return (0);
	for (i = 0; i < n; i++)
		if (c[i].path != NULL &&
		    (r = hide_cred(h, cfg, &c[i], err, errsize)) != 0)
			return (r);
	return (pol_fs_can_hide() ? 0 : check_unhidden(cfg, c, n, err,
	    errsize));
}
