/*
 * drain.c - the draining stop (kp_stop, SIGTERM to the supervisor, a
 * fatal condition). Order:
 *   1. the registration socket file goes (supervisor.c, before this):
 *      kubelet deregisters and routes no new work here; in a rolling
 *      update the other instance keeps serving;
 *   2. SIGTERM to the nodeserver, which stays READY for the supervisor
 *      (its claim look-ups and CDI requests are still relayed) while it
 *      answers new calls with UNAVAILABLE and lets those in flight
 *      finish within kp_shutdown_grace() (rpc/serve.c);
 *   3. every other child but the publisher stops at once; the publisher
 *      (the look-ups of calls in flight need it) once the nodeserver is
 *      gone;
 *   4. SIGKILL for a nodeserver still there KP_STOP_GRACE_MS after its
 *      budget, for any other child KP_STOP_GRACE_MS after its SIGTERM
 *      (supervisor.c sup_timers); the DRA socket file is removed last
 *      (sup_finish).
 * Restarting a nodeserver on a new listening socket (repair.c) drains it
 * the same way; a hung one (heal.c) too, for at most KP_STOP_GRACE_MS.
 *
 * Runs in: the broker.
 */
#include <signal.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

/* SIGTERM c, keep relaying its frames until it exits or kill_at. */
static void
drain_child(struct sup *sup, struct child *c)
{
	int	 grace = sup->cfg->shutdown_grace_ms;

	if (c->pid <= 0)
		return;
	if (c->state != CS_READY || grace == 0) {
		child_kill(c, SIGTERM);
		clock_gettime(CLOCK_MONOTONIC, &c->kill_at);
		ts_after_ms(&c->kill_at, KP_STOP_GRACE_MS);
		c->draining = 1;
		return;
	}
	child_signal(c, SIGTERM);	/* by the monitor */
	c->draining = 1;
	clock_gettime(CLOCK_MONOTONIC, &c->kill_at);
	ts_after_ms(&c->kill_at, grace + KP_STOP_GRACE_MS);
	log_info(1, "%s: draining, at most %d ms", c->name, grace);
}

void
drain_begin(struct sup *sup)
{
	struct child	*c;
	int		 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (c->pid <= 0 || c->role == ROLE_PUBLISHER)
			continue;
		if (c->role == ROLE_NODESERVER)
			drain_child(sup, c);
		else
			child_kill(c, SIGTERM);
	}
	sup->pub_stopped = 0;
	/* The overall limit; drain_tick() sets the publisher's own. */
	clock_gettime(CLOCK_MONOTONIC, &sup->stop_deadline);
	ts_after_ms(&sup->stop_deadline, sup->cfg->shutdown_grace_ms +
	    2 * KP_STOP_GRACE_MS);
	drain_tick(sup);
}

/* Restart the nodeserver (on a new listener): drained like at a stop. */
void
drain_restart(struct sup *sup, struct child *c)
{
	drain_child(sup, c);
}

/*
 * A hung nodeserver (heal.c): drained like at a stop, for at most
 * KP_STOP_GRACE_MS (or the shorter kp_shutdown_grace). A wedged channel
 * reader may leave the gRPC threads able to finish the calls in flight;
 * a stopped process cannot, and its SIGTERM waits until the SIGKILL.
 * Kept short: kubelet's calls wait for the replacement.
 */
void
drain_hung(struct sup *sup, struct child *c)
{
	int	 grace = sup->cfg->shutdown_grace_ms;

	if (c->pid <= 0)
		return;
	if (grace == 0) {
		child_kill(c, SIGKILL);
		return;
	}
	child_signal(c, SIGTERM);	/* READY: its frames still relayed */
	c->draining = 1;
	clock_gettime(CLOCK_MONOTONIC, &c->kill_at);
	ts_after_ms(&c->kill_at, grace < KP_STOP_GRACE_MS ? grace :
	    KP_STOP_GRACE_MS);
}

void
drain_tick(struct sup *sup)
{
	struct child	*ns = &sup->children[ROLE_NODESERVER];
	struct child	*pub = &sup->children[ROLE_PUBLISHER];

	if (ns->pid <= 0)
		ns->draining = 0;
	if (ns->draining && ts_ms_until(&ns->kill_at) <= 0) {
		/* A hung one was expected not to: its kill was logged. */
		if (ns->hung)
			log_info(1, "%s did not drain: SIGKILL", ns->name);
		else
			log_warnx("%s did not stop in time: SIGKILL",
			    ns->name);
		child_kill(ns, SIGKILL);
		ns->draining = 0;
	}
	if (sup->phase != PHASE_STOPPING || sup->pub_stopped ||
	    ns->pid > 0)
		return;
	sup->pub_stopped = 1;
	if (pub->pid > 0) {
		child_kill(pub, SIGTERM);
		clock_gettime(CLOCK_MONOTONIC, &sup->stop_deadline);
		ts_after_ms(&sup->stop_deadline, KP_STOP_GRACE_MS);
	}
}

/*
 * Milliseconds until drain_tick() kills a draining nodeserver; -1: none
 * drains. One of the broker's poll timeouts: else a grace shorter than
 * the heartbeat (kp_shutdown_grace, drain_hung) would end only at the
 * next heartbeat, up to KP_HEARTBEAT_MS late.
 */
long long
drain_next_ms(const struct sup *sup)
{
	const struct child	*ns = &sup->children[ROLE_NODESERVER];
	long long		 d;

	if (ns->pid <= 0 || !ns->draining)
		return (-1);
	d = ts_ms_until(&ns->kill_at);
	return (d < 0 ? 0 : d);
}
