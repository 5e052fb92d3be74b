/*
 * clock.h - deadlines as struct timespec, shared by every role (clock.c).
 */
#ifndef KP_CLOCK_H
#define KP_CLOCK_H

#include <time.h>

/* clock.c */
void	ts_after_ms(struct timespec *, long long);
void	ts_deadline(struct timespec *, clockid_t, long long);
long long ts_ms_until(const struct timespec *);

#endif /* KP_CLOCK_H */
