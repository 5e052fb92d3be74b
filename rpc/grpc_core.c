/*
 * grpc_core.c - everything that touches the gRPC C core (Debian 12: 1.51).
 * The only file that includes <grpc/...>: the C-core API changes between
 * versions, so a port to another release stays inside this file.
 *
 * One completion queue, drained by the server's thread pool (server.c:
 * one thread polls at a time and runs the handlers of the calls it takes
 * itself, with no hand-off). Each registered method has
 * one request armed at a time (a struct slot), re-armed as soon as a call
 * arrives; one generic request catches every other method and answers
 * UNIMPLEMENTED at once (DESIGN 8: otherwise such calls hang until their
 * deadline).
 *
 * Runs in: the registrar and the nodeserver (rpc/ is their gRPC
 * adapter), after their sandbox is in place.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "base/log.h"
#include "rpc/rpc_int.h"

/* An armed request for one registered method. */
struct slot {
	struct rpc_tag		 tag;
	struct rpc_server	*srv;
	const struct rpc_method	*method;
	void			*handle;
	grpc_call		*call;
	gpr_timespec		 deadline;
	grpc_metadata_array	 md;
	grpc_byte_buffer	*payload;
};

/* The armed request for methods nobody registered. */
struct generic {
	struct rpc_tag		 tag;
	grpc_call		*call;
	grpc_call_details	 details;
	grpc_metadata_array	 md;
};

struct rpc_core {
	grpc_server		*server;
	grpc_completion_queue	*cq;
	grpc_server_credentials	*creds;
	struct slot		*slots;
	struct generic		 generic;
	struct rpc_tag		 shutdown_tag;
	int			 started;
	int			 destroyed;
};

static void	 slot_arm(struct rpc_server *, struct slot *);
static void	 generic_arm(struct rpc_server *);

/*
 * grpc_init() starts the core's timer and executor threads; they inherit
 * our signal mask, so block everything around it: a signal must never land
 * on a gRPC thread.
 */
/*
 * Abseil's mutex deadlock detection, on in a build of Abseil without
 * NDEBUG (Debian's): every lock and unlock inside gRPC core updates a
 * global graph of lock order (GraphCycles; 2-5% of the nodeserver's
 * samples at 16 claims on 8 connections, issue 27). A debugging aid that
 * release builds compile out: switched off, where the symbol is there
 * (C++, so looked up by its mangled name, Abseil LTS 20220623's inline
 * namespace first). kIgnore is 0.
 */
static void
core_absl_quiet(void)
{
	static const char *const names[] = {
		"_ZN4absl7debian329SetMutexDeadlockDetectionModeENS0_15"
		    "OnDeadlockCycleE",
		"_ZN4absl12lts_2022062329SetMutexDeadlockDetectionModeENS0_15"
		    "OnDeadlockCycleE",
	};
	void	(*fn)(int);
	size_t	 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*(void **)&fn = dlsym(RTLD_DEFAULT, names[i]);
		if (fn != NULL) {
			fn(0);
			return;
		}
	}
}

