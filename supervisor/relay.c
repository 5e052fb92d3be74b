/*
 * relay.c - what the supervisor passes between processes once each frame
 * passed the state table and field rules: kubelet's registration verdict,
 * claim look-ups (nodeserver -> publisher, rate-limited and tracked by id)
 * and the driver's resources (kept for a restarted publisher).
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

void
relay_reg_status(struct sup *sup, const Kpipc__RegStatus *rs)
{
	int	 state = rs->registered ? KP_REGISTRATION_REGISTERED :
		    KP_REGISTRATION_FAILED;

	struct child	*reg = &sup->children[ROLE_REGISTRAR];

	/* kubelet may retry every second: log changes only, and within
	 * the registrar's log rate limit (a value that keeps alternating
	 * is a change every time). */
	if (state != sup->reg_state || strcmp(rs->error, sup->reg_error)) {
		if (rs->registered)
			charge_log(reg, KP_LOG_INFO, 0, "registered with "
			    "kubelet");
		else
			charge_log(reg, KP_LOG_ERROR, 0, "kubelet rejected the "
			    "registration: %s", rs->error);
		chan_status(sup, IPC_EVENT_REGISTRATION);
	}
	sup->reg_state = state;
	snprintf(sup->reg_error, sizeof(sup->reg_error), "%s", rs->error);
	/* The registrar's frame: its bucket, not the supervisor's own. */
	if (!rs->registered)
		sup_child_event(sup, reg,
		    KPIPC__EVENT_KIND__EVENT_REGISTRATION_REJECTED,
		    "kubelet rejected the registration: %.900s", rs->error);
}

/*
 * The flood guard's rate: the publisher's own bucket for claim GETs has
 * the configured QPS and burst (client-go's 5 and 10 by default), so the
 * guard never throttles below it; it only keeps a hostile nodeserver from
 * queueing more than that.
 */
static double
claim_qps(const struct sup *sup)
{
	double	 q = sup->cfg->kube_qps;

	if (q < 0)
		return (KP_CLAIM_QPS_MAX);
	return (q > KP_CLAIM_QPS ? q : KP_CLAIM_QPS);
}

double
relay_claim_burst(const struct sup *sup)
{
	double	 b = sup->cfg->kube_burst;

	return (b > KP_CLAIM_BURST ? b : KP_CLAIM_BURST);
}

/* Refill the token bucket for claim look-ups from the nodeserver. */
static void
claim_refill(struct sup *sup)
{
	long long	 ms = -ts_ms_until(&sup->claim_refill);

	clock_gettime(CLOCK_MONOTONIC, &sup->claim_refill);
	sup->claim_tokens += ms * claim_qps(sup) / 1000.0;
	if (sup->claim_tokens > relay_claim_burst(sup))
		sup->claim_tokens = relay_claim_burst(sup);
}

/* Answer the nodeserver's look-up g (its id and claim) with an error. */
static void
claim_error(struct sup *sup, struct child *ns, const struct sup_claim *g,
    int code, const char *msg)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	Kpipc__Result		 res = KPIPC__RESULT__INIT;

	res.code = code;
	res.message = (char *)msg;
	r.id = g->ns_id;
	r.namespace_ = (char *)g->namespace_;
	r.name = (char *)g->name;
	r.uid = (char *)g->uid;
	r.result = &res;
	m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
	m.claim_reply = &r;
	sup_queue(sup, ns, &m);
}

/* Send a waiting look-up to the publisher under our own id. */
static void
claim_send(struct sup *sup, struct sup_claim *e)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__ClaimGet	 g = KPIPC__CLAIM_GET__INIT;

	g.id = e->id;
	g.namespace_ = e->namespace_;
	g.name = e->name;
	g.uid = e->uid;
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = &g;
	e->sent = 1;
	sup_queue(sup, &sup->children[ROLE_PUBLISHER], &m);
}

/*
 * Look-ups that wait here: for a token (the rate limit guards the
 * publisher against a flooding nodeserver) or for a publisher that is
 * starting or restarting. They go out in arrival order as soon as both
 * are there, and fail only after KP_CLAIM_WAIT_MS, so a publisher crash
 * or a burst of pods costs kubelet latency, not errors. Look-ups of a
 * nodeserver that died meanwhile are dropped.
 */
