/*
 * msg.h - error texts that fit their buffer (msg.c): cut at a word or
 * path boundary, marked "...", the full text logged.
 */
#ifndef KP_MSG_H
#define KP_MSG_H

#include <stdarg.h>
#include <stddef.h>

#include "kubeletplugin.h"
#include "base/log.h"

int	msg_fit(char *, size_t, const char *);
int	msg_vfmt(char *, size_t, const char *, va_list) KP_PRINTF(3, 0);
int	msg_fmt(char *, size_t, const char *, ...) KP_PRINTF(3, 4);

#endif /* KP_MSG_H */
