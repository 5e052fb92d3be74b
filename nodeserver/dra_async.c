/*
 * dra_async.c - a NodePrepareResources call whose claim look-ups hold no
 * thread (issue 28). The handler decodes the request, lets the journal
 * answer the claims it prepared before, starts the look-ups of the others
 * (struct dra_lookup_async: nodeserver/ns_lookup.c) and returns: the
 * worker is free for other calls (an unprepare never queues behind a
 * prepare's look-ups). When they are answered, their time is up or the
 * call is cancelled, the call resumes on a worker (rpc_call_resume) and
 * goes on as a synchronous one does (dra.c dra_prepare_finish).
 *
 * Time: the look-ups get four fifths of what is left of the call's
 * deadline (36 s of kubelet's 45 s); what they did not get by then fails
 * its claim, and the hook prepares the claims that were found, which the
 * journal records: kubelet's retry finds them there and looks up only
 * the rest, so a backlog larger than one call's share of the API
 * server's rate limit converges. A call cancelled (by kubelet, or its
 * deadline) withdraws its look-ups at once (the supervisor and the
 * publisher drop them) and runs no hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nodeserver/dra.h"

#define LOOKUP_SHARE_NUM	4	/* of the time left: the look-ups' */
#define LOOKUP_SHARE_DEN	5
#define LOOKUP_NO_DEADLINE_MS	25000	/* a call without a deadline */
#define MSG_SIZE		(2 * KP_ERROR_SIZE)

struct dra_async {
	struct dra_ctx			*ctx;
	const struct dra_version_info	*info;
	struct rpc_call			*call;
	struct dra_request		 rq;
	struct dra_results		 r;
	struct dra_split		 k;
	void				*batch;
};

static void
async_free(struct dra_async *a)
{
	if (a->batch != NULL)
		a->ctx->lookup_async->lookup_end(a->batch, NULL, NULL, NULL, 0);
	dra_split_free(&a->k);
	dra_results_free(&a->r);
	dra_request_free(&a->rq);
	free(a);
}

/* Finish: the hook on what was found, the answer; a is freed. */
static void
async_finish(struct dra_async *a, struct rpc_call *call)
{
	struct dra_out	 o = { dra_reply_buf, call, 0 };
	uint8_t		*resp = NULL;
	size_t		 n = 0;
	char		 msg[MSG_SIZE];
	int		 st;

	msg[0] = '\0';
	if (rpc_call_cancelled(call)) {
		/* kubelet gave up: no hook starts for it. */
		snprintf(msg, sizeof(msg), "prepare resource claims: call "
		    "cancelled");
		st = RPC_CANCELLED;
	} else
		st = dra_prepare_finish(a->ctx, a->info, &a->rq, &a->k, &a->r,
		    &o, &resp, &n, msg, sizeof(msg));
	rpc_call_reply(call, st, st == RPC_OK ? NULL : msg, resp, n);
	if (o.malloced)
		free(resp);
	async_free(a);
}

/* On a worker again: collect the look-ups, go on. */
static void
async_resume(void *arg, struct rpc_call *call)
{
	struct dra_async	*a = arg;

	(void)rpc_call_on_cancel(call, NULL, NULL);
	a->ctx->lookup_async->lookup_end(a->batch, a->k.tmp, a->k.rc,
	    a->k.err, KP_ERROR_SIZE);
	a->batch = NULL;
	async_finish(a, call);
}

/* The batch finished (any thread, no lock of ours held). */
static void
async_done(void *arg)
{
	struct dra_async	*a = arg;

	(void)rpc_call_resume(a->call, async_resume, a);
}

/* The call was cancelled (a completion-queue thread): withdraw. */
static void
async_cancel(void *arg)
{
	struct dra_async	*a = arg;

	a->ctx->lookup_async->lookup_cancel(a->batch);
}

static int64_t
until_ms(struct rpc_call *call)
{
	struct timespec	 ts;
	int64_t		 now, left = rpc_call_time_left_ms(call);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	if (left < 0)
		return (now + LOOKUP_NO_DEADLINE_MS);
	return (now + left * LOOKUP_SHARE_NUM / LOOKUP_SHARE_DEN);
}

/*
 * dra_prepare_async - the handler's part of prepare call `call` (req/len
 * borrowed for the handler's time). Returns 0 when the call is taken: it
 * is answered here or once its look-ups ended; non-zero (out of memory
 * before anything happened) to handle it synchronously instead.
 */
int
dra_prepare_async(struct dra_binding *b, struct rpc_call *call,
    const uint8_t *req, size_t len)
{
	struct dra_ctx			*ctx = b->ctx;
	const struct dra_lookup_async	*la = ctx->lookup_async;
	struct dra_async		*a;
	char				 msg[MSG_SIZE];
	int				 rc, st;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return (KP_ENOMEM);
	a->ctx = ctx;
	a->call = call;
	a->info = dra_version(b->version);
	msg[0] = '\0';
	if ((rc = dra_decode_request(req, len, &a->rq, msg,
	    sizeof(msg))) != 0) {
		st = dra_decode_status(rc, a->info->prepare_path, msg,
		    sizeof(msg));
		free(a);
		rpc_call_reply(call, st, msg, NULL, 0);
		return (0);
	}
	if (dra_results_init(&a->r, a->rq.n_claims, dra_call_cancelled,
	    call) != 0) {
		dra_request_free(&a->rq);
		free(a);
		return (KP_ENOMEM);
	}
	a->r.driver = ctx->cfg->driver_name;
	if (dra_split_known(ctx, &a->rq, &a->k) != 0) {
		async_free(a);
		return (KP_ENOMEM);
	}
	/* Nothing to wait for: on at once. */
	if (a->k.n_todo == 0) {
		async_finish(a, call);
		return (0);
	}
	if ((a->batch = la->lookup_new(ctx->lookup_user, a->k.todo,
	    a->k.n_todo, until_ms(call), async_done, a)) == NULL) {
		dra_lookup_sync(ctx, &a->k);
		async_finish(a, call);
		return (0);
	}
	if (rpc_call_on_cancel(call, async_cancel, a) != 0) {
		async_finish(a, call);	/* cancelled already */
		return (0);
	}
	/* From here on a belongs to the batch's end (async_done). */
	la->lookup_start(a->batch);
	return (0);
}
