/*
 * fuzz_cdi_check.c - libFuzzer target for the CDI spec rules of the
 * broker (supervisor/cdi_check.c): the input is the content a hostile
 * nodeserver sends in a CdiWrite, checked as the supervisor checks it for
 * driver "pci.example.com" with a device prefix (/dev/vfio), device
 * rules (the pattern /dev/loop[0-9]*, the exact /dev/zero, /dev/nul? with
 * the number c 1:3: this machine's nodes are looked at), a mount prefix
 * (/opt/drv) and a hook (/usr/libexec/drv-hook) declared.
 * Invariants checked (abort on a breach):
 *  - the verdict is 0 or KP_EINVAL and the message is NUL-terminated,
 *    shorter than KP_ERROR_SIZE, non-empty on a refusal;
 *  - the verdict does not depend on the message buffer (a 1-byte one,
 *    none at all);
 *  - an accepted input is a JSON object whose kind is the driver's, and
 *    every device node, mount and hook in it is within the declarations
 *    (walked again here with jansson, independently of the checker's own
 *    walk): each node's path and hostPath named by a rule; where a node
 *    is there, a character or block device whose number the rule takes
 *    and the spec's type, major and minor agree with; where none is,
 *    numbers only those of the number rule.
 * Run: ./tests/fuzz/fuzz_cdi_check -max_total_time=60 corpus/
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <jansson.h>

#include "api/api.h"
#include "supervisor/supervisor.h"

#define DRV	"pci.example.com"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct kp_options	*o;

static int	under(const char *, const char *, int);

/* Which rules name p: 1 the prefix or a name-only rule, 2 the number
 * rule (c 1:3) alone, 0 none. */
static int
named(const char *p)
{
	if (p == NULL)
		return (0);
	if (under(p, "/dev/vfio", 0) || strcmp(p, "/dev/zero") == 0 ||
	    fnmatch("/dev/loop[0-9]*", p, FNM_PATHNAME | FNM_PERIOD) == 0)
		return (1);
	return (fnmatch("/dev/nul?", p, FNM_PATHNAME | FNM_PERIOD) == 0 ?
	    2 : 0);
}

/* One node's names against the rules and this machine's nodes. */
static void
node_within(const json_t *v)
{
	const char	*path = json_string_value(json_object_get(v, "path"));
	const char	*host = json_string_value(json_object_get(v,
			    "hostPath"));
	const char	*stated = host != NULL ? host : path;
	const json_t	*type = json_object_get(v, "type");
	const json_t	*maj = json_object_get(v, "major");
	const json_t	*min = json_object_get(v, "minor");
	const char	*names[2] = { path, host };
	struct stat	 st;
	size_t		 i;
	int		 rule;

	for (i = 0; i < 2; i++) {
		if (i == 1 && host == NULL)
			break;
		if ((rule = named(names[i])) == 0)
			abort();
		if (lstat(names[i], &st) == -1) {
			if (errno != ENOENT)
				abort();
			if (names[i] == stated && (type != NULL ||
			    maj != NULL || min != NULL) && (rule != 2 ||
			    type == NULL || strcmp(json_string_value(type),
			    "c") != 0 || json_integer_value(maj) != 1 ||
			    min == NULL || json_integer_value(min) != 3))
				abort();
			continue;
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
			abort();
		if (rule == 2 && (!S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(1, 3)))
			abort();
		if (names[i] != stated)
			continue;
		if ((type != NULL && json_string_value(type)[0] !=
		    (S_ISCHR(st.st_mode) ? 'c' : 'b')) || (maj != NULL &&
		    json_integer_value(maj) != major(st.st_rdev)) ||
		    (min != NULL && json_integer_value(min) !=
		    minor(st.st_rdev)))
			abort();
	}
}

static int
under(const char *p, const char *dir, int self)
{
	size_t	 n = strlen(dir);

	return (p != NULL && strncmp(p, dir, n) == 0 && (p[n] == '/' ||
	    (self && p[n] == '\0')) && strstr(p, "/../") == NULL &&
	    strcmp(p + strlen(p) - (strlen(p) > 2 ? 3 : 0), "/..") != 0);
}

/* Every containerEdits of an accepted spec (the top one and each
 * device's), again: nothing outside the declarations. */
static void
edits_within(const json_t *e)
{
	const json_t	*v;
	size_t		 i;

	if (e == NULL)
		return;
	if (json_object_get(e, "additionalGids") != NULL ||
	    json_object_get(e, "intelRdt") != NULL ||
	    json_object_get(e, "netDevices") != NULL)
		abort();
	json_array_foreach(json_object_get(e, "deviceNodes"), i, v)
		node_within(v);
	json_array_foreach(json_object_get(e, "mounts"), i, v)
		if (!under(json_string_value(json_object_get(v, "hostPath")),
		    "/opt/drv", 1))
			abort();
	json_array_foreach(json_object_get(e, "hooks"), i, v) {
		const char *p = json_string_value(json_object_get(v, "path"));

		if (p == NULL || strcmp(p, "/usr/libexec/drv-hook") != 0)
			abort();
	}
}

static void
accepted(const uint8_t *data, size_t size)
{
	const json_t	*v;
	const char	*kind;
	json_t		*root;
	size_t		 i;

	if ((root = json_loadb((const char *)data, size, 0, NULL)) == NULL ||
	    !json_is_object(root))
		abort();
	kind = json_string_value(json_object_get(root, "kind"));
	if (kind == NULL || strncmp(kind, DRV "/", sizeof(DRV)) != 0 ||
	    kind[sizeof(DRV)] == '\0' || strchr(kind + sizeof(DRV), '/'))
		abort();
	if (json_array_size(json_object_get(root, "devices")) == 0)
		abort();
	edits_within(json_object_get(root, "containerEdits"));
	json_array_foreach(json_object_get(root, "devices"), i, v)
		edits_within(json_object_get(v, "containerEdits"));
	json_decref(root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 err[KP_ERROR_SIZE], one[1];
	int	 r;

	if (o == NULL && (kp_options_new(&o) != 0 ||
	    kp_driver_name(o, DRV) != 0 ||
	    kp_cdi_allow_device_prefix(o, "/dev/vfio/") != 0 ||
	    kp_cdi_allow_device(o, "/dev/loop[0-9]*") != 0 ||
	    kp_cdi_allow_device(o, "/dev/zero") != 0 ||
	    kp_cdi_allow_device_number(o, "/dev/nul?", 'c', 1, 3, 3) != 0 ||
	    kp_cdi_allow_mount_prefix(o, "/opt/drv") != 0 ||
	    kp_cdi_allow_hook(o, "/usr/libexec/drv-hook") != 0))
		abort();
	/* files.c hands over UTF-8 without NUL; the checker must hold
	 * for any bytes all the same. */
	memset(err, 'x', sizeof(err));
	r = cdi_check((const char *)data, size, o, err, sizeof(err));
	if ((r != 0 && r != KP_EINVAL) || memchr(err, '\0',
	    sizeof(err)) == NULL || (r != 0 && err[0] == '\0'))
		abort();
	if (cdi_check((const char *)data, size, o, one, sizeof(one)) != r ||
	    one[0] != '\0' || cdi_check((const char *)data, size, o, NULL,
	    0) != r)
		abort();
	if (r == 0)
		accepted(data, size);
	return (0);
}
