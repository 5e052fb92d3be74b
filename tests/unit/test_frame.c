/*
 * test_frame.c - ipc/frame.c's walk of a frame's wire format before
 * protobuf-c unpacks it (ipc_unpack): a tag protobuf-c 1.4.1 would build
 * with a signed overflow (a field number of 2^31 or more, or a tag varint
 * longer than 5 bytes), at the top level or inside a nested message, is
 * refused with the walk's reason, on a channel (ipc_next, written to a
 * real socket) and as a log datagram (ipc_unpack, as sup_drain_log
 * takes it); frames at the limits of the rule still reach protobuf-c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"
#include "kubeletplugin.h"
#include "ipc/ipc.h"

/* A tag varint of field number 2^31 (fifth byte 0x40), wire type 0, and
 * its value; then a 6-byte tag whose fifth byte has bit 6 set too. */
static const uint8_t	 ub5[] = { 0x80, 0x80, 0x80, 0x80, 0x40, 0x00 };
static const uint8_t	 ub6[] = { 0xf8, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x00 };
/* The largest field number, 2^29-1, in 5 bytes: unknown, not UB. */
static const uint8_t	 max5[] = { 0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00 };

static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t	 n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return (n);
}

/* A Msg whose Log (field 11) holds a valid Log and then extra bytes. */
static size_t
log_with(uint8_t *out, const uint8_t *extra, size_t n)
{
	Kpipc__Log	 l = KPIPC__LOG__INIT;
	uint8_t		 inner[256];
	size_t		 len, off = 0;

	l.level = KP_LOG_WARNING;
	l.text = "a line";
	len = kpipc__log__pack(&l, inner);
	if (n > 0)
		memcpy(inner + len, extra, n);
	len += n;
	off += put_varint(out, KPIPC__MSG__M_LOG << 3 | 2);
	off += put_varint(out + off, len);
	memcpy(out + off, inner, len);
	return (off + len);
}

/* The frame through a socket and ipc_next(); its result, err set. */
static int
through_channel(const uint8_t *b, size_t len, char *err, size_t errsize)
{
	struct ipc_chan	 c;
	Kpipc__Msg	*m = NULL;
	uint8_t		 hdr[4] = { len >> 24, len >> 16, len >> 8, len };
	int		 sv[2], r;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[1], hdr, 4) == 4);
	CHECK(write(sv[1], b, len) == (ssize_t)len);
	ipc_chan_init(&c, sv[0], KP_IPC_CHILD_FRAME);
	CHECK((size_t)ipc_read(&c) == len + 4);
	err[0] = '\0';
	r = ipc_next(&c, &m, err, errsize);
	CHECK_EQ(c.rlen, 0);	/* consumed either way */
	ipc_free(m);
	ipc_chan_close(&c);
	close(sv[1]);
	return (r);
}

static void
test_refused(void)
{
	const struct {
		const uint8_t	*b;
		size_t		 n;
	} bad[] = { { ub5, sizeof(ub5) }, { ub6, sizeof(ub6) } };
	uint8_t		 f[512];
	char		 err[KP_ERROR_SIZE], want[64];
	size_t		 i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* Nested in a Log, on a channel and as a datagram. */
		len = log_with(f, bad[i].b, bad[i].n);
		CHECK_EQ(through_channel(f, len, err, sizeof(err)),
		    KP_EPROTO);
		CHECK_CONTAINS(err, "is not a field number of 1 to 536870911");
		CHECK(ipc_unpack(f, len, err, sizeof(err)) == NULL);
		CHECK_CONTAINS(err, "in at most 5 bytes");
		/* At the top level of a channel without a gate (the
		 * driver's, a child's view of the supervisor). */
		CHECK_EQ(through_channel(bad[i].b, bad[i].n, err,
		    sizeof(err)), KP_EPROTO);
		CHECK_CONTAINS(err, "the tag at byte 0 is not a field number");
	}
	/* The offset named is the bad tag's, in the whole frame. */
	len = log_with(f, ub5, sizeof(ub5));
	CHECK(ipc_unpack(f, len, err, sizeof(err)) == NULL);
	snprintf(want, sizeof(want), "the tag at byte %zu ", len -
	    sizeof(ub5));
	CHECK_CONTAINS(err, want);
}

static void
test_allowed(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT, *out;
	Kpipc__CdiWrite	 w = KPIPC__CDI_WRITE__INIT;
	uint8_t		 f[512], content[200];
	char		 err[KP_ERROR_SIZE];
	size_t		 len;

	/* 2^29-1 in 5 bytes is a field number: protobuf-c decodes it as an
	 * unknown field, which ipc_check() refuses for its own reason. */
	len = log_with(f, max5, sizeof(max5));
	CHECK((out = ipc_unpack(f, len, err, sizeof(err))) != NULL);
	ipc_free(out);
	CHECK_EQ(through_channel(f, len, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "unknown fields");
	/* A plain Log and a CdiWrite pass whole. */
	len = log_with(f, NULL, 0);
	CHECK_EQ(through_channel(f, len, err, sizeof(err)), 1);
	memset(content, '{', sizeof(content));
	w.id = 1ULL << 62;	/* a 9-byte varint value */
	w.name = "example.com-x.json";
	w.content.data = content;
	w.content.len = sizeof(content);
	m.m_case = KPIPC__MSG__M_CDI_WRITE;
	m.cdi_write = &w;
	len = kpipc__msg__pack(&m, f);
	CHECK_EQ(through_channel(f, len, err, sizeof(err)), 1);
	/* Cut anywhere: refused (the Msg's length is past the end), never
	 * read past it (ASan build). */
	while (--len > 0)
		CHECK(ipc_unpack(f, len, err, sizeof(err)) == NULL);
}

/*
 * A peer that is gone reads as KP_EPIPE whether it left nothing unread
 * (EOF) or died with our bytes unread (ECONNRESET on a Unix stream
 * socket): a child SIGKILLed mid-call is a crash, reported by its wait
 * status, not a protocol violation (issue 25).
 */
static void
test_peer_gone(void)
{
	struct ipc_chan	 c;
	int		 sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	close(sv[1]);
	ipc_chan_init(&c, sv[0], KP_IPC_CHILD_FRAME);
	CHECK_EQ(ipc_read(&c), KP_EPIPE);
	ipc_chan_close(&c);

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[0], "unread", 6) == 6);	/* the peer never reads */
	close(sv[1]);
	ipc_chan_init(&c, sv[0], KP_IPC_CHILD_FRAME);
	CHECK_EQ(ipc_read(&c), KP_EPIPE);
	ipc_chan_close(&c);
}

int
main(void)
{
	test_refused();
	test_allowed();
	test_peer_gone();
	return (test_done("test_frame"));
}
