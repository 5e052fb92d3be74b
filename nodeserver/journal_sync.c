/*
 * journal_sync.c - the journal in memory against the files on disk
 * (journal.c: the snapshot and compaction; journal_log.c: the log's
 * lines): reading both at the start, appending a call's changes to the
 * log (one write, one fdatasync), and reading again what another
 * instance of the driver wrote (a rolling update: both nodeservers share
 * the state directory, and their hooks run under one lock).
 *
 * What on disk this instance last saw is kept in struct journal: the
 * snapshot's inode, size and last bytes (which hold its checksum), the
 * log's header line (with its generation, new at every compaction) and
 * valid length. None of them can come back unchanged after another
 * instance's write: a compaction makes a new generation, an append makes
 * the log longer (issue 28, finding 1: an inode number alone, which
 * ext4 reuses at once, let a stale copy overwrite the other's entries).
 *
 * Runs in: the nodeserver, in its sandbox; the caller holds the
 * journal's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "nodeserver/journal.h"

/*
 * The file name in dirfd, whole, in a new *text (NUL-terminated): 0, or
 * -1 with errno: ENOENT none, EFBIG not a regular file of at most max
 * bytes, ENOMEM, or open's and read's.
 */
int
journal_slurp(int dirfd, const char *name, size_t max, char **text,
    size_t *len, struct stat *st)
{
	ssize_t	 n = 0;
	size_t	 off = 0;
	int	 fd, e;

	*text = NULL;
	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return (-1);
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode) ||
	    st->st_size > (off_t)max) {
		close(fd);
		errno = EFBIG;
		return (-1);
	}
	if ((*text = malloc((size_t)st->st_size + 1)) == NULL) {
		close(fd);
		errno = ENOMEM;
		return (-1);
	}
	while (off < (size_t)st->st_size && (n = read(fd, *text + off,
	    (size_t)st->st_size - off)) > 0)
		off += (size_t)n;
	e = errno;
	close(fd);
	if (off < (size_t)st->st_size && n == -1) {
		free(*text);
		*text = NULL;
		errno = e;
		return (-1);
	}
	(*text)[off] = '\0';
	*len = off;
	return (0);
}

static int
apply_put(void *user, const char *uid, json_t *e)
{
	struct journal	*j = user;

	if (e == NULL) {
		journal_mem_del(j, uid);
		return (0);
	}
	return (journal_mem_put(j, uid, json_incref(e)));
}

/*
 * The log's changes from j->log_len in text (the whole file, len
 * bytes); the valid end and what was seen recorded. quiet: a line that
 * ends the log early is not logged (journal_refresh reads it while
 * another instance may be appending).
 */
static int
log_tail(struct journal *j, const char *text, size_t len, int quiet)
{
	char	 err[KP_ERROR_SIZE];
	size_t	 used;

	used = jlog_apply(text + j->log_len, len - (size_t)j->log_len,
	    j->driver, &j->seq, &j->nrec, apply_put, j, err, sizeof(err));
	j->log_len += (off_t)used;
	j->log_seen = (off_t)len;
	if (strcmp(err, "out of memory") == 0)
		return (KP_ENOMEM);
	if (err[0] != '\0' && !quiet)
		log_warnx("journal %s: %s at byte %lld; the changes from there "
		    "on are dropped (a write a crash interrupted)", JOURNAL_LOG,
		    err, (long long)j->log_len);
	return (0);
}

