/*
 * test_redteam_issue26.c - red-team reproducers for the CDI device-node
 * rules of issue 26 (supervisor/cdi_check.c, supervisor/cdi_node.c,
 * base/cdi_dev.c): a compromised nodeserver writes specs through the
 * supervisor and tries to get a host device the rules do not name into
 * one. The rules are the loop-device example's (examples/loop-driver:
 * "<dir>/loop[0-9]*" block 7:any) over nodes of our own in a directory
 * of /tmp (mknod needs root: without it the node-level cases skip):
 *   loop7 b 7:7, loop0p1 b 259:1 (a loop partition), sda b 8:0,
 *   loop-control c 10:237, loop9 -> sda, loop8 -> a directory.
 *
 * Every attack on specs below HELD on 2a946ab (refused, or accepted only
 * where the runtime then gets nothing: a name with no node and no
 * numbers). One on the rules' set-time check FAILED and is fixed
 * (test_alias). Specs are written with ' for ".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "api/api.h"
#include "base/cdi.h"
#include "supervisor/supervisor.h"

#define DRV	"loop.example.com"
#define HEAD	"{'cdiVersion':'0.6.0','kind':'" DRV "/loop','devices':"

static struct kp_options	*o;
static char			 err[KP_ERROR_SIZE], tdir[64];
static int			 root;

static int
chk(const char *spec)
{
	char	*s;
	size_t	 i, n = strlen(spec);
	int	 r;

	if ((s = strdup(spec)) == NULL)
		abort();
	for (i = 0; i < n; i++)
		if (s[i] == '\'')
			s[i] = '"';
	r = cdi_check(s, n, o, err, sizeof(err));
	free(s);
	return (r);
}

#define REFUSED(spec, what) do {					\
	CHECK_EQ(chk(spec), KP_EINVAL);					\
	CHECK_CONTAINS(err, what);					\
} while (0)
#define ACCEPTED(spec) do {						\
	int _r = chk(spec);						\
	if (_r != 0)							\
		fprintf(stderr, "refused: %s\n", err);			\
	CHECK_EQ(_r, 0);						\
} while (0)

/* One device node: path (tdir-relative unless absolute) then more. */
static const char *
nodespec(const char *path, const char *more)
{
	static char	 b[2048];

	snprintf(b, sizeof(b), HEAD "[{'name':'d','containerEdits':"
	    "{'deviceNodes':[{'path':'%s%s%s'%s}]}}]}",
	    path[0] == '/' ? "" : tdir, path[0] == '/' ? "" : "/", path,
	    more);
	return (b);
}

static void
mk(const char *name, mode_t type, unsigned int maj, unsigned int min)
{
	char	 p[128];

	snprintf(p, sizeof(p), "%s/%s", tdir, name);
	CHECK_EQ(mknod(p, type | 0600, makedev(maj, min)), 0);
}

