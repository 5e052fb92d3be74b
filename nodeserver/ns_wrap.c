/*
 * ns_wrap.c - the nodeserver's synchronous requests to the supervisor,
 * shaped like the call they stand for (OpenSSH monitor_wrap.c): a claim
 * look-up sends ClaimGet and waits for the ClaimReply with its id. Only
 * namespace, name and UID leave this process.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ipc/ipc.h"
#include "ipc/log.h"
#include "nodeserver/dra.h"
#include "nodeserver/ns_wrap.h"

#define NS_CLAIM_TIMEOUT_MS	25000	/* the publisher gives up at 20 s;
					 * kubelet's deadline is 45 s */

static int
ns_fill(const Kpipc__ClaimReply *r, struct dra_claim_alloc *out, char *err,
    size_t errsize)
{
	size_t	 i;

	if (r->result->code != 0) {
		snprintf(err, errsize, "%s", r->result->message);
		return (r->result->code);
	}
	for (i = 0; i < r->n_results; i++)
		if (dra_claim_alloc_add(out, r->results[i]->request,
		    r->results[i]->pool, r->results[i]->device,
		    r->results[i]->admin_access) != 0)
			goto nomem;
	if (r->config_json[0] != '\0' &&
	    dra_claim_alloc_config(out, r->config_json) != 0)
		goto nomem;
	return (0);
nomem:
	snprintf(err, errsize, "out of memory");
	return (KP_ENOMEM);
}

/* Wait for the reply with our id; stale replies of timed-out look-ups
 * are dropped. */
static int
ns_wait(struct ns_wrap *w, const Kpipc__ClaimGet *g, Kpipc__Msg **out,
    char *err, size_t errsize)
{
	Kpipc__Msg		*m;
	Kpipc__ClaimReply	*r;
	int			 rc;

	for (;;) {
		rc = ipc_recv(w->ctl, &m, NS_CLAIM_TIMEOUT_MS, err, errsize);
		if (rc != 0)
			return (rc);
		r = m->m_case == KPIPC__MSG__M_CLAIM_REPLY ?
		    m->claim_reply : NULL;
		/* The answer must be about the claim we asked about. */
		if (r != NULL && r->id == g->id &&
		    strcmp(r->namespace_, g->namespace_) == 0 &&
		    strcmp(r->name, g->name) == 0 &&
		    strcmp(r->uid, g->uid) == 0) {
			*out = m;
			return (0);
		}
		ipc_free(m);
	}
}

/* A dra_lookup_fn: the claim's allocation for this driver. */
int
ns_claim_get(void *user, const char *ns, const char *name, const char *uid,
    struct dra_claim_alloc *out, char *err, size_t errsize)
{
	struct ns_wrap		*w = user;
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimGet		 g = KPIPC__CLAIM_GET__INIT;
	Kpipc__Msg		*reply = NULL;
	char			 why[KP_ERROR_SIZE];
	int			 r;

	g.namespace_ = (char *)ns;
	g.name = (char *)name;
	g.uid = (char *)uid;
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = &g;
	pthread_mutex_lock(&w->lock);
	g.id = ++w->next_id;
	r = ipc_send(w->ctl, &m);
	if (r == 0)
		r = ns_wait(w, &g, &reply, why, sizeof(why));
	pthread_mutex_unlock(&w->lock);
	if (r != 0) {
		snprintf(err, errsize, "claim %s/%s: look-up failed: %s", ns,
		    name, r == KP_ETIMEDOUT ? "timed out" : kp_strerror(r));
		return (r);
	}
	r = ns_fill(reply->claim_reply, out, err, errsize);
	ipc_free(reply);
	return (r);
}

void
ns_wrap_init(struct ns_wrap *w, struct ipc_chan *ctl)
{
	memset(w, 0, sizeof(*w));
	w->ctl = ctl;
	pthread_mutex_init(&w->lock, NULL);
}

void
ns_wrap_free(struct ns_wrap *w)
{
	pthread_mutex_destroy(&w->lock);
}
