/*
 * dra.c - the DRA services of the nodeserver: NodePrepareResources and
 * NodeUnprepareResources of each enabled version, from request bytes to
 * response bytes (dra_prepare, dra_unprepare: pure, testable without
 * gRPC), the rpc_method table, and the supported_versions list.
 *
 * Prepare: decode, look every claim up (before taking the lock, as
 * upstream), run the hook once on the claims whose look-up succeeded,
 * encode one entry per claim. With serialize, hooks run under one mutex,
 * so correctness never depends on the number of rpc worker threads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodeserver/dra.h"

#define MSG_SIZE	(2 * KP_ERROR_SIZE)

/* Order of supported_versions and of the method table. */
/* Waits for the serialization lock, for the heartbeat's answer
 * (ns_pong.c); process-wide, as the lock. */
_Atomic uint64_t	 dra_lock_waits;
_Atomic uint64_t	 dra_lock_wait_ns;

static const enum dra_version order[] = { DRA_V1, DRA_V1BETA1, DRA_V1ALPHA4 };

struct op {
	const char	*verb;		/* "prepare", "unprepare" */
	int		 prepare;
};

static const struct op op_prepare = { "prepare", 1 };
static const struct op op_unprepare = { "unprepare", 0 };

int
dra_init(struct dra_ctx *ctx, const struct kp_options *cfg,
    const struct kp_hooks *hooks)
{
	size_t	i;

	if (ctx == NULL || cfg == NULL || hooks == NULL)
		return (KP_EINVAL);
	memset(ctx, 0, sizeof(*ctx));
	ctx->cfg = cfg;
	ctx->hooks = hooks;
	ctx->lock_fd = -1;
	if (pthread_mutex_init(&ctx->lock, NULL) != 0)
		return (KP_ENOMEM);
	/* bind[2 * v] is v's prepare, bind[2 * v + 1] its unprepare. */
	for (i = 0; i < 2 * DRA_NVERSIONS; i++) {
		ctx->bind[i].ctx = ctx;
		ctx->bind[i].version = (enum dra_version)(i / 2);
		ctx->bind[i].prepare = i % 2 == 0;
	}
	return (0);
}

void
dra_free(struct dra_ctx *ctx)
{
	if (ctx == NULL || ctx->cfg == NULL)
		return;
	jr_stop(ctx);
	pthread_mutex_destroy(&ctx->lock);
	memset(ctx, 0, sizeof(*ctx));
}

const struct dra_version_info *
dra_version(enum dra_version v)
{
	switch (v) {
	case DRA_V1ALPHA4:
		return (&dra_v1alpha4_info);
	case DRA_V1BETA1:
		return (&dra_v1beta1_info);
	case DRA_V1:
		return (&dra_v1_info);
	default:
		return (NULL);
	}
}

static int
enabled(const struct kp_options *cfg, enum dra_version v)
{
	switch (v) {
	case DRA_V1ALPHA4:
		return (cfg->v1alpha4);
	case DRA_V1BETA1:
		return (cfg->v1beta1);
	case DRA_V1:
		return (cfg->v1);
	default:
		return (0);
	}
}

/* The gRPC status of a failed decode; msg names the method or field. */
int
dra_decode_status(int rc, const char *path, char *msg, size_t msgsize)
{
	char	field[KP_ERROR_SIZE];

	switch (rc) {
	case KP_EPROTO:
		snprintf(msg, msgsize, "%s: malformed request", path);
		return (RPC_INVALID_ARGUMENT);
	case KP_EINVAL:
		snprintf(field, sizeof(field), "%s", msg);
		snprintf(msg, msgsize, "%s: %s", path, field);
		return (RPC_INVALID_ARGUMENT);
	default:
		snprintf(msg, msgsize, "out of memory");
		return (RPC_INTERNAL);
	}
}

static int
is_cancelled(const struct dra_results *r)
{
	return (r->cancelled != NULL && r->cancelled(r->cancel_arg) != 0);
}

/*
 * A wait since t0 for the serialization lock (and, across instances, its
 * lock file) ended: counted for /metrics
 * (kubeletplugin_serialization_lock_wait_seconds): how long calls queue
 * behind a slow hook.
 */
static void
dra_lock_waited(const struct timespec *t0)
{
	struct timespec	 t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&dra_lock_waits, 1);
	atomic_fetch_add(&dra_lock_wait_ns, (uint64_t)(t1.tv_sec -
	    t0->tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0->tv_nsec));
}

