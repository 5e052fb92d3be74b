/*
 * rpc.h - the one gRPC C-core adapter, used by the registrar and the
 * nodeserver. Only rpc/grpc_core.c includes <grpc/grpc.h>; nothing outside
 * rpc/ names a grpc_* symbol (a check in `make check` enforces it).
 *
 * Model: the server owns a listening AF_UNIX fd it did not create (inherited
 * from the supervisor). rpc_server_run() runs an accept4() loop on it,
 * checks SO_PEERCRED against the allowed uids, holds at most max_conns
 * connections, waits (bounded) for each one's HTTP/2 client preface, and
 * then hands it to gRPC (grpc_server_add_channel_from_fd). Calls to registered
 * methods run their handler on a pool thread; calls to any other method get
 * UNIMPLEMENTED. A handler answers with rpc_call_reply(),
 * possibly later and from another thread; unary calls must be answered
 * exactly once.
 *
 * Threads: a pool of cfg->workers + 1 threads sharing the completion queue
 * (server.c): one polls at a time and runs the handler of a call it takes
 * itself; at most cfg->workers handlers run at once, calls beyond wait in
 * arrival order; a handler running longer than 2 ms hands the queue to
 * another pool thread. And the thread in rpc_server_run() accepting.
 * None of them takes signals. gRPC's own threads inherit the signal mask of
 * the thread that calls rpc_server_new() (and of any thread that calls
 * rpc_*): block every signal before rpc_server_new() and handle them with
 * sigwait() or a self-pipe passed as stop_fd (DESIGN section 8).
 */
#ifndef KP_RPC_H
#define KP_RPC_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kubeletplugin.h"
#include "base/config.h"
#include "ipc/ipc.h"

/* gRPC status codes used by the handlers (values of grpc_status_code). */
enum rpc_status {
	RPC_OK = 0,
	RPC_CANCELLED = 1,
	RPC_UNKNOWN = 2,
	RPC_INVALID_ARGUMENT = 3,
	RPC_DEADLINE_EXCEEDED = 4,
	RPC_PERMISSION_DENIED = 7,
	RPC_RESOURCE_EXHAUSTED = 8,
	RPC_FAILED_PRECONDITION = 9,
	RPC_UNIMPLEMENTED = 12,
	RPC_INTERNAL = 13,
	RPC_UNAVAILABLE = 14
};

#define RPC_MAX_RECV_BYTES (4 * 1024 * 1024)	/* as grpc-go's default */

struct rpc_server;
struct rpc_call;

/*
 * A method handler. req/len: the serialized request, borrowed until the
 * handler returns. The handler must (now or later, from any thread) call
 * rpc_call_reply() for unary methods, or rpc_call_send()... then
 * rpc_call_finish() for server-streaming ones.
 */
typedef void (*rpc_handler_fn)(void *user, struct rpc_call *call,
    const uint8_t *req, size_t len);

/*
 * Renders a serialized message as text for call logging (the Go helper logs
 * the whole message). Writes at most size bytes including the NUL.
 */
typedef void (*rpc_format_fn)(const uint8_t *msg, size_t len, char *out,
    size_t size);

struct rpc_method {
	const char *path;	/* "/pkg.Service/Method" */
	int server_streaming;	/* 0: unary; 1: server streaming */
	/*
	 * 1: cheap, runs inside the poll and counts against no worker (so
	 * also beside busy workers, within the 2 ms hand-over). Such a
	 * handler must not block. Ignored for streaming methods.
	 */
	int inline_ok;
	rpc_handler_fn handler;
	void *user;
	rpc_format_fn format_request;	/* optional */
	rpc_format_fn format_response;	/* optional */
};

/*
 * Interceptors (include/kubeletplugin.h kp_interceptor_fn): KP_CALL_BEFORE
 * in table order on the thread about to run the handler; the first that
 * returns a status > 0 rejects the call with its message (codes above 16
 * become UNKNOWN) and neither later interceptors nor the handler run.
 * KP_CALL_AFTER in table order, only for those whose BEFORE passed, on the
 * thread that answers. Stream interceptors also see KP_STREAM_SEND for each
 * message, on the sending thread. kp_call.request_id counts this process's
 * calls from 1.
 */