static void
core_grpc_init(void)
{
	sigset_t	 all, old;

	core_absl_quiet();
	sigfillset(&all);
	sigdelset(&all, SIGSYS);	/* seccomp's report (policy/) */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	grpc_init();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int
core_register(struct rpc_server *srv, struct rpc_core *core)
{
	size_t	 i;

	for (i = 0; i < srv->n_methods; i++) {
		core->slots[i].tag.kind = TAG_REQUEST;
		core->slots[i].tag.owner = &core->slots[i];
		core->slots[i].srv = srv;
		core->slots[i].method = &srv->methods[i];
		core->slots[i].handle = grpc_server_register_method(
		    core->server, srv->methods[i].path, NULL,
		    GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
		if (core->slots[i].handle == NULL) {
			log_warnx("%s: cannot register %s", srv->name,
			    srv->methods[i].path);
			return (KP_EIO);
		}
	}
	return (0);
}

#define CORE_MAX_ARGS	5

static void
core_int_arg(grpc_arg *arg, char *key, int value)
{
	memset(arg, 0, sizeof(*arg));
	arg->type = GRPC_ARG_INTEGER;
	arg->key = key;
	arg->value.integer = value;
}

/*
 * The server's channel arguments; grpc_server_add_channel_from_fd() gives
 * them to every connection.
 *
 * Keepalive: a connection idle for keepalive_ms gets a PING, and the core
 * closes it if no PING ACK came within RPC_KEEPALIVE_TIMEOUT_MS. A live
 * kubelet answers at once (grpc-go's reader acknowledges PINGs even with
 * no call in flight), so its idle connection stays open indefinitely; a
 * peer that sent the preface and then stopped reading loses its slot.
 * PERMIT_WITHOUT_CALLS, else the core pings only during calls. (1.51 does
 * not count keepalive PINGs against GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA:
 * they go on for as long as the connection is idle; rpc.test.js checks.)
 * Not set, on purpose: GRPC_ARG_MAX_CONNECTION_IDLE_MS and _AGE_MS (they
 * would cut an idle or old kubelet connection, and a 1.34.0 kubelet may
 * deadlock on the reconnect: kubernetes#133920);
 * GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS (1.51 applies it to its own
 * listeners' handshakers only, never to a connection added from an fd:
 * accept.c waits for the preface instead).
 */
static size_t
core_args(struct rpc_server *srv, grpc_arg *arg)
{
	size_t	 n = 0;

	/* Oversized requests get RESOURCE_EXHAUSTED from the core. */
	core_int_arg(&arg[n++], GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
	    RPC_MAX_RECV_BYTES);
	core_int_arg(&arg[n++], GRPC_ARG_KEEPALIVE_TIME_MS, srv->keepalive_ms);
	core_int_arg(&arg[n++], GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
	    RPC_KEEPALIVE_TIMEOUT_MS < srv->keepalive_ms ?
	    RPC_KEEPALIVE_TIMEOUT_MS : srv->keepalive_ms);
	core_int_arg(&arg[n++], GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
	return (n);
}

int
rpc_core_new(struct rpc_server *srv)
{
	struct rpc_core	*core;
	grpc_arg	 arg[CORE_MAX_ARGS];
	grpc_channel_args args;

	if ((core = calloc(1, sizeof(*core))) == NULL)
		return (KP_ENOMEM);
	if (srv->n_methods > 0 &&
	    (core->slots = calloc(srv->n_methods, sizeof(*core->slots))) ==
	    NULL) {
		free(core);
		return (KP_ENOMEM);
	}
	core->generic.tag.kind = TAG_GENERIC;
	core->generic.tag.owner = srv;
	core->shutdown_tag.kind = TAG_SHUTDOWN;
	core->shutdown_tag.owner = srv;
	srv->core = core;
	core_grpc_init();

	args.num_args = core_args(srv, arg);
	args.args = arg;
	if ((core->server = grpc_server_create(&args, NULL)) == NULL ||
	    (core->cq = grpc_completion_queue_create_for_next(NULL)) == NULL ||
	    (core->creds = grpc_insecure_server_credentials_create()) == NULL)
		return (KP_EIO);
	grpc_server_register_completion_queue(core->server, core->cq, NULL);
	return (core_register(srv, core));
}

/* Whole milliseconds from now until a gRPC deadline; -1: none. */
static int64_t
core_deadline_ms(gpr_timespec deadline)
{
	gpr_timespec	 left;
	int64_t		 ms;

	if (deadline.clock_type == GPR_TIMESPAN ||
	    deadline.tv_sec == INT64_MAX)
		return (-1);
	left = gpr_time_sub(deadline, gpr_now(deadline.clock_type));
	if (left.tv_sec > INT64_MAX / 2000)
		return (-1);
	if (left.tv_sec < 0)
		return (rpc_now_ms());
	ms = left.tv_sec * 1000 + left.tv_nsec / 1000000;
	return (rpc_now_ms() + ms);
}

/*
 * The request's bytes, kept in its byte buffer (call->req_buf, destroyed
 * with the call): read in place when gRPC holds the message in one
 * uncompressed slice, the common case; else joined into one slice first.
 */
static int
core_payload(struct rpc_call *call, grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader	 r;
	grpc_slice		 s;
	grpc_slice_buffer	*sb;

	if (bb->type != GRPC_BB_RAW ||
	    bb->data.raw.compression != GRPC_COMPRESS_NONE ||
	    bb->data.raw.slice_buffer.count != 1) {
		if (!grpc_byte_buffer_reader_init(&r, bb)) {
			grpc_byte_buffer_destroy(bb);
			return (KP_EIO);
		}
		s = grpc_byte_buffer_reader_readall(&r);
		grpc_byte_buffer_reader_destroy(&r);
		grpc_byte_buffer_destroy(bb);
		bb = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		if (bb == NULL)
			return (KP_ENOMEM);
	}
	call->req_buf = bb;
	sb = &bb->data.raw.slice_buffer;
	call->req = GRPC_SLICE_START_PTR(sb->slices[0]);
	call->req_len = GRPC_SLICE_LENGTH(sb->slices[0]);
	return (0);
}

/* RECV_CLOSE_ON_SERVER as its own batch, so cancellation is seen while
 * the handler still runs. */
static int
core_watch_close(struct rpc_call *call)
{
	grpc_op		 op;

	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	op.data.recv_close_on_server.cancelled = &call->close_cancelled;
	atomic_fetch_add(&call->refs, 1);
	if (grpc_call_start_batch(call->gcall, &op, 1, &call->close_tag,
	    NULL) != GRPC_CALL_OK) {
		atomic_fetch_sub(&call->refs, 1);
		return (KP_EIO);
	}
	return (0);
}

/*
 * A call arrived on a connection: it is in use, and never given up for a
 * new one (accept.c). The core names a connection added from an fd by
 * that fd ("fd:N", grpc_server_add_channel_from_fd in 1.51).
 */
static void
core_conn_used(struct rpc_server *srv, grpc_call *gcall)
{
	char	*peer;

	if ((peer = grpc_call_get_peer(gcall)) == NULL)
		return;
	rpc_conn_used(srv, peer);
	gpr_free(peer);
}

/* A call to a registered method arrived. */
static void
slot_arrived(struct slot *slot, int success)
{
	struct rpc_server	*srv = slot->srv;
	struct rpc_call		*call;
	grpc_call		*gcall = slot->call;
	grpc_byte_buffer	*payload = slot->payload;
	gpr_timespec		 deadline = slot->deadline;
	int			 rv;

	grpc_metadata_array_destroy(&slot->md);
	slot->call = NULL;
	slot->payload = NULL;
	if (!success)
		return;		/* shutting down */
	/* Re-arm first; from here on the slot belongs to the next call. */
	slot_arm(srv, slot);
	core_conn_used(srv, gcall);
	if ((call = rpc_call_new(srv, slot->method)) == NULL) {
		log_warnx("%s: %s: out of memory", srv->name,
		    slot->method->path);
		grpc_call_cancel_with_status(gcall,
		    GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL);
		grpc_call_unref(gcall);
		if (payload != NULL)
			grpc_byte_buffer_destroy(payload);
		return;
	}
	call->gcall = gcall;
	call->deadline_ms = core_deadline_ms(deadline);
	rv = payload != NULL ? core_payload(call, payload) : KP_EIO;
	if (core_watch_close(call) != 0)
		atomic_store(&call->cancelled, 1);
	if (rv == KP_ENOMEM)
		rpc_call_abort(call, RPC_RESOURCE_EXHAUSTED, "out of memory");
	else if (rv != 0)
		rpc_call_abort(call, RPC_INTERNAL, "no request message");
	else
		rpc_server_dispatch(srv, call);
}

/* Answer a call to an unknown method with UNIMPLEMENTED, in one batch. */
static void
generic_answer(struct rpc_server *srv, grpc_call *gcall, const char *path)
{
	struct rpc_call	*call;
	grpc_op		 ops[3];
	grpc_slice	 details;
	grpc_call_error	 err;

	if ((call = rpc_call_new(srv, NULL)) == NULL) {
		grpc_call_cancel_with_status(gcall, GRPC_STATUS_UNIMPLEMENTED,
		    "unknown method", NULL);
		grpc_call_unref(gcall);
		return;
	}
	call->gcall = gcall;
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[1].data.send_status_from_server.status = GRPC_STATUS_UNIMPLEMENTED;
	details = grpc_slice_from_copied_string(path);
	ops[1].data.send_status_from_server.status_details = &details;
	ops[2].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[2].data.recv_close_on_server.cancelled = &call->close_cancelled;
	err = grpc_call_start_batch(gcall, ops, 3, &call->done_tag, NULL);
	grpc_slice_unref(details);
	if (err != GRPC_CALL_OK)
		rpc_call_unref(call);
}

static void
generic_arrived(struct rpc_server *srv, int success)
{
	struct generic	*g = &srv->core->generic;
	grpc_call	*gcall = g->call;
	char		 path[256], msg[300];
	size_t		 n;

	n = GRPC_SLICE_LENGTH(g->details.method);
	if (n >= sizeof(path))
		n = sizeof(path) - 1;
	memcpy(path, GRPC_SLICE_START_PTR(g->details.method), n);
	path[n] = '\0';
	grpc_call_details_destroy(&g->details);
	grpc_metadata_array_destroy(&g->md);
	g->call = NULL;
	if (!success)
		return;
	generic_arm(srv);
	core_conn_used(srv, gcall);
	if (srv->verbosity >= 0)
		log_info(srv->verbosity, "%s: unknown method %s", srv->name,
		    path);
	snprintf(msg, sizeof(msg), "unknown method %s", path);
	generic_answer(srv, gcall, msg);
}

/*
 * Arm a request unless the server is stopping; a request armed before
 * grpc_server_shutdown_and_notify comes back with success=0.
 */
static void
slot_arm(struct rpc_server *srv, struct slot *slot)
{
	struct rpc_core	*core = srv->core;
	grpc_call_error	 err = GRPC_CALL_OK;

	pthread_mutex_lock(&srv->lock);
	if (!srv->stopping) {
		grpc_metadata_array_init(&slot->md);
		err = grpc_server_request_registered_call(core->server,
		    slot->handle, &slot->call, &slot->deadline, &slot->md,
		    &slot->payload, core->cq, core->cq, &slot->tag);
	}
	pthread_mutex_unlock(&srv->lock);
	if (err != GRPC_CALL_OK) {
		grpc_metadata_array_destroy(&slot->md);
		log_warnx("%s: %s: cannot request calls (%d)", srv->name,
		    slot->method->path, (int)err);
	}
}

static void
generic_arm(struct rpc_server *srv)
{
	struct rpc_core	*core = srv->core;
	struct generic	*g = &core->generic;
	grpc_call_error	 err = GRPC_CALL_OK;

	pthread_mutex_lock(&srv->lock);
	if (!srv->stopping) {
		grpc_call_details_init(&g->details);
		grpc_metadata_array_init(&g->md);
		err = grpc_server_request_call(core->server, &g->call,
		    &g->details, &g->md, core->cq, core->cq, &g->tag);
	}
	pthread_mutex_unlock(&srv->lock);
	if (err != GRPC_CALL_OK) {
		grpc_call_details_destroy(&g->details);
		grpc_metadata_array_destroy(&g->md);
		log_warnx("%s: cannot request calls (%d)", srv->name,
		    (int)err);
	}
}

static void
core_event(struct rpc_tag *tag, int success)
{
	struct rpc_call	*call = tag->owner;

	switch (tag->kind) {
	case TAG_REQUEST:
		slot_arrived(tag->owner, success);
		break;
	case TAG_GENERIC:
		generic_arrived(tag->owner, success);
		break;
	case TAG_CLOSE:
		rpc_call_closed(call, !success || call->close_cancelled);
		break;
	case TAG_SEND:
		pthread_mutex_lock(&call->lock);
		if (call->send_buf != NULL)
			grpc_byte_buffer_destroy(call->send_buf);
		call->send_buf = NULL;
		pthread_mutex_unlock(&call->lock);
		rpc_call_sent(call, success);
		break;
	case TAG_DONE:
		rpc_call_unref(call);
		break;
	case TAG_SHUTDOWN:
		rpc_server_shutdown_done(tag->owner);
		break;
	}
}

/* Drain the queue until it is shut down and empty. */
static void
core_drain(grpc_completion_queue *cq)
{
	grpc_event	 ev;

	for (;;) {
		ev = grpc_completion_queue_next(cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE)
			core_event(ev.tag, ev.success);
	}
}

/*
 * A pool thread's turn at the queue (server.c): take events until this
 * thread ran a handler (it is no longer the poller; returns 0) or the
 * queue is shut down (returns 1).
 */
int
rpc_core_serve(struct rpc_server *srv)
{
	grpc_event	 ev;

	for (;;) {
		ev = grpc_completion_queue_next(srv->core->cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return (1);
		if (ev.type == GRPC_OP_COMPLETE)
			core_event(ev.tag, ev.success);
		if (rpc_server_left_poll())
			return (0);
	}
}

/* Start serving; the pool (server.c) already waits on the queue. */
int
rpc_core_start(struct rpc_server *srv)
{
	struct rpc_core	*core = srv->core;
	size_t		 i;

	grpc_server_start(core->server);
	core->started = 1;
	for (i = 0; i < srv->n_methods; i++)
		slot_arm(srv, &core->slots[i]);
	generic_arm(srv);
	return (0);
}

/* Hand an accepted, non-blocking connection to gRPC, which owns it. */
void
rpc_core_add_fd(struct rpc_server *srv, int fd)
{
	grpc_server_add_channel_from_fd(srv->core->server, fd,
	    srv->core->creds);
}

/* Begin shutting down: requests in flight come back with success=0. */
void
rpc_core_stop(struct rpc_server *srv)
{
	struct rpc_core	*core = srv->core;

	if (core == NULL || !core->started) {
		rpc_server_shutdown_done(srv);
		return;
	}
	grpc_server_shutdown_and_notify(core->server, core->cq,
	    &core->shutdown_tag);
	grpc_server_cancel_all_calls(core->server);
}

/*
 * After the shutdown tag and the last call: destroy the server, then shut
 * the queue down and drain it (DESIGN 8: the order LeakSanitizer accepts).
 */
void
rpc_core_destroy(struct rpc_server *srv)
{
	struct rpc_core	*core = srv->core;

	if (core == NULL || core->destroyed)
		return;
	core->destroyed = 1;
	if (core->server != NULL)
		grpc_server_destroy(core->server);
	core->server = NULL;
	if (core->cq == NULL)
		return;
	grpc_completion_queue_shutdown(core->cq);
	if (rpc_server_pool_join(srv) == 0)
		core_drain(core->cq);
	grpc_completion_queue_destroy(core->cq);
	core->cq = NULL;
}

/* Free what rpc_core_new made and drop our gRPC initialisation. */
void
rpc_core_free(struct rpc_server *srv)
{
	struct rpc_core	*core = srv->core;

	if (core == NULL)
		return;
	rpc_core_destroy(srv);
	if (core->creds != NULL)
		grpc_server_credentials_release(core->creds);
	free(core->slots);
	free(core);
	srv->core = NULL;
	/* Blocking: LeakSanitizer must not see a clean-up thread's memory. */
	grpc_shutdown_blocking();
}

static grpc_byte_buffer *
core_buffer(const uint8_t *msg, size_t len)
{
	grpc_slice		 s;
	grpc_byte_buffer	*bb;

	s = grpc_slice_from_copied_buffer((const char *)msg, len);
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return (bb);
}

/*
 * Append SEND_STATUS_FROM_SERVER and start the call's final batch. On
 * failure the call is cancelled, so its RECV_CLOSE completes and the caller
 * drops the answer's reference.
 */
static int
core_final(struct rpc_call *call, grpc_op *ops, size_t n, int status,
    const char *msg)
{
	grpc_slice	 details;
	grpc_call_error	 err;

	details = grpc_slice_from_copied_string(msg);
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = (grpc_status_code)status;
	ops[n].data.send_status_from_server.status_details = &details;
	err = grpc_call_start_batch(call->gcall, ops, n + 1, &call->done_tag,
	    NULL);
	grpc_slice_unref(details);
	if (err == GRPC_CALL_OK)
		return (0);
	grpc_call_cancel(call->gcall, NULL);
	return (KP_EIO);
}

/* What rpc_core_reply_buf() returns for an empty message. */
static uint8_t	empty_reply[1];

/*
 * A buffer of len bytes for a unary answer, in the slice it will be sent
 * in (rpc_call_reply_buf): packed there, the answer is never copied.
 */

uint8_t *
rpc_core_reply_buf(struct rpc_call *call, size_t len)
{
	grpc_byte_buffer	*bb;
	grpc_slice_buffer	*sb;
	grpc_slice		 s;

	if (call->resp_buf != NULL)
		grpc_byte_buffer_destroy(call->resp_buf);
	call->resp_buf = NULL;
	call->resp_ptr = NULL;
	/*
	 * An empty message (the answer to a request without claims): a
	 * buffer of no slice, and a pointer only to say it is ready, never
	 * written through. A 1-byte slice here went out as the message, its
	 * byte uninitialized (issue 28).
	 */
	if (len == 0) {
		if ((bb = grpc_raw_byte_buffer_create(NULL, 0)) == NULL)
			return (NULL);
		call->resp_buf = bb;
		call->resp_ptr = empty_reply;
		call->resp_size = 0;
		return (call->resp_ptr);
	}
	/* Never inlined: its bytes stay where they are when the slice is
	 * copied into the byte buffer. */
	s = grpc_slice_malloc_large(len);
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	if (bb == NULL)
		return (NULL);
	call->resp_buf = bb;
	sb = &bb->data.raw.slice_buffer;
	call->resp_ptr = GRPC_SLICE_START_PTR(sb->slices[0]);
	call->resp_size = len;
	return (call->resp_ptr);
}

/* Unary answer: one batch with metadata, message and status. */
int
rpc_core_reply(struct rpc_call *call, int status, const char *msg,
    const uint8_t *resp, size_t len)
{
	grpc_op		 ops[3];
	size_t		 n = 0;

	memset(ops, 0, sizeof(ops));
	ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (status == RPC_OK) {
		if (call->resp_buf != NULL && resp == call->resp_ptr &&
		    len == call->resp_size) {
			call->send_buf = call->resp_buf;
			call->resp_buf = NULL;
		} else if ((call->send_buf = core_buffer(resp, len)) == NULL) {
			grpc_call_cancel(call->gcall, NULL);
			return (KP_ENOMEM);
		}
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = call->send_buf;
	}
	return (core_final(call, ops, n, status, msg));
}

/* One streamed message; the caller holds call->lock. */
int
rpc_core_send(struct rpc_call *call, const uint8_t *msg, size_t len)
{
	grpc_op		 ops[2];
	size_t		 n = 0;

	if ((call->send_buf = core_buffer(msg, len)) == NULL)
		return (KP_ENOMEM);
	memset(ops, 0, sizeof(ops));
	if (!call->md_sent)
		ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[n].op = GRPC_OP_SEND_MESSAGE;
	ops[n++].data.send_message.send_message = call->send_buf;
	if (grpc_call_start_batch(call->gcall, ops, n, &call->send_tag,
	    NULL) != GRPC_CALL_OK) {
		grpc_byte_buffer_destroy(call->send_buf);
		call->send_buf = NULL;
		return (KP_EPIPE);
	}
	call->md_sent = 1;
	return (0);
}

/* End a stream; the caller holds call->lock. */
int
rpc_core_finish(struct rpc_call *call, int status, const char *msg)
{
	grpc_op		 ops[2];
	size_t		 n = 0;

	memset(ops, 0, sizeof(ops));
	if (!call->md_sent)
		ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	call->md_sent = 1;
	return (core_final(call, ops, n, status, msg));
}

/* The last reference to a call is gone. */
void
rpc_core_call_release(struct rpc_call *call)
{
	if (call->send_buf != NULL)
		grpc_byte_buffer_destroy(call->send_buf);
	call->send_buf = NULL;
	if (call->resp_buf != NULL)
		grpc_byte_buffer_destroy(call->resp_buf);
	call->resp_buf = NULL;
	if (call->req_buf != NULL)
		grpc_byte_buffer_destroy(call->req_buf);
	call->req_buf = NULL;
	if (call->gcall != NULL)
		grpc_call_unref(call->gcall);
	call->gcall = NULL;
}