/*
 * Run the hook on r->n_hook claims, under the lock when serialized. A call
 * cancelled while it waited for the lock does not run the hook: kubelet
 * has given up on it and will retry.
 */
static int
run_hook(struct dra_ctx *ctx, const struct op *op,
    const struct kp_claim *claims, const struct dra_claim_alloc *al,
    struct dra_results *r, char *msg, size_t msgsize)
{
	char		errbuf[KP_ERROR_SIZE];
	struct timespec	t0;
	int		rc = 0, skipped = 0, file = 0;

	if (r->n_hook == 0)
		return (RPC_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ctx->cfg->serialize)
		pthread_mutex_lock(&ctx->lock);
	/* Across instances too (rolling update): flock.c. */
	if (ctx->cfg->serialize && ctx->lock_fd >= 0) {
		if (dra_flock_take(ctx->lock_fd, errbuf, sizeof(errbuf)) != 0) {
			dra_lock_waited(&t0);
			pthread_mutex_unlock(&ctx->lock);
			/* upstream: "serialize gRPC: lock file: %w" */
			snprintf(msg, msgsize, "serialize gRPC: lock file: %s",
			    errbuf);
			return (RPC_UNKNOWN);	/* a Go error: Unknown */
		}
		file = 1;
	}
	if (ctx->cfg->serialize)
		dra_lock_waited(&t0);
	if (is_cancelled(r))
		skipped = 1;
	else {
		struct ci_call	call;

		ci_call_begin(&call, claims, r->n_hook, al, r->driver);
		rc = dra_hook_call(ctx->hooks, op->prepare, claims, r, errbuf,
		    sizeof(errbuf));
		ci_call_end(&call);
	}
	/*
	 * Device metadata on what the hook built (metadata.c): the files
	 * and the CDI IDs that mount them, or their removal, before the
	 * journal records the results, so a replayed claim keeps its IDs
	 * and a claim whose clean-up failed stays recorded.
	 */
	/*
	 * A hook that ran keeps what it did, even if the call was cancelled
	 * meanwhile: kubelet's retry then finds the claims in the journal
	 * (issue 28: a backlog converges) instead of preparing them again.
	 */
	if (!skipped && rc == 0) {
		if (op->prepare && ctx->md_write != NULL)
			md_prepare(ctx, claims, al, r);
		else if (!op->prepare && ctx->md_remove != NULL)
			md_unprepare(ctx, claims, r);
	}
	/* The journal, under the same locks (journal_dra.c). */
	if (ctx->journal != NULL)
		jr_after(ctx, op->prepare, claims, r, !skipped && rc == 0);
	if (file)
		dra_flock_release(ctx->lock_fd);
	if (ctx->cfg->serialize)
		pthread_mutex_unlock(&ctx->lock);
	if (rc != 0) {
		/* upstream: fmt.Errorf("prepare resource claims: %w", err) */
		snprintf(msg, msgsize, "%s resource claims: %s", op->verb,
		    errbuf[0] != '\0' ? errbuf : kp_strerror(rc));
		return (RPC_INTERNAL);
	}
	if (skipped || is_cancelled(r)) {
		snprintf(msg, msgsize, "%s resource claims: call cancelled",
		    op->verb);
		return (RPC_CANCELLED);
	}
	return (RPC_OK);
}

/* Look claim c up into a; on failure err holds the claim's message. */
static int
lookup_one(struct dra_ctx *ctx, const struct kp_claim *c,
    struct dra_claim_alloc *a, char *err, size_t errsize)
{
	int	rc;

	memset(a, 0, sizeof(*a));
	err[0] = '\0';
	rc = ctx->lookup(ctx->lookup_user, c->namespace_, c->name, c->uid, a,
	    err, errsize);
	err[errsize - 1] = '\0';
	if (rc != 0 && err[0] == '\0')
		snprintf(err, errsize, "claim %s/%s: look-up failed",
		    c->namespace_, c->name);
	return (rc);
}

/* Claim c found (al[front] filled) or, without look-ups, passed bare. */
static void
claim_found(struct dra_ctx *ctx, const struct kp_claim *c,
    struct kp_claim *hc, struct dra_claim_alloc *al, struct dra_results *r,
    size_t front)
{
	hc[front] = *c;
	if (ctx->lookup != NULL) {
		hc[front].results = al[front].results;
		hc[front].n_results = al[front].n_results;
		hc[front].config_json = al[front].config_json != NULL ?
		    al[front].config_json : "[]";
		hc[front].configs = al[front].configs;
		hc[front].n_configs = al[front].n_configs;
	}
	r->claims[front].uid = c->uid;
}

