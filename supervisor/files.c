/*
 * files.c - the files the supervisor prepares or writes for the
 * nodeserver, which may write nothing else (policy/landlock.c):
 *
 * State directories (kp_sandbox_state_dir): created at start when missing,
 * checked (a directory, not a symlink, owned by root or the nodeserver, not
 * group- or world-writable) and chowned to the nodeserver's uid and gid;
 * from then on the nodeserver owns what is in them.
 *
 * CDI spec files: the CDI directory is shared by every driver of the node,
 * so the nodeserver asks (CdiWrite, CdiRemove, CdiList) and the supervisor
 * writes, as root, through a directory fd opened once at start, only names
 * under the driver's prefix (base/names.c), only content that is small,
 * UTF-8 and a CDI spec within what the driver declared (cdi_check.c: the
 * runtime applies it as root), within one quota (files_quota_check).
 *
 * The quota covers every file the supervisor writes for the nodeserver:
 * this driver's spec files, and with device metadata on the metadata
 * files and the directories made for them (metadata.c; a directory is
 * charged MD_DIR_BYTES, a block of the disk it takes). At most
 * CDI_MAX_FILES of them (CDI_MAX_FILES_MD with metadata: a request's
 * metadata adds a spec, a file and up to two directories, so a node
 * holds as many claims) and CDI_MAX_BYTES in all, counted at start from
 * what is on disk (an earlier run's), then tracked; a request is checked
 * before it writes anything.
 *
 * A spec identical to the file already there (root's, 0644, the same
 * bytes) is not written again: a nodeserver replaying its journal after a
 * restart asks for every spec it wrote.
 *
 * Runs in: the supervisor (one thread; a request is done at once or waits
 * for its token in cdi_queue.c, so the poll loop stays responsive).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "base/names.h"
#include "base/utf8.h"
#include "supervisor/supervisor.h"

#define CDI_SYNC_MS	10	/* the directory's fsync, at most this late */
#define CDI_MAX_FILES	1024	/* a driver's specs: files, and */
#define CDI_MAX_FILES_MD 4096	/* with device metadata on, */
#define CDI_MAX_BYTES	(16u * 1024 * 1024)	/* bytes in all */

/* err gets the message; returns code (files.c, metadata.c, cdi_node.c). */
int
files_fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return (code);
}

/*
 * Open path's parent directory one component at a time from "/", never
 * following a symlink, and require each directory on the way to be
 * root's and not writable by others unless sticky (/tmp): the nodeserver
 * owns a state directory's contents, and a symlink it planted in a
 * parent would otherwise make this root process create or chown a
 * directory anywhere (the next start reads the same path). Returns the
 * parent's fd and sets *leaf to the last component, or -1 with err set.
 */
int
files_open_parent(const char *what, const char *path, const char **leaf,
    char *err, size_t errsize)
{
	char		 part[POL_PATH_MAX];
	const char	*p = path + 1, *slash;
	struct stat	 st;
	int		 fd, next;

	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		(void)files_fail(err, errsize, KP_EIO, "open /: %s",
		    strerror(errno));
		return (-1);
	}
	while ((slash = strchr(p, '/')) != NULL) {
		snprintf(part, sizeof(part), "%.*s", (int)(slash - p), p);
		next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		if (next == -1 || fstat(next, &st) == -1) {
			(void)files_fail(err, errsize, KP_EIO, "%s "
			    "%s: its parent %.*s: %s", what, path,
			    (int)(slash - path),
			    path, errno == ENOTDIR || errno == ELOOP ? "is a "
			    "symbolic link or not a directory" : errno ==
			    ENOENT ? "no such directory (its parent must "
			    "exist)" : strerror(errno));
			if (next != -1)
				close(next);
			return (-1);
		}
		/* (Without root the supervisor's own uid is the
		 * nodeserver's too: nothing to protect then.) */
		if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		    ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    !(st.st_mode & S_ISVTX))) {
			(void)files_fail(err, errsize, KP_EACCES, "%s %s: "
			    "its parent %.*s must be root's and not writable "
			    "by others (owner %u, mode %03o)", what, path,
			    (int)(slash - path), path, (unsigned)st.st_uid,
			    (unsigned)(st.st_mode & 07777));
			close(next);
			return (-1);
		}
		fd = next;
		p = slash + 1;
	}
	*leaf = p;
	return (fd);
}

