/*
 * quantity.c - Kubernetes resource.Quantity compared by value: a quantity is
 * parsed into an exact decimal (sign, digits, base-10 exponent) with the
 * API server's grammar (decimal SI, binary SI and e-notation suffixes) and
 * rounding (up to nano), so that "1Gi" == "1024Mi" and "1000m" == "1".
 * Used by the publisher (comparing stored slices) and by the driver
 * process (requestPolicy checks: Cmp, Add and Value() of apimachinery's
 * resource.Quantity).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quantity.h"

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
qty_canon(const char *q, char *out, size_t outsize)
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
qty_equal(const char *a, const char *b)
{
	char	ca[QTY_CANON_MAX], cb[QTY_CANON_MAX];

	if (qty_canon(a, ca, sizeof(ca)) != 0 ||
	    qty_canon(b, cb, sizeof(cb)) != 0)
		return (a != NULL && b != NULL && strcmp(a, b) == 0);
	return (strcmp(ca, cb) == 0);
}

/* A canonical quantity split up: value = (neg ? -1 : 1) * digits * 10^exp. */
struct qty_dec {
	int		 neg;
	char		 digits[QTY_CANON_MAX];	/* "" for zero */
	int		 exp;
};

static int
qty_split(const char *q, struct qty_dec *d)
{
	char	 c[QTY_CANON_MAX], *e;
	size_t	 n;

	if (qty_canon(q, c, sizeof(c)) != 0)
		return (KP_EINVAL);
	memset(d, 0, sizeof(*d));
	if (strcmp(c, "0") == 0)
		return (0);
	d->neg = c[0] == '-';
	e = strchr(c, 'e');
	n = (size_t)(e - c) - (size_t)d->neg;
	memcpy(d->digits, c + d->neg, n);
	d->digits[n] = '\0';
	d->exp = (int)strtol(e + 1, NULL, 10);
	return (0);
}

/* Compare magnitudes. */
static int
mag_cmp(const struct qty_dec *a, const struct qty_dec *b)
{
	int	 la = (int)strlen(a->digits), lb = (int)strlen(b->digits);
	int	 i, da, db;

	if (la == 0 || lb == 0)
		return (la == lb ? 0 : la == 0 ? -1 : 1);
	if (la + a->exp != lb + b->exp)
		return (la + a->exp < lb + b->exp ? -1 : 1);
	for (i = 0; i < la || i < lb; i++) {
		da = i < la ? a->digits[i] : '0';
		db = i < lb ? b->digits[i] : '0';
		if (da != db)
			return (da < db ? -1 : 1);
	}
	return (0);
}

static int
dec_cmp(const struct qty_dec *a, const struct qty_dec *b)
{
	int	 za = a->digits[0] == '\0', zb = b->digits[0] == '\0';
	int	 sa = za ? 0 : a->neg ? -1 : 1, sb = zb ? 0 : b->neg ? -1 : 1;
	int	 m;

	if (sa != sb)
		return (sa < sb ? -1 : 1);
	m = mag_cmp(a, b);
	return (sa < 0 ? -m : m);
}

/*
 * qty_cmp - *out = -1, 0 or 1 as a <, == or > b by value (Quantity.Cmp).
 * Returns 0 or KP_EINVAL (not a quantity).
 */
int
qty_cmp(const char *a, const char *b, int *out)
{
	struct qty_dec	 x, y;

	if (qty_split(a, &x) != 0 || qty_split(b, &y) != 0)
		return (KP_EINVAL);
	*out = dec_cmp(&x, &y);
	return (0);
}

/*
 * qty_sum_cmp - compare a + b with c, exactly (Quantity.Add, then Cmp).
 * Returns 0 with *out set, KP_EINVAL (not a quantity) or KP_ENOTSUP
 * (exponents too far apart to add here).
 */
