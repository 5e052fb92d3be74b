/*
 * options_cdi_dev.c - the device node rules of CDI specs (issue 26):
 * kp_cdi_allow_device() names device nodes by path or by a pattern in
 * the last component, kp_cdi_allow_device_number() adds the type and
 * number range a node at such a path must have. The broker applies them
 * (supervisor/cdi_node.c); their names follow base/cdi_dev.c.
 * kp_cdi_allow_device_prefix() (whole directories) is options_policy.c's.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"
#include "base/cdi.h"

#define O_CDI_NODE	"kp_cdi_allow_device (beyond upstream)"
#define O_CDI_NUM	"kp_cdi_allow_device_number (beyond upstream)"

#define MAJOR_MAX	4095u	/* 12 bits (linux/kdev_t.h) */

/* Add rule r (pattern checked here, numbers by the caller). */
static int
rule_add(struct kp_options *opts, const char *what,
    const struct pol_dev_rule *r, const char *pattern)
{
	struct policy_opts	*po = &opts->policy;
	struct stat		 st;
	const char		*why;
	char			 q[OPT_QUOTE_SIZE];
	size_t			 i;

	if ((why = cdi_dev_pattern_problem(pattern)) != NULL)
		return (opt_fail(opts, pattern != NULL && strlen(pattern) >=
		    POL_PATH_MAX ? KP_ENAMETOOLONG : KP_EINVAL, "%s: %s %s",
		    what, opt_quote(pattern, q, sizeof(q)), why));
	/* A directory named as a device: the rule would never match a
	 * node, as "/dev/loop" as a prefix never did. */
	if (!cdi_dev_is_pattern(pattern) && stat(pattern, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		return (opt_fail(opts, KP_EINVAL, "%s: %s is a directory, not "
		    "a device node (for the nodes in it: \"%s/*\", or "
		    "kp_cdi_allow_device_prefix)", what,
		    opt_quote(pattern, q, sizeof(q)), pattern));
	for (i = 0; i < po->n_cdi_devs; i++)
		if (memcmp(&po->cdi_devs[i], r, sizeof(*r)) == 0)
			return (0);
	if (po->n_cdi_devs == POL_MAX_CDI_DEVS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d device "
		    "rules (kp_cdi_allow_device and _number together)", what,
		    POL_MAX_CDI_DEVS));
	po->cdi_devs[po->n_cdi_devs++] = *r;
	return (0);
}

int
kp_cdi_allow_device(struct kp_options *opts, const char *pattern)
{
	struct pol_dev_rule	 r;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	memset(&r, 0, sizeof(r));
	if (pattern != NULL)
		snprintf(r.pattern, sizeof(r.pattern), "%s", pattern);
	return (rule_add(opts, O_CDI_NODE, &r, pattern));
}

int
kp_cdi_allow_device_number(struct kp_options *opts, const char *pattern,
    int type, unsigned int major, unsigned int minor_first,
    unsigned int minor_last)
{
	struct pol_dev_rule	 r;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (type != 'c' && type != 'b')
		return (opt_fail(opts, KP_EINVAL, "%s: type %d is not 'c' (a "
		    "character device) or 'b' (a block device)", O_CDI_NUM,
		    type));
	if (major > MAJOR_MAX)
		return (opt_fail(opts, KP_EINVAL, "%s: major %u is above %u",
		    O_CDI_NUM, major, MAJOR_MAX));
	if (minor_first > minor_last || minor_last > KP_CDI_MINOR_MAX)
		return (opt_fail(opts, KP_EINVAL, "%s: minors %u to %u are "
		    "not a range within 0 to %u", O_CDI_NUM, minor_first,
		    minor_last, KP_CDI_MINOR_MAX));
	memset(&r, 0, sizeof(r));
	if (pattern != NULL)
		snprintf(r.pattern, sizeof(r.pattern), "%s", pattern);
	r.type = type;
	r.major = major;
	r.minor_first = minor_first;
	r.minor_last = minor_last;
	return (rule_add(opts, O_CDI_NUM, &r, pattern));
}
