/*
 * call.c - one call's life on our side of gRPC: references, interceptors,
 * call logging (as the Go helper's logging interceptor, upstream-api.md
 * 4.5) and the rpc_call_* functions handlers use.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "rpc/rpc_int.h"

#define RPC_LOG_MSG	1024	/* bytes of a rendered message in the log */
#define RPC_MAX_STATUS	16	/* UNAUTHENTICATED, the last gRPC code */

/* Per process; each server process numbers its own calls. */
static atomic_uint_fast64_t	 rpc_request_id;

static const char *const rpc_status_names[RPC_MAX_STATUS + 1] = {
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
	"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
	"Internal", "Unavailable", "DataLoss", "Unauthenticated"
};

/* A new call object: lock and cond made, nothing else set. */
static struct rpc_call *
call_alloc(void)
{
	struct rpc_call	*call;

	if ((call = calloc(1, sizeof(*call))) == NULL)
		return (NULL);
	if (pthread_mutex_init(&call->lock, NULL) != 0) {
		free(call);
		return (NULL);
	}
	if (pthread_cond_init(&call->cond, NULL) != 0) {
		pthread_mutex_destroy(&call->lock);
		free(call);
		return (NULL);
	}
	return (call);
}

void
rpc_call_destroy(struct rpc_call *call)
{
	pthread_cond_destroy(&call->cond);
	pthread_mutex_destroy(&call->lock);
	free(call);
}

/*
 * A call from the server's pool (server.c) or a new one: a calloc and a
 * mutex and condvar made per call were a measurable part of a 1-claim
 * call. Everything from srv on starts zeroed either way.
 */
struct rpc_call *
rpc_call_new(struct rpc_server *srv, const struct rpc_method *method)
{
	struct rpc_call	*call;
	size_t		 off = offsetof(struct rpc_call, srv);

	if ((call = rpc_server_call_take(srv)) == NULL &&
	    (call = call_alloc()) == NULL) {
		rpc_server_call_gone(srv, NULL, 0);
		return (NULL);
	}
	memset((char *)call + off, 0, sizeof(*call) - off);
	call->next = NULL;
	call->srv = srv;
	call->method = method;
	call->deadline_ms = -1;
	call->close_tag = (struct rpc_tag){ TAG_CLOSE, call };
	call->send_tag = (struct rpc_tag){ TAG_SEND, call };
	call->done_tag = (struct rpc_tag){ TAG_DONE, call };
	/* Unknown methods: only the answering batch holds the call. */
	atomic_init(&call->refs, method != NULL ? 2 : 1);
	atomic_init(&call->cancelled, 0);
	if (method != NULL)
		call->request_id = atomic_fetch_add(&rpc_request_id, 1) + 1;
	call->stats_method = -1;
	if (method != NULL)
		rpc_stats_start(call);
	return (call);
}

void
rpc_call_unref(struct rpc_call *call)
{
	struct rpc_server	*srv = call->srv;
	int			 in_flight;

	if (atomic_fetch_sub(&call->refs, 1) != 1)
		return;
	in_flight = call->in_flight;
	rpc_stats_end(call, -1);	/* never answered */
	rpc_core_call_release(call);
	rpc_server_call_gone(srv, call, in_flight);
}

static const char *
status_name(int status)
{
	if (status < 0 || status > RPC_MAX_STATUS)
		return ("Unknown");
	return (rpc_status_names[status]);
}

static int
call_logs(const struct rpc_call *call)
{
	return (call->srv->verbosity >= 0 &&
	    log_enabled(call->srv->verbosity));
}

static void
render(rpc_format_fn fn, const uint8_t *msg, size_t len, char *out,
    size_t size)
{
	if (fn != NULL) {
		out[0] = '\0';
		fn(msg, len, out, size);
		out[size - 1] = '\0';
	} else
		snprintf(out, size, "<%zu bytes>", len);
}

