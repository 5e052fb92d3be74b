/*
 * frame.c - length-prefixed protobuf-c frames on a SOCK_STREAM socket.
 *
 * Runs in: every process (ipc/ is the one typed channel between them;
 * the supervisor's side treats every frame as hostile).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "ipc/ipc.h"

#define IPC_HDR	4

void
ipc_chan_init(struct ipc_chan *c, int fd, size_t max_frame)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->max_frame = max_frame;
}

void
ipc_chan_close(struct ipc_chan *c)
{
	ipc_gate_fn	 gate = c->gate;
	void		*user = c->gate_user;

	if (c->fd != -1)
		close(c->fd);
	free(c->rbuf);
	free(c->wbuf);
	ipc_chan_init(c, -1, c->max_frame);
	c->gate = gate;		/* the channel's policy outlives its fd */
	c->gate_user = user;
}

static int
grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t	*p;
	size_t	 n = *cap ? *cap : 4096;

	if (need <= *cap)
		return (0);
	while (n < need)
		n *= 2;
	if ((p = realloc(*buf, n)) == NULL)
		return (KP_ENOMEM);
	*buf = p;
	*cap = n;
	return (0);
}

/* Append one frame to the output buffer. */
int
ipc_queue(struct ipc_chan *c, const Kpipc__Msg *m)
{
	size_t	 len = kpipc__msg__get_packed_size(m);
	uint8_t	*p;

	if (len > KP_IPC_MAX_FRAME)
		return (KP_EINVAL);
	/* A peer that does not read must not grow our memory: it gets
	 * at most KP_IPC_MAX_QUEUE bytes of frames waiting. */
	if (c->wlen + IPC_HDR + len > KP_IPC_MAX_QUEUE)
		return (KP_EBUSY);
	if (grow(&c->wbuf, &c->wcap, c->wlen + IPC_HDR + len) != 0)
		return (KP_ENOMEM);
	p = c->wbuf + c->wlen;
	p[0] = len >> 24;
	p[1] = len >> 16;
	p[2] = len >> 8;
	p[3] = len;
	kpipc__msg__pack(m, p + IPC_HDR);
	c->wlen += IPC_HDR + len;
	return (0);
}

/* Write what the socket takes now. 0: all written or would block. */
int
ipc_flush(struct ipc_chan *c)
{
	ssize_t	 n;

	while (c->wlen > 0) {
		n = send(c->fd, c->wbuf, c->wlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return (0);
			return (errno == EPIPE ? KP_EPIPE : KP_EIO);
		}
		memmove(c->wbuf, c->wbuf + n, c->wlen - (size_t)n);
		c->wlen -= (size_t)n;
	}
	return (0);
}

/*
 * Read what is available. An fd passed along (no message type allows one)
 * is closed and reported as a violation. Returns bytes read, KP_EPIPE at
 * end of file or when the peer is gone (reset), KP_EPROTO for an fd,
 * KP_EIO on errors; 0 if it would block.
 */
int
ipc_read(struct ipc_chan *c)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int) * 8)];
	} cm;
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*h;
	ssize_t		 n;
	int		 fdseen = 0;

	if (grow(&c->rbuf, &c->rcap, c->rlen + 65536) != 0)
		return (KP_ENOMEM);
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = c->rbuf + c->rlen;
	iov.iov_len = c->rcap - c->rlen;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do {
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	for (h = CMSG_FIRSTHDR(&mh); n >= 0 && h != NULL;
	    h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
			int	*fds = (int *)CMSG_DATA(h);
			size_t	 i, k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (i = 0; i < k; i++)
				close(fds[i]);
			fdseen = 1;
		}
	}
	/* ECONNRESET: the peer closed (died) with our bytes unread, gone
	 * as at EOF; its wait status says why. */
	if (n == -1)
		return (errno == EAGAIN ? 0 : errno == ECONNRESET ? KP_EPIPE :
		    KP_EIO);
	if (fdseen || (mh.msg_flags & MSG_CTRUNC))
		return (KP_EPROTO);
	if (n == 0)
		return (KP_EPIPE);
	c->rlen += (size_t)n;
	return ((int)n);
}

/* A protobuf varint at *p (below end); 0, or -1 if it does not fit. */
static int
varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int	 shift;

	*v = 0;
	for (shift = 0; shift < 64 && *p < end; shift += 7) {
		*v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return (0);
	}
	return (-1);
}

