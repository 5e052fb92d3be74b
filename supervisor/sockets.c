/*
 * sockets.c - the listening sockets: created by kp_start() (the DRA
 * socket) and by the supervisor (the registration socket, once the
 * nodeserver serves), kept open for the plugin's lifetime so restarted
 * children serve the same socket, removed at stop only if the file is
 * still the one we bound (another instance's socket is never touched).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

/*
 * A stale socket at path may be replaced; any other file type is an error
 * naming the path, and the file is left alone. opt names the option.
 */
int
sock_check_path(const char *opt, const char *path, char *err, size_t errsize)
{
	struct stat	 st;

	if (strlen(path) > KP_SUN_PATH_MAX) {
		snprintf(err, errsize, "%s: \"%s\" is longer than %d bytes "
		    "(sun_path)", opt, path, KP_SUN_PATH_MAX);
		return (KP_ENAMETOOLONG);
	}
	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, errsize, "%s: %s: %s", opt, path,
		    strerror(errno));
		return (errno == EACCES ? KP_EACCES : KP_EIO);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errsize, "%s: %s exists and is not a socket "
		    "(%s); refusing to replace it", opt, path,
		    S_ISDIR(st.st_mode) ? "a directory" :
		    S_ISLNK(st.st_mode) ? "a symbolic link" :
		    S_ISREG(st.st_mode) ? "a regular file" : "another type");
		return (KP_EEXIST);
	}
	return (0);
}

static int
bind_mode(int fd, const struct sockaddr_un *sun, unsigned int mode)
{
	mode_t	 old;
	int	 r, saved;

	/*
	 * The file gets its mode at bind time; a chmod afterwards leaves a
	 * window with the umask's mode. kp_start() runs single-threaded and
	 * the supervisor is single-threaded, so the process umask is ours.
	 */
	old = umask(~mode & 0777);
	r = bind(fd, (const struct sockaddr *)sun, sizeof(*sun));
	saved = errno;
	umask(old);
	errno = saved;
	return (r);
}

/* Someone accepts connections at sun: the socket is not stale. */
static int
sock_is_live(const struct sockaddr_un *sun)
{
	int	 fd, live;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return (0);
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0 ||
	    errno == EAGAIN;
	close(fd);
	return (live);
}

/* Create, bind and listen on path; a stale socket there is removed. */
int
sock_listen(struct sup_socket *s, const char *path, unsigned int mode,
    char *err, size_t errsize)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	int			 fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errsize, "%s: longer than %d bytes", path,
		    KP_SUN_PATH_MAX);
		return (KP_ENAMETOOLONG);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    sock_is_live(&sun))
		log_warnx("%s: replacing a live socket: another instance of "
		    "this plugin is serving there", path);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    unlink(path) == -1) {
		snprintf(err, errsize, "remove stale socket %s: %s", path,
		    strerror(errno));
		return (errno == EACCES || errno == EPERM ? KP_EACCES :
		    KP_EIO);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return (KP_EIO);
	}
	if (bind_mode(fd, &sun, mode) == -1 || listen(fd, 128) == -1 ||
	    fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		snprintf(err, errsize, "listen on %s: %s", path,
		    strerror(errno));
		close(fd);
		return (errno == EACCES || errno == EPERM ? KP_EACCES :
		    errno == EADDRINUSE || errno == EEXIST ? KP_EEXIST :
		    KP_EIO);
	}
	s->fd = fd;
	s->path = path;
	s->created = 1;
	s->bound = 1;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return (0);
}

/* Adopt a listener given by the driver; path (may be NULL) is removed at
 * stop as upstream does, if it is a socket. */
int
sock_from_listener(struct sup_socket *s, int fd, const char *path)
{
	struct stat	 st;

	memset(s, 0, sizeof(*s));
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (s->fd == -1)
		return (KP_EIO);
	s->path = path;
	if (path != NULL && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		s->created = 1;
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	return (0);
}

/* Close the listener and remove its file if it is still ours. */
void
sock_remove(struct sup_socket *s)
{
	struct stat	 st;

	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	if (s->path == NULL || !s->created)
		return;
	if (lstat(s->path, &st) == -1)
		return;
	if (!S_ISSOCK(st.st_mode) || st.st_dev != s->dev ||
	    st.st_ino != s->ino) {
		log_info(2, "not removing %s: no longer our socket", s->path);
		return;
	}
	if (unlink(s->path) == -1)
		log_warn("remove socket %s", s->path);
	s->created = 0;
}
