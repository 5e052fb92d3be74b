/*
 * metadata.c - device metadata files (KEP-5304) for the nodeserver. On a
 * MetadataWrite the supervisor writes the request's metadata file under
 * <plugin data directory>/dra-device-metadata, a directory it created,
 * owns and alone writes, and the CDI spec that bind-mounts that file
 * read-only into the container; it builds the spec itself, from names the
 * frame rules checked (ipc/check.c), so the nodeserver never chooses a
 * host path the container runtime (root, on the host) would mount. Were
 * the files in a state directory, a compromised nodeserver could replace
 * metadata.json by a link to any host file. MetadataRemove removes the
 * claim's specs and files, and only what this file writes.
 *
 * Bounds (issue 24, finding 3): the files and the directories made for
 * them count in the CDI quota (files.c), counted at start from what is
 * on disk; a MetadataWrite is checked against the quota for all it
 * would add (two directories, the file, the spec) before it writes
 * anything, and what it made is removed again when a later step fails,
 * so the file and its spec are written both or neither (a file it
 * replaced keeps the new content: the pair was there before). With
 * Kubernetes access the claim must be one of a prepare call in progress
 * (md_claims.c).
 *
 * Layout and names as upstream v0.36 metadata.go:
 *   <dir>/<namespace>_<claim>/<request>/metadata.json
 *   <CDI dir>/<driver>_metadata_<claim uid>_<request>.json
 *   container: /var/run/kubernetes.io/dra-device-attributes/
 *     resourceclaims/<claim>/<request>/<driver>-metadata.json
 *     (resourceclaimtemplates/<pod claim name>/... with one)
 *
 * Runs in: the supervisor (one thread, rate-limited with the CDI
 * requests: files.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "base/names.h"
#include "policy/policy.h"
#include "base/utf8.h"
#include "supervisor/supervisor.h"

#define MD_FILE		"metadata.json"
#define MD_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"
#define MD_CDI_VERSION	"0.5.0"
#define MD_SPEC_MAX	4096

/* The broker's uid, which owns the directory from the second start on. */
static uid_t
md_owner(struct sup *sup)
{
	uid_t	 uid;
	gid_t	 gid;

	if (pol_role_ids(ROLE_BROKER, &sup->cfg->policy, &uid, &gid) != 0)
		return (0);
	return (uid);
}

/*
 * Characters the spec's hostPath may hold as they are: JSON needs no
 * escape for them, and Go's encoder (upstream) escapes none of them.
 */
static int
path_plain(const char *p)
{
	for (; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f ||
		    *p == '"' || *p == '\\' || *p == '<' || *p == '>' ||
		    *p == '&')
			return (0);
	return (1);
}

/*
 * At start: create (0755) or open the metadata directory, walking its
 * parents without following links (files_open_parent: each root's and
 * not writable by others); it must be root's (or, without root, ours)
 * and writable by nobody else.
 */
int
metadata_prepare(struct sup *sup, char *err, size_t errsize)
{
	const char	*dir = sup->cfg->metadata_dir, *leaf;
	struct stat	 st;
	int		 pfd, fd;

	sup->meta_fd = -1;
	if (!sup->cfg->metadata)
		return (0);
	if (!path_plain(dir))
		return (files_fail(err, errsize, KP_EINVAL,
		    "kp_device_metadata: metadata directory %.200s: only "
		    "printable ASCII without '\"', '\\\\', '<', '>' and '&'",
		    dir));
	if ((pfd = files_open_parent("metadata directory", dir, &leaf, err,
	    errsize)) == -1)
		return (KP_EACCES);
	if (mkdirat(pfd, leaf, 0755) == -1 && errno != EEXIST) {
		close(pfd);
		return (files_fail(err, errsize, KP_EIO, "kp_device_metadata: "
		    "metadata directory %s: %s", dir, strerror(errno)));
	}
	fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (fd == -1)
		return (files_fail(err, errsize, KP_EIO, "kp_device_metadata: "
		    "metadata directory %s: %s", dir, errno == ENOTDIR ||
		    errno == ELOOP ? "a symbolic link or not a directory" :
		    strerror(errno)));
	if (fstat(fd, &st) == -1 || (st.st_uid != 0 &&
	    st.st_uid != geteuid() && st.st_uid != md_owner(sup)) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return (files_fail(err, errsize, KP_EACCES,
		    "kp_device_metadata: metadata directory %s: must be "
		    "root's and writable by nobody else", dir));
	}
	/* 0755 whatever the umask: the runtime mounts files from it. */
	(void)fchmod(fd, 0755);
	if (md_claims_init(sup, err, errsize) != 0) {
		close(fd);
		return (KP_ENOMEM);
	}
	sup->meta_fd = fd;
	log_info(2, "device metadata: files in %s", dir);
	/* What an earlier run left counts in the quota from the start. */
	metadata_count(sup, &sup->cdi_files, &sup->cdi_bytes);
	return (0);
}

