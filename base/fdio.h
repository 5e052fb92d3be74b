/*
 * fdio.h - whole writes to a file descriptor (fdio.c), shared by the
 * nodeserver's journal and the supervisor's file broker.
 */
#ifndef KP_BASE_FDIO_H
#define KP_BASE_FDIO_H

#include <stddef.h>

int	fd_write_all(int, const void *, size_t);

#endif /* KP_BASE_FDIO_H */