void
relay_claims_tick(struct sup *sup)
{
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	struct child		*pub = &sup->children[ROLE_PUBLISHER];
	struct sup_claim	*e, *first;
	size_t			 i;

	claim_refill(sup);
	for (;;) {
		first = NULL;
		for (i = 0; i < KP_CLAIMS_INFLIGHT; i++) {
			e = &sup->claims[i];
			if (e->id == 0 || e->sent)
				continue;
			if (e->ns_pid != ns->pid) {
				memset(e, 0, sizeof(*e));
				continue;
			}
			if (ts_ms_until(&e->wait_until) <= 0) {
				claim_error(sup, ns, e, pub->state ==
				    CS_READY ? KP_EBUSY : KP_ENOCLIENT,
				    pub->state == CS_READY ? "claim look-ups "
				    "rate-limited for 10 s; retry" :
				    "publisher not running for 10 s");
				memset(e, 0, sizeof(*e));
				continue;
			}
			if (first == NULL || e->id < first->id)
				first = e;
		}
		if (first == NULL || pub->state != CS_READY ||
		    sup->claim_tokens < 1.0)
			return;
		sup->claim_tokens -= 1.0;
		claim_send(sup, first);
	}
}

/* Milliseconds until relay_claims_tick() has work; -1: none. */
long long
relay_claims_next_ms(struct sup *sup)
{
	const struct sup_claim	*e;
	long long		 t = -1, d;
	size_t			 i;

	for (i = 0; i < KP_CLAIMS_INFLIGHT; i++) {
		e = &sup->claims[i];
		if (e->id == 0 || e->sent)
			continue;
		d = ts_ms_until(&e->wait_until);
		if (sup->children[ROLE_PUBLISHER].state == CS_READY) {
			/* the next token */
			long long tok = (long long)((1.0 - sup->claim_tokens) *
			    1000.0 / claim_qps(sup)) + 1;

			if (tok < d)
				d = tok;
		}
		if (d < 0)
			d = 0;
		if (t < 0 || d < t)
			t = d;
	}
	return (t);
}

void
relay_claim_get(struct sup *sup, Kpipc__Msg *m)
{
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	struct child		*pub = &sup->children[ROLE_PUBLISHER];
	Kpipc__ClaimGet		*g = m->claim_get;
	struct sup_claim	 ask, *e = NULL;
	size_t			 i;

	/* Field rules (ipc_check) bound these lengths already. */
	memset(&ask, 0, sizeof(ask));
	ask.ns_id = g->id;
	ask.ns_pid = ns->pid;
	snprintf(ask.namespace_, sizeof(ask.namespace_), "%s", g->namespace_);
	snprintf(ask.name, sizeof(ask.name), "%s", g->name);
	snprintf(ask.uid, sizeof(ask.uid), "%s", g->uid);
	if (!pub->enabled) {
		claim_error(sup, ns, &ask, KP_ENOCLIENT, "no Kubernetes "
		    "access configured");
		return;
	}
	for (i = 0; i < KP_CLAIMS_INFLIGHT && e == NULL; i++)
		if (sup->claims[i].id == 0)
			e = &sup->claims[i];
	if (e == NULL) {
		claim_error(sup, ns, &ask, KP_EBUSY, "too many claim look-ups in "
		    "flight");
		return;
	}
	*e = ask;
	e->id = ++sup->next_claim_id;
	clock_gettime(CLOCK_MONOTONIC, &e->wait_until);
	ts_after_ms(&e->wait_until, KP_CLAIM_WAIT_MS);
	relay_claims_tick(sup);
}

static struct sup_claim *
claim_find(struct sup *sup, uint64_t id)
{
	size_t	 i;

	for (i = 0; id != 0 && i < KP_CLAIMS_INFLIGHT; i++)
		if (sup->claims[i].id == id)
			return (&sup->claims[i]);
	return (NULL);
}