static void
log_start(const struct rpc_call *call)
{
	char	 text[RPC_LOG_MSG];

	if (!call_logs(call))
		return;
	render(call->method->format_request, call->req, call->req_len, text,
	    sizeof(text));
	log_info(call->srv->verbosity, "\"handling %s\" requestID=%" PRIu64
	    " method=\"%s\" request=\"%s\"",
	    call->method->server_streaming ? "stream" : "request",
	    call->request_id, call->method->path, text);
}

/* Failures are logged whatever the verbosity, as upstream. */
static void
log_result(const struct rpc_call *call, int status, const char *msg,
    const uint8_t *resp, size_t len)
{
	const char	*what;
	char		 text[RPC_LOG_MSG];

	what = call->method->server_streaming ? "stream" : "request";
	if (status != RPC_OK) {
		log_errorx("\"handling %s failed\" err=\"rpc error: code = %s"
		    " desc = %s\" requestID=%" PRIu64 " method=\"%s\"", what,
		    status_name(status), msg, call->request_id,
		    call->method->path);
		return;
	}
	if (!call_logs(call))
		return;
	if (call->method->server_streaming) {
		log_info(call->srv->verbosity, "\"handling stream succeeded\""
		    " requestID=%" PRIu64 " method=\"%s\"", call->request_id,
		    call->method->path);
		return;
	}
	render(call->method->format_response, resp, len, text, sizeof(text));
	log_info(call->srv->verbosity, "\"handling request succeeded\""
	    " requestID=%" PRIu64 " method=\"%s\" response=\"%s\"",
	    call->request_id, call->method->path, text);
}

static void
log_send(const struct rpc_call *call, const uint8_t *msg, size_t len,
    const char *phase)
{
	char	 text[RPC_LOG_MSG];

	if (!call_logs(call))
		return;
	if (msg == NULL) {	/* an asynchronous send's completion */
		log_info(call->srv->verbosity, "\"sending stream message%s\""
		    " requestID=%" PRIu64 " method=\"%s\"", phase,
		    call->request_id, call->method->path);
		return;
	}
	render(call->method->format_response, msg, len, text, sizeof(text));
	log_info(call->srv->verbosity, "\"sending stream message%s\""
	    " requestID=%" PRIu64 " method=\"%s\" message=\"%s\"", phase,
	    call->request_id, call->method->path, text);
}

static void
call_info(const struct rpc_call *call, struct kp_call *kc)
{
	memset(kc, 0, sizeof(*kc));
	kc->request_id = call->request_id;
	kc->server = call->srv->name;
	kc->method = call->method->path;
	kc->request = call->req;
	kc->request_len = call->req_len;
	kc->message = "";
}

static const struct interceptor *
chain(const struct rpc_call *call, size_t *n)
{
	if (call->method->server_streaming) {
		*n = call->srv->n_stream;
		return (call->srv->stream);
	}
	*n = call->srv->n_unary;
	return (call->srv->unary);
}

/* BEFORE, in order; the first one returning a status > 0 rejects. */
static int
intercept_before(struct rpc_call *call, char *msg, size_t size)
{
	const struct interceptor	*ic;
	struct kp_call			 kc;
	size_t				 i, n;
	int				 rc;

	ic = chain(call, &n);
	call_info(call, &kc);
	for (i = 0; i < n; i++) {
		msg[0] = '\0';
		rc = ic[i].fn(ic[i].user, KP_CALL_BEFORE, &kc, msg, size);
		msg[size - 1] = '\0';
		if (rc > 0)
			return (rc > RPC_MAX_STATUS ? RPC_UNKNOWN : rc);
		call->n_passed = i + 1;
	}
	return (0);
}

/* AFTER (or STREAM_SEND) for the interceptors whose BEFORE passed. */
static void
intercept(struct rpc_call *call, enum kp_call_phase phase,
    const uint8_t *resp, size_t len, int status, const char *msg)
{
	const struct interceptor	*ic;
	struct kp_call			 kc;
	char				 ignored[KP_ERROR_SIZE];
	size_t				 i, n;

	ic = chain(call, &n);
	call_info(call, &kc);
	kc.response = resp;
	kc.response_len = len;
	kc.status = status;
	kc.message = msg;
	for (i = 0; i < n && i < call->n_passed; i++) {
		ignored[0] = '\0';
		(void)ic[i].fn(ic[i].user, phase, &kc, ignored,
		    sizeof(ignored));
	}
}