/* Create (0700, the parent must exist), check and hand over one. */
static int
state_dir(const char *path, uid_t uid, gid_t gid, char *err, size_t errsize)
{
	struct stat	 st;
	const char	*leaf;
	int		 pfd, fd, r = 0;

	if ((pfd = files_open_parent("state directory", path, &leaf, err,
	    errsize)) == -1)
		return (KP_EACCES);
	if (mkdirat(pfd, leaf, 0700) == -1 && errno != EEXIST) {
		r = errno;
		close(pfd);
		return (files_fail(err, errsize, KP_EIO, "state directory "
		    "%s: %s%s", path, strerror(r), r == ENOENT ?
		    " (its parent must exist)" : ""));
	}
	fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1) {
		r = errno;
		/* O_NOFOLLOW with O_DIRECTORY: a symlink is ENOTDIR too. */
		if (r == ELOOP || (fstatat(pfd, leaf, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))) {
			close(pfd);
			return (files_fail(err, errsize, KP_EIO, "state "
			    "directory %s: is a symbolic link", path));
		}
		close(pfd);
		return (files_fail(err, errsize, KP_EIO, "state directory "
		    "%s: %s", path, r == ENOTDIR ? "is not a directory" :
		    strerror(r)));
	}
	close(pfd);
	if (fstat(fd, &st) == -1)
		r = files_fail(err, errsize, KP_EIO, "state directory %s: %s",
		    path, strerror(errno));
	else if (st.st_uid != 0 && st.st_uid != uid)
		r = files_fail(err, errsize, KP_EACCES, "state directory %s: "
		    "owned by uid %u, not root or the nodeserver's uid %u",
		    path, (unsigned)st.st_uid, (unsigned)uid);
	else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_uid == uid &&
	    uid != geteuid()) {
		/*
		 * The nodeserver owns it and may chmod it: refusing that
		 * mode let one compromised nodeserver fail every later
		 * start (a fixed driver's too) until someone repaired it
		 * by hand. Its content is the nodeserver's, untrusted
		 * whoever wrote it; the mode goes back to 0700.
		 */
		if (fchmod(fd, 0700) == -1)
			r = files_fail(err, errsize, KP_EACCES, "state "
			    "directory %s: mode %03o set by the nodeserver: "
			    "chmod 0700: %s", path,
			    (unsigned)(st.st_mode & 07777), strerror(errno));
		else
			log_warnx("state directory %s: mode %03o set by the "
			    "nodeserver, made 0700", path,
			    (unsigned)(st.st_mode & 07777));
	} else if (st.st_mode & (S_IWGRP | S_IWOTH))
		r = files_fail(err, errsize, KP_EACCES, "state directory %s: "
		    "group- or world-writable (mode %03o)", path,
		    (unsigned)(st.st_mode & 07777));
	else if ((st.st_uid != uid || st.st_gid != gid) &&
	    fchown(fd, uid, gid) == -1)
		r = files_fail(err, errsize, KP_EACCES, "state directory %s: "
		    "chown to %u:%u: %s", path, (unsigned)uid, (unsigned)gid,
		    strerror(errno));
	close(fd);
	if (r == 0)
		log_info(2, "state directory %s: the nodeserver's (%u:%u)",
		    path, (unsigned)uid, (unsigned)gid);
	return (r);
}

/*
 * The quota's starting point: this driver's spec files already in the
 * directory (left by an earlier run). Entries that are not regular files
 * count as files of size 0.
 */
