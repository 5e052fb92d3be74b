/*
 * sigfd.h - signals of a poll loop on a signalfd (sigfd.c).
 */
#ifndef KP_BASE_SIGFD_H
#define KP_BASE_SIGFD_H

#include <stddef.h>

int	sigfd_open(const int *, size_t);

#endif /* KP_BASE_SIGFD_H */
