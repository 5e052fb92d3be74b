/*
 * accept.c - the accept4() loop on the inherited listening socket. gRPC has
 * no way to serve a socket it did not create (and its own listener unlinks
 * the path, DESIGN 8), so we accept, check the peer's uid with SO_PEERCRED
 * before a byte is read, and hand the connection to the core.
 *
 * Connection limits (issue 10: idle floods held 1,684 fds). Every
 * connection counts toward srv->max_conns from accept to close: first
 * pending here, then handed off to the core. One over the cap is accepted
 * and closed at once, so the backlog never fills with connections nobody
 * will serve. A pending connection is handed off only once the whole
 * HTTP/2 client preface has arrived (peeked, so the core still reads it);
 * one that sends anything else is closed at once, one silent past
 * srv->handshake_ms is closed then. kubelet (grpc-go) writes the preface
 * and its SETTINGS as soon as it connected, so this costs it nothing.
 * After the hand-off the core's keepalive (grpc_core.c) reaps peers that
 * stop answering; idle ones that answer stay open as long as they like.
 *
 * The trade-off: while max_conns connections sit pending, a new one is
 * refused, kubelet's too, until they time out (handshake_ms at most);
 * kubelet retries. Established connections are not affected.
 *
 * Silent after the preface (issue 28): connections handed off that never
 * carried a call would hold their slots until the keepalive gave up on
 * them (about 80 s), locking kubelet out meanwhile. So at the cap a new
 * connection takes the slot of the oldest one that never carried a call
 * and is older than handshake_ms: that one is shut down (the core sees
 * EOF and closes it). A connection that carried a call is never given
 * up; nor is an idle one while no other connection needs its slot (a
 * kubelet that dialed at registration keeps its connection). The lock-out
 * is then handshake_ms at most, as for connections that send nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "rpc/rpc_int.h"

#define PFD_LISTEN		0
#define PFD_STOP		1
#define PFD_CONN		2	/* pending connections from here */
#define ACCEPT_POLL_MS		100	/* how often *quit is looked at */
#define ACCEPT_BURST		16	/* connections per wake-up */
#define ACCEPT_BACKOFF_MS	100	/* out of fds: let calls finish */
#define PARTIAL_POLL_MS		20	/* re-peek a preface sent in parts */
#define SWEEP_MS		100	/* look for connections the core closed */
#define RATELIM_MS		1000	/* one line per kind and second */

/* RFC 9113 3.4: what every HTTP/2 client sends first. */
static const char	 preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN		(sizeof(preface) - 1)

enum peek {
	PEEK_WAIT,		/* nothing yet */
	PEEK_PARTIAL,		/* a correct beginning */
	PEEK_READY,		/* the whole preface */
	PEEK_BAD,		/* something else */
	PEEK_GONE		/* EOF or error */
};

static void	 conn_log(struct rpc_ratelim *, enum kp_log_level, int,
		    const char *, ...) KP_PRINTF(4, 5);

/*
 * Log at most once per RATELIM_MS per kind: a flood must not turn into a
 * flood of log lines. The lines not logged are counted in the next one.
 */
