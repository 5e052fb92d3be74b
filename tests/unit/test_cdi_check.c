/*
 * test_cdi_check.c - the CDI spec rules of the broker (supervisor/
 * cdi_check.c), each accepted and refused with its message, and the
 * kp_cdi_allow_*() setters that declare what specs may ask for.
 * Specs are written with ' for " to stay readable.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "api/api.h"
#include "supervisor/supervisor.h"

#define DRV	"pci.example.com"
#define HEAD	"{'cdiVersion':'0.6.0','kind':'" DRV "/pci','devices':"
/* One device "d" with the given containerEdits. */
#define DEV(e)	HEAD "[{'name':'d','containerEdits':" e "}]}"

static struct kp_options	*o;
static char			 err[KP_ERROR_SIZE];

static int
chk(const char *spec)
{
	char	*s;
	size_t	 i, n = strlen(spec);
	int	 r;

	if ((s = malloc(n + 1)) == NULL)
		abort();
	for (i = 0; i <= n; i++)
		s[i] = spec[i] == '\'' ? '"' : spec[i];
	memset(err, 'x', sizeof(err));
	r = cdi_check(s, n, o, err, sizeof(err));
	if (memchr(err, '\0', sizeof(err)) == NULL) {
		fprintf(stderr, "message not terminated\n");
		CHECK(0);
		err[0] = '\0';
	}
	if (r != 0 && r != KP_EINVAL)
		CHECK_EQ(r, KP_EINVAL);
	free(s);
	return (r);
}

/* Refused, with a message containing what. */
#define REFUSED(spec, what) do {					\
	CHECK_EQ(chk(spec), KP_EINVAL);					\
	CHECK_CONTAINS(err, what);					\
} while (0)
#define ACCEPTED(spec) do {						\
	if (chk(spec) != 0)						\
		fprintf(stderr, "refused: %s\n", err);			\
	CHECK_EQ(chk(spec), 0);						\
} while (0)

static void
test_top(void)
{
	const char	*v[] = { "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0",
	    "0.8.0" };
	char		 b[512];
	size_t		 i;

	ACCEPTED(DEV("{}"));
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(b, sizeof(b), "{'cdiVersion':'%s','kind':'" DRV
		    "/pci','devices':[{'name':'d','containerEdits':{}}]}",
		    v[i]);
		ACCEPTED(b);
	}
	ACCEPTED(HEAD "[{'name':'d','containerEdits':{}}],"
	    "'containerEdits':{'env':['A=1']},"
	    "'annotations':{'example.com/a':'x','b':''}}");
	REFUSED("{'cdiVersion':'0.2.0','kind':'" DRV "/pci','devices':[]}",
	    "cdiVersion \"0.2.0\": not a released CDI version, 0.3.0 to "
	    "0.8.0");
	REFUSED("{'cdiVersion':'1.0.0','kind':'" DRV "/pci','devices':[]}",
	    "not a released CDI version");
	REFUSED("{'cdiVersion':6,'kind':'" DRV "/pci','devices':[]}",
	    "cdiVersion: not a string");
	REFUSED("{'kind':'" DRV "/pci','devices':[{'name':'d',"
	    "'containerEdits':{}}]}", "cdiVersion: missing");
	REFUSED("{'cdiVersion':'0.6.0','devices':[{'name':'d',"
	    "'containerEdits':{}}]}", "kind: missing");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "/pci'}",
	    "devices: missing");
	/* Another vendor's kind, or one that starts like ours. */
	REFUSED("{'cdiVersion':'0.6.0','kind':'nvidia.com/gpu','devices':[]}",
	    "kind \"nvidia.com/gpu\": not \"pci.example.com/<class>\" (a spec "
	    "defines devices of its own driver only)");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV ".evil/pci'}",
	    "not \"pci.example.com/<class>\"");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "'}",
	    "not \"pci.example.com/<class>\"");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "/'}", "class not 1 to "
	    "63 letters");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "/-x'}", "class not");
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "/a/b'}", "class not");
	ACCEPTED("{'cdiVersion':'0.6.0','kind':'" DRV "/a_b.c-9',"
	    "'devices':[{'name':'d','containerEdits':{}}]}");
	/* CDI's class rule: a letter first (parser.go ValidateClassName). */
	REFUSED("{'cdiVersion':'0.6.0','kind':'" DRV "/9x'}", "class not");
	snprintf(b, sizeof(b), "{'cdiVersion':'0.6.0','kind':'" DRV "/c%0*d',"
	    "'devices':[{'name':'d','containerEdits':{}}]}", 62, 0);
	ACCEPTED(b);
	snprintf(b, sizeof(b), "{'cdiVersion':'0.6.0','kind':'" DRV "/c%0*d',"
	    "'devices':[{'name':'d','containerEdits':{}}]}", 63, 0);
	REFUSED(b, "kind: longer than 79 bytes");
	REFUSED(HEAD "[{'name':'d','containerEdits':{}}],'x':1}",
	    "x: unknown field of a CDI spec");
	REFUSED(HEAD "[]}", "devices: empty (a spec defines at least one "
	    "device)");
	REFUSED(HEAD "{}}", "devices: not an array");
	REFUSED(HEAD "[{'name':'d','containerEdits':{}}],"
	    "'annotations':{'a b':'x'}}", "annotations[\"a b\"]: key not a "
	    "qualified name");
	REFUSED(HEAD "[{'name':'d','containerEdits':{}}],"
	    "'annotations':{'Bad_/a':'x'}}", "key not a qualified name");
	REFUSED(HEAD "[{'name':'d','containerEdits':{}}],"
	    "'annotations':{'a':1}}", "annotations[\"a\"]: not a string");
	REFUSED("[]", "not a JSON object");
}

