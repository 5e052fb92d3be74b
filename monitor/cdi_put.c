/*
 * cdi_put.c - the broker's file requests: the only files the monitor
 * writes for it. The CDI directory is shared by every driver of the node
 * and root's, so the broker (its own uid) can read it but not write it;
 * it checks a spec (ipc/check.c, cdi_check.c, the quota) and hands the
 * content here in a sealed memfd with the spec's name. The monitor
 * checks only what needs no parsing: the name is one of this driver's
 * spec names (base/names.c), the fd a sealed regular file of at most
 * MON_CDI_MAX bytes; then it writes a temporary file, fsyncs it and
 * renames it over the name, as root, 0644. It never reads the content
 * but to copy it.
 *
 * A compromised broker can thus write any content under this driver's
 * spec names and remove them (docs/security.md: the broker is the CDI
 * checker), but no other driver's spec, no other file, nothing outside
 * the CDI directory.
 *
 * Runs in: the monitor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "base/names.h"
#include "monitor/monitor.h"
#include "policy/policy.h"

#define SEALS_NEEDED	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static const char *
cdi_dir(const struct mon *mon)
{
	return (mon->cfg->policy.cdi_dir[0] != '\0' ?
	    mon->cfg->policy.cdi_dir : POL_CDI_DIR);
}

/*
 * The CDI directory, made when missing (0755: runtimes read it), opened
 * without following a symbolic link; again when it was removed while the
 * plugin runs (its fd then names a deleted directory). 0 or KP_EIO.
 */