static void
conn_log(struct rpc_ratelim *rl, enum kp_log_level level, int verbosity,
    const char *fmt, ...)
{
	char		 text[512];
	va_list		 ap;
	int64_t		 now = rpc_now_ms();

	if (rl->last_ms != 0 && now - rl->last_ms < RATELIM_MS) {
		rl->quiet++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	rl->last_ms = now;
	if (rl->quiet > 0) {
		if (level == KP_LOG_INFO)
			log_info(verbosity, "%s (%" PRIu64 " similar not "
			    "logged)", text, rl->quiet);
		else
			log_warnx("%s (%" PRIu64 " similar not logged)", text,
			    rl->quiet);
	} else if (level == KP_LOG_INFO)
		log_info(verbosity, "%s", text);
	else
		log_warnx("%s", text);
	rl->quiet = 0;
}

static int
peer_allowed(struct rpc_server *srv, int fd)
{
	struct ucred	 cr;
	socklen_t	 len = sizeof(cr);
	char		 allowed[128], pid[32];
	size_t		 i, n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1) {
		conn_log(&srv->conn_stats.rl_uid, KP_LOG_WARNING, 0,
		    "%s: SO_PEERCRED: %s", srv->name, strerror(errno));
		return (0);
	}
	for (i = 0; i < srv->n_uids; i++)
		if (srv->uids[i] == cr.uid)
			return (1);
	srv->conn_stats.uid_refused++;
	allowed[0] = '\0';
	for (i = 0, n = 0; i < srv->n_uids && n < sizeof(allowed); i++)
		n += (size_t)snprintf(allowed + n, sizeof(allowed) - n, "%s%u",
		    i > 0 ? ", " : "", (unsigned int)srv->uids[i]);
	/* No role prefix: the log line has it. A peer outside this
	 * process's pid namespace (kubelet, seen from the sandbox) has pid
	 * 0 here. */
	if (cr.pid > 0)
		snprintf(pid, sizeof(pid), "pid %d", (int)cr.pid);
	else
		snprintf(pid, sizeof(pid), "pid not visible here");
	conn_log(&srv->conn_stats.rl_uid, KP_LOG_WARNING, 0,
	    "connection from uid %u (%s) refused: uid not allowed "
	    "(allowed: uid %s; kp_allowed_peer_uid(), kp_socket_mode())",
	    (unsigned int)cr.uid, pid, allowed);
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

/*
 * Forget handed-off connections the core has closed. The core owns their
 * fds and tells nobody when it closes one (there is no close callback),
 * so look: fstat() the fd number and compare the socket's inode with the
 * one seen at hand-off. While the connection is open its fd names its
 * socket, and no other live file has that inode: sockfs numbers each new
 * socket from a counter (get_next_ino()) and a number comes round again
 * only after 2^32 sockets. Once the core closed it, the number is free
 * (EBADF) or names another file with another inode. So a connection still
 * open is never forgotten; a closed one is counted at most until the next
 * sweep (it may close just after our fstat), which errs on the side of the
 * cap. No dup(): a duplicate would keep the socket open after the core
 * closed its own fd, and the peer would never see EOF.
 */
static void
conn_sweep(struct rpc_server *srv)
{
	struct stat	 st;
	size_t		 i;

	pthread_mutex_lock(&srv->conn_lock);
	for (i = srv->n_live; i-- > 0; ) {
		if (fstat(srv->live[i].fd, &st) == 0 &&
		    S_ISSOCK(st.st_mode) && st.st_dev == srv->live[i].dev &&
		    st.st_ino == srv->live[i].ino)
			continue;
		srv->live[i] = srv->live[--srv->n_live];
	}
	pthread_mutex_unlock(&srv->conn_lock);
	srv->swept_ms = rpc_now_ms();
}

/*
 * A call arrived on the connection the core names peer ("fd:N",
 * grpc_core.c): it is in use. From the core's threads. A number the core
 * has closed and accept4() reused by now marks the new connection: it is
 * then never given up, which errs on its side.
 */
void
rpc_conn_used(struct rpc_server *srv, const char *peer)
{
	size_t	 i;
	int	 fd;

	if (sscanf(peer, "fd:%d", &fd) != 1)
		return;
	pthread_mutex_lock(&srv->conn_lock);
	for (i = 0; i < srv->n_live; i++)
		if (srv->live[i].fd == fd)
			srv->live[i].used = 1;
	pthread_mutex_unlock(&srv->conn_lock);
}

/*
 * At the cap: give up the oldest handed-off connection that never carried
 * a call and is older than handshake_ms. It is shut down through a
 * duplicate checked to be that socket (the core may have closed the number
 * and something else got it since), never closed: the number is the
 * core's. Returns 1 when a slot was freed.
 */
static int
conn_evict(struct rpc_server *srv, int64_t now)
{
	struct rpc_conn_stats	*cs = &srv->conn_stats;
	struct rpc_conn		 c;
	struct stat		 st;
	size_t			 i, k = SIZE_MAX;
	int			 d;

	pthread_mutex_lock(&srv->conn_lock);
	for (i = 0; i < srv->n_live; i++)
		if (!srv->live[i].used &&
		    now - srv->live[i].since_ms >= srv->handshake_ms &&
		    (k == SIZE_MAX ||
		    srv->live[i].since_ms < srv->live[k].since_ms))
			k = i;
	if (k != SIZE_MAX) {
		c = srv->live[k];
		srv->live[k] = srv->live[--srv->n_live];
	}
	pthread_mutex_unlock(&srv->conn_lock);
	if (k == SIZE_MAX)
		return (0);
	if ((d = fcntl(c.fd, F_DUPFD_CLOEXEC, 0)) != -1) {
		if (fstat(d, &st) == 0 && st.st_dev == c.dev &&
		    st.st_ino == c.ino)
			(void)shutdown(d, SHUT_RDWR);
		close(d);
	}
	cs->evicted++;
	conn_log(&cs->rl_evict, KP_LOG_INFO, 2, "%s: connection closed: no "
	    "call in %lld ms, its slot taken by a new one "
	    "(kp_grpc_max_connections %d; %" PRIu64 " so far)", srv->name,
	    (long long)(now - c.since_ms), srv->max_conns, cs->evicted);
	return (1);
}

static void
pend_drop(struct rpc_server *srv, size_t i)
{
	close(srv->pend[i].fd);
	srv->pend[i] = srv->pend[--srv->n_pend];
}

/* The preface is complete: track the socket, give it to the core. */
static void
pend_handoff(struct rpc_server *srv, size_t i)
{
	struct stat	 st;
	int		 fd = srv->pend[i].fd;
	size_t		 k;

	srv->pend[i] = srv->pend[--srv->n_pend];
	if (fstat(fd, &st) == -1) {
		log_warn("%s: fstat of a new connection", srv->name);
		close(fd);
		return;
	}
	pthread_mutex_lock(&srv->conn_lock);
	/* accept4() reused the number: the old connection is closed. */
	for (k = srv->n_live; k-- > 0; )
		if (srv->live[k].fd == fd)
			srv->live[k] = srv->live[--srv->n_live];
	memset(&srv->live[srv->n_live], 0, sizeof(srv->live[srv->n_live]));
	srv->live[srv->n_live].fd = fd;
	srv->live[srv->n_live].dev = st.st_dev;
	srv->live[srv->n_live].ino = st.st_ino;
	srv->live[srv->n_live].since_ms = rpc_now_ms();
	srv->n_live++;
	pthread_mutex_unlock(&srv->conn_lock);
	log_info(5, "%s: connection handed to gRPC (%zu open)", srv->name,
	    srv->n_live + srv->n_pend);
	rpc_core_add_fd(srv, fd);
}

/* Look at what a pending connection sent so far, without reading it. */
static enum peek
preface_peek(int fd)
{
	char	 buf[PREFACE_LEN];
	ssize_t	 n;

	n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR ? PEEK_WAIT : PEEK_GONE);
	if (n == 0)
		return (PEEK_GONE);
	if (memcmp(buf, preface, (size_t)n) != 0)
		return (PEEK_BAD);
	return ((size_t)n < PREFACE_LEN ? PEEK_PARTIAL : PEEK_READY);
}