/*
 * Every entry of the metadata directory (three levels: claims, requests,
 * files), and the directory, to the broker's uid and gid, before it
 * drops to them: the broker alone writes there. Links are not followed;
 * at most CDI_MAX_FILES_MD entries are looked at.
 */
static void
md_chown(int dfd, int depth, uid_t uid, gid_t gid, size_t *budget)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, sub;

	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && *budget > 0) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		(*budget)--;
		(void)fchownat(dfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW);
		if (depth < 2 && de->d_type == DT_DIR &&
		    (sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) != -1) {
			md_chown(sub, depth + 1, uid, gid, budget);
			close(sub);
		}
	}
	closedir(d);
}

void
metadata_own(struct sup *sup)
{
	size_t	 budget = 4 * 4096;
	uid_t	 uid;
	gid_t	 gid;

	if (sup->meta_fd == -1 || geteuid() != 0 ||
	    pol_role_ids(ROLE_BROKER, &sup->cfg->policy, &uid, &gid) != 0)
		return;
	(void)fchown(sup->meta_fd, uid, gid);
	md_chown(sup->meta_fd, 0, uid, gid, &budget);
}

void
metadata_close(struct sup *sup)
{
	if (sup->meta_fd != -1)
		close(sup->meta_fd);
	sup->meta_fd = -1;
	md_claims_free(sup);
}

/* Open dir name beneath dfd without following links; -1 and errno. */
static int
open_dir(int dfd, const char *name)
{
	return (openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC));
}

/*
 * Add the entries beneath dfd to *files and *bytes, depth levels down
 * (the layout is <ns>_<claim>/<request>/metadata.json: 3): each entry
 * counts one, a directory MD_DIR_BYTES, a regular file its size; what
 * lies deeper was not written here and is not walked.
 */
static void
count_dir(int dfd, int depth, size_t *files, size_t *bytes)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd, sub;

	/* A new open file description: dfd's offset is not moved. */
	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		(*files)++;
		if (S_ISREG(st.st_mode))
			*bytes += (size_t)st.st_size;
		else if (S_ISDIR(st.st_mode)) {
			*bytes += MD_DIR_BYTES;
			if (depth > 1 && (sub = open_dir(dfd, de->d_name)) !=
			    -1) {
				count_dir(sub, depth - 1, files, bytes);
				close(sub);
			}
		}
	}
	closedir(d);
}

/* The metadata directory's files and directories, added to the quota's
 * counts (files.c: at start, and when the CDI directory was made again). */
void
metadata_count(struct sup *sup, size_t *files, size_t *bytes)
{
	size_t	 f = 0, b = 0;

	if (sup->meta_fd == -1)
		return;
	count_dir(sup->meta_fd, 3, &f, &b);
	*files += f;
	*bytes += b;
	log_info(2, "device metadata: %zu files and directories, %zu bytes "
	    "in the quota", f, b);
}