static void
call_answer(struct rpc_call *call, int status, const char *msg)
{
	if (call->method->server_streaming)
		(void)rpc_call_finish(call, status, msg);
	else
		(void)rpc_call_reply(call, status, msg, NULL, 0);
}

/* Run a call: interceptors, then the handler; drops the dispatch ref. */
void
rpc_call_run(struct rpc_call *call)
{
	char	 msg[KP_ERROR_SIZE];
	int	 rc;

	log_start(call);
	if ((rc = intercept_before(call, msg, sizeof(msg))) > 0)
		call_answer(call, rc, msg);
	else
		call->method->handler(call->method->user, call, call->req,
		    call->req_len);
	rpc_call_unref(call);
}

/* Fail a call without running its handler; drops the dispatch ref. */
void
rpc_call_abort(struct rpc_call *call, int status, const char *msg)
{
	call_answer(call, status, msg);
	rpc_call_unref(call);
}

/*
 * The call's RECV_CLOSE completed: cancelled by the client, its deadline
 * or the server's stop (gRPC cancels a call whose deadline passed). The
 * rpc_call_on_cancel() function runs here, under the call's lock, so that
 * once rpc_call_on_cancel(call, NULL, NULL) returned it neither runs nor
 * will.
 */
void
rpc_call_closed(struct rpc_call *call, int cancelled)
{
	rpc_closed_fn	 fn;
	void		*arg;
	void		(*cfn)(void *);

	if (cancelled)
		atomic_store(&call->cancelled, 1);
	pthread_mutex_lock(&call->lock);
	/* rpc_call_on_cancel's fn runs under lock: once unset, it is not
	 * running. */
	if (cancelled && (cfn = call->cancel_fn) != NULL) {
		call->cancel_fn = NULL;
		cfn(call->cancel_arg);
	}
	call->closed = 1;
	fn = call->closed_fn;
	arg = call->closed_arg;
	call->closed_fn = NULL;
	pthread_mutex_unlock(&call->lock);
	if (fn != NULL)
		fn(arg);
	rpc_call_unref(call);
}

int
rpc_call_on_cancel(struct rpc_call *call, void (*fn)(void *), void *arg)
{
	int	 rv = 0;

	if (call == NULL || call->method == NULL)
		return (KP_EINVAL);
	pthread_mutex_lock(&call->lock);
	if (fn != NULL && (atomic_load(&call->cancelled) ||
	    atomic_load(&call->srv->halting)))
		rv = KP_EALREADY;
	else {
		call->cancel_fn = fn;
		call->cancel_arg = arg;
	}
	pthread_mutex_unlock(&call->lock);
	return (rv);
}

int
rpc_call_resume(struct rpc_call *call, void (*fn)(void *, struct rpc_call *),
    void *arg)
{
	if (call == NULL || call->method == NULL || fn == NULL)
		return (KP_EINVAL);
	atomic_fetch_add(&call->refs, 1);
	call->resume_fn = fn;
	call->resume_arg = arg;
	rpc_server_resume(call->srv, call);
	return (0);
}

/* A pool thread runs what rpc_call_resume() queued; drops its ref. */
void
rpc_call_continue(struct rpc_call *call)
{
	void	(*fn)(void *, struct rpc_call *) = call->resume_fn;

	call->resume_fn = NULL;
	fn(call->resume_arg, call);
	rpc_call_unref(call);
}

void
rpc_call_on_close(struct rpc_call *call, rpc_closed_fn closed, void *arg)
{
	pthread_mutex_lock(&call->lock);
	if (!call->closed) {
		call->closed_fn = closed;
		call->closed_arg = arg;
	}
	pthread_mutex_unlock(&call->lock);
}

