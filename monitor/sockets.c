/*
 * sockets.c - the listening sockets: created by kp_start() (the DRA
 * socket) and by the monitor (the registration socket, once the
 * nodeserver serves), kept open for the plugin's lifetime so restarted
 * children serve the same socket, removed at stop only if the file is
 * still the one we bound (another instance's socket is never touched).
 *
 * Every file operation goes through the socket's directory, opened once
 * one component at a time without following a symbolic link, never by
 * the full path: whoever can write in the kubelet plugins directory
 * could otherwise rename plugins/<driver> away and put a symlink to any
 * directory in its place, and this root process would remove a file
 * there and bind a socket in it (repair.c checks that the path still
 * leads to this directory before it repairs anything).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "monitor/monitor.h"

/*
 * Open path's directory one component at a time (from "/", or from the
 * working directory for a relative path), never following a symbolic
 * link; *base gets the last component. Returns the O_PATH fd, or a
 * negative KP_E* with err set.
 */
static int
dir_open(const char *path, const char **base, char *err, size_t errsize)
{
	char		 part[KP_SUN_PATH_MAX + 1];
	const char	*p = path, *slash;
	int		 fd, next, e;

	fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC);
	if (fd == -1) {
		snprintf(err, errsize, "listen on %s: %s", path,
		    strerror(errno));
		return (KP_EIO);
	}
	while ((slash = strchr(p, '/')) != NULL) {
		if (slash == p) {
			p++;
			continue;
		}
		snprintf(part, sizeof(part), "%.*s", (int)(slash - p), p);
		next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		e = errno;
		close(fd);
		if (next == -1) {
			/* O_NOFOLLOW with O_DIRECTORY: a symlink is
			 * ENOTDIR. */
			if (e == ENOTDIR || e == ELOOP) {
				snprintf(err, errsize, "listen on %s: %.*s is "
				    "a symbolic link or not a directory (the "
				    "socket's directories must be real "
				    "directories)", path, (int)(slash - path),
				    path);
				return (KP_EINVAL);
			}
			snprintf(err, errsize, "listen on %s: %s", path,
			    strerror(e));
			errno = e;
			return (e == EACCES ? KP_EACCES : KP_EIO);
		}
		fd = next;
		p = slash + 1;
	}
	*base = p;
	return (fd);
}

/*
 * Run bind (mode != 0) or connect on fd with the base name in dirfd: the
 * working directory is dirfd meanwhile (kp_start() runs single-threaded,
 * the monitor is single-threaded). Sets errno on failure.
 */