/* Decide about pending connection i: hand off, close, or keep waiting. */
static void
pend_check(struct rpc_server *srv, size_t i, int hangup)
{
	struct rpc_conn_stats	*cs = &srv->conn_stats;

	switch (preface_peek(srv->pend[i].fd)) {
	case PEEK_READY:
		if (!hangup) {
			pend_handoff(srv, i);
			return;
		}
		/* FALLTHROUGH */
	case PEEK_GONE:
		cs->peer_gone++;
		pend_drop(srv, i);
		return;
	case PEEK_BAD:
		cs->bad_preface++;
		conn_log(&cs->rl_bad, KP_LOG_INFO, 2, "%s: connection closed: "
		    "not an HTTP/2 client preface (%" PRIu64 " so far)",
		    srv->name, cs->bad_preface);
		pend_drop(srv, i);
		return;
	case PEEK_PARTIAL:
		srv->pend[i].partial = 1;
		break;
	case PEEK_WAIT:
		break;
	}
	if (hangup) {
		cs->peer_gone++;
		pend_drop(srv, i);
	}
}

/* Close pending connections past their deadline. */
static void
pend_expire(struct rpc_server *srv, int64_t now)
{
	struct rpc_conn_stats	*cs = &srv->conn_stats;
	size_t			 i;

	for (i = srv->n_pend; i-- > 0; ) {
		if (now < srv->pend[i].deadline_ms)
			continue;
		cs->timed_out++;
		conn_log(&cs->rl_timeout, KP_LOG_INFO, 2, "%s: connection "
		    "closed: no HTTP/2 client preface within %d ms "
		    "(kp_grpc_handshake_timeout; %" PRIu64 " so far)",
		    srv->name, srv->handshake_ms, cs->timed_out);
		pend_drop(srv, i);
	}
}