void
dra_split_free(struct dra_split *k)
{
	size_t	 i;

	for (i = 0; k->tmp != NULL && i < k->n_todo; i++)
		dra_claim_alloc_free(&k->tmp[i]);
	free(k->known);
	free(k->todo);
	free(k->tmp);
	free(k->rc);
	free(k->err);
	memset(k, 0, sizeof(*k));
}

/*
 * Which claims the journal answers (the file read again here if another
 * instance replaced it, once a call). KP_ENOMEM or 0.
 */
int
dra_split_known(struct dra_ctx *ctx, const struct dra_request *rq,
    struct dra_split *k)
{
	size_t	 i, n = rq->n_claims;

	memset(k, 0, sizeof(*k));
	k->known = calloc(n + 1, 1);
	k->todo = calloc(n + 1, sizeof(*k->todo));
	k->tmp = calloc(n + 1, sizeof(*k->tmp));
	k->rc = calloc(n + 1, sizeof(*k->rc));
	k->err = calloc(n + 1, KP_ERROR_SIZE);
	if (k->known == NULL || k->todo == NULL || k->tmp == NULL ||
	    k->rc == NULL || k->err == NULL) {
		dra_split_free(k);
		return (KP_ENOMEM);
	}
	for (i = 0; i < n; i++) {
		k->known[i] = ctx->journal != NULL &&
		    jr_known(ctx, rq->claims[i].uid, i == 0);
		if (!k->known[i])
			k->todo[k->n_todo++] = rq->claims[i];
	}
	return (0);
}

/*
 * The look-ups of k's claims, waited for here: all in flight at once
 * (a call's latency is one look-up's, not n of them) when the lookup_many
 * function exists, else one after the other.
 */
void
dra_lookup_sync(struct dra_ctx *ctx, struct dra_split *k)
{
	size_t	 i;

	if (ctx->lookup == NULL)
		return;
	if (ctx->lookup_many != NULL && k->n_todo > 1) {
		ctx->lookup_many(ctx->lookup_user, k->todo, k->n_todo, k->tmp,
		    k->rc, k->err, KP_ERROR_SIZE);
		return;
	}
	for (i = 0; i < k->n_todo; i++)
		k->rc[i] = lookup_one(ctx, &k->todo[i], &k->tmp[i],
		    k->err + i * KP_ERROR_SIZE, KP_ERROR_SIZE);
}

/*
 * Place every claim: found ones to hc[] and the front of r (the hook's
 * indices, al[] taking over their allocations), the journal's replayed
 * and the failed ones at the back, skipping the hook. Without a lookup
 * function every claim goes to the hook, bare.
 */
static void
place_claims(struct dra_ctx *ctx, const struct dra_request *rq,
    struct dra_split *k, struct kp_claim *hc, struct dra_claim_alloc *al,
    struct dra_results *r)
{
	const struct kp_claim	*c;
	struct jr_specs		 sp = { 0, NULL, 0 };
	char			*e;
	size_t			 i, j = 0, front = 0, back = rq->n_claims;

	for (i = 0; i < rq->n_claims; i++) {
		c = &rq->claims[i];
		/* Prepared before: the journal answers, without a look-up
		 * (the API server may be unreachable after a reboot). */
		if (k->known[i]) {
			r->claims[--back].uid = c->uid;
			jr_replay(ctx, c, &r->claims[back], &sp);
			continue;
		}
		if (ctx->lookup != NULL && k->rc[j] != 0) {
			e = k->err + j * KP_ERROR_SIZE;
			e[KP_ERROR_SIZE - 1] = '\0';
			if (e[0] == '\0')
				snprintf(e, KP_ERROR_SIZE, "claim %s/%s: look-up "
				    "failed", c->namespace_, c->name);
			r->claims[--back].uid = c->uid;
			/* Out of memory leaves a static error: still failed. */
			(void)dra_result_fail(r, back, e);
			j++;
			continue;
		}
		al[front] = k->tmp[j];
		memset(&k->tmp[j++], 0, sizeof(k->tmp[0]));
		claim_found(ctx, c, hc, al, r, front++);
	}
	r->n_hook = front;
	jr_specs_free(&sp);
}

