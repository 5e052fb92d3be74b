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

	/* kubelet may retry every second: log changes only. */
	if (state != sup->reg_state || strcmp(rs->error, sup->reg_error)) {
		if (rs->registered)
			log_info(0, "registered with kubelet");
		else
			log_errorx("kubelet rejected the registration: %s",
			    rs->error);
	}
	sup->reg_state = state;
	snprintf(sup->reg_error, sizeof(sup->reg_error), "%s", rs->error);
}

/* Token bucket for claim look-ups from the nodeserver. */
static int
claim_allowed(struct sup *sup)
{
	long long	 ms = -ts_ms_until(&sup->claim_refill);

	clock_gettime(CLOCK_MONOTONIC, &sup->claim_refill);
	sup->claim_tokens += ms * KP_CLAIM_QPS / 1000.0;
	if (sup->claim_tokens > KP_CLAIM_BURST)
		sup->claim_tokens = KP_CLAIM_BURST;
	if (sup->claim_tokens < 1.0)
		return (0);
	sup->claim_tokens -= 1.0;
	return (1);
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
	if (!claim_allowed(sup)) {
		claim_error(sup, ns, &ask, KP_EBUSY, "claim look-ups are "
		    "rate-limited; retry");
		return;
	}
	if (pub->state != CS_READY) {
		claim_error(sup, ns, &ask, KP_ENOCLIENT, "publisher not running");
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
	g->id = e->id;
	sup_queue(sup, pub, m);
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
	if (e->ns_pid == ns->pid && ns->state == CS_READY) {
		r->id = e->ns_id;
		sup_queue(sup, ns, m);
	}
	memset(e, 0, sizeof(*e));
}

void
relay_claims_abort(struct sup *sup)
{
	struct child	*ns = &sup->children[ROLE_NODESERVER];
	size_t		 i;

	for (i = 0; i < KP_CLAIMS_INFLIGHT; i++) {
		if (sup->claims[i].id == 0)
			continue;
		if (sup->claims[i].ns_pid == ns->pid)
			claim_error(sup, ns, &sup->claims[i], KP_EKUBE,
			    "publisher restarted during the look-up; retry");
		memset(&sup->claims[i], 0, sizeof(sup->claims[i]));
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
	ipc_free(sup->desired);
	sup->desired = m;
	if (pub->state == CS_READY)
		sup_queue(sup, pub, m);
	sup_reply_driver(sup, 0, "");
}

void
relay_publish_status(struct sup *sup, const Kpipc__PublishStatus *ps)
{
	if (strcmp(ps->last_error, sup->pub_error) != 0 &&
	    ps->last_error[0] != '\0')
		log_warnx("publisher: %s", ps->last_error);
	sup->pub_status = *ps;
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

