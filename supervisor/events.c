/*
 * events.c - Kubernetes Events on the Node, asked of the publisher (the
 * only process with credentials; publisher/events.c aggregates and posts
 * them). An Event is one kind from a fixed list (proto/ipc.proto
 * EventKind) and a note the supervisor writes from its own template:
 * what a child contributes is at most a syscall's name (checked by
 * ipc/check.c) or kubelet's registration error, sanitised and cut to the
 * API server's 1 KiB. The supervisor limits how many it forwards with a
 * token bucket per source: the nodeserver's asks are charged to the
 * nodeserver, the registrar's verdicts to the registrar, and the
 * supervisor's own Events (SocketRecreated, SocketLost, SandboxKilled)
 * have a bucket no child draws on, so a child in a denial storm can
 * neither flood the publisher nor hide them. Dropped while no publisher
 * runs.
 *
 * Runs in: the broker.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define EV_QPS		10.0	/* Events a second to the publisher, */
#define EV_BURST	50.0	/* and in bursts, from each source */

/*
 * Ask the publisher for an Event of kind with a note from fmt, within
 * the bucket b of whoever caused it (who: "" for the supervisor). Nothing
 * is sent when there is no publisher, none runs, or b is empty.
 */
static void	event_post(struct sup *, struct bucket *, const char *, int,
		    const char *, va_list) KP_PRINTF(5, 0);

static void
event_post(struct sup *sup, struct bucket *b, const char *who, int kind,
    const char *fmt, va_list ap)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__EventPost	 ep = KPIPC__EVENT_POST__INIT;
	struct child		*pub = &sup->children[ROLE_PUBLISHER];
	unsigned long long	 n = b->dropped;
	char			 raw[KP_ERROR_SIZE * 2];
	char			 note[KP_IPC_MAX_NOTE + 1];

	if (!pub->enabled || pub->pid <= 0 || pub->state != CS_READY)
		return;
	if (!charge_take(b, EV_QPS, EV_BURST)) {
		if (n == 0)
			log_warnx("%sevents: more than %d a second; dropping "
			    "some", who, (int)EV_QPS);
		return;
	}
	/* The storm is over: say how big it was, and warn of the next. */
	if (n > 0) {
		log_warnx("%sevents: %llu dropped over the limit of %d a "
		    "second (bursts of %d)", who, n, (int)EV_QPS,
		    (int)EV_BURST);
		b->dropped = 0;
	}
	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* Kubelet's text (a registration error) may hold anything. */
	log_sanitize(raw, note, sizeof(note));
	ep.kind = kind;
	ep.note = note;
	m.m_case = KPIPC__MSG__M_EVENT_POST;
	m.event_post = &ep;
	sup_queue(sup, pub, &m);
}

/*
 * An Event of the supervisor's own (a socket re-created or lost, a child
 * the sandbox killed, the journal's reader): from its own bucket, which
 * no child's frames draw on, so no child can hide these.
 */
void
sup_event(struct sup *sup, int kind, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	event_post(sup, &sup->own_events, "", kind, fmt, ap);
	va_end(ap);
}

/* An Event a frame of c caused: from c's own bucket. */
void
sup_child_event(struct sup *sup, struct child *c, int kind,
    const char *fmt, ...)
{
	char	 who[32];
	va_list	 ap;

	snprintf(who, sizeof(who), "%s ", c->name);
	va_start(ap, fmt);
	event_post(sup, &c->events, who, kind, fmt, ap);
	va_end(ap);
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
		sup_child_event(sup, c, KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT,
		    "the driver's prepared-claim journal was unreadable and "
		    "was moved aside; claims are prepared again when kubelet "
		    "asks");
		return;
	}
	sup_child_event(sup, c, KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED, "a "
	    "driver hook called %s, which the nodeserver's sandbox denies "
	    "(EPERM); the driver may need kp_sandbox_syscall(\"%s\")",
	    a->syscall, a->syscall);
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