/* The CDI spec upstream's writeCDISpec writes (json.MarshalIndent). */
static int
spec_json(const struct sup *sup, const Kpipc__MetadataWrite *w, char *out,
    size_t size)
{
	const char	*drv = sup->cfg->driver_name;
	char		 cpath[512];
	int		 n;

	if (w->pod_claim_name[0] != '\0')
		snprintf(cpath, sizeof(cpath), "%s/resourceclaimtemplates/%s/"
		    "%s/%s-metadata.json", MD_CONTAINER_DIR, w->pod_claim_name,
		    w->request, drv);
	else
		snprintf(cpath, sizeof(cpath), "%s/resourceclaims/%s/%s/"
		    "%s-metadata.json", MD_CONTAINER_DIR, w->name, w->request,
		    drv);
	n = snprintf(out, size,
	    "{\n"
	    "  \"cdiVersion\": \"%s\",\n"
	    "  \"kind\": \"%s/metadata\",\n"
	    "  \"devices\": [\n"
	    "    {\n"
	    "      \"name\": \"%s_%s\",\n"
	    "      \"containerEdits\": {\n"
	    "        \"mounts\": [\n"
	    "          {\n"
	    "            \"hostPath\": \"%s/%s_%s/%s/%s\",\n"
	    "            \"containerPath\": \"%s\",\n"
	    "            \"options\": [\n"
	    "              \"ro\",\n"
	    "              \"bind\"\n"
	    "            ]\n"
	    "          }\n"
	    "        ]\n"
	    "      }\n"
	    "    }\n"
	    "  ]\n"
	    "}", MD_CDI_VERSION, drv, w->uid, w->request,
	    sup->cfg->metadata_dir, w->namespace_, w->name, w->request,
	    MD_FILE, cpath);
	return (n > 0 && (size_t)n < size ? n : -1);
}

/* What is there already of one request's metadata: what it costs. */
struct md_have {
	int	 claim_dir;	/* <ns>_<claim>/ */
	int	 req_dir;	/* <request>/ in it */
	int	 file;		/* metadata.json in that */
	int	 spec;		/* the CDI spec */
	size_t	 file_bytes, spec_bytes;	/* their sizes */
};

