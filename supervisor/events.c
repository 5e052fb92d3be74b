/*
 * events.c - Kubernetes Events on the Node, asked of the publisher (the
 * only process with credentials; publisher/events.c aggregates and posts
 * them). An Event is one kind from a fixed list (proto/ipc.proto
 * EventKind) and a note the supervisor writes from its own template:
 * what a child contributes is at most a syscall's name (checked by
 * ipc/check.c) or kubelet's registration error, sanitised and cut to the
 * API server's 1 KiB. The supervisor limits how many it forwards (a token
 * bucket: a child in a denial storm cannot flood the publisher), and
 * drops them while no publisher runs.
 *
 * Runs in: the supervisor.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define EV_QPS		10.0	/* Events a second to the publisher, */
#define EV_BURST	50.0	/* and in bursts */

static int
ev_allowed(struct sup *sup)
{
	long long	 ms;

	if (sup->ev_refill.tv_sec == 0 && sup->ev_refill.tv_nsec == 0) {
		sup->ev_tokens = EV_BURST;
		clock_gettime(CLOCK_MONOTONIC, &sup->ev_refill);
	}
	ms = -ts_ms_until(&sup->ev_refill);
	clock_gettime(CLOCK_MONOTONIC, &sup->ev_refill);
	sup->ev_tokens += ms * EV_QPS / 1000.0;
	if (sup->ev_tokens > EV_BURST)
		sup->ev_tokens = EV_BURST;
	if (sup->ev_tokens < 1.0)
		return (0);
	sup->ev_tokens -= 1.0;
	return (1);
}

/*
 * Ask the publisher for an Event of kind (a KPIPC__EVENT_KIND__* value)
 * with a note from fmt. Any module of the supervisor may call it (the
 * journal's reader for EVENT_JOURNAL_CORRUPT); nothing is sent when
 * there is no publisher, none runs, or the rate limit is reached.
 */
void
sup_event(struct sup *sup, int kind, const char *fmt, ...)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__EventPost	 ep = KPIPC__EVENT_POST__INIT;
	struct child		*pub = &sup->children[ROLE_PUBLISHER];
	char			 raw[KP_ERROR_SIZE * 2];
	char			 note[KP_IPC_MAX_NOTE + 1];
	va_list			 ap;

	if (!pub->enabled || pub->pid <= 0 || pub->state != CS_READY)
		return;
	if (!ev_allowed(sup)) {
		if (sup->ev_dropped++ == 0)
			log_warnx("events: more than %d a second; dropping "
			    "some", (int)EV_QPS);
		return;
	}
	/* The storm is over: say how big it was, and warn of the next. */
	if (sup->ev_dropped > 0) {
		log_warnx("events: %llu dropped over the limit of %d a second "
		    "(bursts of %d)", sup->ev_dropped, (int)EV_QPS,
		    (int)EV_BURST);
		sup->ev_dropped = 0;
	}
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Kubelet's text (a registration error) may hold anything. */
	log_sanitize(raw, note, sizeof(note));
	ep.kind = kind;
	ep.note = note;
	m.m_case = KPIPC__MSG__M_EVENT_POST;
	m.event_post = &ep;
	sup_queue(sup, pub, &m);
}

/* The nodeserver's EventAsk: ipc_check() allowed one kind, one name. */
void
events_ask(struct sup *sup, struct child *c, const Kpipc__EventAsk *a)
{
	/*
	 * Once per nodeserver process: a hostile one asking again and again
	 * gets nothing more (the journal is read once, at its start).
	 */
	if (a->kind == KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT) {
		if (c->journal_told)
			return;
		c->journal_told = 1;
		chan_error(sup, KP_EIO, 1, "the prepared-claim journal was "
		    "unreadable and was moved aside; claims prepared before "
		    "are prepared again when kubelet asks (the nodeserver's "
		    "log says why)");
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT, "the "
		    "driver's prepared-claim journal was unreadable and was "
		    "moved aside; claims are prepared again when kubelet asks");
		return;
	}
	sup_event(sup, KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED, "a driver "
	    "hook called %s, which the nodeserver's sandbox denies (EPERM); "
	    "the driver may need kp_sandbox_syscall(\"%s\")", a->syscall,
	    a->syscall);
}

/* A child was reaped: one the sandbox killed is worth an Event. */
void
events_child_exit(struct sup *sup, struct child *c, int status)
{
	if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS))
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_CHILD_KILLED, "the %s "
		    "was killed by its sandbox (seccomp, SIGSYS) and is "
		    "restarted", c->name);
}
