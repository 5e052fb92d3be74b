/*
 * health.c - the supervisor's part in resource health: the driver
 * process's HealthReport is kept (a restarted nodeserver gets it again,
 * as a restarted publisher gets the resources) and passed on; the
 * nodeserver's stale warnings are counted and passed to the driver's
 * error function within the nodeserver's budget.
 *
 * Runs in: the broker.
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

/*
 * The nodeserver's stale warning: an honest one sends one every 10 s; a
 * hostile one as many as it likes, so each call of the driver's error
 * function and each line is charged to the nodeserver (charge.c).
 */
void
health_relay_stale(struct sup *sup, const Kpipc__HealthStale *hs)
{
	struct child	*ns = &sup->children[ROLE_NODESERVER];

	sup->health_stale++;
	/* Recoverable, as upstream's HandleError(ErrRecoverable, ...). */
	charge_error(sup, ns, KP_ETIMEDOUT, 1, "nodeserver: %s", hs->message);
	/* It logged the warning itself: ours is for -v 2. */
	charge_log(ns, KP_LOG_INFO, 2, "nodeserver: %s", hs->message);
}

/* A (re)started nodeserver starts from the driver's last report. */
void
health_child_ready(struct sup *sup, struct child *c)
{
	if (c->role == ROLE_NODESERVER && sup->health != NULL)
		sup_queue(sup, c, sup->health);
}
