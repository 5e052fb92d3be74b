/*
 * flock.c - the cross-instance lock around the driver's hooks during a
 * rolling update: serialize.lock, whose fd the supervisor opened
 * (supervisor/lockfile.c, read-only).
 *
 * The Go helpers lock that file in one of two ways, and on Linux the two
 * kinds do not exclude each other:
 *  - released helpers (v0.33-v0.37, etcd fileutil.LockFile) take an OFD
 *    write lock on the whole file, F_OFD_SETLKW, or flock(LOCK_EX) when
 *    OFD locks are not available;
 *  - a newer upstream copy (kubeletplugin/lock_unix.go) takes plain
 *    flock(LOCK_EX).
 * So this takes both: flock(LOCK_EX) first, then an OFD read lock on the
 * whole file (F_OFD_SETLKW, F_RDLCK: a read lock conflicts with the Go
 * side's write lock, needs no write access to the file, and two C
 * instances already exclude each other through flock). Released in the
 * opposite order.
 *
 * Why the order cannot deadlock: every Go peer holds one lock and waits
 * for nothing else while holding it; a C instance waits for the OFD lock
 * only while holding flock, and nothing ever waits for flock while holding
 * an OFD lock (C takes flock first; an OFD-only Go peer never takes
 * flock). A wait-for cycle would need such a holder, so there is none.
 *
 * Runs in: the nodeserver, on a call's worker thread, with dra.c's mutex
 * held (so one thread at a time blocks here).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "nodeserver/dra.h"

static int
ofd(int fd, short type, int cmd)
{
	struct flock	 fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;	/* l_start 0, l_len 0: the whole file */
	return (fcntl(fd, cmd, &fl));
}

int
dra_flock_take(int fd, char *err, size_t errsize)
{
	while (flock(fd, LOCK_EX) == -1) {
		if (errno == EINTR)
			continue;
		snprintf(err, errsize, "flock: %s", strerror(errno));
		return (-1);
	}
	while (ofd(fd, F_RDLCK, F_OFD_SETLKW) == -1) {
		if (errno == EINTR)
			continue;
		snprintf(err, errsize, "F_OFD_SETLKW: %s", strerror(errno));
		(void)flock(fd, LOCK_UN);
		return (-1);
	}
	return (0);
}

void
dra_flock_release(int fd)
{
	(void)ofd(fd, F_UNLCK, F_OFD_SETLK);
	(void)flock(fd, LOCK_UN);
}
