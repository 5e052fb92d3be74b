/*
 * cdi_node.c - whether a CDI spec's device node is one the driver
 * declared (kp_cdi_allow_device, kp_cdi_allow_device_number,
 * kp_cdi_allow_device_prefix), by its names and by the node the host has
 * at them.
 *
 * The runtime (containerd, CRI-O, through the CDI module) takes the
 * node's type and number from lstat(2) of hostPath (path when unset)
 * unless the spec sets type and a major itself; it then creates a node of
 * that number in the container (or, in a user namespace, bind-mounts the
 * host's file at path) and allows that number in the device cgroup. So a
 * name is not enough: a symbolic link /dev/loop9 -> /dev/sda, a node
 * named loop9 with sda's 8:0, or a spec setting 1:1 (/dev/mem) under an
 * allowed name would each hand the container another device. Here, for
 * path and for hostPath:
 *  - the name matches a rule (a prefix's directory, a rule's path or
 *    pattern), else refused;
 *  - a node that exists must be a character or block device, not a link
 *    or anything else, with a type and number that some rule matching
 *    the name takes (a rule without numbers takes any), and that the
 *    spec's own type, major and minor, where set, agree with;
 *  - a node that does not exist (ENOENT: a device not loaded yet, vfio's
 *    groups) passes by its name alone, and then the spec may set numbers
 *    only within a rule's range: with none set, the runtime's own lstat
 *    finds nothing and fails the container; with them set, they are
 *    what the rule allows.
 * Any other error of lstat (EACCES, ELOOP, ENOTDIR) refuses: the node
 * must be visible to the broker where the runtime will look.
 *
 * What this does not guarantee: the runtime looks again later (at the
 * container's creation), so a node replaced between this check and then
 * is not seen here; only a spec that sets type and numbers within a
 * number rule fixes what the container gets. The broker sees its own
 * mount namespace: the host's nodes must be at the same paths there (the
 * pod mounts them), else they look absent. The nodeserver cannot plant
 * nodes or links in a rule's directory (kp_start() refuses one within a
 * state directory; Landlock keeps it out of the rest).
 *
 * Runs in: the broker (lstat(2) only; tests/unit/test_cdi_check.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/cdi.h"
#include "supervisor/supervisor.h"

/* A refusal, in one()'s err (files.c's files_fail). */
#define REFUSE(...)	files_fail(err, errsize, KP_EINVAL, __VA_ARGS__)

_Static_assert(POL_MAX_CDI_DEVS <= 32, "rules_named() has 32 bits");

/* The rules whose name p matches (bit i: cdi_devs[i]). */
static uint32_t
rules_named(const struct policy_opts *po, const char *p)
{
	uint32_t	 m = 0;
	size_t		 i;

	for (i = 0; i < po->n_cdi_devs; i++)
		if (cdi_dev_name_matches(po->cdi_devs[i].pattern, p))
			m |= UINT32_C(1) << i;
	return (m);
}

/* Rule r takes a node of type t, number maj:min. */
static int
takes(const struct pol_dev_rule *r, int t, long long maj, long long min)
{
	return (r->type == 0 || (r->type == t && maj == r->major &&
	    min >= r->minor_first && min <= r->minor_last));
}

/* The first rule of m with numbers, as a message shows it. */
static const char *
ranges(const struct policy_opts *po, uint32_t m, char *buf, size_t size)
{
	const struct pol_dev_rule	*r;
	size_t				 i;

	buf[0] = '\0';
	for (i = 0; i < po->n_cdi_devs; i++) {
		r = &po->cdi_devs[i];
		if ((m & (UINT32_C(1) << i)) == 0 || r->type == 0)
			continue;
		snprintf(buf, size, "kp_cdi_allow_device_number \"%.64s\" "
		    "%c %u:%u-%u", r->pattern, r->type, r->major,
		    r->minor_first, r->minor_last);
		break;
	}
	return (buf);
}

static const char *
kind(mode_t m)
{
	if (S_ISREG(m))
		return ("a regular file");
	if (S_ISDIR(m))
		return ("a directory");
	if (S_ISFIFO(m))
		return ("a FIFO");
	if (S_ISSOCK(m))
		return ("a socket");
	return ("not a device");
}