static void
test_devices(void)
{
	ACCEPTED(HEAD "[{'name':'a','containerEdits':{}},{'name':'0:1_2.x-Y',"
	    "'containerEdits':{},'annotations':{'k':'v'}}]}");
	REFUSED(HEAD "[{'name':'a','containerEdits':{}},"
	    "{'name':'a','containerEdits':{}}]}",
	    "devices[1].name \"a\": repeats devices[0].name");
	REFUSED(HEAD "[{'name':'a b','containerEdits':{}}]}",
	    "devices[0].name \"a b\": not a CDI device name");
	REFUSED(HEAD "[{'name':'-a','containerEdits':{}}]}",
	    "not a CDI device name");
	REFUSED(HEAD "[{'name':'a:','containerEdits':{}}]}",
	    "not a CDI device name");
	REFUSED(HEAD "[{'name':'','containerEdits':{}}]}",
	    "not a CDI device name");
	REFUSED(HEAD "[{'containerEdits':{}}]}", "devices[0].name: missing");
	REFUSED(HEAD "[{'name':'a'}]}", "devices[0].containerEdits: missing");
	REFUSED(HEAD "[{'name':'a','containerEdits':{},'x':1}]}",
	    "devices[0].x: unknown field of a device");
	REFUSED(HEAD "[1]}", "devices[0]: not an object");
}

static void
test_env(void)
{
	char	*b;
	size_t	 i, n;

	ACCEPTED(DEV("{'env':['A=1','_x=','PCI_ADDRESS_0000=0000:00:1f.2',"
	    "'LD_PRELOAD=/x.so']}"));
	REFUSED(DEV("{'env':['=x']}"), "devices[0].containerEdits.env[0] "
	    "\"=x\": not NAME=value with NAME a letter or '_' then letters, "
	    "digits or '_'");
	REFUSED(DEV("{'env':['A=1','1A=x']}"), "env[1] \"1A=x\": not "
	    "NAME=value");
	REFUSED(DEV("{'env':['A']}"), "env[0] \"A\": not NAME=value");
	REFUSED(DEV("{'env':['A-B=1']}"), "not NAME=value");
	REFUSED(DEV("{'env':[1]}"), "env[0]: not a string");
	REFUSED(DEV("{'env':'A=1'}"), "env: not an array");
	/* 257 entries. */
	n = 257 * 6 + 128;
	if ((b = malloc(n)) == NULL)
		abort();
	strcpy(b, HEAD "[{'name':'d','containerEdits':{'env':[");
	for (i = 0; i < 257; i++)
		strcat(b, i == 0 ? "'A=1'" : ",'A=1'");
	strcat(b, "]}}]}");
	REFUSED(b, "env: more than 256 entries");
	free(b);
}

