/*
 * fdio.c - write a buffer whole: write(2) may stop short (a signal, a
 * full disk found part way), and a journal or spec file cut short is
 * worse than a failed write.
 *
 * Runs in: every role that writes files (the nodeserver's journal, the
 * broker's metadata files, the monitor's CDI specs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
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

/*
 * ".<name>.tmp-XXXXXX" in dfd, created O_EXCL, mode 0644 (fchmod it: the
 * umask applies); the fd (tmp holds its name) or -1 and errno.
 */
int
fd_tmp_create(int dfd, const char *name, char *tmp, size_t size)
{
	static const char	 al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char		 rnd[6];
	char			 sfx[7];
	int			 fd, i, k;

	for (k = 0; k < 8; k++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return (-1);
		for (i = 0; i < 6; i++)
			sfx[i] = al[rnd[i] % (sizeof(al) - 1)];
		sfx[6] = '\0';
		snprintf(tmp, size, ".%s.tmp-%s", name, sfx);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
		if (fd != -1 || errno != EEXIST)
			return (fd);
	}
	return (-1);
}

/*
 * A second fd of directory dfd, at its start, for fdopendir(): not an
 * open of ".", which Landlock checks against the directory's place in
 * the tree (the broker's CDI directory made again by the monitor is
 * beneath no rule of its), while reading an fd it holds is not. The two
 * share the offset; -1 and errno on failure.
 */
int
fd_dir_dup(int dfd)
{
	int	 fd;

	if ((fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0)) == -1)
		return (-1);
	if (lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}
