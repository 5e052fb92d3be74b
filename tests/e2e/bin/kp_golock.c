/*
 * kp_golock - holds serialize.lock the way one Go helper does, so a test
 * can check that a C instance's hook waits for it:
 *   kp_golock ofd <path> [log]    etcd fileutil.LockFile on Linux (the
 *                                 released Go helpers, v0.33-v0.37): open
 *                                 O_RDWR|O_CREAT 0666, F_OFD_SETLKW with a
 *                                 write lock on the whole file
 *   kp_golock flock <path> [log]  a newer upstream copy (lock_unix.go):
 *                                 flock(LOCK_EX)
 * Prints "locked" once it holds the lock, then waits for a line on stdin
 * (or its end); appends "golock-release <pid>" to log (if given, O_APPEND,
 * the same file kp_testdriver --counter-file writes) just before it
 * releases (by closing the fd, as Go's Unlock does), prints "released"
 * and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void
logline(const char *log, const char *what)
{
	char	 line[64];
	int	 fd, n;

	if (log == NULL)
		return;
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644)) == -1)
		return;
	n = snprintf(line, sizeof(line), "%s %d\n", what, (int)getpid());
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

int
main(int argc, char **argv)
{
	struct flock	 fl;
	char		 buf[64];
	int		 fd, r;

	if (argc < 3 || (strcmp(argv[1], "ofd") != 0 &&
	    strcmp(argv[1], "flock") != 0)) {
		fprintf(stderr, "usage: kp_golock ofd|flock path [log]\n");
		return (2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((fd = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0666)) == -1) {
		fprintf(stderr, "kp_golock: open %s: %s\n", argv[2],
		    strerror(errno));
		return (1);
	}
	if (strcmp(argv[1], "ofd") == 0) {
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		do {
			r = fcntl(fd, F_OFD_SETLKW, &fl);
		} while (r == -1 && errno == EINTR);
	} else {
		do {
			r = flock(fd, LOCK_EX);
		} while (r == -1 && errno == EINTR);
	}
	if (r == -1) {
		fprintf(stderr, "kp_golock: lock: %s\n", strerror(errno));
		return (1);
	}
	logline(argc > 3 ? argv[3] : NULL, "golock-hold");
	printf("locked\n");
	(void)!fgets(buf, sizeof(buf), stdin);
	logline(argc > 3 ? argv[3] : NULL, "golock-release");
	close(fd);
	printf("released\n");
	return (0);
}