static void
test_nodes(void)
{
	const char	*pci = DEV("{'env':['PCI_ADDRESS_0000_00_1F_2=0000:00:"
	    "1f.2'],'deviceNodes':[{'path':'/dev/vfio/vfio'},"
	    "{'path':'/dev/vfio/12'}]}");

	/* None declared: no node at all. */
	REFUSED(pci, "devices[0].containerEdits.deviceNodes[0].path "
	    "\"/dev/vfio/vfio\": not a declared device (none declared: "
	    "kp_cdi_allow_device, kp_cdi_allow_device_number or "
	    "kp_cdi_allow_device_prefix)");
	CHECK_EQ(kp_cdi_allow_device_prefix(o, "/dev/vfio/"), 0);
	ACCEPTED(pci);	/* examples/pci-driver/cdi.c */
	ACCEPTED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','hostPath':"
	    "'/dev/vfio/2','fileMode':438,'permissions':'rw','uid':0,"
	    "'gid':4294967294}]}"));
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/mem'}]}"),
	    "deviceNodes[0].path \"/dev/mem\": not a declared device (no "
	    "kp_cdi_allow_device, _number or _prefix rule matches)");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio'}]}"),
	    "\"/dev/vfio\": not a declared device");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfiox/1'}]}"),
	    "not a declared device");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/../mem'}]}"),
	    "\"/dev/vfio/../mem\": has a '.' or '..' component");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/./1'}]}"),
	    "has a '.' or '..' component");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio//1'}]}"),
	    "has an empty component or a trailing '/'");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1/'}]}"),
	    "has an empty component or a trailing '/'");
	REFUSED(DEV("{'deviceNodes':[{'path':'dev/vfio/1'}]}"),
	    "\"dev/vfio/1\": not an absolute path");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1\\n'}]}"),
	    "\"/dev/vfio/1?\": contains a control character");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','hostPath':"
	    "'/dev/sda'}]}"), "deviceNodes[0].hostPath \"/dev/sda\": not "
	    "a declared device");
	/* The number of /dev/mem under an allowed name, with no number
	 * rule: refused whether /dev/vfio/1 exists here or not. */
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','type':'c',"
	    "'major':1,'minor':1}]}"), "deviceNodes[0]: type, major");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','major':1}]}"),
	    "deviceNodes[0]: type, major");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','minor':1}]}"),
	    "deviceNodes[0]: type, major");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','type':'p'}]}"),
	    "deviceNodes[0].type \"p\": not \"c\" or \"b\"");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','type':'cc'}]}"),
	    "deviceNodes[0].type: longer than");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','major':4096}]}"),
	    "deviceNodes[0].major 4096: not 0 to 4095");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','minor':-1}]}"),
	    "deviceNodes[0].minor -1: not 0 to 1048575");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','fileMode':"
	    "2541}]}"), "fileMode 2541: not 0 to 511");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','fileMode':"
	    "1.5}]}"), "fileMode: not an integer");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','permissions':"
	    "'rx'}]}"), "permissions \"rx\": not 1 to 3 of 'r', 'w', 'm'");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','uid':-1}]}"),
	    "uid -1: not 0 to 4294967294");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','x':1}]}"),
	    "deviceNodes[0].x: unknown field of a device node");
	REFUSED(DEV("{'deviceNodes':[{'hostPath':'/dev/vfio/1'}]}"),
	    "deviceNodes[0].path: missing");
}

/*
 * The device node rules against real nodes, in a directory of our own
 * (mknod needs root: without it only the names are tested):
 *   loop7 b 7:7 (a loop device), loop8 b 8:0 (sda's number under a loop
 *   name), loop9 -> /dev/null, loop10 a regular file, loop11 a
 *   directory, ctl c 10:237, zero c 1:5.
 */
static char	 tdir[64];

static void
node(const char *name, mode_t type, unsigned int maj, unsigned int min)
{
	char	 p[128];

	snprintf(p, sizeof(p), "%s/%s", tdir, name);
	if (mknod(p, type | 0600, makedev(maj, min)) != 0) {
		perror(p);
		CHECK(0);
	}
}

/* A spec of one device with one node: the JSON fields after "path". */
static const char *
spec1(const char *path, const char *more)
{
	static char	 b[1024];

	snprintf(b, sizeof(b), HEAD "[{'name':'d','containerEdits':"
	    "{'deviceNodes':[{'path':'%s/%s'%s}]}}]}", tdir, path, more);
	return (b);
}