void
rpc_call_sent(struct rpc_call *call, int success)
{
	rpc_sent_fn	 fn;
	void		*arg;

	pthread_mutex_lock(&call->lock);
	call->send_busy = 0;
	call->send_ok = success;
	call->send_gen++;
	fn = call->sent_fn;
	arg = call->sent_arg;
	call->sent_fn = NULL;
	call->sent_arg = NULL;
	pthread_cond_broadcast(&call->cond);
	pthread_mutex_unlock(&call->lock);
	if (fn != NULL) {
		if (success)
			log_send(call, NULL, 0, " succeeded");
		else
			log_errorx("\"sending stream message failed\" "
			    "err=\"client is gone\" requestID=%" PRIu64
			    " method=\"%s\"", call->request_id,
			    call->method->path);
		fn(arg, success);
	}
	rpc_call_unref(call);
}

/* Claim the one answer of a call, after any message still in flight. */
static int
claim_answer(struct rpc_call *call)
{
	int	 rv = 0;

	pthread_mutex_lock(&call->lock);
	if (call->send_busy)
		rpc_server_blocking(call->srv);
	while (call->send_busy)
		pthread_cond_wait(&call->cond, &call->lock);
	if (call->answered)
		rv = KP_EINVAL;
	call->answered = 1;
	pthread_mutex_unlock(&call->lock);
	return (rv);
}

static int
check_status(int status)
{
	return (status < 0 || status > RPC_MAX_STATUS ? RPC_UNKNOWN : status);
}

int
rpc_call_reply(struct rpc_call *call, int status, const char *msg,
    const uint8_t *resp, size_t len)
{
	int	 rv;

	if (call == NULL || call->method == NULL ||
	    call->method->server_streaming || (resp == NULL && len > 0))
		return (KP_EINVAL);
	status = check_status(status);
	if (msg == NULL || status == RPC_OK)
		msg = "";
	if (status != RPC_OK) {
		resp = NULL;
		len = 0;
	}
	if (claim_answer(call) != 0)
		return (KP_EINVAL);
	intercept(call, KP_CALL_AFTER, resp, len, status, msg);
	log_result(call, status, msg, resp, len);
	rpc_stats_end(call, status);
	if ((rv = rpc_core_reply(call, status, msg, resp, len)) != 0)
		rpc_call_unref(call);
	return (rv);
}

uint8_t *
rpc_call_reply_buf(struct rpc_call *call, size_t len)
{
	if (call == NULL || call->method == NULL ||
	    call->method->server_streaming)
		return (NULL);
	return (rpc_core_reply_buf(call, len));
}

/* Wait for our message's batch; returns whether gRPC took it. */
static int
send_wait(struct rpc_call *call, const uint8_t *msg, size_t len)
{
	uint64_t	 gen;
	int		 ok;

	atomic_fetch_add(&call->refs, 1);
	rpc_server_blocking(call->srv);
	pthread_mutex_lock(&call->lock);
	gen = call->send_gen;
	if (rpc_core_send(call, msg, len) != 0) {
		call->send_busy = 0;
		pthread_cond_broadcast(&call->cond);
		pthread_mutex_unlock(&call->lock);
		rpc_call_unref(call);
		return (0);
	}
	while (call->send_gen == gen)
		pthread_cond_wait(&call->cond, &call->lock);
	ok = call->send_ok;
	pthread_mutex_unlock(&call->lock);
	return (ok);
}

int
rpc_call_send(struct rpc_call *call, const uint8_t *msg, size_t len)
{
	if (call == NULL || call->method == NULL ||
	    !call->method->server_streaming || (msg == NULL && len > 0))
		return (KP_EINVAL);
	pthread_mutex_lock(&call->lock);
	if (call->send_busy)
		rpc_server_blocking(call->srv);
	while (call->send_busy)
		pthread_cond_wait(&call->cond, &call->lock);
	if (call->answered) {
		pthread_mutex_unlock(&call->lock);
		return (KP_EINVAL);
	}
	call->send_busy = 1;
	pthread_mutex_unlock(&call->lock);
	intercept(call, KP_STREAM_SEND, msg, len, RPC_OK, "");
	log_send(call, msg, len, "");
	if (!send_wait(call, msg, len)) {
		log_errorx("\"sending stream message failed\" err=\"client is"
		    " gone\" requestID=%" PRIu64 " method=\"%s\"",
		    call->request_id, call->method->path);
		return (KP_EPIPE);
	}
	log_send(call, msg, len, " succeeded");
	return (0);
}