struct rpc_config {
	const char *name;		/* "registrar" or "nodeserver": logs */
	int listen_fd;			/* listening AF_UNIX socket; borrowed */
	const uid_t *allowed_uids;	/* peers allowed to connect */
	size_t n_allowed_uids;
	const struct rpc_method *methods;	/* borrowed for server life */
	size_t n_methods;
	const struct interceptor *unary;	/* in order added */
	size_t n_unary;
	const struct interceptor *stream;
	size_t n_stream;
	/*
	 * Call logging as the Go helper's interceptor: "handling request"
	 * (method, request ID, request rendered by format_request or its
	 * length) and "handling request succeeded" (the response) at this
	 * klog verbosity; < 0 disables them. "handling request failed"
	 * (status and message) is logged as an error whatever the value.
	 */
	int verbosity;
	int workers;		/* handler threads, 1..64 (1 = serialized) */
	/*
	 * Connections (accept.c): at most max_conns at once, counting those
	 * still in their handshake (1..KP_MAX_CONNS; 0: KP_DEF_MAX_CONNS);
	 * one over it is accepted and closed at once. A new connection is
	 * handed to gRPC only once it sent the whole HTTP/2 client preface,
	 * within handshake_ms (KP_MIN..KP_MAX_HANDSHAKE_MS; 0: the
	 * default); otherwise, or if it sends anything else, it is closed.
	 * keepalive_ms: idle time after which the core pings a connection
	 * and closes it if no answer came within RPC_KEEPALIVE_TIMEOUT_MS
	 * (0: RPC_DEF_KEEPALIVE_MS; tests shorten it). Idle connections that
	 * answer are never closed.
	 */
	int max_conns;
	int handshake_ms;
	int keepalive_ms;
	/*
	 * rpc_serve_child() on SIGTERM: refuse new calls and give the unary
	 * calls in flight this long to finish before stopping
	 * (rpc_server_drain); 0: stop at once.
	 */
	int drain_ms;
	/*
	 * Held around the READY frame rpc_serve_child() sends (NULL: none):
	 * the lock the child's other threads take to send on its channel
	 * (a heartbeat answer may be sent the moment READY arrived, before
	 * ipc_send() returned here).
	 */
	pthread_mutex_t *ctl_lock;
};

#define RPC_DEF_KEEPALIVE_MS	 60000
#define RPC_MIN_KEEPALIVE_MS	 100
#define RPC_KEEPALIVE_TIMEOUT_MS 20000

/*
 * rpc_server_new - initialise gRPC (grpc_init: never before fork) and
 * create a server for cfg. Everything in cfg is copied except the method
 * and interceptor tables, which must outlive the server. Signals must be
 * blocked in the calling thread already (see the top of this file).
 * Errors: KP_EINVAL (bad cfg: listen_fd < 0, workers, max_conns,
 * handshake_ms or keepalive_ms out of range, a method without '/'-path or
 * handler, an interceptor without fn), KP_ENOMEM,
 * KP_EIO (gRPC refused, e.g. a method path registered twice).
 */
int rpc_server_new(const struct rpc_config *cfg, struct rpc_server **out);

/*
 * rpc_server_run - serve until *quit becomes non-zero (looked at every
 * 100 ms; quit may be NULL: then the accept loop sleeps until stop_fd or
 * a connection needs it, no periodic wake-up) or stop_fd becomes readable
 * or hung up (stop_fd may be -1), then shut down: stop accepting, cancel calls in flight (their
 * handlers see rpc_call_cancelled() == 1; calls still queued for a worker
 * fail with UNAVAILABLE without running their handler, resumed ones run
 * their rpc_call_resume() function, which answers), wait until every
 * call has been answered, drain and destroy. A handler that never answers
 * therefore stalls the shutdown (logged every 5 s). Blocks the calling
 * thread; call it once per server. Sets O_NONBLOCK on listen_fd.
 * Returns 0 after a requested stop, KP_EIO if the listener failed,
 * KP_ENOMEM if threads could not be started, KP_EINVAL on a second call.
 */
int rpc_server_run(struct rpc_server *srv, volatile sig_atomic_t *quit,
    int stop_fd);

/*
 * rpc_server_drain - from another thread than rpc_server_run()'s: from
 * now on every new call fails with UNAVAILABLE without running its
 * handler (calls already dispatched, queued ones included, still run);
 * wait at most ms milliseconds until the unary calls in flight have been
 * answered. Streams are not waited for. Returns how many still run; stop
 * the server afterwards (their handlers then see rpc_call_cancelled()).
 */
size_t rpc_server_drain(struct rpc_server *srv, int ms);

/* rpc_server_free - free the server and call grpc_shutdown(). */
void rpc_server_free(struct rpc_server *srv);

/*
 * rpc_call_reply - finish a unary call: status RPC_OK with resp/len as the
 * response (copied), or an error status with msg (copied; NULL = "").
 * The call is invalid afterwards, except inside its own handler, where a
 * second answer safely returns KP_EINVAL. The unary interceptors' AFTER
 * phase and the call log run here, on the calling thread.
 * Returns 0; KP_EINVAL if the call was already answered or is a streaming
 * one; KP_EIO or KP_ENOMEM if gRPC refused the answer (the call is then
 * cancelled and gone all the same).
 */
int rpc_call_reply(struct rpc_call *call, int status, const char *msg,
    const uint8_t *resp, size_t len);

/*
 * rpc_call_reply_buf - a buffer of len bytes to build a unary call's
 * answer in, inside the slice gRPC sends: rpc_call_reply(call, RPC_OK,
 * NULL, buf, len) with exactly this buffer and len sends it without a
 * copy. Owned by the call (a second request replaces it; an answer with an
 * error status, or none, drops it); only before the call is answered. Not
 * for streaming calls. Returns NULL for a bad call or when out of memory
 * (then reply with a buffer of one's own, which is copied).
 */