static void
test_rules(void)
{
	struct kp_options	*keep = o;
	char			 p[256], q[256], f[128];
	int			 root = geteuid() == 0, fd;

	snprintf(tdir, sizeof(tdir), "/tmp/kp-cdi-dev-XXXXXX");
	if (mkdtemp(tdir) == NULL)
		abort();
	if (root) {
		node("loop7", S_IFBLK, 7, 7);
		node("loop8", S_IFBLK, 8, 0);
		node("ctl", S_IFCHR, 10, 237);
		node("zero", S_IFCHR, 1, 5);
	} else
		fprintf(stderr, "test_rules: not root: no device nodes\n");
	snprintf(f, sizeof(f), "%s/loop9", tdir);
	CHECK_EQ(symlink("/dev/null", f), 0);
	snprintf(f, sizeof(f), "%s/loop10", tdir);
	CHECK((fd = open(f, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	snprintf(f, sizeof(f), "%s/loop11", tdir);
	CHECK_EQ(mkdir(f, 0700), 0);

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	/* An exact name: that node and no other. */
	snprintf(p, sizeof(p), "%s/ctl", tdir);
	CHECK_EQ(kp_cdi_allow_device(o, p), 0);
	if (root)
		ACCEPTED(spec1("ctl", ""));
	REFUSED(spec1("ctl2", ""), "path \"/tmp/kp-cdi-dev-");
	CHECK_CONTAINS(err, "/ctl2\": not a declared device (no "
	    "kp_cdi_allow_device, _number or _prefix rule matches)");
	REFUSED(spec1("zero", ""), "not a declared device");
	/* A pattern, names only: any character or block node. */
	snprintf(p, sizeof(p), "%s/loop[0-9]*", tdir);
	CHECK_EQ(kp_cdi_allow_device(o, p), 0);
	if (root) {
		ACCEPTED(spec1("loop7", ""));
		ACCEPTED(spec1("loop8", ""));	/* no numbers declared */
		/* The spec's own numbers must agree with the node. */
		ACCEPTED(spec1("loop7", ",'type':'b','major':7,'minor':7"));
		REFUSED(spec1("loop7", ",'type':'c'"), "deviceNodes[0]: type, "
		    "major or minor do not agree with the host's node path");
		CHECK_CONTAINS(err, "/loop7\" (b 7:7)");
		REFUSED(spec1("loop7", ",'type':'b','major':1,'minor':1"),
		    "do not agree with the host's node");
		REFUSED(spec1("loop7", ",'minor':8"), "do not agree");
		/* a major without a minor: the runtime makes minor 0. */
		REFUSED(spec1("loop7", ",'type':'b','major':7"),
		    "do not agree");
		REFUSED(spec1("loop7", ",'major':7"), "do not agree");
		ACCEPTED(spec1("loop8", ",'type':'b','major':8"));
	}
	REFUSED(spec1("loop9", ""), "/loop9\": a symbolic link (the runtime "
	    "would follow it; name the node itself)");
	REFUSED(spec1("loop10", ""), "/loop10\": a regular file, not a "
	    "character or block device");
	REFUSED(spec1("loop11", ""), "/loop11\": a directory, not a");
	REFUSED(spec1("loopx", ""), "not a declared device");
	REFUSED(spec1("sub/loop1", ""), "not a declared device");
	/* A '*' matches no leading '.' (FNM_PERIOD) and no '/'. */
	snprintf(p, sizeof(p), "%s/*", tdir);
	CHECK_EQ(kp_cdi_allow_device(o, p), 0);
	REFUSED(spec1(".hidden", ""), "not a declared device");
	REFUSED(spec1("loop11/x", ""), "not a declared device");
	kp_options_free(o);

	/* Numbers: a node at a matching name must have them. */
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	snprintf(p, sizeof(p), "%s/loop[0-9]*", tdir);
	CHECK_EQ(kp_cdi_allow_device_number(o, p, 'b', 7, 0,
	    KP_CDI_MINOR_MAX), 0);
	if (root) {
		ACCEPTED(spec1("loop7", ""));
		/* A node named like a loop device with sda's number. */
		REFUSED(spec1("loop8", ""), "/loop8\": the host's node b 8:0 "
		    "is not a declared number (kp_cdi_allow_device_number");
		CHECK_CONTAINS(err, "/loop[0-9]*\" b 7:0-1048575)");
		/* path and hostPath are both checked. */
		snprintf(q, sizeof(q), ",'hostPath':'%s/loop8'", tdir);
		REFUSED(spec1("loop7", q), "deviceNodes[0].hostPath \"");
		CHECK_CONTAINS(err, "the host's node b 8:0 is not a declared "
		    "number");
		snprintf(q, sizeof(q), ",'hostPath':'%s/loop7'", tdir);
		REFUSED(spec1("loop8", q), "deviceNodes[0].path \"");
		CHECK_CONTAINS(err, "b 8:0 is not a declared number");
		/* The spec's numbers are compared with hostPath's node,
		 * which the runtime stats. */
		snprintf(q, sizeof(q), ",'hostPath':'%s/loop7','type':'b',"
		    "'major':7,'minor':7", tdir);
		ACCEPTED(spec1("loop70", q));
		snprintf(q, sizeof(q), ",'hostPath':'%s/loop7','type':'b',"
		    "'major':8,'minor':0", tdir);
		REFUSED(spec1("loop70", q), "do not agree with the host's node "
		    "hostPath");
	}
	REFUSED(spec1("loop9", ""), "a symbolic link");
	/* No node at the name: the name alone, or numbers within the
	 * rule; /dev/mem's numbers are not. */
	ACCEPTED(spec1("loop50", ""));
	ACCEPTED(spec1("loop50", ",'type':'b','major':7,'minor':50"));
	ACCEPTED(spec1("loop50", ",'type':'b','major':7"));
	REFUSED(spec1("loop50", ",'type':'c','major':1,'minor':1"),
	    "deviceNodes[0]: type, major and minor of a node the host does "
	    "not have (path \"");
	CHECK_CONTAINS(err, "must be within a declared number "
	    "(kp_cdi_allow_device_number \"");
	REFUSED(spec1("loop50", ",'major':7,'minor':50"), "of a node the "
	    "host does not have");
	kp_options_free(o);

	/* Numbers with no node, under a name-only rule: refused. */
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	CHECK_EQ(kp_cdi_allow_device_prefix(o, tdir), 0);
	ACCEPTED(spec1("loop50", ""));
	REFUSED(spec1("loop50", ",'type':'b','major':7,'minor':50"),
	    "no kp_cdi_allow_device_number rule matches");
	/* A prefix's nodes are checked as a rule's. */
	if (root)
		ACCEPTED(spec1("loop8", ""));
	REFUSED(spec1("loop9", ""), "a symbolic link");
	REFUSED(spec1("loop10", ""), "a regular file");
	kp_options_free(o);

	/* Nodes every machine has, root or not: /dev/null is c 1:3,
	 * /dev/zero c 1:5 (the fuzz target's rules, and its seed). */
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	CHECK_EQ(kp_cdi_allow_device_number(o, "/dev/nul?", 'c', 1, 3, 3), 0);
	CHECK_EQ(kp_cdi_allow_device_number(o, "/dev/ze?o", 'c', 1, 3, 3), 0);
	CHECK_EQ(kp_cdi_allow_device(o, "/dev/zero"), 0);
	CHECK_EQ(kp_cdi_allow_device(o, "/dev/loop[0-9]*"), 0);
	CHECK_EQ(kp_cdi_allow_device_prefix(o, "/dev/vfio/"), 0);
	ACCEPTED(DEV("{'deviceNodes':[{'path':'/dev/null','type':'c',"
	    "'major':1,'minor':3},{'path':'/dev/loop99','hostPath':"
	    "'/dev/zero'},{'path':'/dev/nulx','type':'c','major':1,"
	    "'minor':3},{'path':'/dev/vfio/7','hostPath':'/dev/null'}]}"));
	/* /dev/zero by its exact name (a name-only rule takes any
	 * number), though /dev/ze?o's number rule does not take it. */
	ACCEPTED(DEV("{'deviceNodes':[{'path':'/dev/zero'}]}"));
	kp_options_free(o);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, DRV), 0);
	CHECK_EQ(kp_cdi_allow_device_number(o, "/dev/ze?o", 'c', 1, 3, 3), 0);
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/zero'}]}"), "deviceNodes"
	    "[0].path \"/dev/zero\": the host's node c 1:5 is not a declared "
	    "number (kp_cdi_allow_device_number \"/dev/ze?o\" c 1:3-3)");
	ACCEPTED(DEV("{'deviceNodes':[{'path':'/dev/zebo','type':'c',"
	    "'major':1,'minor':3}]}"));
	kp_options_free(o);
	o = keep;

	snprintf(f, sizeof(f), "rm -rf '%s'", tdir);
	if (strncmp(tdir, "/tmp/kp-cdi-dev-", 16) == 0 && system(f) != 0)
		CHECK(0);
}