/*
 * Asynchronous send: the batch is started and the completion (TAG_SEND,
 * rpc_call_sent) calls done instead of waking a waiting sender, so a
 * reader that never reads holds no thread of ours.
 */
int
rpc_call_send_async(struct rpc_call *call, const uint8_t *msg, size_t len,
    rpc_sent_fn done, void *arg)
{
	int	 rv;

	if (call == NULL || call->method == NULL ||
	    !call->method->server_streaming || (msg == NULL && len > 0) ||
	    done == NULL)
		return (KP_EINVAL);
	pthread_mutex_lock(&call->lock);
	if (call->answered) {
		pthread_mutex_unlock(&call->lock);
		return (KP_EINVAL);
	}
	if (call->send_busy) {
		pthread_mutex_unlock(&call->lock);
		return (KP_EBUSY);
	}
	call->send_busy = 1;
	pthread_mutex_unlock(&call->lock);
	intercept(call, KP_STREAM_SEND, msg, len, RPC_OK, "");
	log_send(call, msg, len, "");
	atomic_fetch_add(&call->refs, 1);
	pthread_mutex_lock(&call->lock);
	call->sent_fn = done;
	call->sent_arg = arg;
	if ((rv = rpc_core_send(call, msg, len)) != 0) {
		call->sent_fn = NULL;
		call->sent_arg = NULL;
		call->send_busy = 0;
		pthread_cond_broadcast(&call->cond);
	}
	pthread_mutex_unlock(&call->lock);
	if (rv != 0)
		rpc_call_unref(call);
	return (rv);
}

int
rpc_call_finish(struct rpc_call *call, int status, const char *msg)
{
	int	 rv;

	if (call == NULL || call->method == NULL ||
	    !call->method->server_streaming)
		return (KP_EINVAL);
	status = check_status(status);
	if (msg == NULL || status == RPC_OK)
		msg = "";
	if (claim_answer(call) != 0)
		return (KP_EINVAL);
	intercept(call, KP_CALL_AFTER, NULL, 0, status, msg);
	log_result(call, status, msg, NULL, 0);
	rpc_stats_end(call, status);
	/*
	 * Held across the unlock below: a caller that holds no reference
	 * of its own (the health pump finishing a stream whose handler
	 * returned, nodeserver/health.c) has only the answer's, and the
	 * final batch may complete on a poller thread and drop it before
	 * this thread unlocks: the unlock would then be of a freed call's
	 * mutex, or of a pooled one another call already uses.
	 */
	atomic_fetch_add(&call->refs, 1);
	pthread_mutex_lock(&call->lock);
	rv = rpc_core_finish(call, status, msg);
	pthread_mutex_unlock(&call->lock);
	if (rv != 0)
		rpc_call_unref(call);
	rpc_call_unref(call);
	return (rv);
}

int
rpc_call_cancelled(const struct rpc_call *call)
{
	struct rpc_call	*c = (struct rpc_call *)call;

	if (c == NULL)
		return (1);
	if (atomic_load(&c->cancelled) || atomic_load(&c->srv->halting))
		return (1);
	return (c->deadline_ms >= 0 && rpc_now_ms() >= c->deadline_ms);
}

int64_t
rpc_call_time_left_ms(const struct rpc_call *call)
{
	int64_t	 left;

	if (call == NULL || call->deadline_ms < 0)
		return (-1);
	left = call->deadline_ms - rpc_now_ms();
	return (left > 0 ? left : 0);
}

const char *
rpc_call_method(const struct rpc_call *call)
{
	if (call == NULL || call->method == NULL)
		return ("");
	return (call->method->path);
}
