/*
 * kcfg_base64.c - the base64 of a kubeconfig's *-data fields (PEM
 * certificates and keys), decoded as Go's encoding/base64 does.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "publisher/publisher.h"

/*
 * Standard base64 with padding, as Go's base64.StdEncoding (which skips
 * CR and LF). Returns 0, or the offset of the first bad byte plus one.
 */
size_t
kcfg_b64_decode(const char *in, unsigned char *out, size_t *outlen)
{
	static const char	 abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char		*p;
	uint32_t		 acc = 0, v;
	size_t			 i, n = 0, pad = 0, o = 0;

	for (i = 0; in[i] != '\0'; i++) {
		if (in[i] == '\r' || in[i] == '\n')
			continue;
		/* Nothing may follow a padded quad. */
		if (pad > 0 && n % 4 == 0)
			return (i + 1);
		if (in[i] == '=') {
			if (n % 4 < 2)
				return (i + 1);
			pad++;
			v = 0;
		} else if (pad > 0 || (p = strchr(abc, in[i])) == NULL)
			return (i + 1);
		else
			v = (uint32_t)(p - abc);
		acc = acc << 6 | v;
		if (++n % 4 == 0) {
			out[o++] = acc >> 16;
			if (pad < 2)
				out[o++] = acc >> 8 & 0xff;
			if (pad < 1)
				out[o++] = acc & 0xff;
			acc = 0;
		}
	}
	if (n % 4 != 0)
		return (i + 1);
	*outlen = o;
	out[o] = '\0';
	return (0);
}
