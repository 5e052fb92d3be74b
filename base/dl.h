/*
 * dl.h - load a library by soname and resolve a table of its functions
 * (dl.c). Used by the publisher (libcurl) and the observer
 * (libmicrohttpd), each before its sandbox: no other process maps them
 * (docs/security.md, "Libraries: who maps what").
 */
#ifndef KP_BASE_DL_H
#define KP_BASE_DL_H

#include <stddef.h>

struct dl_sym {
	const char	*name;
	size_t		 off;	/* of the pointer in the caller's table */
};

/*
 * Opens soname (RTLD_NOW | RTLD_LOCAL, never closed) and stores each
 * symbol's address at table + fn[i].off. The table is written only when
 * every symbol resolved. why completes the message when the library is
 * missing ("the publisher needs ..., Debian package ..."). 0 or
 * KP_ENOTSUP with err set.
 */
int	dl_load(const char *soname, const char *why, const struct dl_sym *fn,
	    size_t n, void *table, size_t tablesize, char *err, size_t errsize);

#endif /* KP_BASE_DL_H */
