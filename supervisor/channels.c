/*
 * channels.c - the supervisor's part in the channels between the driver
 * process, the library and the hooks:
 *  - the driver's state for the hooks (StateSet): checked for order, kept
 *    (a nodeserver forked later starts from it: child_env.state) and
 *    passed to the nodeserver. Only the driver may send one (ipc/rules.c):
 *    nothing a child sends ever becomes state.
 *  - events for the driver process (Event), one way on their own
 *    socketpair: errors for kp_error_callback() (only when the driver
 *    set one: otherwise the log lines where they arise are all) and
 *    status changes for kp_status_fd(). The queue is bounded; a driver that stops reading
 *    loses events (counted), never the supervisor's memory.
 *
 * Runs in: the broker.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

void
chan_state_set(struct sup *sup, Kpipc__Msg *m)
{
	struct child	*ns = &sup->children[ROLE_NODESERVER];
	char		 msg[KP_ERROR_SIZE];

	if (sup->state != NULL && m->state_set->generation <=
	    sup->state->state_set->generation) {
		snprintf(msg, sizeof(msg), "state_set.generation %llu: not "
		    "above the last one (%llu)",
		    (unsigned long long)m->state_set->generation,
		    (unsigned long long)sup->state->state_set->generation);
		sup_reply_driver(sup, KP_EINVAL, msg);
		ipc_free(m);
		return;
	}
	ipc_free(sup->state);
	sup->state = m;
	sup->state_pending = 1;
	chan_state_flush(sup, ns);
	sup_reply_driver(sup, 0, "");
}

/*
 * Send the latest state to the nodeserver unless its queue is already
 * long (a reader stuck in the driver's state function): then it waits
 * here, and only the latest goes once the queue drained; a nodeserver
 * never gets an older state after a newer one, and never gets killed
 * for not reading because the driver sends fast.
 */
void
chan_state_flush(struct sup *sup, struct child *c)
{
	if (c->role != ROLE_NODESERVER || !sup->state_pending ||
	    sup->state == NULL || c->pid <= 0 || c->ctl.fd == -1 ||
	    c->ctl.wlen > KP_STATE_QUEUE)
		return;
	sup->state_pending = 0;
	sup_queue(sup, c, sup->state);
}

/* The state a nodeserver forked now starts with (child_env.state). */
void
chan_state_env(const struct sup *sup, struct child_env *env)
{
	if (sup->state == NULL)
		return;
	env->state = sup->state->state_set->data.data;
	env->state_len = sup->state->state_set->data.len;
	env->state_gen = sup->state->state_set->generation;
}

static void
event_queue(struct sup *sup, int kind, int code, int recoverable,
    const char *text)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Event	 e = KPIPC__EVENT__INIT;
	char		 msg[KP_ERROR_SIZE];

	if (sup->events.fd == -1)
		return;
	if (sup->events.wlen > KP_EVENTS_QUEUE) {
		sup->events_dropped++;
		return;
	}
	if (sup->events_dropped > 0 && kind == IPC_EVENT_ERROR) {
		snprintf(msg, sizeof(msg), "%s (and %llu earlier events "
		    "dropped: the driver process did not read them)", text,
		    sup->events_dropped);
		sup->events_dropped = 0;
		text = msg;
	}
	e.kind = kind;
	e.code = code;
	e.recoverable = recoverable;
	e.message = (char *)text;
	m.m_case = KPIPC__MSG__M_EVENT;
	m.event = &e;
	if (ipc_queue(&sup->events, &m) != 0)
		sup->events_dropped++;
}

/*
 * The broker's log function when the driver set one (kp_log_fn): each
 * line, ours or a child's (already sanitised and charged to it), goes to
 * the driver process, whose event thread calls the driver's function
 * (api/events.c); the broker is exec'd and has no pointer to it. Never
 * blocks and never logs: a full queue drops the line, counted with the
 * events.
 */
void
chan_log(void *user, enum kp_log_level level, int verbosity,
    const char *role, const char *text)
{
	struct sup	*sup = user;
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Log	 l = KPIPC__LOG__INIT;

	if (sup->events.fd == -1 || sup->events.wlen > KP_EVENTS_QUEUE) {
		sup->events_dropped++;
		return;
	}
	l.level = level;
	l.verbosity = verbosity;
	l.text = (char *)text;
	l.role = (char *)(strlen(role) <= 16 ? role : "broker");
	m.m_case = KPIPC__MSG__M_LOG;
	m.log = &l;
	if (ipc_queue(&sup->events, &m) != 0)
		sup->events_dropped++;
}

/* An error for the driver's error function. Text from a child must
 * have passed its field rules; it is sanitised here as a log line is. */
void
chan_verror(struct sup *sup, int code, int recoverable, const char *fmt,
    va_list ap)
{
	char	 raw[KP_ERROR_SIZE], text[KP_ERROR_SIZE];

	/* No error function: where each error arises it is logged, and
	 * that is the default (a second line in the driver process would
	 * only repeat it). */
	if (sup->cfg->error_fn == NULL && !sup->cfg->error_forward)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	log_sanitize(raw, text, sizeof(text));
	event_queue(sup, IPC_EVENT_ERROR, code, recoverable, text);
}

/* The supervisor's own errors; one a child's frame causes goes through
 * charge_error() (that child's budget). */
void
chan_error(struct sup *sup, int code, int recoverable, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	chan_verror(sup, code, recoverable, fmt, ap);
	va_end(ap);
}

/* kp_registration_status() or kp_publish_status() changed. */
void
chan_status(struct sup *sup, int kind)
{
	event_queue(sup, kind, 0, 0, "");
}

/* The driver closed its end (kp_stop, exit): events go nowhere. */
void
chan_events_flush(struct sup *sup)
{
	if (sup->events.fd != -1 && ipc_flush(&sup->events) != 0) {
		ipc_chan_close(&sup->events);
		sup->events.fd = -1;
	}
}
