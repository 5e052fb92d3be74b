/*
 * clock.c - deadlines: "ms from now" on a given clock (condition variables
 * wait on CLOCK_REALTIME unless told otherwise; timers use MONOTONIC).
 */
#include <time.h>

#include "base/clock.h"

/* Move ts ms milliseconds later. */
void
ts_after_ms(struct timespec *ts, long long ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* ts = now on clock clk, plus ms milliseconds. */
void
ts_deadline(struct timespec *ts, clockid_t clk, long long ms)
{
	clock_gettime(clk, ts);
	ts_after_ms(ts, ms);
}

/* Milliseconds from now until ts on CLOCK_MONOTONIC (negative: past). */
long long
ts_ms_until(const struct timespec *ts)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((long long)(ts->tv_sec - now.tv_sec) * 1000 +
	    (ts->tv_nsec - now.tv_nsec) / 1000000);
}