/* After the look-ups: the hook on the claims found, the answer encoded. */
int
dra_prepare_finish(struct dra_ctx *ctx, const struct dra_version_info *info,
    const struct dra_request *rq, struct dra_split *k, struct dra_results *r,
    struct dra_out *o, uint8_t **resp, size_t *resp_len, char *msg,
    size_t msgsize)
{
	struct kp_claim		*hc;
	struct dra_claim_alloc	*al;
	size_t			 i, n = rq->n_claims;
	int			 st;

	hc = calloc(n + 1, sizeof(*hc));
	al = calloc(n + 1, sizeof(*al));
	if (hc == NULL || al == NULL) {
		free(hc);
		free(al);
		snprintf(msg, msgsize, "out of memory");
		return (RPC_INTERNAL);
	}
	place_claims(ctx, rq, k, hc, al, r);
	st = run_hook(ctx, &op_prepare, hc, ctx->lookup != NULL ? al : NULL, r,
	    msg, msgsize);
	if (st == RPC_OK &&
	    dra_encode_prepare(r, info->share_id, o, resp, resp_len) != 0) {
		snprintf(msg, msgsize, "out of memory");
		st = RPC_INTERNAL;
	}
	for (i = 0; i < n; i++)
		dra_claim_alloc_free(&al[i]);
	free(al);
	free(hc);
	return (st);
}

static int
prepare_claims(struct dra_ctx *ctx, const struct dra_version_info *info,
    const struct dra_request *rq, struct dra_results *r, struct dra_out *o,
    uint8_t **resp, size_t *resp_len, char *msg, size_t msgsize)
{
	struct dra_split	 k;
	int			 st;

	if (dra_split_known(ctx, rq, &k) != 0) {
		snprintf(msg, msgsize, "out of memory");
		return (RPC_INTERNAL);
	}
	dra_lookup_sync(ctx, &k);
	st = dra_prepare_finish(ctx, info, rq, &k, r, o, resp, resp_len, msg,
	    msgsize);
	dra_split_free(&k);
	return (st);
}

static int
unprepare_claims(struct dra_ctx *ctx, const struct dra_request *rq,
    struct dra_results *r, struct dra_out *o, uint8_t **resp,
    size_t *resp_len, char *msg, size_t msgsize)
{
	struct kp_claim		*hc = NULL;
	const struct kp_claim	*claims = rq->claims;
	size_t			 i, front = 0, back = rq->n_claims;
	int			 st;

	if (ctx->journal != NULL) {
		/* Claims the journal does not know succeed without the
		 * hook; the hook sees the others with their entries. */
		if ((hc = calloc(rq->n_claims + 1, sizeof(*hc))) == NULL) {
			snprintf(msg, msgsize, "out of memory");
			return (RPC_INTERNAL);
		}
		for (i = 0; i < rq->n_claims; i++) {
			if (!jr_known(ctx, rq->claims[i].uid, i == 0)) {
				r->claims[--back].uid = rq->claims[i].uid;
				continue;
			}
			hc[front] = rq->claims[i];
			r->claims[front++].uid = rq->claims[i].uid;
		}
		r->n_hook = front;
		claims = hc;
		jr_unprepare_begin(ctx, r);
	} else {
		for (i = 0; i < rq->n_claims; i++)
			r->claims[i].uid = rq->claims[i].uid;
		r->n_hook = rq->n_claims;
	}
	st = run_hook(ctx, &op_unprepare, claims, NULL, r, msg, msgsize);
	free(hc);
	if (st == RPC_OK && dra_encode_unprepare(r, o, resp, resp_len) != 0) {
		snprintf(msg, msgsize, "out of memory");
		st = RPC_INTERNAL;
	}
	return (st);
}