static void
md_have(struct sup *sup, const char *claim, const char *req,
    const char *spec, struct md_have *h)
{
	struct stat	 st;
	int		 cfd, rfd;

	memset(h, 0, sizeof(*h));
	if ((cfd = open_dir(sup->meta_fd, claim)) != -1) {
		h->claim_dir = 1;
		if ((rfd = open_dir(cfd, req)) != -1) {
			h->req_dir = 1;
			if (fstatat(rfd, MD_FILE, &st, AT_SYMLINK_NOFOLLOW) ==
			    0) {
				h->file = 1;
				if (S_ISREG(st.st_mode))
					h->file_bytes = (size_t)st.st_size;
			}
			close(rfd);
		}
		close(cfd);
	}
	if (fstatat(sup->cdi_fd, spec, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		h->spec = 1;
		if (S_ISREG(st.st_mode))
			h->spec_bytes = (size_t)st.st_size;
	}
}

/* mkdir (0755) name beneath dfd unless had; *made and the quota charged
 * when this call made it. 0, or -1 and errno. */
static int
md_mkdir(struct sup *sup, int dfd, const char *name, int had, int *made)
{
	*made = 0;
	if (had)
		return (0);
	if (mkdirat(dfd, name, 0755) == -1)
		return (errno == EEXIST ? 0 : -1);
	*made = 1;
	files_quota_add(sup, 1, MD_DIR_BYTES);
	return (0);
}

static int
md_write(struct sup *sup, pid_t pid, const Kpipc__MetadataWrite *w,
    char *err, size_t errsize)
{
	char		 claim[NAME_MAX_LABEL + NAME_MAX_SUBDOMAIN + 2];
	char		 spec[MD_SPEC_MAX], name[NAME_MAX_CDI_SPEC + 1];
	char		 what[sizeof(claim) + 2 * NAME_MAX_LABEL + 32];
	struct md_have	 h;
	size_t		 i, k, sl, files, bytes;
	int		 cfd = -1, rfd = -1, n, r, made_c = 0, made_r = 0;
	int		 made_f = 0;

	for (i = 0; i < w->content.len; i += k)
		if (w->content.data[i] == '\0' || (k = utf8_char((const char *)
		    w->content.data + i, w->content.len - i)) == 0)
			return (files_fail(err, errsize, KP_EINVAL,
			    "metadata of %s/%s request %s: not UTF-8 text "
			    "(byte %zu)", w->namespace_, w->name, w->request,
			    i));
	n = snprintf(name, sizeof(name), "%s_metadata_%s_%s.json",
	    sup->cfg->driver_name, w->uid, w->request);
	if (n <= 0 || (size_t)n >= sizeof(name) ||
	    !name_is_cdi_spec(sup->cfg->driver_name, name, (size_t)n))
		return (files_fail(err, errsize, KP_EINVAL, "metadata of "
		    "%s/%s: CDI spec name %.64s: not %s", w->namespace_,
		    w->name, name, NAME_R_CDI_SPEC));
	if (spec_json(sup, w, spec, sizeof(spec)) < 0)
		return (files_fail(err, errsize, KP_ENAMETOOLONG, "metadata of "
		    "%s/%s: CDI spec too long", w->namespace_, w->name));
	if ((r = md_claims_known(sup, pid, w, err, errsize)) != 0)
		return (r);
	snprintf(claim, sizeof(claim), "%s_%s", w->namespace_, w->name);
	snprintf(what, sizeof(what), "metadata file %s/%s/%s", claim,
	    w->request, MD_FILE);

	/* The quota for all of it, before anything is written. */
	md_have(sup, claim, w->request, name, &h);
	sl = strlen(spec);
	files = !h.claim_dir + !h.req_dir + !h.file + !h.spec;
	bytes = (size_t)(!h.claim_dir + !h.req_dir) * MD_DIR_BYTES +
	    w->content.len + sl;
	if ((r = files_quota_check(sup, what, files, bytes, h.file_bytes +
	    h.spec_bytes, err, errsize)) != 0)
		return (r);

	/* Then each step, undone below when a later one fails. */
	if (md_mkdir(sup, sup->meta_fd, claim, h.claim_dir, &made_c) == -1 ||
	    (cfd = open_dir(sup->meta_fd, claim)) == -1) {
		r = files_fail(err, errsize, KP_EIO, "metadata directory %s: "
		    "%s", claim, strerror(errno));
		goto undo;
	}
	if (md_mkdir(sup, cfd, w->request, h.req_dir, &made_r) == -1 ||
	    (rfd = open_dir(cfd, w->request)) == -1) {
		r = files_fail(err, errsize, KP_EIO, "metadata directory "
		    "%s/%s: %s", claim, w->request, strerror(errno));
		goto undo;
	}
	if ((r = files_put(rfd, MD_FILE, w->content.data, w->content.len,
	    what, err, errsize)) != 0)
		goto undo;
	made_f = !h.file;
	files_quota_sub(sup, 0, h.file_bytes);
	files_quota_add(sup, !h.file, w->content.len);
	if ((r = files_cdi_put(sup, name, (const uint8_t *)spec, sl, err,
	    errsize)) != 0)
		goto undo;
	close(rfd);
	close(cfd);
	log_info(3, "device metadata of %s/%s request %s written",
	    w->namespace_, w->name, w->request);
	return (0);
undo:
	if (made_f && unlinkat(rfd, MD_FILE, 0) == 0)
		files_quota_sub(sup, 1, w->content.len);
	if (rfd != -1)
		close(rfd);
	if (made_r && unlinkat(cfd, w->request, AT_REMOVEDIR) == 0)
		files_quota_sub(sup, 1, MD_DIR_BYTES);
	if (cfd != -1)
		close(cfd);
	if (made_c && unlinkat(sup->meta_fd, claim, AT_REMOVEDIR) == 0)
		files_quota_sub(sup, 1, MD_DIR_BYTES);
	return (r);
}

/* Remove what md_write wrote in one request directory, then it; the
 * quota gets back what goes. */
static int
remove_request(struct sup *sup, int cfd, const char *req, char *err,
    size_t errsize)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd, rfd, r = 0;

	if ((rfd = open_dir(cfd, req)) == -1)
		return (errno == ENOENT ? 0 : files_fail(err, errsize, KP_EIO,
		    "%s: %s", req, strerror(errno)));
	if ((fd = dup(rfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		close(rfd);
		return (files_fail(err, errsize, KP_EIO, "%s: %s", req,
		    strerror(errno)));
	}
	/* metadata.json and left-over temporary files: regular files. */
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_REG || fstatat(rfd, de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(rfd, de->d_name, 0) == 0)
			files_quota_sub(sup, 1, (size_t)st.st_size);
		else if (errno != ENOENT && r == 0)
			r = files_fail(err, errsize, KP_EIO, "%s/%s: %s", req,
			    de->d_name, strerror(errno));
	}
	closedir(d);
	close(rfd);
	if (r == 0) {
		if (unlinkat(cfd, req, AT_REMOVEDIR) == 0)
			files_quota_sub(sup, 1, MD_DIR_BYTES);
		else if (errno != ENOENT)
			r = files_fail(err, errsize, KP_EIO, "%s: %s", req,
			    strerror(errno));
	}
	return (r);
}

/* upstream cleanupClaim: the claim's directory, then its specs. */
static int
md_remove(struct sup *sup, const Kpipc__MetadataRemove *rm, char *err,
    size_t errsize)
{
	char		 claim[NAME_MAX_LABEL + NAME_MAX_SUBDOMAIN + 2];
	char		 prefix[NAME_MAX_CDI_SPEC + 1], why[KP_ERROR_SIZE];
	struct dirent	*de;
	DIR		*d;
	size_t		 pl, nl;
	int		 cfd, fd, r = 0;

	snprintf(claim, sizeof(claim), "%s_%s", rm->namespace_, rm->name);
	if ((cfd = open_dir(sup->meta_fd, claim)) != -1) {
		if ((fd = dup(cfd)) != -1 && (d = fdopendir(fd)) != NULL) {
			while (r == 0 && (de = readdir(d)) != NULL)
				if (de->d_type == DT_DIR &&
				    strcmp(de->d_name, ".") != 0 &&
				    strcmp(de->d_name, "..") != 0)
					r = remove_request(sup, cfd,
					    de->d_name, why, sizeof(why));
			closedir(d);
		} else {
			if (fd != -1)
				close(fd);
			r = files_fail(why, sizeof(why), KP_EIO, "%s",
			    strerror(errno));
		}
		close(cfd);
		if (r == 0 && unlinkat(sup->meta_fd, claim, AT_REMOVEDIR) ==
		    0)
			files_quota_sub(sup, 1, MD_DIR_BYTES);
		else if (r == 0 && errno != ENOENT)
			r = files_fail(why, sizeof(why), KP_EIO, "%s",
			    strerror(errno));
		if (r != 0)
			return (files_fail(err, errsize, r, "remove metadata "
			    "directory %s/%s: %s", sup->cfg->metadata_dir,
			    claim, why));
	} else if (errno != ENOENT)
		return (files_fail(err, errsize, KP_EIO, "remove metadata "
		    "directory %s/%s: %s", sup->cfg->metadata_dir,
		    claim, strerror(errno)));
	pl = (size_t)snprintf(prefix, sizeof(prefix), "%s_metadata_%s_",
	    sup->cfg->driver_name, rm->uid);
	if ((fd = fd_dir_dup(sup->cdi_fd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return (files_fail(err, errsize, KP_EIO, "CDI directory: %s",
		    strerror(errno)));
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (nl > pl + 5 && strncmp(de->d_name, prefix, pl) == 0 &&
		    strcmp(de->d_name + nl - 5, ".json") == 0 &&
		    name_is_cdi_spec(sup->cfg->driver_name, de->d_name, nl))
			r = files_cdi_unlink(sup, de->d_name, NULL, err,
			    errsize);
	}
	closedir(d);
	if (r == 0)
		log_info(3, "device metadata of %s/%s removed", rm->namespace_,
		    rm->name);
	return (r);
}

/* A MetadataWrite or MetadataRemove from the nodeserver c: one answer,
 * with its token taken (cdi_queue.c). */
void
metadata_request(struct sup *sup, struct child *c, const Kpipc__Msg *m)
{
	char		 err[KP_ERROR_SIZE] = "";
	int		 r;

	if (sup->meta_fd == -1)
		r = files_fail(err, sizeof(err), KP_ENOTSUP, "device "
		    "metadata is off (kp_device_metadata)");
	else if (sup->cdi_fd == -1)
		r = files_fail(err, sizeof(err), KP_EIO, "%s", sup->cdi_err);
	else if (m->m_case == KPIPC__MSG__M_METADATA_WRITE)
		r = md_write(sup, c->pid, m->metadata_write, err,
		    sizeof(err));
	else
		r = md_remove(sup, m->metadata_remove, err, sizeof(err));
	files_reply(sup, c, m->m_case, m->m_case ==
	    KPIPC__MSG__M_METADATA_WRITE ? m->metadata_write->id :
	    m->metadata_remove->id, r, err, NULL, 0);
}
