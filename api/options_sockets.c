/*
 * options_sockets.c - the setters of the two gRPC servers' sockets: the
 * paths kubelet connects to, listeners the driver made itself, the mode of
 * the socket files and the peers allowed to connect. The rules of every
 * setter are options.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api.h"

/*
 * The rules every socket path follows: set, absolute, naming a file, short
 * enough for sun_path. An empty string is refused: in sun_path a leading
 * NUL would mean Linux's abstract namespace, not a file.
 */
static int
check_socket_path(struct kp_options *opts, const char *what,
    const char *path)
{
	char	q[OPT_QUOTE_SIZE];
	size_t	len;

	if (path == NULL || path[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the socket path must "
		    "not be empty", what));
	opt_quote(path, q, sizeof(q));
	if (path[0] != '/')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must be an absolute "
		    "path", what, q));
	len = strlen(path);
	if (len > KP_SUN_PATH_MAX)
		return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s is %zu bytes, "
		    "at most %d (sun_path)", what, q, len, KP_SUN_PATH_MAX));
	if (path[len - 1] == '/')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must name a file, "
		    "not end in '/'", what, q));
	return (0);
}

/* Replace *field with a copy of path when it follows the rules. */
static int
set_socket_path(struct kp_options *opts, const char *what, char **field,
    const char *path)
{
	int	rc;

	if ((rc = check_socket_path(opts, what, path)) != 0)
		return (rc);
	return (opt_set_string(opts, what, field, path));
}

int
kp_kubelet_plugin_socket_path(struct kp_options *opts, const char *path)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_socket_path(opts, OPT_KUBELET_PATH,
	    &opts->kubelet_plugin_socket_path, path));
}

int
kp_plugin_socket_path(struct kp_options *opts, const char *path)
{
	int	rc;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((rc = set_socket_path(opts, OPT_PLUGIN_PATH,
	    &opts->plugin_socket_path, path)) != 0)
		return (rc);
	opts->plugin_path_derived = 0;	/* the caller's now */
	return (0);
}

int
kp_registrar_socket_path(struct kp_options *opts, const char *path)
{
	char	q[OPT_QUOTE_SIZE];
	int	rc;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((rc = check_socket_path(opts, OPT_REG_PATH, path)) != 0)
		return (rc);
	if (opts->rolling_uid[0] != '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: rolling updates and "
		    "explicit registration socket filename are mutually "
		    "exclusive (kp_rolling_update is set)", OPT_REG_PATH));
	if (strrchr(path, '/')[1] == '.')
		return (opt_fail(opts, KP_EINVAL, "%s: %s: the base name must "
		    "not start with '.' (kubelet ignores such files)",
		    OPT_REG_PATH, opt_quote(path, q, sizeof(q))));
	if ((rc = opt_set_string(opts, OPT_REG_PATH,
	    &opts->registrar_socket_path, path)) != 0)
		return (rc);
	opts->registrar_path_derived = 0;	/* the caller's now */
	return (0);
}

/*
 * Take a copy of a listening AF_UNIX stream socket now, so that the
 * caller's fd is borrowed only for the call. -1 unsets.
 */
static int
set_listener(struct kp_options *opts, const char *what, int *field, int fd)
{
	static const char	*rule = "must be a listening AF_UNIX "
	    "SOCK_STREAM socket";
	int			 val, nfd;
	socklen_t		 len;

	if (fd == -1) {
		if (*field >= 0)
			close(*field);
		*field = -1;
		return (0);
	}
	if (fd < 0)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s or -1", what,
		    fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &val, &len) == -1)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: %s", what, fd,
		    rule, errno == ENOTSOCK ? "not a socket" :
		    strerror(errno)));
	if (val != SOCK_STREAM)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not "
		    "SOCK_STREAM", what, fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &val, &len) == -1 ||
	    val != AF_UNIX)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not AF_UNIX",
		    what, fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) == -1 ||
	    val == 0)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not listening "
		    "(call listen() first)", what, fd, rule));
	if ((nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return (opt_fail(opts, opt_errno_code(errno), "%s: duplicating "
		    "fd %d: %s", what, fd, strerror(errno)));
	if (*field >= 0)
		close(*field);
	*field = nfd;
	return (0);
}

int
kp_plugin_listener(struct kp_options *opts, int fd)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_listener(opts, OPT_PLUGIN_LSN, &opts->plugin_listener, fd));
}

int
kp_registrar_listener(struct kp_options *opts, int fd)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_listener(opts, OPT_REG_LSN, &opts->registrar_listener, fd));
}

int
kp_socket_mode(struct kp_options *opts, unsigned int mode)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((mode & ~0777u) != 0)
		return (opt_fail(opts, KP_EINVAL, "%s: mode %#o must have only "
		    "permission bits (mode & ~0777 == 0)", OPT_MODE, mode));
	if ((mode & 0600) != 0600)
		return (opt_fail(opts, KP_EINVAL, "%s: mode %#o must let the "
		    "owner read and write (0600)", OPT_MODE, mode));
	opts->socket_mode = mode;
	return (0);
}

int
kp_allowed_peer_uid(struct kp_options *opts, uid_t uid)
{
	size_t	i;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (uid == (uid_t)-1)
		return (opt_fail(opts, KP_EINVAL, "%s: uid (uid_t)-1 is not a "
		    "user", OPT_PEER));
	if (!opts->peer_uids_set) {
		/* The first call replaces the default, root only. */
		opts->n_peer_uids = 0;
		opts->peer_uids_set = 1;
	}
	for (i = 0; i < opts->n_peer_uids; i++)
		if (opts->peer_uids[i] == uid)
			return (0);
	if (opts->n_peer_uids >= KP_MAX_PEER_UIDS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d uids",
		    OPT_PEER, KP_MAX_PEER_UIDS));
	opts->peer_uids[opts->n_peer_uids++] = uid;
	return (0);
}