/* The log over the snapshot just read (j->base). */
static int
load_log(struct journal *j, int quiet)
{
	struct stat	 st;
	char		*text, err[KP_ERROR_SIZE], base[sizeof(j->base)];
	size_t		 len, hlen;
	int		 r;

	j->log_ok = 0;
	j->gen = 0;
	j->hlen = 0;
	j->nrec = 0;
	j->seq = 0;
	if (journal_slurp(j->dirfd, JOURNAL_LOG, JOURNAL_LOG_MAX, &text,
	    &len, &st) == -1) {
		j->log_ino = 0;
		j->log_seen = -1;
		if (errno == ENOMEM)
			return (KP_ENOMEM);
		if (errno != ENOENT && !quiet)
			log_warnx("journal %s: %s; ignored (the snapshot %s "
			    "alone is the journal)", JOURNAL_LOG, errno ==
			    EFBIG ? "not a regular file of at most 64 MiB" :
			    strerror(errno), JOURNAL_FILE);
		return (0);
	}
	j->log_ino = st.st_ino;
	j->log_seen = (off_t)len;
	if (jlog_header(text, len, j->driver, &j->gen, base, sizeof(base),
	    &hlen, err, sizeof(err)) != 0) {
		if (!quiet)
			log_warnx("journal %s: %s; ignored (the snapshot %s "
			    "alone is the journal)", JOURNAL_LOG, err,
			    JOURNAL_FILE);
		free(text);
		return (0);
	}
	if (hlen > sizeof(j->hdr)) {
		free(text);
		return (0);
	}
	memcpy(j->hdr, text, hlen);
	j->hlen = hlen;
	if (j->base[0] == '\0' || strcmp(base, j->base) != 0) {
		/* A compaction renamed its snapshot, not its log yet; or a
		 * release that reads only the snapshot wrote it. Either way
		 * the snapshot is the journal (kept complete whenever such a
		 * release may run: see journal_commit). */
		log_info(1, "journal %s: over another snapshot (%s, not %s): "
		    "void", JOURNAL_LOG, base, j->base[0] ? j->base : "none");
		free(text);
		return (0);
	}
	j->log_ok = 1;
	j->log_len = (off_t)hlen;
	r = log_tail(j, text, len, quiet);
	free(text);
	return (r);
}

/*
 * Read the snapshot and its log into j (j->claims NULL before).
 * Not quiet (the start): a snapshot that cannot be used is quarantined
 * (journal.c) and the journal starts empty; 0, or KP_ENOMEM with err.
 * Quiet (journal_refresh): -1 with err when the snapshot cannot be read,
 * nothing moved.
 */
int
journal_load(struct journal *j, int quiet, char *err, size_t errsize)
{
	struct stat	 st;
	char		*text, why[KP_ERROR_SIZE];
	size_t		 len, t;
	json_t		*claims = NULL;
	int		 r;

	j->snap_size = -1;
	j->base[0] = '\0';
	if (j->claims == NULL && (j->claims = json_object()) == NULL) {
		snprintf(err, errsize, "out of memory");
		return (KP_ENOMEM);
	}
	if (journal_slurp(j->dirfd, JOURNAL_FILE, JOURNAL_MAX_BYTES, &text,
	    &len, &st) == -1) {
		if (errno == ENOMEM) {
			snprintf(err, errsize, "out of memory");
			return (KP_ENOMEM);
		}
		if (errno == ENOENT) {
			j->state = JOURNAL_NEW;
			return (load_log(j, quiet));
		}
		snprintf(why, sizeof(why), "%s", errno == EFBIG ? "not a "
		    "regular file of at most 8 MiB" : strerror(errno));
		if (quiet) {
			snprintf(err, errsize, "%s", why);
			return (-1);
		}
		journal_quarantine(j, why);
		return (load_log(j, quiet));
	}
	r = journal_parse_sum(text, len, j->driver, &claims,
	    j->file_boot_id, sizeof(j->file_boot_id), j->base,
	    sizeof(j->base), why, sizeof(why));
	j->snap_ino = st.st_ino;
	j->snap_size = (off_t)len;
	t = len < JOURNAL_TAIL ? len : JOURNAL_TAIL;
	memcpy(j->snap_tail, text + len - t, t);
	j->snap_tlen = t;
	free(text);
	if (r == KP_ENOMEM) {
		snprintf(err, errsize, "out of memory");
		return (r);
	}
	if (r != 0) {
		j->base[0] = '\0';
		if (quiet) {
			snprintf(err, errsize, "%s", why);
			return (-1);
		}
		journal_quarantine(j, why);
	} else {
		j->state = JOURNAL_LOADED;
		json_decref(j->claims);
		j->claims = claims;
		journal_index_drop(j);
	}
	return (load_log(j, quiet));
}