/* A new, allowed connection: refuse it over the cap, else wait for it. */
static void
conn_new(struct rpc_server *srv, int fd)
{
	struct rpc_conn_stats	*cs = &srv->conn_stats;
	struct rpc_conn		*c;

	/* At the cap, make sure: the core may have closed some since; else
	 * one silent since its preface may give up its slot. */
	if (srv->n_pend + srv->n_live >= (size_t)srv->max_conns)
		conn_sweep(srv);
	if (srv->n_pend + srv->n_live >= (size_t)srv->max_conns)
		(void)conn_evict(srv, rpc_now_ms());
	if (srv->n_pend + srv->n_live >= (size_t)srv->max_conns) {
		cs->over_cap++;
		conn_log(&cs->rl_cap, KP_LOG_INFO, 2, "%s: connection refused: "
		    "%zu connections open, %zu of them in their handshake "
		    "(kp_grpc_max_connections %d; %" PRIu64 " refused so far)",
		    srv->name, srv->n_pend + srv->n_live, srv->n_pend,
		    srv->max_conns, cs->over_cap);
		close(fd);
		return;
	}
	c = &srv->pend[srv->n_pend++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->deadline_ms = rpc_now_ms() + srv->handshake_ms;
	/* Usually the preface is there already. */
	pend_check(srv, srv->n_pend - 1, 0);
}

/*
 * Accept what is queued. Returns -1 if the listener is broken. Out of
 * fds, pause accepting for ACCEPT_BACKOFF_MS (the queued connection
 * keeps the listener readable: retrying at once would spin).
 */
static int
accept_some(struct rpc_server *srv, int64_t *pause_until)
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
				conn_log(&srv->conn_stats.rl_accept,
				    KP_LOG_WARNING, 0, "%s: accept4: %s "
				    "(not accepting for %d ms)", srv->name,
				    strerror(errno), ACCEPT_BACKOFF_MS);
				*pause_until = rpc_now_ms() +
				    ACCEPT_BACKOFF_MS;
				return (0);
			}
			continue;
		}
		if (!peer_allowed(srv, fd)) {
			close(fd);
			continue;
		}
		conn_new(srv, fd);
	}
	return (0);
}

/*
 * The poll set: listener, stop_fd, then pending connection i at 2 + i;
 * *timeoutp: until the next deadline, re-peek or look at *quit; -1 when
 * none is due.
 */
