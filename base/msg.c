/*
 * msg.c - error texts that fit their buffer. The API's messages live in
 * KP_ERROR_SIZE buffers (a handle's last error, a gRPC status, a claim's
 * error) and some name paths, IDs and the API server's own words: a plain
 * snprintf() cut them anywhere, "/var/run/cdi/gpu.exa" reads as a path
 * that exists. Here a text that does not fit is cut at the last space or
 * path separator in the second half of the room (else at the limit),
 * ends with "...", and is logged in
 * full (once, where it was made), so a person finds the whole reason.
 *
 * Runs in: every process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

/*
 * src into dst (size bytes, at least 8). Returns 0 when it fits, 1 when
 * it was cut: at a UTF-8 character boundary, then back to the last ' ',
 * '/', ',' or ':' in the second half of what is kept, with "..." added
 * (at most half the room is given up for a boundary).
 */
int
msg_fit(char *dst, size_t size, const char *src)
{
	size_t	 n = strlen(src), keep, b;

	if (size == 0)
		return (1);
	if (n < size) {
		memcpy(dst, src, n + 1);
		return (0);
	}
	if (size < 8) {
		dst[0] = '\0';
		return (1);
	}
	keep = size - 4;		/* "..." and the NUL */
	while (keep > 0 && ((unsigned char)src[keep] & 0xc0) == 0x80)
		keep--;			/* not inside a character */
	for (b = keep; b >= keep / 2 && b > 0; b--)
		if (strchr(" /,:", src[b - 1]) != NULL) {
			keep = b;
			break;
		}
	while (keep > 0 && src[keep - 1] == ' ')
		keep--;
	memcpy(dst, src, keep);
	memcpy(dst + keep, "...", 4);
	return (1);
}

/* vsnprintf() into dst through msg_fit(); a cut text is logged whole. */
int
msg_vfmt(char *dst, size_t size, const char *fmt, va_list ap)
{
	char	 stack[1024], *full = stack;
	va_list	 aq;
	int	 n, cut;

	va_copy(aq, ap);
	n = vsnprintf(stack, sizeof(stack), fmt, aq);
	va_end(aq);
	if (n < 0) {
		if (size > 0)
			dst[0] = '\0';
		return (1);
	}
	if ((size_t)n >= sizeof(stack) && (full = malloc((size_t)n + 1)) !=
	    NULL)
		vsnprintf(full, (size_t)n + 1, fmt, ap);
	else if (full == NULL)
		full = stack;		/* out of memory: the first 1 KiB */
	if ((cut = msg_fit(dst, size, full)) != 0)
		log_info(0, "message cut to %zu bytes; in full: %s", size,
		    full);
	if (full != stack)
		free(full);
	return (cut);
}

/* msg_vfmt() with the arguments given here. */
int
msg_fmt(char *dst, size_t size, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = msg_vfmt(dst, size, fmt, ap);
	va_end(ap);
	return (r);
}