/*
 * The publisher's answer: only to a look-up it was asked, about the same
 * claim, and only to the nodeserver that asked (a restarted one is told
 * nothing about its predecessor's claims).
 */
void
relay_claim_reply(struct sup *sup, struct child *pub, Kpipc__Msg *m)
{
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	Kpipc__ClaimReply	*r = m->claim_reply;
	struct sup_claim	*e = claim_find(sup, r->id);

	if (e == NULL || strcmp(e->uid, r->uid) != 0 ||
	    strcmp(e->namespace_, r->namespace_) != 0 ||
	    strcmp(e->name, r->name) != 0) {
		sup_child_violation(sup, pub, "claim_reply for a look-up "
		    "nobody asked for");
		return;
	}
	if (e->ns_pid == ns->pid && ns->state == CS_READY && !e->withdrawn) {
		/* A claim a MetadataWrite may name (md_claims.c). */
		md_claims_answered(sup, ns->pid, r);
		r->id = e->ns_id;
		sup_queue(sup, ns, m);
	}
	memset(e, 0, sizeof(*e));
}

/*
 * The nodeserver no longer waits for these look-ups (their call was
 * cancelled, or ran out of time): those still waiting here are dropped,
 * those at the publisher withdrawn there too (it drops them unless a GET
 * has begun, and answers either way; the answer goes to nobody). Ids
 * already answered are no error: the answer and the cancel crossed.
 */
void
relay_claim_cancel(struct sup *sup, const Kpipc__ClaimCancel *c)
{
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	struct child		*pub = &sup->children[ROLE_PUBLISHER];
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimCancel	 out = KPIPC__CLAIM_CANCEL__INIT;
	uint64_t		 ids[KP_CLAIMS_INFLIGHT];
	struct sup_claim	*e;
	size_t			 i, k;

	out.ids = ids;
	for (i = 0; i < KP_CLAIMS_INFLIGHT; i++) {
		e = &sup->claims[i];
		if (e->id == 0 || e->ns_pid != ns->pid || e->withdrawn)
			continue;
		for (k = 0; k < c->n_ids && c->ids[k] != e->ns_id; k++)
			;
		if (k == c->n_ids)
			continue;
		if (!e->sent) {
			memset(e, 0, sizeof(*e));
			continue;
		}
		e->withdrawn = 1;
		ids[out.n_ids++] = e->id;
	}
	if (out.n_ids == 0 || pub->state != CS_READY)
		return;
	m.m_case = KPIPC__MSG__M_CLAIM_CANCEL;
	m.claim_cancel = &out;
	sup_queue(sup, pub, &m);
}

/*
 * The publisher died: the look-ups it had are asked again of the next one
 * (a GET is idempotent), within their wait budget from now.
 */
void
relay_claims_abort(struct sup *sup)
{
	struct sup_claim	*e;
	size_t			 i;

	for (i = 0; i < KP_CLAIMS_INFLIGHT; i++) {
		e = &sup->claims[i];
		if (e->id == 0 || !e->sent)
			continue;
		if (e->withdrawn) {
			memset(e, 0, sizeof(*e));
			continue;
		}
		e->sent = 0;
		clock_gettime(CLOCK_MONOTONIC, &e->wait_until);
		ts_after_ms(&e->wait_until, KP_CLAIM_WAIT_MS);
	}
}

/* The driver's resources: kept (a restarted publisher gets them again)
 * and passed on. */
void
relay_publish(struct sup *sup, Kpipc__Msg *m)
{
	struct child	*pub = &sup->children[ROLE_PUBLISHER];

	if (!pub->enabled) {
		ipc_free(m);
		sup_reply_driver(sup, KP_ENOCLIENT, "no Kubernetes access "
		    "configured");
		return;
	}
	status_published(sup);
	ipc_free(sup->desired);
	sup->desired = m;
	if (pub->state == CS_READY)
		sup_queue(sup, pub, m);
	sup_reply_driver(sup, 0, "");
}

