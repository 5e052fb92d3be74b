/*
 * health.c - the supervisor's part in resource health: the driver
 * process's HealthReport is kept (a restarted nodeserver gets it again,
 * as a restarted publisher gets the resources) and passed on; the
 * nodeserver's stale warnings are counted.
 *
 * Runs in: the supervisor.
 */
#include "base/log.h"
#include "supervisor/supervisor.h"

void
health_relay_report(struct sup *sup, Kpipc__Msg *m)
{
	struct child	*ns = &sup->children[ROLE_NODESERVER];

	ipc_free(sup->health);
	sup->health = m;
	if (ns->state == CS_READY)
		sup_queue(sup, ns, m);
	sup_reply_driver(sup, 0, "");
}

void
health_relay_stale(struct sup *sup, const Kpipc__HealthStale *hs)
{
	sup->health_stale++;
	/* Recoverable, as upstream's HandleError(ErrRecoverable, ...). */
	chan_error(sup, KP_ETIMEDOUT, 1, "nodeserver: %s", hs->message);
	/* The nodeserver's text: within its log rate limit (it logged
	 * the warning itself). */
	if (sup_log_allowed(&sup->children[ROLE_NODESERVER]))
		log_info(2, "nodeserver: %s", hs->message);
}

/* A (re)started nodeserver starts from the driver's last report. */
void
health_child_ready(struct sup *sup, struct child *c)
{
	if (c->role == ROLE_NODESERVER && sup->health != NULL)
		sup_queue(sup, c, sup->health);
}
