/*
 * fdio.h - whole writes to a file descriptor (fdio.c), shared by the
 * nodeserver's journal and the supervisor's file broker; whether a
 * directory's mode lets this process create files in it.
 */
#ifndef KP_BASE_FDIO_H
#define KP_BASE_FDIO_H

#include <stddef.h>
#include <sys/stat.h>

int	fd_write_all(int, const void *, size_t);
int	fd_dir_mode_writable(const struct stat *);
int	fd_tmp_create(int, const char *, char *, size_t);
int	fd_dir_dup(int);

#endif /* KP_BASE_FDIO_H */