uint8_t *rpc_call_reply_buf(struct rpc_call *call, size_t len);

/*
 * rpc_call_send - send one message on a server-streaming call (copied),
 * waiting until gRPC accepted it. Blocks on the completion-queue thread:
 * never call it from an inline_ok handler or an interceptor. Sends from
 * several threads are serialized. Returns 0, KP_EINVAL (finished or not a
 * streaming call), or KP_EPIPE if the client went away (then finish the
 * call).
 */
int rpc_call_send(struct rpc_call *call, const uint8_t *msg, size_t len);

/*
 * Completion of rpc_call_send_async(): ok 1 if gRPC sent the message, 0 if
 * the client went away (then finish the call). Runs on the
 * completion-queue thread: it must not block or call rpc_call_*().
 */
typedef void (*rpc_sent_fn)(void *arg, int ok);

/*
 * rpc_call_send_async - start sending one message on a server-streaming
 * call (copied) and return at once; done(arg, ok) follows when gRPC has
 * taken it or the call failed. One message at a time per call: a reader
 * that does not read keeps its message in flight and no thread waits
 * for it (the caller decides what to drop). Stream interceptors see
 * KP_STREAM_SEND here, on the calling thread. Returns 0 (done will be
 * called), KP_EBUSY (a send is in flight), KP_EINVAL (finished or not a
 * streaming call), KP_EPIPE or KP_ENOMEM (done will not be called).
 */
int rpc_call_send_async(struct rpc_call *call, const uint8_t *msg,
    size_t len, rpc_sent_fn done, void *arg);

/*
 * The client's end of a call closed (rpc_call_on_close): it cancelled,
 * went away or its deadline passed, or the server stops. Runs on the
 * completion-queue thread: it must not block or call rpc_call_*().
 */
typedef void (*rpc_closed_fn)(void *arg);

/*
 * rpc_call_on_close - have closed(arg) called once when call's client end
 * closes (after which rpc_call_cancelled() may be 1), so a streaming
 * handler that waits needs no timer to notice a cancel (issue 27). If it
 * closed already, closed is not called: look at rpc_call_cancelled()
 * after this returns. Replaces an earlier function; NULL removes it.
 * Valid until the call is finished.
 */
void rpc_call_on_close(struct rpc_call *call, rpc_closed_fn closed,
    void *arg);

/*
 * rpc_call_finish - end a server-streaming call with a status (msg copied;
 * NULL = ""), after any message in flight. The call is invalid afterwards,
 * as after rpc_call_reply(). Returns as rpc_call_reply().
 */
int rpc_call_finish(struct rpc_call *call, int status, const char *msg);

/*
 * rpc_call_cancelled - 1 once the client cancelled, the deadline passed or
 * the server is stopping; cheap enough to poll.
 */
int rpc_call_cancelled(const struct rpc_call *call);

/*
 * rpc_call_on_cancel - have fn(arg) called once when the call is
 * cancelled: by the client, by gRPC when its deadline passed, or by the
 * server's stop. fn runs on a completion-queue thread under the call's
 * lock: it must not block nor call rpc_call_*() on this call (handing the
 * call to rpc_call_resume() is fine). fn NULL withdraws it: once that
 * returned, fn neither runs nor will. Only before the call is answered,
 * by the thread that owns its answer. Returns 0; KP_EALREADY if the call
 * is cancelled already (fn is then not kept, nor called); KP_EINVAL for a
 * bad call.
 */
int	rpc_call_on_cancel(struct rpc_call *call, void (*fn)(void *),
	    void *arg);

/*
 * rpc_call_resume - run fn(arg, call) on a pool thread, as a handler (it
 * counts against cfg->workers; calls waiting for a worker come first, in
 * order), also while the server drains or stops: fn then sees
 * rpc_call_cancelled() == 1 and must still answer. For a handler that
 * returned without answering while it waited for something (no thread is
 * held meanwhile): from any thread, at most once per wait. The call stays
 * valid until fn answered it. Returns 0 or KP_EINVAL (NULL call or fn).
 */
int	rpc_call_resume(struct rpc_call *call,
	    void (*fn)(void *, struct rpc_call *), void *arg);

/*
 * rpc_call_time_left_ms - milliseconds until the call's deadline (0 once
 * it passed), or -1 when the client set none.
 */
int64_t	rpc_call_time_left_ms(const struct rpc_call *call);

/* rpc_call_method - the call's full method path; valid for the call. */
const char *rpc_call_method(const struct rpc_call *call);

/*
 * rpc_stats_take - this process's gRPC counters since the last call
 * (calls by method and code, latency buckets) and its calls in progress,
 * into p->rpc and p->in_flight (allocated; free with rpc_stats_free).
 * KP_ENOMEM leaves the counters for the next call.
 */
int	rpc_stats_take(Kpipc__Pong *);
void	rpc_stats_free(Kpipc__Pong *);

#endif /* KP_RPC_H */
