/*
 * quantity.c - Kubernetes resource.Quantity compared by value: a quantity is
 * parsed into an exact decimal (sign, digits, base-10 exponent) with the
 * API server's grammar (decimal SI, binary SI and e-notation suffixes) and
 * rounding (up to nano), so that "1Gi" == "1024Mi" and "1000m" == "1".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publisher/slices.h"

#define QTY_DIGITS	160	/* mantissa digits kept while parsing */

static const struct {
	const char	*suffix;
	int		 base;	/* 10 or 2 */
	int		 exp;
} qty_suffixes[] = {
	{ "", 10, 0 }, { "n", 10, -9 }, { "u", 10, -6 }, { "m", 10, -3 },
	{ "k", 10, 3 }, { "M", 10, 6 }, { "G", 10, 9 }, { "T", 10, 12 },
	{ "P", 10, 15 }, { "E", 10, 18 },
	{ "Ki", 2, 10 }, { "Mi", 2, 20 }, { "Gi", 2, 30 }, { "Ti", 2, 40 },
	{ "Pi", 2, 50 }, { "Ei", 2, 60 }
};

static int
qty_suffix(const char *s, int *base, int *exp)
{
	size_t	 i;
	char	*end;
	long	 e;

	for (i = 0; i < sizeof(qty_suffixes) / sizeof(qty_suffixes[0]); i++) {
		if (strcmp(s, qty_suffixes[i].suffix) == 0) {
			*base = qty_suffixes[i].base;
			*exp = qty_suffixes[i].exp;
			return (0);
		}
	}
	if ((s[0] != 'e' && s[0] != 'E') || s[1] == '\0')
		return (-1);
	s++;
	if (!isdigit((unsigned char)s[*s == '-' || *s == '+' ? 1 : 0]))
		return (-1);
	errno = 0;
	e = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || e > 1000 || e < -1000)
		return (-1);
	*base = 10;
	*exp = (int)e;
	return (0);
}

/*
 * The canonical text of a Kubernetes quantity: "[-]<digits>e<exp>" with no
 * leading or trailing zeros in digits, or "0"; two quantities are equal
 * exactly when their canonical texts are. Values below 1n round up (away
 * from zero) to nano precision, as the API server's parser does. Returns 0
 * or KP_EINVAL (not a quantity, or too long for out).
 */
int
conv_quantity_canon(const char *q, char *out, size_t outsize)
{
	unsigned char	 d[QTY_DIGITS];
	size_t		 nd = 0, i, j, start;
	const char	*p = q, *suffix;
	int		 neg = 0, exp10 = 0, base, exp, carry, any = 0;

	if (q == NULL || *q == '\0')
		return (KP_EINVAL);
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	/* Digits, with one optional '.', at least one of either. */
	for (; isdigit((unsigned char)*p); p++, any = 1) {
		if (nd == sizeof(d))
			return (KP_EINVAL);
		d[nd++] = *p - '0';
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, any = 1) {
			if (nd == sizeof(d))
				return (KP_EINVAL);
			d[nd++] = *p - '0';
			exp10--;
		}
		any = 1;
	}
	if (!any)
		return (KP_EINVAL);
	suffix = p;
	if (qty_suffix(suffix, &base, &exp) != 0)
		return (KP_EINVAL);
	if (base == 10)
		exp10 += exp;
	else {
		/* Multiply by 2^exp in decimal. */
		for (i = 0; i < (size_t)exp; i++) {
			carry = 0;
			for (j = nd; j-- > 0;) {
				int v = d[j] * 2 + carry;

				d[j] = v % 10;
				carry = v / 10;
			}
			if (carry) {
				if (nd == sizeof(d))
					return (KP_EINVAL);
				memmove(d + 1, d, nd);
				d[0] = carry;
				nd++;
			}
		}
	}
	/* Round up to nano. */
	if (exp10 < -9) {
		size_t	drop = (size_t)(-9 - exp10);
		int	up = 0;

		if (drop >= nd) {
			for (i = 0; i < nd; i++)
				up |= d[i] != 0;
			nd = 0;
		} else {
			for (i = nd - drop; i < nd; i++)
				up |= d[i] != 0;
			nd -= drop;
		}
		exp10 = -9;
		if (up) {
			for (j = nd; j-- > 0;) {
				if (d[j] < 9) {
					d[j]++;
					up = 0;
					break;
				}
				d[j] = 0;
			}
			if (up) {
				if (nd == sizeof(d))
					return (KP_EINVAL);
				memmove(d + 1, d, nd);
				d[0] = 1;
				nd++;
			}
		}
	}
	for (start = 0; start < nd && d[start] == 0; start++)
		;
	if (start == nd) {
		if (outsize < 2)
			return (KP_EINVAL);
		memcpy(out, "0", 2);
		return (0);
	}
	while (d[nd - 1] == 0) {
		nd--;
		exp10++;
	}
	if (nd - start + 16 > outsize)
		return (KP_EINVAL);
	j = 0;
	if (neg)
		out[j++] = '-';
	for (i = start; i < nd; i++)
		out[j++] = '0' + d[i];
	snprintf(out + j, outsize - j, "e%d", exp10);
	return (0);
}

/* 1: same value; 0: different; unparsable quantities compare as text. */
int
conv_quantity_equal(const char *a, const char *b)
{
	char	ca[SL_QTY_MAX], cb[SL_QTY_MAX];

	if (conv_quantity_canon(a, ca, sizeof(ca)) != 0 ||
	    conv_quantity_canon(b, cb, sizeof(cb)) != 0)
		return (a != NULL && b != NULL && strcmp(a, b) == 0);
	return (strcmp(ca, cb) == 0);
}