static void
test_mounts(void)
{
	const char	*root = DEV("{'mounts':[{'hostPath':'/',"
	    "'containerPath':'/host','options':['rbind','rw']}]}");

	REFUSED(root, "devices[0].containerEdits.mounts[0].hostPath \"/\": "
	    "not beneath a declared mount prefix (kp_cdi_allow_mount_prefix: "
	    "none declared)");
	CHECK_EQ(kp_cdi_allow_mount_prefix(o, "/opt/drv"), 0);
	REFUSED(root, "mounts[0].hostPath \"/\": not beneath a declared "
	    "mount prefix (kp_cdi_allow_mount_prefix)");
	ACCEPTED(DEV("{'mounts':[{'hostPath':'/opt/drv/lib','containerPath':"
	    "'/usr/lib/drv','type':'bind','options':['ro','nosuid']}]}"));
	ACCEPTED(DEV("{'mounts':[{'hostPath':'/opt/drv','containerPath':"
	    "'/drv'}]}"));
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drvx','containerPath':"
	    "'/d'}]}"), "not beneath a declared mount prefix");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/../../etc',"
	    "'containerPath':'/d'}]}"), "hostPath \"/opt/drv/../../etc\": "
	    "has a '.' or '..' component");
	REFUSED(DEV("{'mounts':[{'hostPath':'opt/drv/x','containerPath':"
	    "'/d'}]}"), "not an absolute path");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x','containerPath':"
	    "'d'}]}"), "mounts[0].containerPath \"d\": not an absolute path");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x','containerPath':"
	    "'/a/../../b'}]}"), "containerPath \"/a/../../b\": has a '.'");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x','containerPath':"
	    "'/d','type':'proc'}]}"), "mounts[0].type \"proc\": not \"bind\"");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x','containerPath':"
	    "'/d','options':[1]}]}"), "mounts[0].options[0]: not a string");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x'}]}"),
	    "mounts[0].containerPath: missing");
	REFUSED(DEV("{'mounts':[{'containerPath':'/d'}]}"),
	    "mounts[0].hostPath: missing");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/x','containerPath':"
	    "'/d','uidMappings':[]}]}"), "mounts[0].uidMappings: unknown field "
	    "of a mount");
}