/*
 * One of a node's names (field: "path" or "hostPath"). sp: the spec's
 * numbers when this is the name the runtime stats, else NULL.
 */
static int
one(const struct policy_opts *po, const char *at, const char *field,
    const char *p, const struct cdi_node *sp, char *err, size_t errsize)
{
	struct stat	 st;
	uint32_t	 m;
	char		 b[80], r[120];
	long long	 maj, min;
	size_t		 i;
	int		 pfx, t, e;

	cdi_shown(p, b, sizeof(b));
	pfx = cdi_beneath(po->cdi_dev, po->n_cdi_dev, p, 0);
	if ((m = rules_named(po, p)) == 0 && !pfx)
		return (REFUSE("%s.%s \"%s\": not a declared device (%s)", at,
		    field, b, po->n_cdi_dev +
		    po->n_cdi_devs == 0 ? "none declared: kp_cdi_allow_device, "
		    "kp_cdi_allow_device_number or kp_cdi_allow_device_prefix" :
		    "no kp_cdi_allow_device, _number or _prefix rule matches"));
	if (lstat(p, &st) == -1) {
		e = errno;
		if (e != ENOENT)
			return (REFUSE("%s.%s \"%s\": cannot be looked at "
			    "(%s): the plugin must see the host's node where "
			    "the runtime will", at, field, b, strerror(e)));
		if (sp == NULL || (sp->type == 0 && sp->major < 0 &&
		    sp->minor < 0))
			return (0);
		/* Absent: the runtime uses the spec's numbers as they
		 * are (minor 0 when unset). */
		min = sp->minor < 0 ? 0 : sp->minor;
		for (i = 0; m != 0 && sp->type != 0 && sp->major >= 0 &&
		    i < po->n_cdi_devs; i++)
			if ((m & (UINT32_C(1) << i)) != 0 &&
			    po->cdi_devs[i].type != 0 &&
			    takes(&po->cdi_devs[i], sp->type, sp->major, min))
				return (0);
		return (REFUSE("%s: type, major and minor of a node the host "
		    "does not have (%s \"%s\") must be within a declared "
		    "number (%s)", at, field, b,
		    ranges(po, m, r, sizeof(r))[0] != '\0' ? r :
		    "no kp_cdi_allow_device_number rule matches"));
	}
	if (S_ISLNK(st.st_mode))
		return (REFUSE("%s.%s \"%s\": a symbolic link (the runtime "
		    "would follow it; name the node itself)", at, field, b));
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return (REFUSE("%s.%s \"%s\": %s, not a character or block "
		    "device", at, field, b, kind(st.st_mode)));
	t = S_ISCHR(st.st_mode) ? 'c' : 'b';
	maj = major(st.st_rdev);
	min = minor(st.st_rdev);
	/* With a major (a type or not) the runtime keeps the spec's
	 * numbers, a missing minor as 0: 8:0 (/dev/sda) from a spec naming
	 * /dev/sda1 with major 8 alone. */
	if (sp != NULL && ((sp->type != 0 && sp->type != t) ||
	    (sp->major >= 0 && sp->major != maj) || ((sp->minor >= 0 ||
	    sp->major > 0) && (sp->minor < 0 ? 0 : sp->minor) != min)))
		return (REFUSE("%s: type, major or minor do not agree with the "
		    "host's node %s \"%s\" (%c %lld:%lld)", at, field, b, t,
		    maj, min));
	if (pfx)
		return (0);
	for (i = 0; i < po->n_cdi_devs; i++)
		if ((m & (UINT32_C(1) << i)) != 0 &&
		    takes(&po->cdi_devs[i], t, maj, min))
			return (0);
	return (REFUSE("%s.%s \"%s\": the host's node %c %lld:%lld is not a "
	    "declared number (%s)", at, field, b, t, maj, min,
	    ranges(po, m, r, sizeof(r))));
}

int
cdi_node_check(const struct policy_opts *po, const char *at,
    const struct cdi_node *n, char *err, size_t errsize)
{
	int	 r;

	if (n->host == NULL)
		return (one(po, at, "path", n->path, n, err, errsize));
	if ((r = one(po, at, "path", n->path, NULL, err, errsize)) != 0)
		return (r);
	return (one(po, at, "hostPath", n->host, n, err, errsize));
}
