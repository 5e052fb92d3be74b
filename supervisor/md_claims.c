/*
 * md_claims.c - which claims a MetadataWrite may name. With Kubernetes
 * access every prepare call looks its claims up first (nodeserver/dra.c:
 * a claim the journal knows is replayed, with no hook and no metadata),
 * and the look-up passes through the supervisor (relay.c). So a claim
 * the publisher answered for this nodeserver, without error, within the
 * last MD_SEEN_MS, is one of a prepare call in progress; any other is
 * refused, naming the rule: a compromised nodeserver can no longer
 * create metadata directories for claims it made up, only for claims
 * the API server holds for this driver and that kubelet asked it to
 * prepare (and the quota, files.c, bounds even those).
 *
 * Why MD_SEEN_MS is 60 s: kubelet gives a NodePrepareResources call 45 s
 * (its gRPC deadline), and the look-ups come first in the call; the
 * hook, the serialization lock and the metadata writes all fall within
 * that deadline unless the call overran it, and then kubelet has given
 * up and calls again, which looks the claims up again. 15 s more covers
 * a hook that ends just after the deadline. A refusal fails only that
 * claim of that call.
 *
 * Why MD_SEEN_MAX is 256: an entry is needed from the look-up to the
 * write, at most MD_SEEN_MS. Look-ups are rate-limited (relay.c: 20 a
 * second after a burst of 50 by default) and kubelet prepares a pod's
 * claims in one call, so 256 hold the claims of a node's worth of pods
 * starting at once; past that the oldest entry goes (a claim whose write
 * then comes is refused, and kubelet's retry looks it up again). Only
 * the nodeserver itself can crowd the table, with look-ups of its own,
 * and it only harms its own writes.
 *
 * Without Kubernetes access there is no look-up to see: a MetadataWrite
 * is then bounded by the quota and the rate only (docs/security.md).
 *
 * Runs in: the supervisor (one thread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

/* The table, when there is a publisher and metadata is on. */
int
md_claims_init(struct sup *sup, char *err, size_t errsize)
{
	sup->md_seen = NULL;
	if (!sup->cfg->metadata || sup->cfg->kube_mode == KP_KUBE_NONE)
		return (0);
	if ((sup->md_seen = calloc(MD_SEEN_MAX, sizeof(*sup->md_seen))) ==
	    NULL)
		return (files_fail(err, errsize, KP_ENOMEM, "device metadata: "
		    "out of memory"));
	return (0);
}

void
md_claims_free(struct sup *sup)
{
	free(sup->md_seen);
	sup->md_seen = NULL;
}

static int
same_claim(const struct sup_md_seen *e, pid_t pid, const char *ns,
    const char *name, const char *uid)
{
	return (e->ns_pid == pid && strcmp(e->namespace_, ns) == 0 &&
	    strcmp(e->name, name) == 0 && strcmp(e->uid, uid) == 0);
}

/*
 * The publisher answered r for the nodeserver pid (relay.c, after the
 * answer was checked against the look-up): keep the claim if found.
 */
void
md_claims_answered(struct sup *sup, pid_t pid, const Kpipc__ClaimReply *r)
{
	struct sup_md_seen	*e = NULL, *free_e = NULL, *old = NULL, *t;
	size_t			 i;

	if (sup->md_seen == NULL || (r->result != NULL &&
	    r->result->code != 0))
		return;
	/* The same claim again, else a free or expired entry, else the
	 * one that expires first. */
	for (i = 0; i < MD_SEEN_MAX && e == NULL; i++) {
		t = &sup->md_seen[i];
		if (same_claim(t, pid, r->namespace_, r->name, r->uid))
			e = t;
		else if (t->ns_pid == 0 || ts_ms_until(&t->until) <= 0) {
			if (free_e == NULL)
				free_e = t;
		} else if (old == NULL ||
		    ts_ms_until(&t->until) < ts_ms_until(&old->until))
			old = t;
	}
	if (e == NULL)
		e = free_e != NULL ? free_e : old;
	e->ns_pid = pid;
	clock_gettime(CLOCK_MONOTONIC, &e->until);
	ts_after_ms(&e->until, MD_SEEN_MS);
	/* Field rules (ipc/check.c) bound these lengths already. */
	snprintf(e->namespace_, sizeof(e->namespace_), "%s", r->namespace_);
	snprintf(e->name, sizeof(e->name), "%s", r->name);
	snprintf(e->uid, sizeof(e->uid), "%s", r->uid);
	snprintf(e->pod_claim_name, sizeof(e->pod_claim_name), "%s",
	    r->pod_claim_name);
}

/*
 * Whether the nodeserver pid may write metadata for w's claim: 0, or
 * KP_EACCES with err naming the rule. pod_claim_name must be the one
 * the publisher gave (it chooses the container path).
 */
int
md_claims_known(struct sup *sup, pid_t pid, const Kpipc__MetadataWrite *w,
    char *err, size_t errsize)
{
	const struct sup_md_seen	*e;
	size_t				 i;

	if (sup->md_seen == NULL)
		return (0);
	for (i = 0; i < MD_SEEN_MAX; i++) {
		e = &sup->md_seen[i];
		if (!same_claim(e, pid, w->namespace_, w->name, w->uid) ||
		    ts_ms_until(&e->until) <= 0)
			continue;
		if (strcmp(e->pod_claim_name, w->pod_claim_name) != 0)
			return (files_fail(err, errsize, KP_EACCES, "metadata "
			    "of %s/%s: pod claim name \"%s\", but the claim's "
			    "is \"%s\"", w->namespace_, w->name,
			    w->pod_claim_name, e->pod_claim_name));
		return (0);
	}
	return (files_fail(err, errsize, KP_EACCES, "metadata of %s/%s (UID "
	    "%s): not a claim of a prepare call in progress (the publisher "
	    "answered no look-up of it for this nodeserver in the last %d s)",
	    w->namespace_, w->name, w->uid, MD_SEEN_MS / 1000));
}