static int
loop_pollfds(struct rpc_server *srv, int stop_fd, int64_t now,
    int64_t pause_until, int look_at_quit, int *timeoutp)
{
	struct pollfd	*pfd = srv->pfd;
	int64_t		 left;
	size_t		 i;
	/*
	 * Nothing due (no *quit to look at, no handshake, no pause): no
	 * timeout, so an idle server does not wake ten times a second
	 * (issue 27). Connections the core closed are swept when one
	 * comes at the cap (conn_new) or on the next wake-up.
	 */
	int		 timeout = look_at_quit ? ACCEPT_POLL_MS : INT_MAX;

	/*
	 * Paused (out of fds), the listener is still watched for a
	 * shutdown: events 0 reports POLLHUP and POLLERR only.
	 */
	pfd[PFD_LISTEN].fd = srv->listen_fd;
	pfd[PFD_LISTEN].events = now < pause_until ? POLLRDHUP :
	    POLLIN | POLLRDHUP;
	pfd[PFD_STOP].fd = stop_fd;	/* -1: ignored by poll */
	pfd[PFD_STOP].events = POLLIN;
	if (now < pause_until && pause_until - now < timeout)
		timeout = (int)(pause_until - now);
	for (i = 0; i < srv->n_pend; i++) {
		pfd[PFD_CONN + i].fd = srv->pend[i].fd;
		/*
		 * A peeked half preface stays readable: poll for hang-up
		 * only and peek again soon instead of spinning.
		 */
		pfd[PFD_CONN + i].events = srv->pend[i].partial ? 0 : POLLIN;
		if (srv->pend[i].partial && timeout > PARTIAL_POLL_MS)
			timeout = PARTIAL_POLL_MS;
		left = srv->pend[i].deadline_ms - now;
		if (left < timeout)
			timeout = left > 0 ? (int)left : 0;
	}
	for (i = 0; i < PFD_CONN + srv->n_pend; i++)
		pfd[i].revents = 0;
	*timeoutp = timeout == INT_MAX ? -1 : timeout;
	return (PFD_CONN + (int)srv->n_pend);
}

/* Events on pending connections; backwards, as pend_drop() swaps. */
static void
loop_pending(struct rpc_server *srv, size_t n)
{
	short	 rev;
	size_t	 i;

	for (i = n; i-- > 0; ) {
		rev = srv->pfd[PFD_CONN + i].revents;
		if (rev & (POLLHUP | POLLERR | POLLNVAL))
			pend_check(srv, i, 1);
		else if ((rev & POLLIN) || srv->pend[i].partial)
			pend_check(srv, i, 0);
	}
}

/*
 * Serve until *quit is set or stop_fd is readable (or hung up). Returns 0,
 * or KP_EIO if the listening socket failed. Pending connections (never
 * handed to the core) are closed on the way out.
 */
int
rpc_accept_loop(struct rpc_server *srv, volatile sig_atomic_t *quit,
    int stop_fd)
{
	struct pollfd	*pfd = srv->pfd;
	int64_t		 now, pause_until = 0;
	size_t		 n_pend;
	int		 n, timeout, rv = 0;

	for (;;) {
		if (quit != NULL && *quit)
			break;
		now = rpc_now_ms();
		pend_expire(srv, now);
		if (now - srv->swept_ms >= SWEEP_MS)
			conn_sweep(srv);
		n_pend = srv->n_pend;
		n = loop_pollfds(srv, stop_fd, now, pause_until, quit != NULL,
		    &timeout);
		if (poll(pfd, (nfds_t)n, timeout) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("%s: poll", srv->name);
			rv = KP_EIO;
			break;
		}
		if (pfd[PFD_STOP].revents != 0)
			break;
		/*
		 * A shutdown(2) of the listener (by anyone holding it) makes
		 * it readable for ever with nothing to accept: without this
		 * the loop would spin. Nothing undoes it on this socket:
		 * exit, and the supervisor, which watches its copy too, binds
		 * a new one for the next process.
		 */
		if (pfd[PFD_LISTEN].revents & (POLLERR | POLLNVAL | POLLHUP |
		    POLLRDHUP)) {
			log_warnx("%s: listening socket %s: no connection can "
			    "arrive; exiting", srv->name,
			    pfd[PFD_LISTEN].revents & (POLLHUP | POLLRDHUP) ?
			    "shut down" : "failed");
			rv = KP_EIO;
			break;
		}
		loop_pending(srv, n_pend);
		if ((pfd[PFD_LISTEN].revents & POLLIN) &&
		    accept_some(srv, &pause_until) == -1) {
			rv = KP_EIO;
			break;
		}
	}
	while (srv->n_pend > 0)
		pend_drop(srv, srv->n_pend - 1);
	return (rv);
}