int
qty_sum_cmp(const char *a, const char *b, const char *c, int *out)
{
	struct qty_dec	 x, y, z, s;
	char		 dx[QTY_CANON_MAX * 4], dy[QTY_CANON_MAX * 4];
	int		 lo, hi, i, lx, ly, n, carry, v, big;

	if (qty_split(a, &x) != 0 || qty_split(b, &y) != 0 ||
	    qty_split(c, &z) != 0)
		return (KP_EINVAL);
	if (x.digits[0] == '\0' || y.digits[0] == '\0') {
		*out = dec_cmp(x.digits[0] == '\0' ? &y : &x, &z);
		return (0);
	}
	/* Align both to the lower exponent: digit strings of width n. */
	lo = x.exp < y.exp ? x.exp : y.exp;
	lx = (int)strlen(x.digits) + x.exp - lo;
	ly = (int)strlen(y.digits) + y.exp - lo;
	n = (lx > ly ? lx : ly) + 1;
	if (n >= (int)sizeof(dx))
		return (KP_ENOTSUP);
	memset(dx, '0', (size_t)n);
	memset(dy, '0', (size_t)n);
	memcpy(dx + n - lx, x.digits, strlen(x.digits));
	memcpy(dy + n - ly, y.digits, strlen(y.digits));
	memset(&s, 0, sizeof(s));
	if (x.neg == y.neg) {
		s.neg = x.neg;
		for (carry = 0, i = n - 1; i >= 0; i--) {
			v = dx[i] - '0' + dy[i] - '0' + carry;
			dx[i] = (char)('0' + v % 10);
			carry = v / 10;
		}
	} else {
		/* Subtract the smaller magnitude from the larger. */
		big = mag_cmp(&x, &y);
		if (big == 0) {
			*out = dec_cmp(&s, &z);
			return (0);
		}
		if (big < 0) {
			for (i = 0; i < n; i++) {
				char t = dx[i];

				dx[i] = dy[i];
				dy[i] = t;
			}
			s.neg = y.neg;
		} else
			s.neg = x.neg;
		for (carry = 0, i = n - 1; i >= 0; i--) {
			v = (dx[i] - '0') - (dy[i] - '0') - carry;
			carry = v < 0;
			dx[i] = (char)('0' + (v + 10) % 10);
		}
	}
	/* Back to digits + exponent, without leading or trailing zeros. */
	for (i = 0; i < n && dx[i] == '0'; i++)
		;
	for (hi = n; hi > i && dx[hi - 1] == '0'; hi--)
		;
	if (hi - i >= (int)sizeof(s.digits))
		return (KP_ENOTSUP);
	memcpy(s.digits, dx + i, (size_t)(hi - i));
	s.digits[hi - i] = '\0';
	s.exp = lo + (n - hi);
	*out = dec_cmp(&s, &z);
	return (0);
}

/*
 * qty_value - the quantity as an integer, rounded up away from zero
 * (Quantity.Value()). Returns 0, KP_EINVAL (not a quantity) or KP_ENOTSUP
 * (beyond int64).
 */
int
qty_value(const char *q, int64_t *out)
{
	return (qty_value_scaled(q, 0, out));
}

/*
 * qty_value_scaled - the quantity times 10^scale (0..9) as an integer,
 * rounded up away from zero: scale 3 is Quantity.MilliValue(). Errors as
 * qty_value().
 */
int
qty_value_scaled(const char *q, int scale, int64_t *out)
{
	struct qty_dec	 d;
	uint64_t	 v = 0;
	int		 i, n, whole, frac = 0;

	if (scale < 0 || scale > 9 || qty_split(q, &d) != 0)
		return (KP_EINVAL);
	n = (int)strlen(d.digits);
	whole = n + d.exp + scale;	/* digits before the point */
	if (whole > 19)
		return (KP_ENOTSUP);
	for (i = 0; i < whole; i++) {
		int dig = i < n ? d.digits[i] - '0' : 0;

		if (v > (UINT64_MAX - (uint64_t)dig) / 10)
			return (KP_ENOTSUP);
		v = v * 10 + (uint64_t)dig;
	}
	for (i = whole > 0 ? whole : 0; i < n; i++)
		frac |= d.digits[i] != '0';
	v += (uint64_t)frac;
	if (v > (uint64_t)INT64_MAX + (uint64_t)d.neg)
		return (KP_ENOTSUP);
	*out = d.neg ? (int64_t)(0 - v) : (int64_t)v;
	return (0);
}