/*
 * Write the changes made since the last commit (journal_put,
 * journal_del): appended to the log as one write and one fdatasync, the
 * cost of a change whatever the number of claims. A compaction instead
 * when the log does not extend the snapshot, would pass its limit, or
 * in write-through mode (j->through: a release that reads only the
 * schema-1 snapshot may run beside this one, so every change goes
 * there). After an append, a compaction when the log has grown past
 * twice the snapshot (and 1 MiB): its failure is logged, not returned
 * (the changes are on disk already). 0, or KP_EIO / KP_ENOMEM /
 * KP_ENOSPC with err, nothing of the call's changes on disk; either way
 * the changes are no longer pending (a failed call undoes them in
 * memory: journal_mem_put, journal_mem_del).
 */
int
journal_commit(struct journal *j, char *err, size_t errsize)
{
	json_t		*o;
	char		*buf = NULL, *d, *nb;
	size_t		 i, n = 0, cap = 0, dl;
	int		 e;

	if (j->nops == 0)
		return (0);
	if (j->through || !j->log_ok)
		return (journal_save(j, err, errsize));
	for (i = 0; i < j->nops; i++) {
		o = j->ops[i].entry != NULL ? json_pack("{s:O, s:I, s:s}",
		    "entry", j->ops[i].entry, "seq", (json_int_t)(j->seq + i +
		    1), "uid", j->ops[i].uid) : json_pack("{s:I, s:s}", "seq",
		    (json_int_t)(j->seq + i + 1), "uid", j->ops[i].uid);
		d = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) :
		    NULL;
		json_decref(o);
		if (d == NULL)
			goto nomem;
		dl = strlen(d);
		if (n + dl + 10 > cap) {
			cap = (n + dl + 10) * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(d);
				goto nomem;
			}
			buf = nb;
		}
		n += jlog_line(buf + n, d, dl);
		free(d);
	}
	if ((size_t)j->log_len + n > JOURNAL_LOG_MAX) {
		free(buf);
		return (journal_save(j, err, errsize));
	}
	if (j->logfd == -1 && (j->logfd = openat(j->dirfd, JOURNAL_LOG,
	    O_RDWR | O_NOFOLLOW | O_CLOEXEC)) == -1)
		goto fail;
	/* A torn change a crash left at the end goes before this one. */
	if ((j->log_seen != j->log_len && ftruncate(j->logfd,
	    j->log_len) == -1) || pwrite(j->logfd, buf, n, j->log_len) !=
	    (ssize_t)n || fdatasync(j->logfd) == -1)
		goto fail;
	free(buf);
	j->log_len += (off_t)n;
	j->log_seen = j->log_len;
	j->seq += j->nops;
	j->nrec += j->nops;
	journal_forget_ops(j);
	if ((size_t)j->log_len > 2 * (size_t)(j->snap_size > 0 ?
	    j->snap_size : 0) + JOURNAL_COMPACT_SLACK &&
	    journal_save(j, err, errsize) != 0)
		log_warnx("journal: compaction: %s", err);
	return (0);
fail:
	e = errno;
	free(buf);
	if (j->logfd != -1)
		(void)ftruncate(j->logfd, j->log_len);
	j->log_seen = -1;
	journal_forget_ops(j);
	snprintf(err, errsize, "journal: append to %s: %s", JOURNAL_LOG,
	    strerror(e));
	return (KP_EIO);
nomem:
	free(buf);
	journal_forget_ops(j);
	snprintf(err, errsize, "out of memory");
	return (KP_ENOMEM);
}

