/*
 * utf8.h - strict UTF-8 checks (utf8.c).
 */
#ifndef KP_UTF8_H
#define KP_UTF8_H

#include <stddef.h>

/* utf8.c */
size_t	utf8_char(const char *, size_t);
int	utf8_valid(const char *);

#endif /* KP_UTF8_H */
