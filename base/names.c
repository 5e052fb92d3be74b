/*
 * names.c - DNS labels and subdomains (IsDNS1123Label/Subdomain of
 * k8s.io/apimachinery), the claim UID rule and the CDI spec file name
 * rule. Runs in every process that
 * links it; pure functions, no state.
 */
#include <string.h>

#include "base/names.h"

/*
 * Character classes by table: these checks run on every claim of every
 * DRA call (128 claims: 128 UIDs, names, namespaces), and one load per
 * byte beats three range tests.
 */
#define C_LOWER	0x01	/* [a-z0-9] */
#define C_UPPER	0x02	/* [A-Z] */
#define C_DASH	0x04	/* '-' */
#define C_UIDP	0x08	/* '_', '.': inside a UID */

static const unsigned char cclass[256] = {
	['a' ... 'z'] = C_LOWER, ['0' ... '9'] = C_LOWER,
	['A' ... 'Z'] = C_UPPER, ['-'] = C_DASH, ['_'] = C_UIDP,
	['.'] = C_UIDP
};

#define CC(c)	(cclass[(unsigned char)(c)])

static int
is_alnum_lower(int c)
{
	return ((CC(c) & C_LOWER) != 0);
}

static int
is_alnum(int c)
{
	return ((CC(c) & (C_LOWER | C_UPPER)) != 0);
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?, no length limit. */
int
name_is_label(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if ((CC(s[i]) & (C_LOWER | C_DASH)) == 0)
			return (0);
	return (1);
}

/* IsDNS1123Subdomain: <= 253, labels joined by '.'. */
int
name_is_subdomain(const char *s, size_t n)
{
	const char	*dot;
	size_t		 part;

	if (n > NAME_MAX_SUBDOMAIN)
		return (0);
	for (;;) {
		dot = memchr(s, '.', n);
		part = dot != NULL ? (size_t)(dot - s) : n;
		if (!name_is_label(s, part))
			return (0);
		if (dot == NULL)
			return (1);
		s += part + 1;
		n -= part + 1;
	}
}

/*
 * A claim UID as hooks get it. The API server makes UUIDs; kubelet passes
 * on whatever the claim says, and drivers put UIDs into file names (CDI
 * specs, checkpoints), so anything that could name a directory entry
 * other than a plain file of its own ("", ".", "..", "...", a leading
 * dot, '/', controls) is refused.
 */
int
name_is_claim_uid(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || n > NAME_MAX_UID || !is_alnum(s[0]) ||
	    !is_alnum(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if (CC(s[i]) == 0)
			return (0);
	return (1);
}

/*
 * A CDI spec file name of driver (names.h). The prefix ties a file to
 * its driver: driver names are DNS subdomains, which have no '_', so the
 * first '_' ends the driver name and no driver can name another's file.
 * The rest can only name a plain entry of the directory: no '/', no
 * leading dot (temporary files are dot-files), no NUL.
 */
int
name_is_cdi_spec(const char *driver, const char *s, size_t n)
{
	size_t	 dlen = strlen(driver), i, mid;

	if (n > NAME_MAX_CDI_SPEC || n < dlen + 2 + 5 ||
	    memcmp(s, driver, dlen) != 0 || s[dlen] != '_')
		return (0);
	if (memcmp(s + n - 5, ".json", 5) != 0)
		return (0);
	mid = n - dlen - 1 - 5;
	s += dlen + 1;
	if (mid > NAME_MAX_CDI_MIDDLE || !is_alnum(s[0]))
		return (0);
	for (i = 1; i < mid; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return (0);
	return (1);
}

const char *
name_path_problem(const char *p)
{
	const char	*c;
	size_t		 n;

	if (p == NULL || p[0] != '/')
		return ("is not an absolute path");
	if (p[1] == '\0')
		return ("is the root directory");
	if (strlen(p) > NAME_MAX_PATH)
		return ("is longer than 255 bytes");
	for (c = p; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return ("contains a control character");
	for (c = p; *c == '/'; c += n) {
		c++;
		n = strcspn(c, "/");
		if (n == 0)
			return ("has an empty component or a trailing '/'");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' &&
		    c[1] == '.'))
			return ("has a '.' or '..' component");
	}
	return (NULL);
}