/* The snapshot is not the one j holds (another instance wrote it). */
static int
snapshot_changed(struct journal *j)
{
	struct stat	 st;
	char		 tail[JOURNAL_TAIL];
	ssize_t		 n;
	int		 fd;

	if (fstatat(j->dirfd, JOURNAL_FILE, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return (errno == ENOENT && j->snap_size != -1);
	if (st.st_ino != j->snap_ino || st.st_size != j->snap_size)
		return (1);
	/* Same inode and size: a rewrite may still have reused both; its
	 * checksum, at the end, tells. */
	if ((fd = openat(j->dirfd, JOURNAL_FILE, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (1);
	n = pread(fd, tail, j->snap_tlen, st.st_size - (off_t)j->snap_tlen);
	close(fd);
	return (n != (ssize_t)j->snap_tlen || memcmp(tail, j->snap_tail,
	    j->snap_tlen) != 0);
}

/* Both files where, and as long as, this instance last saw them. */
static int
unchanged(struct journal *j)
{
	struct stat	 st;

	if (fstatat(j->dirfd, JOURNAL_FILE, &st, AT_SYMLINK_NOFOLLOW) == -1 ?
	    j->snap_size != -1 : (st.st_ino != j->snap_ino ||
	    st.st_size != j->snap_size))
		return (0);
	if (fstatat(j->dirfd, JOURNAL_LOG, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return (j->log_seen == -1);
	return (st.st_ino == j->log_ino && st.st_size == j->log_seen);
}

/* Read both files again into j: the other instance rewrote them. */
static void
reload(struct journal *j)
{
	struct journal	 fresh;
	char		 err[KP_ERROR_SIZE];

	memset(&fresh, 0, sizeof(fresh));
	fresh.dirfd = j->dirfd;
	fresh.logfd = -1;
	snprintf(fresh.driver, sizeof(fresh.driver), "%s", j->driver);
	if (journal_load(&fresh, 1, err, sizeof(err)) != 0) {
		json_decref(fresh.claims);
		log_warnx("journal: written by another instance, but cannot "
		    "be read again: %s; keeping what this one knows", err);
		/* Its next change compacts: a new generation the other one
		 * sees. */
		j->log_ok = 0;
		return;
	}
	json_decref(j->claims);
	j->claims = fresh.claims;
	journal_index_drop(j);
	memcpy(j->base, fresh.base, sizeof(j->base));
	j->snap_ino = fresh.snap_ino;
	j->snap_size = fresh.snap_size;
	memcpy(j->snap_tail, fresh.snap_tail, sizeof(j->snap_tail));
	j->snap_tlen = fresh.snap_tlen;
	j->gen = fresh.gen;
	memcpy(j->hdr, fresh.hdr, fresh.hlen);
	j->hlen = fresh.hlen;
	j->log_ok = fresh.log_ok;
	j->log_len = fresh.log_len;
	j->log_seen = fresh.log_seen;
	j->log_ino = fresh.log_ino;
	j->seq = fresh.seq;
	j->nrec = fresh.nrec;
	if (j->logfd != -1)
		close(j->logfd);
	j->logfd = -1;
	log_info(2, "journal: read again after another instance wrote it "
	    "(%zu prepared claims)", json_object_size(j->claims));
}

/*
 * Another instance may have written since this one last read or wrote:
 * read again what it changed (its appended changes, or both files after
 * its compaction or a schema-1 rewrite), so that neither drops the
 * other's entries. A file that cannot be read now is logged and the
 * claims in memory are kept. Costs a few system calls when nothing
 * changed; the caller holds lock.
 */
void
journal_refresh(struct journal *j)
{
	struct stat	 st;
	char		 hdr[sizeof(j->hdr)], *text;
	ssize_t		 n;
	size_t		 len;
	int		 fd;

	/* Outside a rolling update no other instance writes here: the
	 * files as this one left them, by two fstatat, is enough. */
	if (!j->through && unchanged(j))
		return;
	if (snapshot_changed(j)) {
		reload(j);
		return;
	}
	if ((fd = openat(j->dirfd, JOURNAL_LOG, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOENT && j->hlen > 0)
			reload(j);
		return;
	}
	if (fstat(fd, &st) == -1) {
		close(fd);
		return;
	}
	if (j->hlen == 0 || (n = pread(fd, hdr, j->hlen, 0)) !=
	    (ssize_t)j->hlen || memcmp(hdr, j->hdr, j->hlen) != 0) {
		close(fd);
		/* A new log, or one this instance could not use before. */
		if (j->hlen > 0 || st.st_size != j->log_seen)
			reload(j);
		return;
	}
	if (st.st_size == j->log_seen || !j->log_ok) {
		close(fd);
		return;
	}
	/* Same generation, longer: the other instance's changes. */
	if (st.st_size < j->log_len || st.st_size > (off_t)JOURNAL_LOG_MAX ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		reload(j);
		return;
	}
	len = (size_t)st.st_size - (size_t)j->log_len;
	n = pread(fd, text + j->log_len, len, j->log_len);
	close(fd);
	if (n >= 0)
		(void)log_tail(j, text, (size_t)j->log_len + (size_t)n, 1);
	free(text);
	log_info(2, "journal: %zu changes of another instance read",
	    j->nrec);
}
