/*
 * lockfile.c - serialize.lock, the file that serializes prepare and
 * unprepare hooks across the instances of one driver during a rolling
 * update (upstream Serialize with RollingUpdate). The monitor opens it
 * once at start and hands the fd to each nodeserver it forks, so the
 * nodeserver never names a path (its Landlock rules need not allow the
 * plugin data directory) and cannot pick another file.
 *
 * The fd is O_RDONLY on purpose: the nodeserver only locks it (flock and
 * an OFD read lock, nodeserver/flock.c) and can neither write nor
 * truncate the file; it is root's (created 0644, as the Go helper's
 * 0666 under the usual umask), so fchmod and fchown fail for the
 * nodeserver's uid too. O_NOFOLLOW: a symlink planted at the name is
 * refused, not followed.
 *
 * Runs in: the monitor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "monitor/monitor.h"

/* A fresh read-only open file description of the lock file, or -1. */
static int
lock_fd_open(const char *path, char *err, size_t errsize, int *code)
{
	struct stat	 st;
	int		 fd;

	/*
	 * O_NONBLOCK: a FIFO (or a device) planted at the name would
	 * otherwise block this single-threaded monitor in open() for
	 * good; it is refused below as not a regular file. Locks ignore
	 * the flag; it is cleared anyway once the file is known regular.
	 */
	fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK, 0644);
	if (fd == -1) {
		snprintf(err, errsize, "kp_rolling_update: lock file %s: %s",
		    path, errno == ELOOP ? "is a symbolic link" :
		    strerror(errno));
		*code = errno == EACCES || errno == EPERM ? KP_EACCES : KP_EIO;
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "kp_rolling_update: lock file %s is "
		    "not a regular file", path);
		close(fd);
		*code = KP_EEXIST;
		return (-1);
	}
	(void)fcntl(fd, F_SETFL, 0);
	return (fd);
}

/* At start: create and check the file; nothing is kept open. */
int
lock_open(struct mon *mon, char *err, size_t errsize)
{
	int	 fd, code = 0;

	mon->lock_fd = -1;
	if (mon->cfg->lock_path[0] == '\0')
		return (0);
	if ((fd = lock_fd_open(mon->cfg->lock_path, err, errsize, &code)) ==
	    -1)
		return (code);
	close(fd);
	log_info(2, "hooks serialized across instances with %s",
	    mon->cfg->lock_path);
	return (0);
}

/* Before a nodeserver's fork: its own fd in mon->lock_fd (the fork
 * passes it, lock_close() drops the monitor's copy after). */
int
lock_child_open(struct mon *mon)
{
	char	 err[KP_ERROR_SIZE];
	int	 code = 0;

	mon->lock_fd = -1;
	if (mon->cfg->lock_path[0] == '\0')
		return (0);
	if ((mon->lock_fd = lock_fd_open(mon->cfg->lock_path, err,
	    sizeof(err), &code)) == -1) {
		log_errorx("%s", err);
		return (code);
	}
	return (0);
}

void
lock_close(struct mon *mon)
{
	if (mon->lock_fd != -1)
		close(mon->lock_fd);
	mon->lock_fd = -1;
}
