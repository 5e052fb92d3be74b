/*
 * heal.c - a child that stopped answering the heartbeat (status.c) is
 * replaced like a crashed one (issue 28): SIGSTOPped, deadlocked, or
 * spinning in the loop that reads its channel. /healthz alone only
 * reported it, and nothing acted without a liveness probe: every call to
 * a stopped nodeserver ran into kubelet's 45 s deadline for as long as
 * the stop lasted, a stopped registrar failed kubelet's (re)registration,
 * and a stopped observer went unnoticed.
 *
 * Measured from the Ping that is due, not from the last answer: after a
 * stall of the broker itself, the answers that waited in the channels are
 * read before the timers run (supervisor.c sup_poll, then sup_timers), and
 * a child that had no Ping outstanding gets a fresh one; so a broker that
 * was stopped or starved never blames its children for its own delay.
 *
 * What is logged: one warning when the answers stop (for the roles that
 * serve kubelet, /healthz's "health: ... has not answered" line, logged
 * once per reason by status.c; for the observer, here), one when the
 * child is killed; its end and restart at info level, and "health: ok
 * again" once a new one is READY.
 *
 * Runs in: the broker; single-threaded, and nothing here waits for a
 * child: signals go through the monitor (child_signal), the exit comes
 * back as MON_EXITED and child_exited() schedules the restart.
 */
#include <signal.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

/* c has not answered for ms: kill it (a nodeserver is drained first). */
static void
heal_kill(struct sup *sup, struct child *c, long long ms)
{
	log_warnx("%s has not answered the supervisor's heartbeat for %lld s "
	    "(kp_hung_child_timeout %d ms): %s and starting a new one",
	    c->name, ms / 1000, sup->cfg->hung_ms,
	    c->role == ROLE_NODESERVER && sup->cfg->shutdown_grace_ms > 0 ?
	    "draining it (SIGTERM, then SIGKILL)" : "killing it");
	c->hung = 1;
	c->hb_out = 0;
	if (c->role == ROLE_NODESERVER)
		drain_hung(sup, c);
	else
		child_kill(c, SIGKILL);
}

/* Every KP_HEARTBEAT_MS while running (status_tick), before the new
 * Pings. */
void
heal_tick(struct sup *sup)
{
	struct child	*c;
	long long	 ms;
	int		 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (!c->enabled || c->pid <= 0 || c->state != CS_READY ||
		    c->draining || c->hung || !c->hb_out)
			continue;
		ms = -ts_ms_until(&c->hb_sent);
		if (ms >= KP_HEARTBEAT_TIMEOUT_MS && !c->hb_warned) {
			c->hb_warned = 1;
			/* The other roles' silence fails /healthz, which
			 * logs it (status.c); the observer serves it. */
			if (c->role == ROLE_OBSERVER)
				log_warnx("%s has not answered the supervisor's "
				    "heartbeat for %lld s", c->name, ms / 1000);
		}
		if (sup->cfg->hung_ms > 0 && ms >= sup->cfg->hung_ms)
			heal_kill(sup, c, ms);
	}
}
