/*
 * fuzz_ipc.c - libFuzzer target for the supervisor's decoder of what a
 * (possibly compromised) child or the driver process sends: the input is
 *  - a byte stream on a control channel, put straight into a struct
 *    ipc_chan's read buffer with each role's frame cap, and also written to
 *    a socketpair and taken in with ipc_read(); ipc_next() (length cap,
 *    kpipc__msg__unpack, ipc_check) runs until it wants more bytes or
 *    reports a violation, as sup_dispatch_child() does; every frame it
 *    returns goes through ipc_rule_check() for each role and state;
 *  - one datagram on a child's log channel, decoded as sup_drain_log()
 *    does (ipc_unpack, a Log case only, ipc_check) and emitted.
 * Invariants checked (trap on a breach):
 *  - a frame ipc_next() accepted packs again, and that packing decodes,
 *    passes ipc_check() and packs to the same bytes;
 *  - ipc_next() consumes a frame it returns, never more than the buffer;
 *  - every error text is NUL-terminated within its buffer.
 * Run: ./tests/fuzz/fuzz_ipc -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "base/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const enum kp_role roles[] = {
	ROLE_NODESERVER, ROLE_REGISTRAR, ROLE_PUBLISHER, ROLE_OBSERVER,
	ROLE_DRIVER
};

static void
check_text(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		__builtin_trap();
}

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	check_text(msg, KP_LOG_MAX);
}

/* A frame ipc_next() let through: round trip and the state table. */
static void
accepted(const Kpipc__Msg *m)
{
	Kpipc__Msg	*m2;
	uint8_t		*a, *b;
	size_t		 la, lb, r, s;
	char		 err[KP_ERROR_SIZE];

	la = kpipc__msg__get_packed_size(m);
	if ((a = malloc(la + 1)) == NULL)
		return;
	if (kpipc__msg__pack(m, a) != la)
		__builtin_trap();
	if ((m2 = kpipc__msg__unpack(NULL, la, a)) == NULL ||
	    ipc_check(m2, err, sizeof(err)) != 0 || m2->m_case != m->m_case)
		__builtin_trap();
	lb = kpipc__msg__get_packed_size(m2);
	if ((b = malloc(lb + 1)) == NULL) {
		ipc_free(m2);
		free(a);
		return;
	}
	if (kpipc__msg__pack(m2, b) != lb || la != lb ||
	    memcmp(a, b, la) != 0)
		__builtin_trap();
	ipc_free(m2);
	free(a);
	free(b);
	for (r = 0; r < sizeof(roles) / sizeof(roles[0]); r++)
		for (s = CS_STOPPED; s <= CS_STOPPING; s++) {
			err[0] = '\0';
			if (ipc_rule_check(roles[r], (enum child_state)s,
			    m->m_case, err, sizeof(err)) != 0)
				check_text(err, sizeof(err));
		}
	/* A Pong's per-role rules (ipc/stats.c) never crash and say why. */
	for (r = 0; m->m_case == KPIPC__MSG__M_PONG &&
	    r < sizeof(roles) / sizeof(roles[0]); r++) {
		err[0] = '\0';
		if (ipc_check_pong(roles[r], m->pong, err, sizeof(err)) != 0)
			check_text(err, sizeof(err));
	}
	(void)ipc_case_name(m->m_case);
}

/* Drain c as the supervisor does; stop at the first violation. */
static void
drain(struct ipc_chan *c)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	size_t		 before;
	int		 r;

	for (;;) {
		before = c->rlen;
		err[0] = '\0';
		if ((r = ipc_next(c, &m, err, sizeof(err))) <= 0) {
			if (r < 0)
				check_text(err, sizeof(err));
			else if (m != NULL)
				__builtin_trap();
			return;
		}
		if (m == NULL || c->rlen >= before || c->rlen > c->rcap)
			__builtin_trap();
		accepted(m);
		ipc_free(m);
	}
}

/* The bytes already in the read buffer, with a role's frame cap. */
static void
direct(const uint8_t *data, size_t size, size_t cap)
{
	struct ipc_chan	 c;

	ipc_chan_init(&c, -1, cap);
	if ((c.rbuf = malloc(size + 1)) == NULL)
		return;
	memcpy(c.rbuf, data, size);
	c.rlen = size;
	c.rcap = size + 1;
	drain(&c);
	ipc_chan_close(&c);
}

/* The bytes on a socket, read in by ipc_read() (input is <= 64 KiB). */
static void
socket_read(const uint8_t *data, size_t size)
{
	struct ipc_chan	 c;
	int		 sv[2], r;

	if (size > 65536 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return;
	if (size > 0 && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	close(sv[1]);
	ipc_chan_init(&c, sv[0], KP_IPC_MAX_FRAME);
	while ((r = ipc_read(&c)) > 0)
		;
	if (r != KP_EPIPE || c.rlen != size)
		__builtin_trap();
	drain(&c);
	ipc_chan_close(&c);
}

/* A datagram on the log channel, as sup_drain_log() takes it. */
static void
log_datagram(const uint8_t *data, size_t size)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];

	if (size > KP_LOG_MAX + 64 ||
	    (m = ipc_unpack(data, size, err, sizeof(err))) == NULL) {
		if (size <= KP_LOG_MAX + 64)
			check_text(err, sizeof(err));
		return;
	}
	if (m->m_case == KPIPC__MSG__M_LOG && ipc_check(m, err,
	    sizeof(err)) == 0) {
		check_text(m->log->text, KP_LOG_MAX);
		log_emit("fuzz", 1, m->log->level, m->log->verbosity,
		    m->log->text);
	}
	ipc_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;

	if (!ready) {
		log_init(100, silent, NULL);
		ready = 1;
	}
	direct(data, size, KP_IPC_SMALL_FRAME);
	direct(data, size, KP_IPC_CHILD_FRAME);
	socket_read(data, size);
	log_datagram(data, size);
	return (0);
}
