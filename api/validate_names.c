/*
 * validate_names.c - the apimachinery rules for names (util/validation):
 * DNS labels and subdomains, C identifiers, qualified names (attribute and
 * capacity keys, label keys) and label values. Each
 * *_why() returns NULL for a valid name, else the broken rule as text.
 */
#include <stddef.h>
#include <string.h>

#include "api/api.h"

#define MAX_CID		32		/* DeviceMaxIDLength */
#define MAX_DOMAIN	63		/* DeviceMaxDomainLength */

#define R_CID		"must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
#define R_QNAME		"must be alphanumerics, '-', '_' or '.', " \
			"alphanumeric at both ends"

static int
is_alnum_lower(int c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

static int
is_alnum(int c)
{
	return (is_alnum_lower(c) || (c >= 'A' && c <= 'Z'));
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static int
is_qname(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && strchr("-_.", s[i]) == NULL)
			return (0);
	return (1);
}

static int
is_cid(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return (0);
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '_')
			return (0);
	return (1);
}

/*
 * ValidateCSIDriverName, the rule for the domain of a key: <= 63 bytes, a
 * DNS subdomain after Go's strings.ToLower.
 */
static const char *
domain_why(const char *s, size_t n)
{
	char	 low[MAX_DOMAIN];
	size_t	 i, k = 0;

	if (n > MAX_DOMAIN)
		return ("the domain must be no more than 63 bytes");
	for (i = 0; i < n; i++) {
		if (s[i] >= 'A' && s[i] <= 'Z')
			low[k++] = s[i] - 'A' + 'a';
		else if ((unsigned char)s[i] < 0x80)
			low[k++] = s[i];
		else if (n - i >= 2 && memcmp(s + i, "\xc4\xb0", 2) == 0) {
			low[k++] = 'i';
			i += 1;
		} else if (n - i >= 3 &&
		    memcmp(s + i, "\xe2\x84\xaa", 3) == 0) {
			low[k++] = 'k';
			i += 2;
		} else
			return ("the domain " VAL_R_SUBDOMAIN);
	}
	return (name_is_subdomain(low, k) ? NULL :
	    "the domain " VAL_R_SUBDOMAIN);
}

static const char *
cid_why(const char *s, size_t n)
{
	if (n > MAX_CID)
		return ("the identifier must be no more than 32 bytes");
	return (is_cid(s, n) ? NULL : "the identifier " R_CID);
}

/* validateQualifiedName: an attribute or capacity name. */
const char *
val_key_why(const char *s)
{
	const char	*slash = strchr(s, '/');
	const char	*why;

	if (*s == '\0')
		return ("a name is required");
	if (slash == NULL)
		return (cid_why(s, strlen(s)));
	/* Unchecked before 1.38 (kubernetes PR #141644): "a/b/c",
	 * "/a/b", "a//b". */
	if (strchr(slash + 1, '/') != NULL)
		return ("must have at most one '/' (domain/identifier, "
		    "1.38)");
	if (slash == s)
		return ("the domain must not be empty");
	if ((why = domain_why(s, slash - s)) != NULL)
		return (why);
	if (slash[1] == '\0')
		return ("the name must not be empty");
	return (cid_why(slash + 1, strlen(slash + 1)));
}

/* IsQualifiedName: a label key. */
const char *
val_label_key_why(const char *s)
{
	const char	*slash = strchr(s, '/'), *name = s;
	size_t		 n;

	if (slash != NULL) {
		if (strchr(slash + 1, '/') != NULL)
			return ("must be [prefix/]name with one '/' at most");
		if (slash == s)
			return ("the prefix must not be empty");
		if (!name_is_subdomain(s, slash - s))
			return ("the prefix " VAL_R_SUBDOMAIN);
		name = slash + 1;
	}
	if ((n = strlen(name)) == 0)
		return ("the name must not be empty");
	if (n > VAL_MAX_LABEL)
		return ("the name must be no more than 63 characters");
	return (is_qname(name, n) ? NULL : "the name " R_QNAME);
}

const char *
val_label_value_why(const char *s)
{
	size_t	 n = strlen(s);

	if (n > VAL_MAX_LABEL)
		return ("must be no more than 63 characters");
	return (n == 0 || is_qname(s, n) ? NULL :
	    "must be empty or " R_QNAME);
}