/* Decode, run the operation, encode; returns a gRPC status code. */
static int
dra_call(struct dra_ctx *ctx, enum dra_version v, const struct op *op,
    const uint8_t *req, size_t len, int (*cancelled)(void *), void *arg,
    struct dra_out *o, uint8_t **resp, size_t *resp_len, char *msg,
    size_t msgsize)
{
	const struct dra_version_info	*info;
	struct dra_request		 rq;
	struct dra_results		 r;
	int				 rc, st;

	*resp = NULL;
	*resp_len = 0;
	msg[0] = '\0';
	if (ctx == NULL || ctx->cfg == NULL || ctx->hooks == NULL ||
	    (info = dra_version(v)) == NULL) {
		snprintf(msg, msgsize, "%s: no such DRA service", op->verb);
		return (RPC_INTERNAL);
	}
	if ((rc = dra_decode_request(req, len, &rq, msg, msgsize)) != 0)
		return (dra_decode_status(rc, op->prepare ? info->prepare_path :
		    info->unprepare_path, msg, msgsize));
	if (dra_results_init(&r, rq.n_claims, cancelled, arg) != 0) {
		dra_request_free(&rq);
		snprintf(msg, msgsize, "out of memory");
		return (RPC_INTERNAL);
	}
	r.driver = ctx->cfg->driver_name;
	if (op->prepare)
		st = prepare_claims(ctx, info, &rq, &r, o, resp, resp_len,
		    msg, msgsize);
	else
		st = unprepare_claims(ctx, &rq, &r, o, resp, resp_len, msg,
		    msgsize);
	dra_results_free(&r);
	dra_request_free(&rq);
	return (st);
}

/*
 * dra_prepare / dra_unprepare - one NodePrepareResources /
 * NodeUnprepareResources call of version v. req/len: the serialized
 * request. cancelled(arg): polled for kp_*_cancelled(); may be NULL.
 * Returns a gRPC status: RPC_OK with *resp (malloc'd, caller frees) and
 * *resp_len, or an error with msg (msgsize bytes) and *resp NULL.
 */
int
dra_prepare(struct dra_ctx *ctx, enum dra_version v, const uint8_t *req,
    size_t len, int (*cancelled)(void *), void *arg, uint8_t **resp,
    size_t *resp_len, char *msg, size_t msgsize)
{
	return (dra_call(ctx, v, &op_prepare, req, len, cancelled, arg, NULL,
	    resp, resp_len, msg, msgsize));
}

int
dra_unprepare(struct dra_ctx *ctx, enum dra_version v, const uint8_t *req,
    size_t len, int (*cancelled)(void *), void *arg, uint8_t **resp,
    size_t *resp_len, char *msg, size_t msgsize)
{
	return (dra_call(ctx, v, &op_unprepare, req, len, cancelled, arg,
	    NULL, resp, resp_len, msg, msgsize));
}

int
dra_call_cancelled(void *call)
{
	return (rpc_call_cancelled(call));
}

uint8_t *
dra_reply_buf(void *call, size_t n)
{
	return (rpc_call_reply_buf(call, n));
}

/*
 * The handler of every method; user says which version and operation.
 * The answer is packed into the slice gRPC sends (rpc_call_reply_buf).
 */
static void
handle(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	struct dra_binding	*b = user;
	struct dra_out		 o = { dra_reply_buf, call, 0 };
	uint8_t			*resp;
	size_t			 n;
	char			 msg[MSG_SIZE];
	int			 st;

	/* A prepare with look-ups: no thread waits for them. */
	if (b->prepare && b->ctx->lookup_async != NULL &&
	    dra_prepare_async(b, call, req, len) == 0)
		return;
	st = dra_call(b->ctx, b->version, b->prepare ? &op_prepare :
	    &op_unprepare, req, len, dra_call_cancelled, call, &o, &resp, &n, msg,
	    sizeof(msg));
	rpc_call_reply(call, st, st == RPC_OK ? NULL : msg, resp, n);
	if (o.malloced)
		free(resp);
}

/*
 * The rpc methods of the enabled versions: Prepare and Unprepare each, in
 * the order of supported_versions. out[] points into ctx (bind), which
 * must outlive the server. Returns the number stored (at most max).
 */
size_t
dra_methods(struct dra_ctx *ctx, struct rpc_method *out, size_t max)
{
	const struct dra_version_info	*info;
	size_t				 i, n = 0;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!enabled(ctx->cfg, order[i]) || n + 2 > max)
			continue;
		info = dra_version(order[i]);
		memset(&out[n], 0, 2 * sizeof(*out));
		out[n].path = info->prepare_path;
		out[n].handler = handle;
		out[n].user = &ctx->bind[2 * order[i]];
		out[n].format_request = dra_format_request;
		out[n].format_response = dra_format_prepare_response;
		out[n + 1].path = info->unprepare_path;
		out[n + 1].handler = handle;
		out[n + 1].user = &ctx->bind[2 * order[i] + 1];
		out[n + 1].format_request = dra_format_request;
		out[n + 1].format_response = dra_format_unprepare_response;
		n += 2;
	}
	return (n);
}
