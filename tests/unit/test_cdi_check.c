/*
 * test_cdi_check.c - the CDI spec rules of the broker (supervisor/
 * cdi_check.c), each accepted and refused with its message, and the
 * kp_cdi_allow_*() setters that declare what specs may ask for.
 * Specs are written with ' for " to stay readable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	    "\"/dev/vfio/vfio\": not beneath a declared device prefix "
	    "(kp_cdi_allow_device_prefix: none declared)");
	CHECK_EQ(kp_cdi_allow_device_prefix(o, "/dev/vfio/"), 0);
	ACCEPTED(pci);	/* examples/pci-driver/cdi.c */
	ACCEPTED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','hostPath':"
	    "'/dev/vfio/2','fileMode':438,'permissions':'rw','uid':0,"
	    "'gid':4294967294}]}"));
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/mem'}]}"),
	    "deviceNodes[0].path \"/dev/mem\": not beneath a declared device "
	    "prefix (kp_cdi_allow_device_prefix)");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio'}]}"),
	    "\"/dev/vfio\": not beneath a declared device prefix");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfiox/1'}]}"),
	    "not beneath a declared device prefix");
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
	    "beneath a declared device prefix");
	/* The number of /dev/mem under an allowed name. */
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','type':'c',"
	    "'major':1,'minor':1}]}"), "deviceNodes[0].type: not allowed "
	    "(the runtime takes the type and number from the host's node)");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','major':1}]}"),
	    "deviceNodes[0].major: not allowed");
	REFUSED(DEV("{'deviceNodes':[{'path':'/dev/vfio/1','minor':1}]}"),
	    "deviceNodes[0].minor: not allowed");
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
	test_mounts();
	test_hooks();
	test_setters();
	kp_options_free(o);
	return (test_done("test_cdi_check"));
}