static void
setup(void)
{
	char	 p[128], q[128];

	snprintf(tdir, sizeof(tdir), "/tmp/kp-rt26-XXXXXX");
	if (mkdtemp(tdir) == NULL)
		abort();
	if (root) {
		mk("loop7", S_IFBLK, 7, 7);
		mk("loop0p1", S_IFBLK, 259, 1);
		mk("sda", S_IFBLK, 8, 0);
		mk("loop-control", S_IFCHR, 10, 237);
	}
	snprintf(p, sizeof(p), "%s/loop9", tdir);
	snprintf(q, sizeof(q), "%s/sda", tdir);
	CHECK_EQ(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/d", tdir);
	CHECK_EQ(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/loop8", tdir);
	snprintf(q, sizeof(q), "%s/d", tdir);
	CHECK_EQ(symlink(q, p), 0);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	snprintf(p, sizeof(p), "%s/loop[0-9]*", tdir);
	CHECK_EQ(kp_cdi_allow_device_number(o, p, 'b', 7, 0,
	    KP_CDI_MINOR_MAX), 0);
}

/* Names that spell another file, or a declared one in another way. */
static void
test_names(void)
{
	char	 p[512], m[512];

	if (root)
		ACCEPTED(nodespec("loop7", ""));	/* the control */
	REFUSED(nodespec("loop7/", ""), "a trailing '/'");
	REFUSED(nodespec("/tmp//loop7", ""), "an empty component");
	snprintf(p, sizeof(p), "%s/./loop7", tdir);
	REFUSED(nodespec(p, ""), "a '.' or '..' component");
	REFUSED(nodespec("loop7/../sda", ""), "a '.' or '..' component");
	REFUSED(nodespec("d/../loop7", ""), "a '.' or '..' component");
	/* Through a symlinked directory a name would match: '*' takes no
	 * '/' (FNM_PATHNAME), and the link itself is refused. */
	REFUSED(nodespec("loop8/sda", ""), "not a declared device");
	REFUSED(nodespec("loop8", ""), "a symbolic link");
	REFUSED(nodespec("loop9", ""), "a symbolic link");
	/* Control bytes, NUL, invalid UTF-8: before any rule. */
	REFUSED(nodespec("loop7\\u0000/../sda", ""), "not JSON");
	REFUSED(nodespec("loop7\\n", ""), "a control character");
	REFUSED(nodespec("loop7\xff", ""), "not JSON");
	/* Percent and Unicode are bytes, not decoded by anyone: a name that
	 * matches but names no node passes by name and the runtime's own
	 * lstat then fails the container (no numbers: nothing granted). */
	REFUSED(nodespec("loop%37", ""), "not a declared device");
	REFUSED(nodespec("loop\xd9\xa7", ""), "not a declared device");
	ACCEPTED(nodespec("loop7\xef\xbc\x8f..\xef\xbc\x8fsda", ""));
	/* Very long: 255 bytes at most, as the kernel's NAME_MAX. */
	snprintf(p, sizeof(p), "loop7%0*d", 300, 0);
	REFUSED(nodespec(p, ""), "longer than 255 bytes");
	/* Spelled with JSON escapes: jansson decodes before the check, as
	 * Go does before the runtime's lstat. */
	REFUSED(nodespec("\\u002e\\u002e/sda", ""), "a '.' or '..' component");
	if (root) {
		snprintf(p, sizeof(p), "%s/loo\\u00707\\/", tdir);
		REFUSED(nodespec(p, ""), "a trailing '/'");
		snprintf(p, sizeof(p), "%s\\/loo\\u00707", tdir);
		ACCEPTED(nodespec(p, ""));
	}
	/* path vs hostPath: each is checked, hostPath against the host. */
	snprintf(m, sizeof(m), ",'hostPath':'%s/sda'", tdir);
	REFUSED(nodespec("loop7", m), "hostPath");
	snprintf(m, sizeof(m), ",'hostPath':'%s/loop7'", tdir);
	if (root)
		REFUSED(nodespec("sda", m), "path");
	REFUSED(nodespec("/dev/mem", m), "not a declared device");
}

/* Partitions, siblings and dotfiles under the example's pattern. */
static void
test_siblings(void)
{
	char	 p[256];

	if (root) {
		/* loop0p1 matches loop[0-9]* by name; b 259:1 is no 7:x. */
		REFUSED(nodespec("loop0p1", ""), "the host's node b 259:1 is "
		    "not a declared number");
		REFUSED(nodespec("loop0p1", ",'type':'b','major':7,'minor':1"),
		    "do not agree with the host's node");
	}
	REFUSED(nodespec("loop-control", ""), "not a declared device");
	/* Documented (docs/device-drivers.md): the same pattern without
	 * numbers takes the partition. */
	if (root) {
		struct kp_options	*keep = o;

		CHECK_EQ(kp_options_new(&o), 0);
		CHECK_EQ(kp_driver_name(o, DRV), 0);
		snprintf(p, sizeof(p), "%s/loop[0-9]*", tdir);
		CHECK_EQ(kp_cdi_allow_device(o, p), 0);
		ACCEPTED(nodespec("loop0p1", ""));
		kp_options_free(o);
		o = keep;
	}
	REFUSED(nodespec(".loop7", ""), "not a declared device");
	/* FNM_PERIOD: '*' and '[...]' take no leading '.'. */
	snprintf(p, sizeof(p), "%s/*", tdir);
	CHECK(!cdi_dev_name_matches(p, "/tmp/x/.hidden"));
	CHECK(!cdi_dev_name_matches("/dev/[.]x", "/dev/.x"));
	CHECK(!cdi_dev_name_matches("/dev/?x", "/dev/.x"));
}

/* The spec's own numbers and types in every shape. */
static void
test_numbers(void)
{
	if (root) {
		REFUSED(nodespec("loop7", ",'major':'7'"), "not an integer");
		REFUSED(nodespec("loop7", ",'type':'b','major':8,'minor':0"),
		    "do not agree");
		/* CDI takes major 0 as unset and stats the host: refused
		 * here unless the host's node has major 0. */
		REFUSED(nodespec("loop7", ",'type':'b','major':0,'minor':0"),
		    "do not agree");
	}
	REFUSED(nodespec("loop50", ",'major':-1"), "not 0 to 4095");
	REFUSED(nodespec("loop50", ",'major':4096"), "not 0 to 4095");
	REFUSED(nodespec("loop50", ",'major':7.0"), "not an integer");
	REFUSED(nodespec("loop50", ",'major':1e0"), "not an integer");
	REFUSED(nodespec("loop50", ",'major':99999999999999999999"),
	    "not JSON");
	REFUSED(nodespec("loop50", ",'minor':1048576"), "not 0 to 1048575");
	REFUSED(nodespec("loop50", ",'type':'p'"), "not \"c\" or \"b\"");
	REFUSED(nodespec("loop50", ",'type':'B'"), "not \"c\" or \"b\"");
	REFUSED(nodespec("loop50", ",'type':'bb'"), "longer than 1 bytes");
	/* No node: numbers only within the rule (not sda's, not 0:0). */
	ACCEPTED(nodespec("loop50", ",'type':'b','major':7,'minor':50"));
	REFUSED(nodespec("loop50", ",'type':'b','major':8,'minor':0"),
	    "must be within a declared number");
	REFUSED(nodespec("loop50", ",'type':'b','major':0,'minor':0"),
	    "must be within a declared number");
	REFUSED(nodespec("loop50", ",'type':'c','major':7,'minor':0"),
	    "must be within a declared number");
	REFUSED(nodespec("loop50", ",'minor':0"), "must be within");
}

/* Keys the checker and the runtime (Go, case-insensitive) might read
 * differently, and other ways to a device. */
static void
test_keys(void)
{
	char	 m[512];

	snprintf(m, sizeof(m), ",'path':'%s/sda'", tdir);
	REFUSED(nodespec("loop7", m), "duplicate object key");
	snprintf(m, sizeof(m), ",'hostPath':'%s/loop7','hostPath':'%s/sda'",
	    tdir, tdir);
	REFUSED(nodespec("loop7", m), "duplicate object key");
	snprintf(m, sizeof(m), ",'hostpath':'%s/sda'", tdir);
	REFUSED(nodespec("loop7", m), "unknown field of a device node");
	snprintf(m, sizeof(m), ",'HOSTPATH':'%s/sda'", tdir);
	REFUSED(nodespec("loop7", m), "unknown field of a device node");
	/* U+017F (long s) folds to 's' in Go's encoding/json. */
	snprintf(m, sizeof(m), ",'ho\xc5\xbftPath':'%s/sda'", tdir);
	REFUSED(nodespec("loop7", m), "unknown field of a device node");
	REFUSED(nodespec("loop7", ",'Major':8"), "unknown field");
	/* Spec-level edits: the same rules. */
	snprintf(m, sizeof(m), HEAD "[{'name':'d','containerEdits':{}}],"
	    "'containerEdits':{'deviceNodes':[{'path':'%s/sda'}]}}", tdir);
	REFUSED(m, "containerEdits.deviceNodes[0].path");
	snprintf(m, sizeof(m), HEAD "[{'name':'d','containerEdits':{}}],"
	    "'containerEdits':{'DeviceNodes':[{'path':'%s/sda'}]}}", tdir);
	REFUSED(m, "unknown field of containerEdits");
	/* A mount of the node, or of /dev, or a devtmpfs: no prefix. */
	snprintf(m, sizeof(m), HEAD "[{'name':'d','containerEdits':{'mounts':"
	    "[{'hostPath':'%s/sda','containerPath':'/x'}]}}]}", tdir);
	REFUSED(m, "not beneath a declared mount prefix");
	REFUSED(HEAD "[{'name':'d','containerEdits':{'mounts':[{'hostPath':"
	    "'/dev','containerPath':'/x','type':'devtmpfs'}]}}]}",
	    "not beneath a declared mount prefix");
	REFUSED(HEAD "[{'name':'d','containerEdits':{'hooks':[{'hookName':"
	    "'prestart','path':'/bin/mknod','args':['mknod','/x','b','8',"
	    "'0']}]}}]}", "not a declared hook");
}

/* Set-time rule syntax (api/options_cdi_dev.c, base/cdi_dev.c). */
static void
test_setters(void)
{
	struct kp_options	*p;
	const char		*bad[] = { "/dev/loop[", "/dev/loop[]",
	    "/dev/[a/b]x", "/dev/loop\\*", "/dev/./loop*", "/dev//loop*",
	    "/dev/../dev/loop*", "/dev/*/x", "dev/loop*", "/dev/loop*/" };
	size_t			 i;

	CHECK_EQ(kp_options_new(&p), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kp_cdi_allow_device(p, bad[i]) != KP_EINVAL)
			CHECK(fprintf(stderr, "accepted %s\n", bad[i]) < 0);
	/* Accepted brackets mean what fnmatch(3) says, and never '/'. */
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop[!a]x"), 0);
	CHECK(!cdi_dev_name_matches("/dev/loop[!a]x", "/dev/loop/x"));
	CHECK(cdi_dev_name_matches("/dev/loop[!a]x", "/dev/loop1x"));
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop[a-]"), 0);
	CHECK(cdi_dev_name_matches("/dev/loop[a-]", "/dev/loop-"));
	CHECK(!cdi_dev_name_matches("/dev/loop[a-]", "/dev/loopb"));
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/x[]/]"), KP_EINVAL);
	kp_options_free(p);
}

/*
 * A device rule or CDI prefix reached through a symbolic link into a
 * state directory (/var/run -> /run on most hosts): pol_opts_check
 * compared the paths as text, so the nodeserver, which owns the state
 * directory's contents, could point the rule's directory elsewhere (a
 * link "dev" -> /dev: a name-only rule "<alias>/dev/<any>" takes any
 * node of /dev) or a mount prefix at / (the runtime follows it: the host's
 * root in the container). FAILED on 2a946ab (pol_opts_check returned 0
 * through the link); now refused as by the state directory's own name.
 */
static void
test_alias(void)
{
	struct kp_options	*p;
	char			 s[128], a[128], r[160];
	const char		*rules[] = { "dev/*", "x" };
	size_t			 i;

	snprintf(s, sizeof(s), "%s/state", tdir);
	snprintf(a, sizeof(a), "%s/alias", tdir);
	CHECK_EQ(mkdir(s, 0700), 0);
	CHECK_EQ(symlink(s, a), 0);
	for (i = 0; i < 2 * 2 * 2; i++) {
		CHECK_EQ(kp_options_new(&p), 0);
		CHECK_EQ(kp_sandbox_state_dir(p, s), 0);
		snprintf(r, sizeof(r), "%s/%s/%s", tdir, i & 1 ? "alias" :
		    "state", rules[(i >> 1) & 1]);
		if (i & 4)
			CHECK_EQ(kp_cdi_allow_mount_prefix(p, r), 0);
		else
			CHECK_EQ(kp_cdi_allow_device(p, r), 0);
		if (pol_opts_check(p) != KP_EINVAL)
			CHECK(fprintf(stderr, "accepted %s\n", r) < 0);
		kp_options_free(p);
	}
	/* A state directory not made yet, beneath the link. */
	CHECK_EQ(kp_options_new(&p), 0);
	snprintf(r, sizeof(r), "%s/alias/new", tdir);
	CHECK_EQ(kp_sandbox_state_dir(p, r), 0);
	snprintf(r, sizeof(r), "%s/state/new/dev/loop*", tdir);
	CHECK_EQ(kp_cdi_allow_device(p, r), 0);
	CHECK_EQ(pol_opts_check(p), KP_EINVAL);
	kp_options_free(p);
	/* Not beneath: still accepted. */
	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_sandbox_state_dir(p, s), 0);
	snprintf(r, sizeof(r), "%s/d/loop*", tdir);
	CHECK_EQ(kp_cdi_allow_device(p, r), 0);
	CHECK_EQ(pol_opts_check(p), 0);
	kp_options_free(p);
}

int
main(void)
{
	char	 c[128];

	root = geteuid() == 0;
	if (!root)
		fprintf(stderr, "test_redteam_issue26: not root: names only\n");
	setup();
	test_names();
	test_siblings();
	test_numbers();
	test_keys();
	test_setters();
	test_alias();
	kp_options_free(o);
	snprintf(c, sizeof(c), "rm -rf '%s'", tdir);
	if (strncmp(tdir, "/tmp/kp-rt26-", 13) == 0 && system(c) != 0)
		CHECK(0);
	return (test_done("test_redteam_issue26"));
}
