/*
 * fdio.c - write a buffer whole: write(2) may stop short (a signal, a
 * full disk found part way), and a journal or spec file cut short is
 * worse than a failed write.
 *
 * Runs in: every role that writes files (the nodeserver's journal, the
 * supervisor's CDI specs and metadata files).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"

/* Write len bytes of p to fd, again after EINTR; 0, or -1 and errno. */
int
fd_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t	*p = buf;
	ssize_t		 w;

	while (len > 0) {
		if ((w = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += w;
		len -= (size_t)w;
	}
	return (0);
}

/*
 * 1 if st (a directory) lets this process's euid and egid create and
 * remove entries by its mode alone: the supervisor keeps no
 * CAP_DAC_OVERRIDE (policy/monitor.c), so a directory root does not own
 * and no mode bit opens to it is closed to it, whatever access(2) said
 * in the driver's process, which still had the capability.
 */
int
fd_dir_mode_writable(const struct stat *st)
{
	mode_t	 need;

	if (st->st_uid == geteuid())
		need = S_IWUSR | S_IXUSR;
	else if (st->st_gid == getegid())
		need = S_IWGRP | S_IXGRP;
	else
		need = S_IWOTH | S_IXOTH;
	return ((st->st_mode & need) == need);
}