static void
test_hooks(void)
{
	const char	*sh = DEV("{'hooks':[{'hookName':'createRuntime',"
	    "'path':'/bin/sh','args':['sh','-c','id > /tmp/kp-pwned']}]}");

	REFUSED(sh, "devices[0].containerEdits.hooks[0].path \"/bin/sh\": not "
	    "a declared hook (kp_cdi_allow_hook: none declared)");
	CHECK_EQ(kp_cdi_allow_hook(o, "/usr/libexec/drv-hook"), 0);
	REFUSED(sh, "hooks[0].path \"/bin/sh\": not a declared hook "
	    "(kp_cdi_allow_hook)");
	ACCEPTED(DEV("{'hooks':[{'hookName':'createContainer','path':"
	    "'/usr/libexec/drv-hook','args':['drv-hook','x'],"
	    "'timeout':5}]}"));
	/* A hook's environment acts before its first line (LD_PRELOAD,
	 * BASH_ENV): never brokered. */
	REFUSED(DEV("{'hooks':[{'hookName':'createContainer','path':"
	    "'/usr/libexec/drv-hook','env':['A=1']}]}"), "hooks[0].env: a "
	    "hook's environment is not brokered");
	REFUSED(DEV("{'hooks':[{'hookName':'createContainer','path':"
	    "'/usr/libexec/drv-hook2'}]}"), "not a declared hook");
	REFUSED(DEV("{'hooks':[{'hookName':'createContainer','path':"
	    "'/usr/libexec/../libexec/drv-hook'}]}"), "has a '.' or '..'");
	REFUSED(DEV("{'hooks':[{'hookName':'evil','path':"
	    "'/usr/libexec/drv-hook'}]}"), "hooks[0].hookName \"evil\": not an "
	    "OCI hook name");
	REFUSED(DEV("{'hooks':[{'hookName':'poststop','path':"
	    "'/usr/libexec/drv-hook','timeout':0}]}"), "timeout 0: not 1 to");
	REFUSED(DEV("{'mounts':[{'hostPath':'/opt/drv/lib','containerPath':"
	    "'/usr/lib/drv','type':'bind','options':['rbind','rshared']}]}"),
	    "mounts[0].options[1] \"rshared\": not an allowed mount option");
	REFUSED(DEV("{'hooks':[{'path':'/usr/libexec/drv-hook'}]}"),
	    "hooks[0].hookName: missing");
	REFUSED(DEV("{'hooks':[{'hookName':'poststop'}]}"),
	    "hooks[0].path: missing");
	REFUSED(DEV("{'hooks':[{'hookName':'poststop','path':"
	    "'/usr/libexec/drv-hook','x':1}]}"), "hooks[0].x: unknown field "
	    "of a hook");
}

static void
test_refused_edits(void)
{
	REFUSED(DEV("{'additionalGids':[0]}"), "devices[0].containerEdits."
	    "additionalGids: not allowed (the broker passes no group ids)");
	REFUSED(DEV("{'intelRdt':{'closID':'x'}}"),
	    "containerEdits.intelRdt: not allowed");
	REFUSED(DEV("{'netDevices':[{'hostInterfaceName':'eth0','name':"
	    "'eth1'}]}"), "containerEdits.netDevices: not allowed");
	REFUSED(DEV("{'foo':1}"), "devices[0].containerEdits.foo: unknown "
	    "field of containerEdits");
	REFUSED(HEAD "[{'name':'d','containerEdits':{}}],'containerEdits':"
	    "{'mounts':[{'hostPath':'/','containerPath':'/h'}]}}",
	    "containerEdits.mounts[0].hostPath \"/\": not beneath");
	/* tests/e2e/attack.test.js's spec: the kind goes first. */
	REFUSED("{'cdiVersion':'0.6.0','kind':'nvidia.com/gpu','devices':"
	    "[{'name':'all','containerEdits':{'mounts':[{'hostPath':'/',"
	    "'containerPath':'/host','options':['rbind','rw']}]}}]}",
	    "kind \"nvidia.com/gpu\"");
}