void
relay_publish_status(struct sup *sup, const Kpipc__PublishStatus *ps)
{
	const Kpipc__PublishStatus	*o = &sup->pub_status;
	struct child			*pub = &sup->children[ROLE_PUBLISHER];
	size_t				 i;

	/* The publisher logged it as a warning where it happened; here it
	 * is a change of status only (once, not twice a line). */
	if (strcmp(ps->last_error, sup->pub_error) != 0 &&
	    ps->last_error[0] != '\0')
		charge_log(pub, KP_LOG_INFO, 2, "publisher: status: %s",
		    ps->last_error);
	/* ResourceSlice errors (dropped fields included) are recoverable,
	 * as upstream's ErrRecoverable: the controller retries. Each one
	 * the publisher listed, once, within the publisher's budget. */
	for (i = 0; i < ps->n_errors; i++)
		charge_error(sup, pub, KP_EKUBE, 1, "publisher: %s",
		    ps->errors[i]);
	/* A pass that only moved last_sync is no change of status. */
	if (o->last_error == NULL || ps->pending_pools != o->pending_pools ||
	    ps->creates != o->creates || ps->updates != o->updates ||
	    ps->deletes != o->deletes ||
	    strcmp(ps->last_error, sup->pub_error) != 0 ||
	    (ps->last_sync != 0) != (o->last_sync != 0))
		chan_status(sup, IPC_EVENT_PUBLISH);
	sup->pub_status = *ps;
	sup->pub_status.n_errors = 0;	/* not kept: ps is freed */
	sup->pub_status.errors = NULL;
	snprintf(sup->pub_error, sizeof(sup->pub_error), "%s",
	    ps->last_error);
	sup->pub_status.last_error = sup->pub_error;
	sup->pub_status.base.unknown_fields = NULL;
	sup->pub_status.base.n_unknown_fields = 0;
}

void
relay_publish_status_reply(struct sup *sup)
{
	Kpipc__Msg		 out = KPIPC__MSG__INIT;
	Kpipc__PublishStatus	 ps = KPIPC__PUBLISH_STATUS__INIT;

	if (sup->pub_status.last_error != NULL)
		ps = sup->pub_status;
	else
		ps.last_error = "";
	ps.publisher_running =
	    sup->children[ROLE_PUBLISHER].state == CS_READY;
	out.m_case = KPIPC__MSG__M_PUBLISH_STATUS;
	out.publish_status = &ps;
	(void)ipc_queue(&sup->driver, &out);
}


static void
reg_error_send(struct sup *sup, struct child *c, uint32_t which)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__RegError	 e = KPIPC__REG_ERROR__INIT;

	e.which = which;
	e.message = sup->reg_errs[which - 1];
	m.m_case = KPIPC__MSG__M_REG_ERROR;
	m.reg_error = &e;
	sup_queue(sup, c, &m);
}

/*
 * The driver's kp_set_get_info_error() / ..._notify_...(): checked by
 * ipc_check() (which, length, UTF-8), kept for a restarted registrar and
 * sent to the running one. Answered with a Result.
 */
void
relay_reg_error(struct sup *sup, const Kpipc__RegError *e)
{
	struct child	*c = &sup->children[ROLE_REGISTRAR];

	if (!c->enabled) {
		sup_reply_driver(sup, KP_EINVAL, "the registration service is "
		    "off (kp_registration_service)");
		return;
	}
	snprintf(sup->reg_errs[e->which - 1], sizeof(sup->reg_errs[0]), "%s",
	    e->message);
	if (c->state == CS_READY)
		reg_error_send(sup, c, e->which);
	log_info(1, "%s will %s", e->which == KP_IPC_REG_ERR_GET_INFO ?
	    "GetInfo" : "NotifyRegistrationStatus", e->message[0] ? "fail" :
	    "succeed again");
	sup_reply_driver(sup, 0, "");
}

/* A (re)started registrar gets the knobs that are set. */
void
relay_reg_errors_ready(struct sup *sup, struct child *c)
{
	uint32_t	 w;

	if (c->role != ROLE_REGISTRAR)
		return;
	for (w = KP_IPC_REG_ERR_GET_INFO; w <= KP_IPC_REG_ERR_NOTIFY; w++)
		if (sup->reg_errs[w - 1][0] != '\0')
			reg_error_send(sup, c, w);
}
