/*
 * utf8.c - strict UTF-8, shared by every process role: request strings
 * (nodeserver), resources for JSON (driver side), log lines (all).
 */
#include <stdint.h>
#include <string.h>

#include "base/utf8.h"

/*
 * Length of the well-formed UTF-8 character at s (at most len bytes), or 0
 * when it is not one (overlong forms, surrogates and > U+10FFFF too).
 */
size_t
utf8_char(const char *str, size_t len)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 n, i;
	uint32_t		 cp;

	if (len == 0)
		return (0);
	if (s[0] < 0x80)
		return (1);
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return (0);
	if (len < n)
		return (0);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return (0);
	return (n);
}

/* 1 if the NUL-terminated s is strict UTF-8, else 0. */
int
utf8_valid(const char *s)
{
	size_t	 len, i, k;

	/* ASCII, the usual case, needs no decoding. */
	for (i = 0; (unsigned char)s[i] - 1u < 0x7fu; i++)
		;
	if (s[i] == '\0')
		return (1);
	len = i + strlen(s + i);
	for (; i < len; i += k)
		if ((k = utf8_char(s + i, len - i)) == 0)
			return (0);
	return (1);
}
