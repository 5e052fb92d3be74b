/*
 * validate_value.c - the rules for values: quantities exactly as
 * ParseQuantity takes them (apimachinery api/resource, suffix.go), and
 * versions as the server's semverRe.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/api.h"

static size_t
span_digits(const char *s)
{
	return (strspn(s, "0123456789"));
}

/* strconv.ParseInt(s, 10, 64), then Go's int32() of it. */
static int
parse_exponent(const char *s, size_t n, int32_t *out)
{
	uint64_t	 v = 0, lim;
	size_t		 i = 0;
	int		 neg = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		return (-1);
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (lim - (uint64_t)(s[i] - '0')) / 10)
			return (-1);
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = (int32_t)(uint32_t)(neg ? 0 - v : v);
	return (0);
}

/* quantitySuffixer.interpret: base 10 or 2 and an exponent. */
static int
suffix_interpret(const char *s, size_t n, int *base, int32_t *exp)
{
	static const char	*dec[] = { "n", "u", "m", "", "k", "M", "G",
	    "T", "P", "E" };
	static const char	*bin[] = { "Ki", "Mi", "Gi", "Ti", "Pi",
	    "Ei" };
	size_t			 i;

	for (i = 0; i < sizeof(dec) / sizeof(dec[0]); i++)
		if (strlen(dec[i]) == n && memcmp(dec[i], s, n) == 0) {
			*base = 10;
			*exp = (int32_t)(i * 3) - 9;
			return (0);
		}
	for (i = 0; i < sizeof(bin) / sizeof(bin[0]); i++)
		if (n == 2 && memcmp(bin[i], s, 2) == 0) {
			*base = 2;
			*exp = (int32_t)(i + 1) * 10;
			return (0);
		}
	*base = 10;
	if (n > 1 && (s[0] == 'e' || s[0] == 'E'))
		return (parse_exponent(s + 1, n - 1, exp));
	return (-1);
}

/*
 * Whether ParseQuantity takes its int64 fast path, which cannot fail;
 * its inf.Dec slow path fails only when the number has no digit. Go's
 * int32 arithmetic wraps, and so does the scale here.
 */
static int
quantity_fast(int base, int32_t exp, size_t numlen, size_t denlen)
{
	int64_t	 precision;
	int32_t	 scale;

	if (numlen > 1000 || denlen > 1000)
		return (0);
	if (base == 2)	/* 2^10 .. 2^60: exp*3/10 is exact in float32 */
		return (denlen == 0 &&
		    15 - (int64_t)numlen - exp * 3 / 10 - 1 >= 0);
	precision = 18 - (int64_t)(numlen + denlen);
	scale = (int32_t)(uint32_t)((uint32_t)exp - (uint32_t)denlen);
	return (precision >= 0 && scale >= -9);
}

/*
 * ParseQuantity's verdict (apimachinery api/resource/quantity.go): NULL
 * if it parses, else why not. Mirrors parseQuantityString, so "+", "." or
 * "Gi" (all zero) and "1." pass; any exponent that fits int64 passes
 * (Go then truncates it to int32).
 */
const char *
val_quantity_why(const char *s)
{
	size_t		 pos = 0, len, numlen, denlen = 0, sfx;
	int		 digit = 0, base;
	int32_t		 exp;

	if (s == NULL || (len = strlen(s)) == 0)
		return ("must not be empty");
	if (s[0] == '+' || s[0] == '-')
		pos++;
	while (pos < len && s[pos] == '0')
		pos++, digit = 1;
	if (pos == len)
		return (NULL);
	numlen = span_digits(s + pos);
	pos += numlen;
	digit |= numlen > 0;
	if (numlen == 0)
		numlen = 1;	/* num is "0" */
	if (s[pos] == '.') {
		denlen = span_digits(s + ++pos);
		pos += denlen;
		digit |= denlen > 0;
	}
	sfx = pos;
	pos += strspn(s + pos, "eEinumkKMGTP");
	if (pos < len) {
		if (s[pos] == '+' || s[pos] == '-')
			pos++;
		if (s[pos + span_digits(s + pos)] != '\0')
			return ("must match '^([+-]?[0-9.]+)"
			    "([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	}
	if (suffix_interpret(s + sfx, len - sfx, &base, &exp) != 0)
		return ("has an unknown suffix (Ki Mi Gi Ti Pi Ei, n u m k M "
		    "G T P E, or e/E with an integer)");
	if (!digit && !quantity_fast(base, exp, numlen, denlen))
		return ("has no digit in its number");
	return (NULL);
}

int
validate_quantity(const char *s)
{
	return (val_quantity_why(s) == NULL ? 0 : KP_EINVAL);
}

/* <numeric identifier>: 0|[1-9][0-9]* */
static const char *
semver_num(const char *p)
{
	size_t	 n = span_digits(p);

	return (n == 0 || (n > 1 && p[0] == '0') ? NULL : p + n);
}

/* Dot-separated identifiers of [0-9A-Za-z-]+; prerelease ones that are
 * all digits must not have a leading zero. */
static const char *
semver_ids(const char *p, int pre)
{
	size_t	 n;

	for (;;) {
		n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ-");
		if (n == 0)
			return (NULL);
		if (pre && span_digits(p) == n && n > 1 && p[0] == '0')
			return (NULL);
		p += n;
		if (*p != '.')
			return (p);
		p++;
	}
}

/* The server's semverRe (semver.org 2.0.0), without its length rule. */
int
validate_semver(const char *s)
{
	const char	*p = s;
	int		 i;

	if (p == NULL)
		return (KP_EINVAL);
	for (i = 0; i < 3; i++) {
		if ((p = semver_num(p)) == NULL)
			return (KP_EINVAL);
		if (i < 2 && *p++ != '.')
			return (KP_EINVAL);
	}
	if (*p == '-' && (p = semver_ids(p + 1, 1)) == NULL)
		return (KP_EINVAL);
	if (*p == '+' && (p = semver_ids(p + 1, 0)) == NULL)
		return (KP_EINVAL);
	return (*p == '\0' ? 0 : KP_EINVAL);
}