static int
at_dir(int dirfd, const char *base, int fd, unsigned int mode, int bind_it)
{
	struct sockaddr_un	 sun;
	mode_t			 old = 0;
	int			 cwd, r, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(base) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(sun.sun_path, base, strlen(base) + 1);
	if ((cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return (-1);
	if (fchdir(dirfd) == -1) {
		saved = errno;
		close(cwd);
		errno = saved;
		return (-1);
	}
	/*
	 * The file gets its mode at bind time; a chmod afterwards leaves a
	 * window with the umask's mode. The process umask is ours (single
	 * thread).
	 */
	if (bind_it)
		old = umask(~mode & 0777);
	r = bind_it ? bind(fd, (const struct sockaddr *)&sun, sizeof(sun)) :
	    connect(fd, (const struct sockaddr *)&sun, sizeof(sun));
	saved = errno;
	if (bind_it)
		umask(old);
	if (fchdir(cwd) == -1)
		log_warn("fchdir back to the working directory");
	close(cwd);
	errno = saved;
	return (r);
}

/* Someone accepts connections at base in dirfd: the socket is not
 * stale. */
static int
live_at(int dirfd, const char *base)
{
	int	 fd, live;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return (0);
	live = at_dir(dirfd, base, fd, 0, 0) == 0 || errno == EAGAIN;
	close(fd);
	return (live);
}

int
sock_live(const struct sup_socket *s)
{
	return (s->dir_open && live_at(s->dirfd, s->base));
}

/*
 * Bind fd at a temporary name in dirfd and rename it over base: the path
 * never disappears (kubelet's plugin watcher sees one Create of base, no
 * Remove; a client dialling meanwhile reaches the old socket or the new
 * one). The temporary name is a dot file, which kubelet ignores, short
 * enough for sun_path whatever base is. Sets errno on failure; nothing is
 * left at the temporary name.
 */
static int
bind_over(int dirfd, const char *base, int fd, unsigned int mode)
{
	static unsigned int	 seq;
	struct timespec		 ts;
	char			 tmp[64];
	int			 i, saved;

	for (i = 0; i < 8; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, sizeof(tmp), ".kp-%d-%u-%lx.tmp", (int)getpid(),
		    seq++, (unsigned long)ts.tv_nsec);
		if (at_dir(dirfd, tmp, fd, mode, 1) == 0)
			break;
		if (errno != EADDRINUSE)
			return (-1);
	}
	if (i == 8)
		return (-1);
	if (listen(fd, SOCK_BACKLOG) == -1 ||
	    renameat(dirfd, tmp, dirfd, base) == -1) {
		saved = errno;
		(void)unlinkat(dirfd, tmp, 0);
		errno = saved;
		return (-1);
	}
	return (0);
}

/*
 * Create, bind and listen on base in dirfd (taken over: closed on
 * failure); a stale socket there is replaced, any other file is an error.
 * path is for messages and later checks.
 */
static int
listen_at(struct sup_socket *s, int dirfd, const char *path,
    const char *base, unsigned int mode, char *err, size_t errsize)
{
	struct stat	 st, dst;
	int		 fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (fstat(dirfd, &dst) == -1) {
		snprintf(err, errsize, "listen on %s: %s", path,
		    strerror(errno));
		close(dirfd);
		return (KP_EIO);
	}
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errsize, "listen on %s: %s", path,
			    strerror(EADDRINUSE));
			close(dirfd);
			return (KP_EEXIST);
		}
		if (live_at(dirfd, base))
			log_warnx("%s: replacing a live socket: another "
			    "instance of this plugin is serving there", path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		close(dirfd);
		return (KP_EIO);
	}
	if (bind_over(dirfd, base, fd, mode) == -1 ||
	    fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		int e = errno;

		snprintf(err, errsize, "listen on %s: %s", path, strerror(e));
		close(fd);
		close(dirfd);
		return (e == EACCES || e == EPERM ? KP_EACCES :
		    e == EADDRINUSE || e == EEXIST || e == EISDIR ?
		    KP_EEXIST : KP_EIO);
	}
	s->fd = fd;
	s->path = path;
	s->created = 1;
	s->bound = 1;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->dir_open = 1;
	s->dirfd = dirfd;
	s->base = base;
	s->dir_dev = dst.st_dev;
	s->dir_ino = dst.st_ino;
	return (0);
}

/* Create, bind and listen on path; a stale socket there is removed. */
int
sock_listen(struct sup_socket *s, const char *path, unsigned int mode,
    char *err, size_t errsize)
{
	const char	*base;
	int		 dirfd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (strlen(path) > KP_SUN_PATH_MAX) {
		snprintf(err, errsize, "%s: longer than %d bytes", path,
		    KP_SUN_PATH_MAX);
		return (KP_ENAMETOOLONG);
	}
	if ((dirfd = dir_open(path, &base, err, errsize)) < 0)
		return (dirfd);
	return (listen_at(s, dirfd, path, base, mode, err, errsize));
}

/* Bind old's path again in old's directory (never the path's current
 * one: the caller checked they are the same; a swap since then binds in
 * our own, renamed directory, not in a foreign one). */
int
sock_listen_again(struct sup_socket *s, const struct sup_socket *old,
    unsigned int mode, char *err, size_t errsize)
{
	int	 dirfd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (!old->dir_open)
		return (sock_listen(s, old->path, mode, err, errsize));
	if ((dirfd = fcntl(old->dirfd, F_DUPFD_CLOEXEC, 3)) == -1) {
		snprintf(err, errsize, "listen on %s: %s", old->path,
		    strerror(errno));
		return (KP_EIO);
	}
	return (listen_at(s, dirfd, old->path, old->base, mode, err,
	    errsize));
}

/*
 * Does s's path still lead, without following a link, to the directory
 * s was bound in? 0: yes; KP_ENOENT: a directory on the way is gone;
 * KP_EINVAL: replaced (a symlink, another directory); others: cannot
 * tell. err says which.
 */