static void
test_json(void)
{
	char	*b;
	size_t	 i, n;

	REFUSED("", "not JSON");
	REFUSED("{", "not JSON");
	REFUSED(DEV("{}") " x", "not JSON");
	REFUSED(DEV("{}") "{}", "not JSON");
	REFUSED("{'cdiVersion':'0.6.0','cdiVersion':'0.6.0'}", "not JSON: "
	    "duplicate object key");
	REFUSED(DEV("{'env':['A=\\u0000']}"), "not JSON");
	ACCEPTED(DEV("{'env':['A=\\u00e9\\\"']}"));
	REFUSED("[[[[[[[[[]]]]]]]]]", "nested deeper than 8 (byte 8)");
	/* Brackets inside strings are not nesting. */
	ACCEPTED(DEV("{'env':['A=[[[[[[[[[[{{{{{{{{{{\\\"[[[[']}"));
	n = 3 * 8193 + 16;
	if ((b = malloc(n)) == NULL)
		abort();
	b[0] = '[';
	for (i = 0; i < 8193; i++)
		memcpy(b + 1 + 3 * i, "[],", 3);
	memcpy(b + 1 + 3 * 8192, "[]]", 4);
	REFUSED(b, "more than 8192 objects and arrays");
	n = 2 * 32769 + 16;
	free(b);
	if ((b = malloc(n)) == NULL)
		abort();
	b[0] = '[';
	for (i = 0; i < 32769; i++)
		memcpy(b + 1 + 2 * i, "0,", 2);
	memcpy(b + 1 + 2 * 32769, "0]", 3);
	REFUSED(b, "more than 32768 values");
	free(b);
	CHECK_EQ(cdi_check("{}", KP_IPC_MAX_CDI_CONTENT + 1, o, err,
	    sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "more than 262144 bytes");
	/* No message buffer. */
	CHECK_EQ(cdi_check("[]", 2, o, NULL, 0), KP_EINVAL);
}

static void
test_setters(void)
{
	struct kp_options	*p;
	char			 b[32];
	int			 i;

	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_cdi_allow_device_prefix(NULL, "/dev/x"), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, NULL), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, "dev/x"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device_prefix "
	    "(beyond upstream): \"dev/x\" is not an absolute path");
	CHECK_EQ(kp_cdi_allow_mount_prefix(p, "/opt/../etc"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_mount_prefix "
	    "(beyond upstream): \"/opt/../etc\" has a '.' or '..' component");
	CHECK_EQ(kp_cdi_allow_mount_prefix(p, "/"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "is the root directory");
	CHECK_EQ(kp_cdi_allow_mount_prefix(p, "//"), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_hook(p, "/usr/bin/h/"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_hook (beyond "
	    "upstream): \"/usr/bin/h/\" has an empty component");
	/* One trailing '/' of a prefix is dropped; repeats are ignored. */
	CHECK_EQ(kp_cdi_allow_device_prefix(p, "/dev/vfio/"), 0);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, "/dev/vfio"), 0);
	CHECK_EQ(p->policy.n_cdi_dev, 1);
	CHECK_STREQ(p->policy.cdi_dev[0], "/dev/vfio");
	for (i = 1; i < POL_MAX_CDI_ALLOW; i++) {
		snprintf(b, sizeof(b), "/dev/d%d", i);
		CHECK_EQ(kp_cdi_allow_device_prefix(p, b), 0);
	}
	CHECK_EQ(kp_cdi_allow_device_prefix(p, "/dev/one-more"), KP_ENOMEM);
	CHECK_CONTAINS(kp_options_last_error(p), "at most 16 paths");
	kp_options_free(p);
}

/* kp_cdi_allow_device(), _number() and the prefix that is no directory. */
static void
test_rule_setters(void)
{
	struct kp_options	*p;
	char			 d[64], b[128];
	int			 i, fd;

	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_cdi_allow_device(NULL, "/dev/x"), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device(p, NULL), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device "
	    "(beyond upstream): NULL is not an absolute path");
	CHECK_EQ(kp_cdi_allow_device(p, "dev/loop*"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "\"dev/loop*\" is not an "
	    "absolute path");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/*/card0"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device (beyond "
	    "upstream): \"/dev/*/card0\" has a wildcard in a directory (only "
	    "the last component may be a pattern)");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/dr?/renderD*"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "wildcard in a directory");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/[a-z]/x"), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/../mem"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "has a '.' or '..' component");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev//loop*"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "has an empty component");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop*/"), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop[0-9*"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "has a '[' without its ']'");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop\\*"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "contains a '\\' (escapes");
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop\n"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "contains a control");
	CHECK_EQ(kp_cdi_allow_device(p, "/tmp"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "\"/tmp\" is a directory, "
	    "not a device node (for the nodes in it: \"/tmp/*\", or "
	    "kp_cdi_allow_device_prefix)");
	memset(b, 'a', sizeof(b));
	b[0] = '/';
	b[sizeof(b) - 1] = '\0';
	for (i = 0; i < 2; i++)
		CHECK_EQ(kp_cdi_allow_device(p, b), 0);	/* 127 bytes */
	CHECK_EQ(p->policy.n_cdi_devs, 1);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop-control"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop[0-9]*"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/dri/renderD*"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/vfio/[!a-z]*"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/x[]]"), 0);
	/* Numbers. */
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'x', 7, 0,
	    1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device_number "
	    "(beyond upstream): type 120 is not 'c' (a character device) or "
	    "'b' (a block device)");
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 4096,
	    0, 1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "major 4096 is above 4095");
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 7, 2,
	    1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "minors 2 to 1 are not a "
	    "range within 0 to 1048575");
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 7, 0,
	    KP_CDI_MINOR_MAX + 1), KP_EINVAL);
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/*/x", 'b', 7, 0, 1),
	    KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device_number "
	    "(beyond upstream): \"/dev/*/x\" has a wildcard in a directory");
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 7, 0,
	    KP_CDI_MINOR_MAX), 0);
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 7, 0,
	    KP_CDI_MINOR_MAX), 0);	/* repeated */
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/loop[0-9]*", 'b', 259, 0,
	    KP_CDI_MINOR_MAX), 0);	/* another range */
	CHECK_EQ(p->policy.n_cdi_devs, 8);
	CHECK_EQ(p->policy.cdi_devs[6].type, 'b');
	CHECK_EQ(p->policy.cdi_devs[6].major, 7);
	/* At most 32 rules, both kinds together. */
	for (i = 8; i < POL_MAX_CDI_DEVS; i++) {
		snprintf(b, sizeof(b), "/dev/d%d*", i);
		CHECK_EQ(i % 2 ? kp_cdi_allow_device(p, b) :
		    kp_cdi_allow_device_number(p, b, 'c', 1, 0, 1), 0);
	}
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/one-more"), KP_ENOMEM);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device (beyond "
	    "upstream): at most 32 device rules");
	CHECK_EQ(kp_cdi_allow_device_number(p, "/dev/one-more", 'c', 1, 0, 1),
	    KP_ENOMEM);
	kp_options_free(p);

	/* A prefix that names no directory, refused at set time; one that
	 * does not exist (yet) is taken. */
	snprintf(d, sizeof(d), "/tmp/kp-cdi-pfx-XXXXXX");
	if (mkdtemp(d) == NULL)
		abort();
	snprintf(b, sizeof(b), "%s/loop0", d);
	CHECK((fd = open(b, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	snprintf(b, sizeof(b), "%s/vfio", d);
	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, b), 0);	/* missing */
	CHECK_EQ(p->policy.n_cdi_dev, 1);
	snprintf(b, sizeof(b), "%s/loop", d);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, b), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "/loop\" names no "
	    "directory, only the start of file names (for those nodes: "
	    "kp_cdi_allow_device(\"/tmp/kp-cdi-pfx-");
	CHECK_CONTAINS(kp_options_last_error(p), "/loop[0-9]*\"))");
	snprintf(b, sizeof(b), "%s/loop/", d);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, b), KP_EINVAL);
	snprintf(b, sizeof(b), "%s/loop0", d);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, b), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "/loop0\" is not a directory "
	    "(a prefix takes the files beneath one; for this node: "
	    "kp_cdi_allow_device(\"/tmp/kp-cdi-pfx-");
	CHECK_EQ(p->policy.n_cdi_dev, 1);
	CHECK_EQ(kp_cdi_allow_device_prefix(p, "/dev/null"), KP_EINVAL);
	/* The case, where this machine has loop devices. */
	if (access("/dev/loop0", F_OK) == 0 && access("/dev/loop", F_OK) != 0) {
		CHECK_EQ(kp_cdi_allow_device_prefix(p, "/dev/loop"), KP_EINVAL);
		CHECK_CONTAINS(kp_options_last_error(p), "kp_cdi_allow_device("
		    "\"/dev/loop[0-9]*\")");
	}
	CHECK_EQ(kp_cdi_allow_device_prefix(p, d), 0);
	CHECK_EQ(p->policy.n_cdi_dev, 2);
	kp_options_free(p);
	unlink(b);
	rmdir(d);
}