static void
cdi_count(struct sup *sup)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd;

	sup->cdi_files = 0;
	sup->cdi_bytes = 0;
	if ((fd = fd_dir_dup(sup->cdi_fd)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!name_is_cdi_spec(sup->cfg->driver_name, de->d_name,
		    strlen(de->d_name)))
			continue;
		sup->cdi_files++;
		if (fstatat(sup->cdi_fd, de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sup->cdi_bytes += (size_t)st.st_size;
	}
	closedir(d);
	log_info(2, "CDI directory: %zu specs of this driver, %zu bytes",
	    sup->cdi_files, sup->cdi_bytes);
	/* The metadata files count too (a recount after the CDI directory
	 * was made again keeps them; at start metadata_prepare adds them). */
	if (sup->meta_fd != -1)
		metadata_count(sup, &sup->cdi_files, &sup->cdi_bytes);
}

/* Whether name exists now, and its size (0 if it is no regular file). */
static int
cdi_existing(struct sup *sup, const char *name, size_t *size)
{
	struct stat	 st;

	*size = 0;
	if (fstatat(sup->cdi_fd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return (0);
	if (S_ISREG(st.st_mode))
		*size = (size_t)st.st_size;
	return (1);
}

/*
 * 1 (cdi_err set) if the supervisor, without CAP_DAC_OVERRIDE from its
 * capability drop on, could not create a spec in the CDI directory: one
 * handed to another uid fails every write ("create a temporary file:
 * Permission denied") long after the start.
 */
static int
cdi_closed(struct sup *sup, const char *dir)
{
	struct stat	 st;

	if (geteuid() != 0 || fstat(sup->cdi_fd, &st) == -1 ||
	    fd_dir_mode_writable(&st))
		return (0);
	snprintf(sup->cdi_err, sizeof(sup->cdi_err), "CDI directory %.60s "
	    "(uid %u, mode %03o) must be writable by root through its mode: "
	    "the supervisor keeps no CAP_DAC_OVERRIDE (make it root's, as "
	    "/var/run/cdi is)", dir, (unsigned)st.st_uid,
	    (unsigned)(st.st_mode & 07777));
	return (1);
}

/*
 * At start, before any child: the state directories and the CDI
 * directory's fd. An explicit CDI directory that cannot be opened fails
 * the start; the default one only makes CDI requests fail (a driver that
 * writes no specs must not need /var/run/cdi).
 */
static int
cdi_prepare(struct sup *sup, char *err, size_t errsize)
{
	const struct policy_opts	*po = &sup->cfg->policy;
	const char			*dir;
	size_t				 i;
	int				 r;

	sup->cdi_fd = -1;
	sup->cdi_wfd = -1;
	cdi_queue_init(sup);
	for (i = 0; i < po->n_state_dirs; i++)
		if ((r = state_dir(po->state_dirs[i], po->ns_uid, po->ns_gid,
		    err, errsize)) != 0)
			return (r);
	dir = po->cdi_dir[0] != '\0' ? po->cdi_dir : POL_CDI_DIR;
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		r = errno;
	else if ((sup->cdi_fd = open(dir, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		r = errno;
	else if (cdi_closed(sup, dir)) {
		close(sup->cdi_fd);
		sup->cdi_fd = -1;
		if (po->cdi_dir[0] != '\0')
			return (files_fail(err, errsize, KP_EACCES,
			    "kp_cdi_directory: %s", sup->cdi_err));
		log_info(1, "%s: CDI spec requests will fail", sup->cdi_err);
		return (0);
	} else {
		cdi_count(sup);
		cdi_watch_init(sup);
		return (0);
	}
	snprintf(sup->cdi_err, sizeof(sup->cdi_err), "CDI directory %.180s: %s",
	    dir, r == ELOOP ? "is a symbolic link" : strerror(r));
	if (po->cdi_dir[0] != '\0')
		return (files_fail(err, errsize, KP_EIO, "kp_cdi_directory: %s",
		    sup->cdi_err));
	log_info(1, "%s: CDI spec requests will fail", sup->cdi_err);
	return (0);
}

/* Then the device metadata directory (metadata.c). */
int
files_prepare(struct sup *sup, char *err, size_t errsize)
{
	int	 r;

	sup->meta_fd = -1;
	if ((r = cdi_prepare(sup, err, errsize)) != 0)
		return (r);
	return (metadata_prepare(sup, err, errsize));
}

void
files_close(struct sup *sup)
{
	cdi_queue_free(sup);
	files_cdi_sync(sup, 1);
	cdi_watch_close(sup);
	if (sup->cdi_fd != -1)
		close(sup->cdi_fd);
	sup->cdi_fd = -1;
	metadata_close(sup);
}

/*
 * The CDI directory was removed while the plugin runs (rm -rf by hand, a
 * tmpfs remounted): its fd names a deleted directory, where no file can
 * be created. Make it again, as at start, so the next request (the
 * journal's repair of a missing spec) succeeds.
 */
void
files_cdi_reopen(struct sup *sup)
{
	const struct policy_opts	*po = &sup->cfg->policy;
	const char			*dir;
	struct stat			 st;
	int				 fd;

	if (sup->cdi_fd == -1 || fstat(sup->cdi_fd, &st) == -1 ||
	    st.st_nlink > 0)
		return;
	dir = po->cdi_dir[0] != '\0' ? po->cdi_dir : POL_CDI_DIR;
	if (sup->mon_files != -1) {
		if ((fd = sup_mon_reopen(sup)) == -1)
			return;		/* not ours to make; said why */
	} else if ((mkdir(dir, 0755) == -1 && errno != EEXIST) ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_warn("CDI directory %s was removed; making it again", dir);
		return;
	}
	close(sup->cdi_fd);
	sup->cdi_fd = fd;
	sup->cdi_sync_pending = 0;	/* the old directory is gone */
	log_warnx("CDI directory %s was removed; made it again", dir);
	cdi_count(sup);
	cdi_watch_reopen(sup);
}

static int
cdi_name_ok(struct sup *sup, const char *name, char *err, size_t errsize)
{
	if (name_is_cdi_spec(sup->cfg->driver_name, name, strlen(name)))
		return (0);
	return (files_fail(err, errsize, KP_EINVAL, "CDI spec name \"%.64s\": "
	    "not %s", name, NAME_R_CDI_SPEC));
}

/*
 * Whether name is already this content: a regular file of root's (the
 * supervisor's uid), mode 0644, the same bytes; what files_put() would
 * leave. Anything else (missing, another mode, a read error) is written.
 */
static int
cdi_same(struct sup *sup, const char *name, const uint8_t *data, size_t len)
{
	uint8_t		 buf[16384];
	struct stat	 st;
	size_t		 off = 0, k;
	ssize_t		 n;
	int		 fd, same = 0;

	if ((fd = openat(sup->cdi_fd, name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1)
		return (0);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == (sup->mon_files == -1 ? geteuid() : sup->cdi_owner) &&
	    (st.st_mode & 07777) == 0644 &&
	    (size_t)st.st_size == len) {
		for (same = 1; same && off < len; off += (size_t)n) {
			k = len - off < sizeof(buf) ? len - off : sizeof(buf);
			if ((n = read(fd, buf, k)) <= 0 ||
			    memcmp(buf, data + off, (size_t)n) != 0)
				same = 0;
		}
	}
	close(fd);
	return (same);
}

/* The rules of a CdiWrite (name, UTF-8, cdi_check): 0 or the refusal. */
static int
cdi_write_check(struct sup *sup, const Kpipc__CdiWrite *w, char *err,
    size_t errsize)
{
	char	 why[KP_ERROR_SIZE];
	size_t	 i, k;
	int	 r;

	if ((r = cdi_name_ok(sup, w->name, err, errsize)) != 0)
		return (r);
	for (i = 0; i < w->content.len; i += k)
		if (w->content.data[i] == '\0' || (k = utf8_char((const char *)
		    w->content.data + i, w->content.len - i)) == 0)
			return (files_fail(err, errsize, KP_EINVAL, "CDI spec "
			    "%s: content is not UTF-8 text (byte %zu)", w->name,
			    i));
	if ((r = cdi_check((const char *)w->content.data, w->content.len,
	    sup->cfg, why, sizeof(why))) != 0)
		return (files_fail(err, errsize, r, "CDI spec %.64s: %s",
		    w->name, why));
	return (0);
}

/*
 * Write name in directory dfd atomically: a temporary dot-file created
 * O_EXCL, mode 0644 whatever the umask (container runtimes and
 * workloads read it), fsync, rename over name, and with sync_dir fsync of
 * the directory. what names the file in err.
 */
static int
put(int dfd, const char *name, const uint8_t *data, size_t len,
    const char *what, int sync_dir, char *err, size_t errsize)
{
	char	 tmp[NAME_MAX_CDI_SPEC + 16];
	int	 fd, r;

	if ((fd = fd_tmp_create(dfd, name, tmp, sizeof(tmp))) == -1)
		return (files_fail(err, errsize, KP_EIO, "%s: create a "
		    "temporary file: %s", what, strerror(errno)));
	if (fchmod(fd, 0644) == -1 || fd_write_all(fd, data, len) == -1 ||
	    fsync(fd) == -1) {
		r = errno;
		close(fd);
		(void)unlinkat(dfd, tmp, 0);
		return (files_fail(err, errsize, KP_EIO, "%s: write: %s", what,
		    strerror(r)));
	}
	close(fd);
	if (renameat(dfd, tmp, dfd, name) == -1) {
		r = errno;
		(void)unlinkat(dfd, tmp, 0);
		return (files_fail(err, errsize, KP_EIO, "%s: rename: %s", what,
		    strerror(r)));
	}
	if (sync_dir)
		(void)fsync(dfd);
	return (0);
}

int
files_put(int dfd, const char *name, const uint8_t *data, size_t len,
    const char *what, char *err, size_t errsize)
{
	return (put(dfd, name, data, len, what, 1, err, errsize));
}

/*
 * The CDI directory's entries (renames, removals) are made durable by one
 * fsync of the directory at most CDI_SYNC_MS after the first of them, not
 * one each: the nodeserver asks one spec at a time, and a call with 100
 * claims paid 100 journal commits for the directory alone on ext4. What
 * that leaves open is a crash within those milliseconds losing the name
 * of a spec whose content was synced: runtimes read the directory only
 * when they create a container, /var/run/cdi is a tmpfs that a reboot
 * empties anyway, and the nodeserver's journal replay writes a missing
 * spec again. A spec's content is still synced before its rename, so a
 * name never shows a short file.
 */
static void
cdi_dirty(struct sup *sup)
{
	if (sup->cdi_sync_pending)
		return;
	sup->cdi_sync_pending = 1;
	clock_gettime(CLOCK_MONOTONIC, &sup->cdi_sync_at);
	ts_after_ms(&sup->cdi_sync_at, CDI_SYNC_MS);
}

/* The directory fsync when it is due (or now, with force). */
void
files_cdi_sync(struct sup *sup, int force)
{
	if (!sup->cdi_sync_pending ||
	    (!force && ts_ms_until(&sup->cdi_sync_at) > 0))
		return;
	sup->cdi_sync_pending = 0;
	if (sup->cdi_fd != -1)
		(void)fsync(sup->cdi_fd);
}

/* Milliseconds until files_cdi_sync() is due; -1: nothing to sync. */
long long
files_cdi_sync_ms(struct sup *sup)
{
	long long	 d;

	if (!sup->cdi_sync_pending)
		return (-1);
	d = ts_ms_until(&sup->cdi_sync_at);
	return (d < 0 ? 0 : d);
}

/*
 * Whether files more entries and bytes more bytes, with old_bytes of the
 * files they replace taken out, fit this driver's quota: 0, or KP_ENOSPC
 * with err naming what and the limit. Nothing is charged here.
 */
int
files_quota_check(struct sup *sup, const char *what, size_t files,
    size_t bytes, size_t old_bytes, char *err, size_t errsize)
{
	size_t	 max = sup->cfg->metadata ? CDI_MAX_FILES_MD : CDI_MAX_FILES;
	size_t	 b;

	b = sup->cdi_bytes - (old_bytes < sup->cdi_bytes ? old_bytes :
	    sup->cdi_bytes) + bytes;
	if (sup->cdi_files + files > max)
		return (files_fail(err, errsize, KP_ENOSPC, "%s: this driver "
		    "has %zu %s, at most %zu are allowed (remove some first)",
		    what, sup->cdi_files, sup->cfg->metadata ? "files (CDI "
		    "specs, device metadata files and directories)" :
		    "specs", max));
	if (b > CDI_MAX_BYTES)
		return (files_fail(err, errsize, KP_ENOSPC, "%s: %zu bytes "
		    "would make this driver's %s %zu bytes, over %u (remove "
		    "some first)", what, bytes, sup->cfg->metadata ? "specs "
		    "and device metadata" : "specs", b, CDI_MAX_BYTES));
	return (0);
}

/* Charge, or give back, files entries and bytes of the quota. */
void
files_quota_add(struct sup *sup, size_t files, size_t bytes)
{
	sup->cdi_files += files;
	sup->cdi_bytes += bytes;
}

void
files_quota_sub(struct sup *sup, size_t files, size_t bytes)
{
	sup->cdi_files -= files < sup->cdi_files ? files : sup->cdi_files;
	sup->cdi_bytes -= bytes < sup->cdi_bytes ? bytes : sup->cdi_bytes;
}

/* A spec of this driver into the CDI directory, within the quota. */
int
files_cdi_put(struct sup *sup, const char *name, const uint8_t *data,
    size_t len, char *err, size_t errsize)
{
	char	 what[NAME_MAX_CDI_SPEC + 16];
	size_t	 old;
	int	 r, had;

	/* The quota, with the file this one replaces taken out. */
	had = cdi_existing(sup, name, &old);
	snprintf(what, sizeof(what), "CDI spec %.64s", name);
	if ((r = files_quota_check(sup, what, !had, len, old, err,
	    errsize)) != 0)
		return (r);
	snprintf(what, sizeof(what), "CDI spec %s", name);
	/* The monitor writes it (root's directory, shared by every
	 * driver); without one (the unit tests, the fuzz target) the
	 * directory is this process's to write. */
	if ((r = sup->mon_files != -1 ? sup_mon_put(sup, name, data, len,
	    err, errsize) : put(sup->cdi_fd, name, data, len, what, 0, err,
	    errsize)) != 0)
		return (r);
	cdi_dirty(sup);
	files_quota_sub(sup, 0, old);
	files_quota_add(sup, !had, len);
	log_info(3, "CDI spec %s written (%zu bytes)", name, len);
	return (0);
}

/* Remove a spec of this driver; one that does not exist is no error.
 * *removed (may be NULL): 1 when this call removed it (an inotify event
 * follows), 0 when it was gone already. */
int
files_cdi_unlink(struct sup *sup, const char *name, int *removed, char *err,
    size_t errsize)
{
	size_t	 old;

	if (removed != NULL)
		*removed = 0;
	if (!cdi_existing(sup, name, &old))
		return (0);
	if (sup->mon_files != -1) {
		if (sup_mon_remove(sup, name, err, errsize) != 0 &&
		    strstr(err, strerror(ENOENT)) == NULL)
			return (KP_EIO);
		if (removed != NULL)
			*removed = 1;
	} else if (unlinkat(sup->cdi_fd, name, 0) == -1) {
		if (errno != ENOENT)
			return (files_fail(err, errsize, KP_EIO, "CDI spec %s: "
			    "remove: %s", name, strerror(errno)));
	} else if (removed != NULL)
		*removed = 1;
	cdi_dirty(sup);
	files_quota_sub(sup, 1, old);
	log_info(3, "CDI spec %s removed", name);
	return (0);
}

/* This driver's spec files; *names are strdup'ed, at most the cap. */
static int
cdi_list(struct sup *sup, char ***names, size_t *n, char *err,
    size_t errsize)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	*names = NULL;
	*n = 0;
	if ((fd = fd_dir_dup(sup->cdi_fd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return (files_fail(err, errsize, KP_EIO, "CDI directory: %s",
		    strerror(errno)));
	}
	if ((*names = calloc(KP_IPC_MAX_CDI_NAMES, sizeof(**names))) == NULL) {
		closedir(d);
		return (files_fail(err, errsize, KP_ENOMEM, "out of memory"));
	}
	while (*n < KP_IPC_MAX_CDI_NAMES && (de = readdir(d)) != NULL) {
		if (!name_is_cdi_spec(sup->cfg->driver_name, de->d_name,
		    strlen(de->d_name)))
			continue;
		if (((*names)[*n] = strdup(de->d_name)) == NULL)
			break;
		(*n)++;
	}
	closedir(d);
	return (0);
}

/*
 * The CdiReply to request id (case mcase) of the nodeserver c: code r,
 * err its message (logged unless a rate-limit answer), names of a list.
 */
void
files_reply(struct sup *sup, struct child *c, int mcase, uint64_t id, int r,
    char *err, char **names, size_t n)
{
	Kpipc__Msg	 out = KPIPC__MSG__INIT;
	Kpipc__CdiReply	 rep = KPIPC__CDI_REPLY__INIT;
	Kpipc__Result	 res = KPIPC__RESULT__INIT;

	if (r != 0 && r != KP_EBUSY)
		charge_log(c, KP_LOG_WARNING, 0, "%s: %s refused: %s", c->name,
		    ipc_case_name(mcase), err);
	rep.id = id;
	res.code = r;
	res.message = err;
	rep.result = &res;
	rep.names = names;
	rep.n_names = n;
	/* The whole list, and changes to it will follow (cdi_watch.c). */
	rep.watched = mcase == KPIPC__MSG__M_CDI_LIST && r == 0 &&
	    cdi_watch_live(sup) && n < KP_IPC_MAX_CDI_NAMES;
	if (rep.watched)
		sup->cdi_copy = 1;
	out.m_case = KPIPC__MSG__M_CDI_REPLY;
	out.cdi_reply = &rep;
	sup_queue(sup, c, &out);
}

/*
 * The CdiWrite, CdiRemove or CdiList m of the nodeserver c, answered
 * here, when it needs no token (a list; a refusal; a spec identical to
 * the file; removing a missing file) or have_token: returns 1, *spent 1
 * when it wrote or removed a file. Returns 0, unanswered, when it needs
 * a token; *checked (0 on the first call) then keeps that the write's
 * rules were checked and its content differs, for the next call.
 */
int
files_cdi_run(struct sup *sup, struct child *c, const Kpipc__Msg *m,
    int have_token, int *checked, int *spent)
{
	char			 err[KP_ERROR_SIZE] = "", **names = NULL;
	const Kpipc__CdiWrite	*w = m->cdi_write;
	uint64_t		 id;
	size_t			 i, n = 0, old;
	int			 r, removed;

	*spent = 0;
	if (m->m_case == KPIPC__MSG__M_CDI_WRITE)
		id = m->cdi_write->id;
	else if (m->m_case == KPIPC__MSG__M_CDI_REMOVE)
		id = m->cdi_remove->id;
	else
		id = m->cdi_list->id;
	if (sup->cdi_fd == -1)
		r = files_fail(err, sizeof(err), KP_EIO, "%s", sup->cdi_err);
	else if (m->m_case == KPIPC__MSG__M_CDI_LIST) {
		/* Changes seen before the list go out before its reply. */
		cdi_watch_read(sup);
		if ((r = cdi_list(sup, &names, &n, err, sizeof(err))) == 0)
			charge_log(c, KP_LOG_INFO, 3, "CDI specs listed for "
			    "%s: %zu%s", c->name, n, cdi_watch_live(sup) ? "" :
			    " (not watched)");
	}
	else if (m->m_case == KPIPC__MSG__M_CDI_REMOVE) {
		if ((r = cdi_name_ok(sup, m->cdi_remove->name, err,
		    sizeof(err))) == 0 && cdi_existing(sup,
		    m->cdi_remove->name, &old)) {
			if (!have_token)
				return (0);
			*spent = 1;
			/* The nodeserver applies its own removal and write
			 * when the reply comes: their events are not sent.
			 * A file gone meanwhile made no event of ours: its
			 * remover's event is sent, nothing waits to match. */
			if ((r = files_cdi_unlink(sup, m->cdi_remove->name,
			    &removed, err, sizeof(err))) == 0 && removed)
				cdi_watch_own(sup, m->cdi_remove->name, 0);
		}
	} else if (!*checked && (r = cdi_write_check(sup, w, err,
	    sizeof(err))) != 0)
		;
	else if (!*checked && cdi_same(sup, w->name, w->content.data,
	    w->content.len)) {
		charge_log(c, KP_LOG_INFO, 3, "CDI spec %s unchanged (%zu "
		    "bytes)", w->name, w->content.len);
		r = 0;
	} else {
		*checked = 1;
		if (!have_token)
			return (0);
		*spent = 1;
		if ((r = files_cdi_put(sup, w->name, w->content.data,
		    w->content.len, err, sizeof(err))) == 0)
			cdi_watch_own(sup, w->name, 1);
	}
	files_reply(sup, c, m->m_case, id, r, err, names, n);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return (1);
}