/*
 * A kpipc.Msg frame holds one oneof field, length-delimited, filling the
 * frame: its field number is the message case. Anything else (a second
 * field, which protobuf-c would unpack too, another wire type, a length
 * that does not fill the frame) is -1. Reads only the frame.
 */
static int
frame_case(const uint8_t *b, size_t len, int *mcase)
{
	const uint8_t	*p = b, *end = b + len;
	uint64_t	 tag, n;

	*mcase = 0;
	if (varint(&p, end, &tag) != 0 || (tag & 7) != 2 ||
	    (tag >> 3) == 0 || (tag >> 3) > INT32_MAX ||
	    varint(&p, end, &n) != 0 || n != (uint64_t)(end - p))
		return (-1);
	*mcase = (int)(tag >> 3);
	return (0);
}

/*
 * protobuf-c 1.4.1 (Debian 12) builds a field's tag in an int, the fifth
 * byte of its varint shifted left by 25: a field number of 2^31 or more
 * (bit 6 of that byte set, in a tag of 5 bytes or longer) is a signed
 * overflow, undefined behaviour, in parse_tag_and_wiretype(), at every
 * level of nesting. This walk, led by the descriptors as the unpacker is,
 * refuses a tag that is not a protobuf field number (1 to 2^29-1, in at
 * most 5 bytes) before protobuf-c sees the bytes; everything else it
 * leaves to protobuf-c and ipc_check(). One pass over the frame, no
 * allocation: 20 to 100 ns a frame beside the 0.1 to 3 us of the unpack
 * (Log, Pong, CdiWrite of 16 and 256 KiB). tests/unit/test_frame.c.
 */
#define WIRE_FIELD_MAX	((1u << 29) - 1)
#define WIRE_DEPTH	32	/* deeper than the schema: refused */

static int
wire_walk(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len,
    int depth, const uint8_t *base, char *err, size_t errsize)
{
	const ProtobufCFieldDescriptor	*f;
	const uint8_t			*p = b, *t, *end = b + len;
	uint64_t			 tag, n;

	if (depth > WIRE_DEPTH)
		return (ipc_fail(err, errsize, "messages nested more than "
		    "%d deep at byte %zu", WIRE_DEPTH, (size_t)(b - base)));
	while (p < end) {
		t = p;
		if (varint(&p, end, &tag) != 0 || p - t > 5 ||
		    (tag >> 3) == 0 || (tag >> 3) > WIRE_FIELD_MAX)
			return (ipc_fail(err, errsize, "the tag at byte %zu is "
			    "not a field number of 1 to %u in at most 5 bytes",
			    (size_t)(t - base), WIRE_FIELD_MAX));
		switch (tag & 7) {
		case PROTOBUF_C_WIRE_TYPE_VARINT:
			if (varint(&p, end, &n) != 0)
				return (ipc_fail(err, errsize, "the varint at "
				    "byte %zu is cut", (size_t)(t - base)));
			break;
		case PROTOBUF_C_WIRE_TYPE_64BIT:
		case PROTOBUF_C_WIRE_TYPE_32BIT:
			n = (tag & 7) == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
			if (n > (uint64_t)(end - p))
				return (ipc_fail(err, errsize, "the field at "
				    "byte %zu is cut", (size_t)(t - base)));
			p += n;
			break;
		case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
			if (varint(&p, end, &n) != 0 ||
			    n > (uint64_t)(end - p))
				return (ipc_fail(err, errsize, "the length at "
				    "byte %zu is past the end", (size_t)(t -
				    base)));
			f = protobuf_c_message_descriptor_get_field(d,
			    (unsigned)(tag >> 3));
			if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    wire_walk(f->descriptor, p, n, depth + 1, base,
			    err, errsize) != 0)
				return (-1);
			p += n;
			break;
		default:
			return (ipc_fail(err, errsize, "the wire type %u at "
			    "byte %zu is not one protobuf-c decodes",
			    (unsigned)(tag & 7), (size_t)(t - base)));
		}
	}
	return (0);
}

/*
 * Bytes of message d from a peer, before protobuf_c_message_unpack(): 0,
 * or KP_EPROTO with the reason in err (also for kubelet's DRA, health and
 * registration requests: nodeserver/, registrar/).
 */
int
ipc_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *b,
    size_t len, char *err, size_t errsize)
{
	return (wire_walk(d, b, len, 0, b, err, errsize) != 0 ? KP_EPROTO :
	    0);
}

/*
 * Unpack a kpipc.Msg from bytes a peer sent (a frame, a log datagram),
 * walked first (wire_walk). NULL with the reason in err.
 */