/* kp_start()'s check: no device rule's directory in a state directory. */
static void
test_state_dirs(void)
{
	struct kp_options	*p;

	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_sandbox_state_dir(p, "/var/lib/drv"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/dev/loop[0-9]*"), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/var/lib/drvx/n*"), 0);
	CHECK_EQ(pol_opts_check(p), 0);
	CHECK_EQ(kp_cdi_allow_device(p, "/var/lib/drv/dev/loop*"), 0);
	CHECK_EQ(pol_opts_check(p), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(p), "kp_sandbox_state_dir "
	    "(beyond upstream): /var/lib/drv holds the directory of the CDI "
	    "device rule /var/lib/drv/dev/loop*");
	kp_options_free(p);
	CHECK_EQ(kp_options_new(&p), 0);
	CHECK_EQ(kp_sandbox_state_dir(p, "/var/lib/drv"), 0);
	CHECK_EQ(kp_cdi_allow_device_number(p, "/var/lib/drv/n0", 'c', 1, 3,
	    3), 0);
	CHECK_EQ(pol_opts_check(p), KP_EINVAL);
	kp_options_free(p);
}

int
main(void)
{
	if (kp_options_new(&o) != 0 || kp_driver_name(o, DRV) != 0)
		return (1);
	test_top();
	test_devices();
	test_env();
	test_json();
	test_refused_edits();
	test_nodes();
	test_rules();
	test_mounts();
	test_hooks();
	test_setters();
	test_rule_setters();
	test_state_dirs();
	kp_options_free(o);
	return (test_done("test_cdi_check"));
}
