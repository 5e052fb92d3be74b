/*
 * cdi_dev.c - the device node rules' names (kp_cdi_allow_device,
 * kp_cdi_allow_device_number): the syntax checked when a driver declares
 * one (api/options_cdi_dev.c) and the match of a spec's path against it
 * (supervisor/cdi_node.c), in one place so both read a rule alike.
 *
 * A rule names one directory and, in its last component only, either a
 * file name or a shell pattern (fnmatch(3) with FNM_PATHNAME and
 * FNM_PERIOD: '*', '?' and '[...]' never match a '/' nor a leading '.').
 * The directory is what the rule trusts, so it is written out: absolute,
 * no wildcard, no empty, "." or ".." component. No '\' at all: an escape
 * would make the same bytes mean a pattern here and a name in the
 * runtime's spec.
 *
 * Runs in: the driver process (set time) and the broker (pure functions).
 */
#include <fnmatch.h>
#include <string.h>

#include "base/cdi.h"
#include "base/config.h"
#include "base/names.h"

#define WILD	"*?["

/* The '[' at p closes; the length of the bracket expression or 0. */
static size_t
bracket(const char *p)
{
	size_t	 i = 1;

	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')	/* a literal ']' first */
		i++;
	for (; p[i] != '\0'; i++)
		if (p[i] == ']')
			return (i + 1);
	return (0);
}

const char *
cdi_dev_pattern_problem(const char *p)
{
	const char	*c, *why;
	size_t		 k;

	if ((why = name_path_problem(p)) != NULL)
		return (why);
	if (strchr(p, '\\') != NULL)
		return ("contains a '\\' (escapes are not taken: name the "
		    "file as the spec does)");
	c = strrchr(p, '/') + 1;
	if (strcspn(p, WILD) < (size_t)(c - p))
		return ("has a wildcard in a directory (only the last "
		    "component may be a pattern)");
	for (; (c = strchr(c, '[')) != NULL; c += k)
		if ((k = bracket(c)) == 0)
			return ("has a '[' without its ']'");
	return (NULL);
}

int
cdi_dev_is_pattern(const char *p)
{
	return (strpbrk(strrchr(p, '/'), WILD) != NULL);
}

int
cdi_dev_name_matches(const char *pattern, const char *path)
{
	if (!cdi_dev_is_pattern(pattern))
		return (strcmp(pattern, path) == 0);
	return (fnmatch(pattern, path, FNM_PATHNAME | FNM_PERIOD) == 0);
}

int
cdi_dev_dir_len(const char *pattern)
{
	return ((int)(strrchr(pattern, '/') - pattern));
}