Kpipc__Msg *
ipc_unpack(const uint8_t *b, size_t len, char *err, size_t errsize)
{
	Kpipc__Msg	*m;
	char		 why[KP_ERROR_SIZE];

	if (ipc_wire_check(&kpipc__msg__descriptor, b, len, why,
	    sizeof(why)) != 0) {
		snprintf(err, errsize, "frame of %zu bytes: %s", len, why);
		return (NULL);
	}
	if ((m = kpipc__msg__unpack(NULL, len, b)) == NULL)
		snprintf(err, errsize, "frame of %zu bytes does not decode",
		    len);
	return (m);
}

/*
 * Take the next complete frame out of the input buffer. Returns 1 with *out
 * set (free with ipc_free), 0 if more bytes are needed, KP_EPROTO with a
 * reason in err for an oversized, undecodable or invalid frame.
 */
int
ipc_next(struct ipc_chan *c, Kpipc__Msg **out, char *err, size_t errsize)
{
	size_t		 len;
	Kpipc__Msg	*m;
	int		 mcase = 0;

	*out = NULL;
	if (c->rlen < IPC_HDR)
		return (0);
	len = (size_t)c->rbuf[0] << 24 | (size_t)c->rbuf[1] << 16 |
	    (size_t)c->rbuf[2] << 8 | c->rbuf[3];
	if (len > c->max_frame) {
		snprintf(err, errsize, "frame of %zu bytes exceeds the "
		    "limit of %zu", len, c->max_frame);
		return (KP_EPROTO);
	}
	if (c->rlen < IPC_HDR + len)
		return (0);
	if (c->gate != NULL && (frame_case(c->rbuf + IPC_HDR, len, &mcase) !=
	    0 || c->gate(c->gate_user, mcase, len, err, errsize) != 0)) {
		if (mcase == 0)
			snprintf(err, errsize, "frame of %zu bytes is not one "
			    "message field", len);
		memmove(c->rbuf, c->rbuf + IPC_HDR + len, c->rlen - IPC_HDR -
		    len);
		c->rlen -= IPC_HDR + len;
		return (KP_EPROTO);
	}
	m = ipc_unpack(c->rbuf + IPC_HDR, len, err, errsize);
	memmove(c->rbuf, c->rbuf + IPC_HDR + len, c->rlen - IPC_HDR - len);
	c->rlen -= IPC_HDR + len;
	if (m == NULL)
		return (KP_EPROTO);
	if (ipc_check(m, err, errsize) != 0) {
		ipc_free(m);
		return (KP_EPROTO);
	}
	*out = m;
	return (1);
}

void
ipc_free(Kpipc__Msg *m)
{
	if (m != NULL)
		kpipc__msg__free_unpacked(m, NULL);
}

static int
wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd	 p = { .fd = fd, .events = ev };
	int		 r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r == -1 && errno == EINTR);
	if (r == 0)
		return (KP_ETIMEDOUT);
	return (r < 0 ? KP_EIO : 0);
}

/* Blocking send of one frame (children, driver). */
int
ipc_send(struct ipc_chan *c, const Kpipc__Msg *m)
{
	int	 r;

	if ((r = ipc_queue(c, m)) != 0)
		return (r);
	while (c->wlen > 0) {
		if ((r = ipc_flush(c)) != 0)
			return (r);
		if (c->wlen > 0 && (r = wait_fd(c->fd, POLLOUT, 30000)) != 0)
			return (r);
	}
	return (0);
}

static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Blocking receive of one frame within timeout_ms (-1: no limit). */
int
ipc_recv(struct ipc_chan *c, Kpipc__Msg **out, int timeout_ms, char *err,
    size_t errsize)
{
	long long	 end = now_ms() + timeout_ms;
	int		 r, left = timeout_ms;

	for (;;) {
		if ((r = ipc_next(c, out, err, errsize)) != 0)
			return (r < 0 ? r : 0);
		if (timeout_ms >= 0 && (left = (int)(end - now_ms())) <= 0)
			return (KP_ETIMEDOUT);
		if ((r = wait_fd(c->fd, POLLIN, left)) != 0)
			return (r);
		if ((r = ipc_read(c)) < 0)
			return (r);
	}
}

int
ipc_send_result(struct ipc_chan *c, int code, const char *message)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Result	 res = KPIPC__RESULT__INIT;

	res.code = code;
	res.message = (char *)(message ? message : "");
	m.m_case = KPIPC__MSG__M_RESULT;
	m.result = &res;
	return (ipc_send(c, &m));
}
