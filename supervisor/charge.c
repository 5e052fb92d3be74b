/*
 * charge.c - every input from a child is charged to that child. A frame,
 * a log datagram or a line of stderr may make the supervisor write a log
 * line, call the driver's error function or ask the publisher for an
 * Event, or (a ClaimCancel) scan every look-up in flight; each of these
 * takes a token from that child's own bucket (struct child: log, errs,
 * events, cancels), so one child in a storm can neither
 * flood the log or the driver process nor use up what the supervisor
 * needs for its own lines and Events. What a bucket refuses is counted
 * and reported once, with the count, as soon as the bucket allows again
 * (charge_tick(): also when the child has gone quiet), and is counted in
 * /metrics (kubeletplugin_dropped_total).
 *
 * Runs in: the broker.
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define REPORT_MS	1000	/* a bucket's refusals reported this often
				 * at most */
#define ERR_QPS		2.0	/* error function calls a second from one */
#define ERR_BURST	20.0	/* child, and in bursts: far above an
				 * honest one's (health: one per 10 s; the
				 * publisher: 8 a sync pass at most) */

/* Refill b: qps a second since its last refill, at most burst; a new
 * bucket is full. Nanoseconds, not milliseconds: a flood calls this
 * more often than once a millisecond. */
static void
refill(struct bucket *b, double qps, double burst)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (b->refill.tv_sec == 0 && b->refill.tv_nsec == 0)
		b->tokens = burst;
	else
		b->tokens += ((double)(now.tv_sec - b->refill.tv_sec) +
		    (double)(now.tv_nsec - b->refill.tv_nsec) / 1e9) * qps;
	if (b->tokens > burst)
		b->tokens = burst;
	b->refill = now;
}

/* 1 and a token taken from b, or 0 and the refusal counted. */
int
charge_take(struct bucket *b, double qps, double burst)
{
	refill(b, qps, burst);
	if (b->tokens < 1.0) {
		b->dropped++;
		b->total++;
		return (0);
	}
	b->tokens -= 1.0;
	return (1);
}

/*
 * May b's refusals be reported now? At most once a REPORT_MS: under a
 * sustained flood a report at every allowed line (or every loop pass)
 * took the budget from the child's own lines (red team, session 35:
 * 217-268 reports against 15-59 lines). Marks the report when it is.
 */
static int
report_time(struct bucket *b)
{
	if ((b->told.tv_sec != 0 || b->told.tv_nsec != 0) &&
	    -ts_ms_until(&b->told) < REPORT_MS)
		return (0);
	clock_gettime(CLOCK_MONOTONIC, &b->told);
	return (1);
}

/* The count of b's refusals to report now (a token is there: taken), or
 * 0. */
static unsigned long long
report_due(struct bucket *b, double qps, double burst)
{
	unsigned long long	 n = b->dropped;

	if (n == 0)
		return (0);
	refill(b, qps, burst);
	if (b->tokens < 1.0 || !report_time(b))
		return (0);
	b->tokens -= 1.0;
	b->dropped = 0;
	return (n);
}

static void
log_report(struct child *c, unsigned long long n)
{
	log_warnx("%s: %llu log lines dropped (more than %d a second)",
	    c->name, n, (int)KP_LOG_LPS);
}

/*
 * May a line of c (its own, relayed, or ours about what it sent) be
 * written? 200 lines a second, bursts of 1000 (KP_LOG_LPS, KP_LOG_BURST);
 * the first allowed after a refusal is preceded by the count (at most
 * one count a second: report_time; charge_tick reports what is left).
 */
int
charge_log_allowed(struct child *c)
{
	unsigned long long	 n = c->log.dropped;

	if (!charge_take(&c->log, KP_LOG_LPS, KP_LOG_BURST))
		return (0);
	if (n > 0 && report_time(&c->log)) {
		c->log.dropped = 0;
		log_report(c, n);
	}
	return (1);
}

/*
 * A line of the supervisor's that a frame of c caused (a refusal, a
 * relayed text): within c's budget. A line the verbosity hides costs
 * nothing.
 */
void
charge_log(struct child *c, enum kp_log_level level, int verbosity,
    const char *fmt, ...)
{
	va_list	 ap;

	if (level == KP_LOG_INFO && !log_enabled(verbosity))
		return;
	if (!charge_log_allowed(c))
		return;
	va_start(ap, fmt);
	log_vmsg(level, verbosity, fmt, ap);
	va_end(ap);
}

static void
error_report(struct sup *sup, struct child *c, unsigned long long n)
{
	chan_error(sup, c->errs_code, 1, "%s: %llu more error reports "
	    "dropped (more than %d a second, bursts of %d)", c->name, n,
	    (int)ERR_QPS, (int)ERR_BURST);
}

/*
 * An error for the driver's error function that a frame of c caused (a
 * HealthStale, the publisher's ResourceSlice errors): within c's budget,
 * before it costs the driver process anything.
 */
void
charge_error(struct sup *sup, struct child *c, int code, int recoverable,
    const char *fmt, ...)
{
	unsigned long long	 n = c->errs.dropped;
	va_list			 ap;

	if (sup->cfg->error_fn == NULL && !sup->cfg->error_forward)
		return;		/* nothing to call: costs nothing */
	if (!charge_take(&c->errs, ERR_QPS, ERR_BURST)) {
		c->errs_code = code;
		return;
	}
	if (n > 0 && report_time(&c->errs)) {
		c->errs.dropped = 0;
		error_report(sup, c, n);
	}
	va_start(ap, fmt);
	chan_verror(sup, code, recoverable, fmt, ap);
	va_end(ap);
}

/* Counts of refusals of children that went quiet, once a token is
 * there (the poll loop wakes at least every KP_HEARTBEAT_MS). */
void
charge_tick(struct sup *sup)
{
	struct child		*c;
	unsigned long long	 n;
	int			 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if ((n = report_due(&c->log, KP_LOG_LPS, KP_LOG_BURST)) > 0)
			log_report(c, n);
		if ((n = report_due(&c->errs, ERR_QPS, ERR_BURST)) > 0)
			error_report(sup, c, n);
		if ((n = report_due(&c->cancels, KP_CANCEL_QPS,
		    KP_CANCEL_BURST)) > 0)
			charge_log(c, KP_LOG_WARNING, 0, "%s: %llu claim_cancel "
			    "frames dropped (more than %d a second, bursts of "
			    "%d): their look-ups ran to their answers",
			    c->name, n, (int)KP_CANCEL_QPS,
			    (int)KP_CANCEL_BURST);
	}
}
