/*
 * sigfd.h - signals of a poll loop on a signalfd (sigfd.c).
 */
#ifndef KP_BASE_SIGFD_H
#define KP_BASE_SIGFD_H

#include <stddef.h>

int	sigfd_open(const int *, size_t);
void	sig_reset_all(void);

#endif /* KP_BASE_SIGFD_H */
