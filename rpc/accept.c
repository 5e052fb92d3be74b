/*
 * accept.c - the accept4() loop on the inherited listening socket. gRPC has
 * no way to serve a socket it did not create (and its own listener unlinks
 * the path, DESIGN 8), so we accept, check the peer's uid with SO_PEERCRED
 * before a byte is read, and hand the connection to the core.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "rpc/rpc_int.h"

#define PFD_LISTEN		0
#define PFD_STOP		1
#define PFD_MAX			2
#define ACCEPT_POLL_MS		100	/* how often *quit is looked at */
#define ACCEPT_BURST		16	/* connections per wake-up */
#define ACCEPT_BACKOFF_MS	100	/* out of fds: let calls finish */

static int
peer_allowed(struct rpc_server *srv, int fd)
{
	struct ucred	 cr;
	socklen_t	 len = sizeof(cr);
	size_t		 i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1) {
		log_warn("%s: SO_PEERCRED", srv->name);
		return (0);
	}
	for (i = 0; i < srv->n_uids; i++)
		if (srv->uids[i] == cr.uid)
			return (1);
	log_warnx("%s: connection from uid %u (pid %d) refused: uid not"
	    " allowed", srv->name, (unsigned int)cr.uid, (int)cr.pid);
	return (0);
}

/* Transient accept4() failures: the listener itself is still fine. */
static int
accept_transient(int error)
{
	switch (error) {
	case EAGAIN:
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case EPERM:
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		return (1);
	default:
		return (0);
	}
}

/* Accept what is queued. Returns -1 if the listener is broken. */
static int
accept_some(struct rpc_server *srv)
{
	int	 fd, i;

	for (i = 0; i < ACCEPT_BURST; i++) {
		fd = accept4(srv->listen_fd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return (0);
			if (!accept_transient(errno)) {
				log_warn("%s: accept4", srv->name);
				return (-1);
			}
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				log_warn("%s: accept4", srv->name);
				(void)poll(NULL, 0, ACCEPT_BACKOFF_MS);
				return (0);
			}
			continue;
		}
		if (!peer_allowed(srv, fd)) {
			close(fd);
			continue;
		}
		rpc_core_add_fd(srv, fd);
	}
	return (0);
}

/*
 * Serve until *quit is set or stop_fd is readable (or hung up). Returns 0,
 * or KP_EIO if the listening socket failed.
 */
int
rpc_accept_loop(struct rpc_server *srv, volatile sig_atomic_t *quit,
    int stop_fd)
{
	struct pollfd	 pfd[PFD_MAX];
	int		 n;

	for (;;) {
		if (quit != NULL && *quit)
			return (0);
		pfd[PFD_LISTEN].fd = srv->listen_fd;
		pfd[PFD_LISTEN].events = POLLIN;
		pfd[PFD_STOP].fd = stop_fd;	/* -1: ignored by poll */
		pfd[PFD_STOP].events = POLLIN;
		pfd[PFD_LISTEN].revents = pfd[PFD_STOP].revents = 0;
		if ((n = poll(pfd, PFD_MAX, ACCEPT_POLL_MS)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("%s: poll", srv->name);
			return (KP_EIO);
		}
		if (pfd[PFD_STOP].revents != 0)
			return (0);
		if (pfd[PFD_LISTEN].revents & (POLLERR | POLLNVAL)) {
			log_warnx("%s: listening socket failed", srv->name);
			return (KP_EIO);
		}
		if ((pfd[PFD_LISTEN].revents & POLLIN) &&
		    accept_some(srv) == -1)
			return (KP_EIO);
	}
}