int
cdi_put_open(struct mon *mon, char *err, size_t errsize)
{
	struct stat	 st;
	int		 fd;

	if (mon->cdi_fd != -1 && fstat(mon->cdi_fd, &st) == 0 &&
	    st.st_nlink > 0)
		return (0);
	if ((mkdir(cdi_dir(mon), 0755) == -1 && errno != EEXIST) ||
	    (fd = open(cdi_dir(mon), O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsize, "CDI directory %s: %s", cdi_dir(mon),
		    strerror(errno));
		return (KP_EIO);
	}
	if (mon->cdi_fd != -1) {
		close(mon->cdi_fd);
		log_warnx("CDI directory %s was removed; made it again",
		    cdi_dir(mon));
	}
	mon->cdi_fd = fd;
	mon->cdi_counted = 0;
	return (0);
}

/*
 * This driver's specs in the directory, counted once (then tracked): the
 * broker's quota is the broker's, and a compromised broker keeps none;
 * the same limit held here bounds what it can make root write.
 */
static void
count(struct mon *mon)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd;

	mon->cdi_files = mon->cdi_bytes = 0;
	mon->cdi_counted = 1;
	if ((fd = fd_dir_dup(mon->cdi_fd)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (name_is_cdi_spec(mon->cfg->driver_name, de->d_name,
		    strlen(de->d_name)) && fstatat(mon->cdi_fd, de->d_name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0) {
			mon->cdi_files++;
			mon->cdi_bytes += (size_t)st.st_size;
		}
	closedir(d);
}

/* The size of spec name now, or -1 when there is none. */
static off_t
size_of(struct mon *mon, const char *name)
{
	struct stat	 st;

	return (fstatat(mon->cdi_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ?
	    st.st_size : -1);
}

/* Spec name of size, now old bytes (-1: none), would pass the limits. */
static int
over(const struct mon *mon, off_t old, off_t size)
{
	return ((old == -1 && mon->cdi_files >= MON_CDI_FILES) ||
	    mon->cdi_bytes - (old > 0 ? (size_t)old : 0) + (size_t)size >
	    MON_CDI_BYTES);
}

/* Copy the sealed memfd src of size len to a new file, renamed to name. */
static int
put(struct mon *mon, const char *name, int src, char *err, size_t errsize)
{
	char		 tmp[NAME_MAX_CDI_SPEC + 16], buf[16384];
	struct stat	 st;
	off_t		 off = 0, old;
	ssize_t		 n;
	int		 fd, seals, e;

	if (fstat(src, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)MON_CDI_MAX ||
	    (seals = fcntl(src, F_GET_SEALS)) == -1 ||
	    (seals & SEALS_NEEDED) != SEALS_NEEDED) {
		snprintf(err, errsize, "CDI spec %s: the content is not a "
		    "sealed memfd of at most %u bytes", name, MON_CDI_MAX);
		return (EINVAL);
	}
	if (cdi_put_open(mon, err, errsize) != 0)
		return (EIO);
	if (!mon->cdi_counted)
		count(mon);
	old = size_of(mon, name);
	/* Over the limit by this monitor's count: counted again first, as
	 * another instance sharing the directory (a rolling update) may
	 * have removed specs this one counted. */
	if (over(mon, old, st.st_size))
		count(mon);
	if (over(mon, old, st.st_size)) {
		snprintf(err, errsize, "CDI spec %s: over the monitor's limit "
		    "of %u specs or %u bytes", name, MON_CDI_FILES,
		    MON_CDI_BYTES);
		return (ENOSPC);
	}
	if ((fd = fd_tmp_create(mon->cdi_fd, name, tmp, sizeof(tmp))) == -1) {
		e = errno;
		snprintf(err, errsize, "CDI spec %s: create a temporary file: "
		    "%s", name, strerror(e));
		return (e);
	}
	while (off < st.st_size && (n = pread(src, buf, sizeof(buf),
	    off)) > 0) {
		if (fd_write_all(fd, buf, (size_t)n) == -1)
			break;
		off += n;
	}
	e = off == st.st_size ? 0 : errno ? errno : EIO;
	if (e == 0 && (fchmod(fd, 0644) == -1 || fsync(fd) == -1))
		e = errno;
	close(fd);
	if (e == 0 && renameat(mon->cdi_fd, tmp, mon->cdi_fd, name) == -1)
		e = errno;
	if (e != 0) {
		(void)unlinkat(mon->cdi_fd, tmp, 0);
		snprintf(err, errsize, "CDI spec %s: write: %s", name,
		    strerror(e));
		return (e);
	}
	mon->cdi_files += old == -1;
	mon->cdi_bytes += (size_t)st.st_size - (old > 0 ? (size_t)old : 0);
	return (0);
}

static int
name_ok(const struct mon *mon, const struct mon_msg *m, char *err,
    size_t errsize)
{
	if (name_is_cdi_spec(mon->cfg->driver_name, m->text,
	    strlen(m->text)))
		return (1);
	snprintf(err, errsize, "CDI spec name \"%.64s\": not %s", m->text,
	    NAME_R_CDI_SPEC);
	return (0);
}

/* Answer what the broker asks on its files channel (each at once). */
void
cdi_put_serve(struct mon *mon)
{
	struct mon_msg	 m, res;
	char		 err[KP_ERROR_SIZE];
	int		 fds[MON_MAX_FDS], r, dfd, budget = 16;
	size_t		 n, i;

	while (mon->files != -1 && budget-- > 0) {
		if ((r = mon_recv(mon->files, &m, fds, &n, err,
		    sizeof(err))) == 0)
			return;
		if (r < 0 || (m.type != MON_PUT && m.type != MON_REMOVE &&
		    m.type != MON_REOPEN) || (m.type == MON_PUT && n != 1)) {
			if (r > 0)
				for (i = 0; i < n; i++)
					close(fds[i]);
			/* A broken rule ends the plugin, as on the
			 * control channel; an end is the broker's. */
			if (r != KP_EPIPE && r != KP_EIO)
				mon_violation(mon, r < 0 ? err : "a frame of "
				    "another type, or a PUT without its fd, on "
				    "the files channel");
			close(mon->files);	/* no more file requests */
			mon->files = -1;
			return;
		}
		mon_init(&res, MON_RESULT);
		err[0] = '\0';
		dfd = -1;
		if (m.type == MON_REOPEN) {
			if (cdi_put_open(mon, err, sizeof(err)) != 0)
				res.arg = EIO;
			else if ((dfd = fcntl(mon->cdi_fd, F_DUPFD_CLOEXEC,
			    0)) == -1)
				res.arg = errno;
		} else if (!name_ok(mon, &m, err, sizeof(err)))
			res.arg = EINVAL;
		else if (m.type == MON_PUT)
			res.arg = put(mon, m.text, fds[0], err, sizeof(err));
		else if (cdi_put_open(mon, err, sizeof(err)) != 0)
			res.arg = EIO;
		else {
			off_t	 old = size_of(mon, m.text);

			if (unlinkat(mon->cdi_fd, m.text, 0) == -1) {
				res.arg = errno;
				snprintf(err, sizeof(err), "CDI spec %s: remove: "
				    "%s", m.text, strerror(errno));
			} else if (mon->cdi_counted && old >= 0 &&
			    (mon->cdi_files == 0 || mon->cdi_bytes <
			    (size_t)old))
				/* Another instance's spec (a rolling update
				 * shares the directory): count again. */
				mon->cdi_counted = 0;
			else if (mon->cdi_counted && old >= 0) {
				mon->cdi_files--;
				mon->cdi_bytes -= (size_t)old;
			}
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
		snprintf(res.text, sizeof(res.text), "%s", err);
		if (mon_send(mon->files, &res, &dfd, dfd != -1) != 0)
			log_warnx("monitor: a file result to the broker was "
			    "lost");
		if (dfd != -1)
			close(dfd);
	}
}