int
sock_dir_same(const struct sup_socket *s, char *err, size_t errsize)
{
	struct stat	 st;
	const char	*base;
	int		 fd;

	if (!s->dir_open)
		return (0);
	if ((fd = dir_open(s->path, &base, err, errsize)) < 0) {
		if (fd == KP_EIO && errno == ENOENT)
			return (KP_ENOENT);
		return (fd);
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errsize, "listen on %s: %s", s->path,
		    strerror(errno));
		close(fd);
		return (KP_EIO);
	}
	close(fd);
	if (st.st_dev != s->dir_dev || st.st_ino != s->dir_ino) {
		snprintf(err, errsize, "its directory is no longer the one "
		    "the socket was bound in (moved away, another directory "
		    "in its place)");
		return (KP_EINVAL);
	}
	return (0);
}

/* Adopt a listener given by the driver; path (may be NULL) is removed at
 * stop as upstream does, if it is a socket. */
int
sock_from_listener(struct sup_socket *s, int fd, const char *path)
{
	struct stat	 st, dst;
	char		 err[KP_ERROR_SIZE];
	const char	*base;
	int		 dirfd;

	memset(s, 0, sizeof(*s));
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (s->fd == -1)
		return (KP_EIO);
	s->path = path;
	/* A path whose directory cannot be opened safely is not removed. */
	if (path == NULL || strlen(path) > KP_SUN_PATH_MAX ||
	    (dirfd = dir_open(path, &base, err, sizeof(err))) < 0)
		return (0);
	if (fstat(dirfd, &dst) == 0 &&
	    fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISSOCK(st.st_mode)) {
		s->created = 1;
		s->dev = st.st_dev;
		s->ino = st.st_ino;
		s->dir_open = 1;
		s->dirfd = dirfd;
		s->base = base;
		s->dir_dev = dst.st_dev;
		s->dir_ino = dst.st_ino;
	} else
		close(dirfd);
	return (0);
}

/* Close the descriptors; the file stays (its owner is another process
 * now). */
void
sock_close(struct sup_socket *s)
{
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	if (s->dir_open)
		close(s->dirfd);
	s->dir_open = 0;
}

/* Close the listener and remove its file if it is still ours: looked at
 * and removed in the directory we bound it in, whatever the path leads
 * to now. */
void
sock_remove(struct sup_socket *s)
{
	struct stat	 st;

	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	if (s->path == NULL || !s->created || !s->dir_open) {
		sock_close(s);
		return;
	}
	if (fstatat(s->dirfd, s->base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		sock_close(s);
		return;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_dev != s->dev ||
	    st.st_ino != s->ino)
		log_info(2, "not removing %s: no longer our socket", s->path);
	else if (unlinkat(s->dirfd, s->base, 0) == -1)
		log_warn("remove socket %s", s->path);
	s->created = 0;
	sock_close(s);
}

/*
 * Does the listener fd refuse connections for good? A shutdown(SHUT_RD or
 * SHUT_RDWR) on a listening socket, by any holder of the description,
 * makes every later connect() fail (unix: ECONNREFUSED; TCP: the port is
 * closed) and cannot be undone on that socket; poll reports it as
 * POLLRDHUP (unix) or POLLHUP (TCP). Pending connections (POLLIN) are not
 * asked for.
 */
int
sock_refuses(int fd)
{
	struct pollfd	 p = { .fd = fd, .events = POLLRDHUP };

	if (fd == -1 || poll(&p, 1, 0) != 1)
		return (0);
	return ((p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0);
}

/*
 * Before each child generation: the backlog as the monitor set it. A
 * child's listen(fd, 0) (the nodeserver's init hook runs unfiltered)
 * would otherwise leave one queued connection for every later child.
 * listen() on a listening socket only changes its backlog.
 */
void
sock_relisten(int fd)
{
	if (fd != -1 && listen(fd, SOCK_BACKLOG) == -1)
		log_warn("listen again (the backlog)");
}

/*
 * A new TCP listener at addr in place of *fd (closed on success): the
 * observer's port after its socket was shut down. SO_REUSEADDR lets it
 * bind while the old socket (closed state, still holding the port) is
 * open in a child that is being killed.
 */
int
sock_tcp_again(int *fd, const struct sockaddr_storage *addr, socklen_t len,
    char *err, size_t errsize)
{
	int	 one = 1, s;

	if ((s = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return (KP_EIO);
	}
	(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (const struct sockaddr *)addr, len) == -1 ||
	    listen(s, SOCK_BACKLOG) == -1) {
		snprintf(err, errsize, "bind and listen: %s", strerror(errno));
		close(s);
		return (KP_EIO);
	}
	if (*fd != -1)
		close(*fd);
	*fd = s;
	return (0);
}
