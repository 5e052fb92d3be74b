/*
 * mon.c - the fixed-layout frames between the monitor and the broker
 * (mon.h). The reader checks size, type, strings and fds before anyone
 * looks at a field; there is nothing else to decode.
 *
 * Runs in: the monitor and the broker.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/mon.h"

void
mon_init(struct mon_msg *m, enum mon_type type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
}

/* How many fds a frame of this type may carry. */
static size_t
fds_allowed(uint32_t type)
{
	switch (type) {
	case MON_STARTED:
		return (3);
	case MON_SPAWN:
	case MON_PUT:
	case MON_RESULT:
		return (1);
	default:
		return (0);
	}
}

/* One frame with nfds fds; 0, or KP_EIO (KP_EPIPE: the peer is gone). */
int
mon_send(int fd, const struct mon_msg *m, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(MON_MAX_FDS * sizeof(int))];
	}		 cm;
	struct msghdr	 mh;
	struct iovec	 iov;
	ssize_t		 n;

	if (nfds > MON_MAX_FDS)
		return (KP_EINVAL);
	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)m;
	iov.iov_len = sizeof(*m);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(&cm.h), fds, nfds * sizeof(int));
	}
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n == -1 && errno == EINTR);
	if (n == (ssize_t)sizeof(*m))
		return (0);
	return (n == -1 && (errno == EPIPE || errno == ECONNRESET) ?
	    KP_EPIPE : KP_EIO);
}

static int
fail(char *err, size_t errsize, const char *why)
{
	snprintf(err, errsize, "%s", why);
	return (KP_EPROTO);
}

/*
 * recvmsg() returns 0 at the end of a SOCK_SEQPACKET channel and for an
 * empty datagram alike: the end only when the peer shut its side
 * (POLLRDHUP), or when that cannot be told. Otherwise an empty datagram
 * would end a channel the peer still holds: the monitor would stop
 * reading its broker's control frames without a violation.
 */
static int
peer_gone(int fd)
{
	struct pollfd	 p = { .fd = fd, .events = POLLRDHUP };

	return (poll(&p, 1, 0) == -1 ||
	    (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
}

/*
 * One frame, not waiting: 1 with *m (and *nfds fds in fds[MON_MAX_FDS],
 * close-on-exec, the caller's), 0 when none is there, KP_EPIPE at the
 * end, KP_EPROTO with err for a frame of another size (an empty one
 * too), an unknown type, a string without its NUL or fds it may not
 * carry (all closed), KP_EIO.
 */
int
mon_recv(int fd, struct mon_msg *m, int *fds, size_t *nfds, char *err,
    size_t errsize)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(MON_MAX_FDS * sizeof(int)) + 64];
	}		 cm;
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*h;
	ssize_t		 n;
	size_t		 i, got = 0, k, j;
	int		 bad = 0;

	*nfds = 0;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = m;
	iov.iov_len = sizeof(*m);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do {
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC |
		    MSG_TRUNC);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return (errno == EAGAIN ? 0 : errno == ECONNRESET ? KP_EPIPE :
		    KP_EIO);
	for (h = CMSG_FIRSTHDR(&mh); h != NULL; h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level != SOL_SOCKET ||
		    h->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (j = 0; j < k; j++) {
			int	 f;

			memcpy(&f, CMSG_DATA(h) + j * sizeof(int), sizeof(f));
			if (got < MON_MAX_FDS)
				fds[got++] = f;
			else {
				close(f);
				bad = 1;
			}
		}
	}
	if (n == 0 && got == 0 && peer_gone(fd))
		return (KP_EPIPE);
	if (bad || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) ||
	    n != (ssize_t)sizeof(*m) || m->type == 0 ||
	    m->type >= MON_TYPE_MAX || got > fds_allowed(m->type) ||
	    m->text[MON_TEXT - 1] != '\0' || m->n > KP_IPC_MAX_HIDE) {
		for (i = 0; i < got; i++)
			close(fds[i]);
		return (fail(err, errsize, n != (ssize_t)sizeof(*m) ?
		    "monitor frame of another size" : got >
		    fds_allowed(m->type) || bad ? "monitor frame with fds it "
		    "may not carry" : "monitor frame of an unknown type, or "
		    "a string without its end"));
	}
	for (i = 0; i < m->n; i++)
		if (memchr(m->paths[i], '\0', KP_IPC_PATH_MAX) == NULL) {
			for (j = 0; j < got; j++)
				close(fds[j]);
			return (fail(err, errsize, "monitor frame: a path "
			    "without its end"));
		}
	*nfds = got;
	return (1);
}

/*
 * A request on the files channel and its MON_RESULT, waiting at most
 * timeout_ms: 0 with *reply (and *rfd, -1 if none), or KP_E* with err.
 * The broker's only blocking wait on the monitor, which answers each
 * request at once.
 */
int
mon_call(int fd, const struct mon_msg *req, const int *fds, size_t nfds,
    struct mon_msg *reply, int *rfd, int timeout_ms, char *err,
    size_t errsize)
{
	struct pollfd	 p = { .fd = fd, .events = POLLIN };
	int		 got[MON_MAX_FDS];
	size_t		 n, i;
	int		 r;

	*rfd = -1;
	if ((r = mon_send(fd, req, fds, nfds)) != 0) {
		snprintf(err, errsize, "the monitor is gone");
		return (r);
	}
	for (;;) {
		if ((r = poll(&p, 1, timeout_ms)) == 0) {
			snprintf(err, errsize, "no answer from the monitor "
			    "within %d ms", timeout_ms);
			return (KP_ETIMEDOUT);
		}
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return (KP_EIO);
		if ((r = mon_recv(fd, reply, got, &n, err, errsize)) == 0)
			continue;
		if (r < 0) {
			if (r == KP_EPIPE)
				snprintf(err, errsize, "the monitor is gone");
			return (r);
		}
		if (reply->type != MON_RESULT) {
			for (i = 0; i < n; i++)
				close(got[i]);
			snprintf(err, errsize, "the monitor answered with "
			    "frame type %u", reply->type);
			return (KP_EPROTO);
		}
		if (n == 1)
			*rfd = got[0];
		return (0);
	}
}
