/*
 * test_cdi_build.c - the CDI spec builder (nodeserver/cdi_build.c): the
 * JSON it makes for each kind of edit, the cdiVersion each field needs
 * (the rules of the CDI module's specs-go/version.go), every refusal with
 * its message, and every spec it makes accepted by the supervisor's check
 * (supervisor/cdi_check.c), the rules the runtime's spec goes through.
 * Also kp_cdi_device_id(), kp_cdi_claim_spec_name() and the CDI ID rule
 * of kp_prepare_add_device() (base/cdi.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"
#include "base/cdi.h"
#include "supervisor/supervisor.h"

#define DRV	"pci.example.com"

static struct kp_options	*o;

/* The spec's JSON, checked by the broker's rules; returns the tree. */
static json_t *
built(struct kp_cdi_builder *b)
{
	char		*text = NULL, err[KP_ERROR_SIZE] = "";
	json_error_t	 je;
	json_t		*t;

	CHECK_EQ(kp_cdi_builder_json(b, &text), 0);
	if (text == NULL)
		return (json_object());
	if (cdi_check(text, strlen(text), o, err, sizeof(err)) != 0) {
		fprintf(stderr, "broker refused %s: %s\n", text, err);
		CHECK(0);
	}
	t = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	CHECK(t != NULL);
	free(text);
	return (t != NULL ? t : json_object());
}

static const char *
version_of(json_t *t)
{
	return (json_string_value(json_object_get(t, "cdiVersion")));
}

static void
test_basic(void)
{
	struct kp_cdi_builder	*b;
	json_t			*t, *d;
	char			*text;

	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", NULL), KP_EINVAL);
	CHECK_EQ(kp_cdi_builder_new(NULL, &b), KP_EINVAL);
	CHECK(b == NULL);
	CHECK_EQ(kp_cdi_builder_new("pci", &b), KP_EINVAL);
	CHECK_EQ(kp_cdi_builder_new(DRV "/", &b), KP_EINVAL);
	CHECK_EQ(kp_cdi_builder_new("1x.com/pci", &b), KP_EINVAL);
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci-", &b), KP_EINVAL);
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	/* A spec defines at least one device. */
	CHECK_EQ(kp_cdi_builder_json(b, &text), KP_EINVAL);
	CHECK(text == NULL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "devices: none added");
	CHECK_EQ(kp_cdi_add_device(b, "gpu0"), 0);
	CHECK_EQ(kp_cdi_add_device(b, "gpu0"), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "added before");
	CHECK_EQ(kp_cdi_add_device(b, "-x"), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device name \"-x\": "
	    "not a letter or digit");
	CHECK_EQ(kp_cdi_add_device(b, "a/b"), KP_EINVAL);
	CHECK_EQ(kp_cdi_add_device(b, NULL), KP_EINVAL);
	CHECK_EQ(kp_cdi_add_env(b, "gpu0", "GPU=0"), 0);
	CHECK_EQ(kp_cdi_add_env(b, "gpu0", "1GPU=0"), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "env \"1GPU=0\": not "
	    "NAME=value");
	CHECK_EQ(kp_cdi_add_env(b, "gpu0", "NOVALUE"), KP_EINVAL);
	CHECK_EQ(kp_cdi_add_env(b, "nope", "A=1"), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device \"nope\": not "
	    "added");
	CHECK_STREQ(kp_cdi_builder_version(b), "0.3.0");
	t = built(b);
	CHECK_STREQ(version_of(t), "0.3.0");
	CHECK_STREQ(json_string_value(json_object_get(t, "kind")),
	    DRV "/pci");
	/* No spec-level edits were added: none written. */
	CHECK(json_object_get(t, "containerEdits") == NULL);
	d = json_array_get(json_object_get(t, "devices"), 0);
	CHECK_STREQ(json_string_value(json_object_get(d, "name")), "gpu0");
	CHECK_STREQ(json_string_value(json_array_get(json_object_get(
	    json_object_get(d, "containerEdits"), "env"), 0)), "GPU=0");
	json_decref(t);
	/* Spec-level edits. */
	CHECK_EQ(kp_cdi_add_env(b, NULL, "ALL=1"), 0);
	t = built(b);
	CHECK_STREQ(json_string_value(json_array_get(json_object_get(
	    json_object_get(t, "containerEdits"), "env"), 0)), "ALL=1");
	json_decref(t);
	kp_cdi_builder_free(b);
	kp_cdi_builder_free(NULL);
	CHECK_STREQ(kp_cdi_builder_last_error(NULL), "");
	CHECK_EQ(kp_cdi_add_device(NULL, "x"), KP_EINVAL);
}

/* Each field that needs a later version, alone in a fresh spec. */
static void
test_versions(void)
{
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT,
					    .path = "/dev/vfio/7" };
	struct kp_cdi_mount		 m = { KP_CDI_MOUNT_INIT,
					    .host_path = "/opt/drv/lib",
					    .container_path = "/usr/lib/drv" };
	struct kp_cdi_builder		*b;
	json_t				*t;

	/* 0.3.0: a node without hostPath, a mount without type. */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	CHECK_EQ(kp_cdi_add_device_node(b, "d", &n), 0);
	CHECK_EQ(kp_cdi_add_mount(b, "d", &m), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.3.0");
	json_decref(t);
	/* 0.4.0: a mount's type (requiresV040). */
	m.type = "bind";
	CHECK_EQ(kp_cdi_add_mount(b, NULL, &m), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.4.0");
	json_decref(t);
	/* 0.5.0: a device node's hostPath (requiresV050). */
	n.host_path = "/dev/vfio/8";
	CHECK_EQ(kp_cdi_add_device_node(b, "d", &n), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.5.0");
	json_decref(t);
	/* 0.6.0: annotations (requiresV060). */
	CHECK_EQ(kp_cdi_add_annotation(b, "d", "example.com/x", "y"), 0);
	CHECK_EQ(kp_cdi_add_annotation(b, "d", "-bad", "y"), KP_EINVAL);
	CHECK_STREQ(kp_cdi_builder_version(b), "0.6.0");
	t = built(b);
	CHECK_STREQ(version_of(t), "0.6.0");
	json_decref(t);
	kp_cdi_builder_free(b);

	/* 0.5.0: a device name starting with a digit. */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "0"), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.5.0");
	json_decref(t);
	kp_cdi_builder_free(b);
	/* 0.6.0: a '.' in the class. */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci.fn", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.6.0");
	json_decref(t);
	kp_cdi_builder_free(b);
	/* A spec-level annotation, and the version of a bare JSON tree
	 * with intelRdt (0.7.0, which the builder never writes). */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	CHECK_EQ(kp_cdi_add_annotation(b, NULL, "a", ""), 0);
	CHECK_STREQ(kp_cdi_builder_version(b), "0.6.0");
	kp_cdi_builder_free(b);
	t = json_pack("{s:s,s:[{s:s,s:{s:{}}}]}", "kind", DRV "/pci",
	    "devices", "name", "d", "containerEdits", "intelRdt");
	CHECK_STREQ(cdi_min_version(t), "0.7.0");
	json_decref(t);
	CHECK_EQ(cdi_version_cmp("0.10.0", "0.9.0"), 1);
	CHECK_EQ(cdi_version_cmp("0.3.0", "0.3.0"), 0);
}

static void
test_edits(void)
{
	const char			*opts[] = { "ro", "nosuid" };
	const char			*args[] = { "drv-hook", "--claim", "x" };
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT,
					    .path = "/dev/vfio/vfio",
					    .permissions = "rw",
					    .file_mode = 0660 };
	struct kp_cdi_mount		 m = { KP_CDI_MOUNT_INIT,
					    .host_path = "/opt/drv",
					    .container_path = "/drv",
					    .options = opts, .n_options = 2 };
	struct kp_cdi_hook		 h = { KP_CDI_HOOK_INIT,
					    .hook_name = "createContainer",
					    .path = "/usr/libexec/drv-hook",
					    .args = args, .n_args = 3,
					    .timeout_s = 5 };
	struct {
		struct kp_cdi_device_node	n;
		int				later;
	}				 newer;
	struct kp_cdi_builder		*b;
	json_t				*t, *e, *x;

	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "fn-0000_00_1f.2:a"), 0);
	CHECK_EQ(kp_cdi_add_device_node(b, "fn-0000_00_1f.2:a", &n), 0);
	CHECK_EQ(kp_cdi_add_mount(b, "fn-0000_00_1f.2:a", &m), 0);
	CHECK_EQ(kp_cdi_add_hook(b, "fn-0000_00_1f.2:a", &h), 0);
	t = built(b);
	e = json_object_get(json_array_get(json_object_get(t, "devices"), 0),
	    "containerEdits");
	x = json_array_get(json_object_get(e, "deviceNodes"), 0);
	CHECK_STREQ(json_string_value(json_object_get(x, "path")),
	    "/dev/vfio/vfio");
	CHECK_STREQ(json_string_value(json_object_get(x, "permissions")),
	    "rw");
	CHECK_EQ(json_integer_value(json_object_get(x, "fileMode")), 0660);
	CHECK(json_object_get(x, "hostPath") == NULL);
	x = json_array_get(json_object_get(e, "mounts"), 0);
	CHECK_STREQ(json_string_value(json_object_get(x, "containerPath")),
	    "/drv");
	CHECK_STREQ(json_string_value(json_array_get(json_object_get(x,
	    "options"), 1)), "nosuid");
	x = json_array_get(json_object_get(e, "hooks"), 0);
	CHECK_STREQ(json_string_value(json_object_get(x, "hookName")),
	    "createContainer");
	CHECK_EQ(json_array_size(json_object_get(x, "args")), 3);
	CHECK_EQ(json_integer_value(json_object_get(x, "timeout")), 5);
	json_decref(t);

	/* Refusals, each naming the field. */
	n.path = "dev/x";
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node path "
	    "\"dev/x\": not an absolute");
	n.path = NULL;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node path: "
	    "required");
	n.path = "/dev/vfio/1";
	n.permissions = "rx";
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "permissions");
	n.permissions = NULL;
	n.file_mode = 01777;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	n.file_mode = 0;
	n.struct_size = 0;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "struct_size is 0");
	n.struct_size = sizeof(size_t);
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "smaller than");
	/* A newer caller's struct: fine while its new field is zero. */
	memset(&newer, 0, sizeof(newer));
	newer.n = n;
	newer.n.struct_size = sizeof(newer);
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &newer.n), 0);
	newer.later = 1;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &newer.n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "needs a newer");
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, NULL), KP_EINVAL);
	m.type = "tmpfs";
	CHECK_EQ(kp_cdi_add_mount(b, NULL, &m), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "mount type \"tmpfs\"");
	m.type = NULL;
	m.container_path = NULL;
	CHECK_EQ(kp_cdi_add_mount(b, NULL, &m), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "container_path: "
	    "required");
	m.container_path = "/drv";
	m.options = NULL;
	CHECK_EQ(kp_cdi_add_mount(b, NULL, &m), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "mount options: NULL");
	h.hook_name = "preStart";
	CHECK_EQ(kp_cdi_add_hook(b, NULL, &h), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "hook hook_name");
	h.hook_name = "poststop";
	h.timeout_s = -1;
	CHECK_EQ(kp_cdi_add_hook(b, NULL, &h), KP_EINVAL);
	kp_cdi_builder_free(b);
}

/* json of b, or NULL when the supervisor's check refuses it (err). */
static char *
checked(struct kp_cdi_builder *b, char *err, size_t errsize)
{
	char	*text = NULL;

	CHECK_EQ(kp_cdi_builder_json(b, &text), 0);
	if (text != NULL && cdi_check(text, strlen(text), o, err,
	    errsize) != 0) {
		free(text);
		return (NULL);
	}
	return (text);
}

/*
 * type, major and minor: written as CDI's "type", "major", "minor"
 * (0.3.0), each rule refused by name, not read from a caller's struct
 * as first released, and what the supervisor's check (cdi_node.c) then
 * makes of them against /dev/null (c 1:3 on every Linux) and a name the
 * host does not have.
 */
static void
test_numbers(void)
{
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT,
					    .path = "/dev/null", .type = 'c',
					    .major = 1, .minor = 3 };
	struct kp_cdi_device_node	 old;
	struct kp_cdi_builder		*b;
	json_t				*t, *x;
	char				*text, err[KP_ERROR_SIZE] = "";

	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	CHECK_EQ(kp_cdi_add_device_node(b, "d", &n), 0);
	t = built(b);
	CHECK_STREQ(version_of(t), "0.3.0");
	x = json_array_get(json_object_get(json_object_get(json_array_get(
	    json_object_get(t, "devices"), 0), "containerEdits"),
	    "deviceNodes"), 0);
	CHECK_STREQ(json_string_value(json_object_get(x, "type")), "c");
	CHECK(json_is_integer(json_object_get(x, "major")));
	CHECK_EQ(json_integer_value(json_object_get(x, "major")), 1);
	CHECK_EQ(json_integer_value(json_object_get(x, "minor")), 3);
	json_decref(t);
	kp_cdi_builder_free(b);

	/* Type alone; a major with minor 0 writes "minor": 0, the number
	 * the runtime would use. */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	n.major = 0;
	n.minor = 0;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	n.path = "/dev/kp-absent0";
	n.major = 240;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	t = built(b);
	x = json_object_get(json_object_get(t, "containerEdits"),
	    "deviceNodes");
	CHECK_STREQ(json_string_value(json_object_get(json_array_get(x, 0),
	    "type")), "c");
	CHECK(json_object_get(json_array_get(x, 0), "major") == NULL);
	CHECK(json_object_get(json_array_get(x, 0), "minor") == NULL);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(x, 1),
	    "major")), 240);
	CHECK(json_is_integer(json_object_get(json_array_get(x, 1),
	    "minor")));
	json_decref(t);
	kp_cdi_builder_free(b);

	/* What the supervisor refuses of what the builder writes: numbers
	 * that disagree with the host's node, or for a missing one outside
	 * the number rule (c 240:0-15). */
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	n.path = "/dev/null";
	n.major = 1;
	n.minor = 5;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	CHECK(checked(b, err, sizeof(err)) == NULL);
	CHECK_CONTAINS(err, "do not agree with the host's node");
	CHECK_CONTAINS(err, "c 1:3");
	kp_cdi_builder_free(b);
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	n.path = "/dev/kp-absent1";
	n.major = 240;
	n.minor = 16;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	CHECK(checked(b, err, sizeof(err)) == NULL);
	CHECK_CONTAINS(err, "must be within a declared number");
	kp_cdi_builder_free(b);
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	n.minor = 15;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	CHECK((text = checked(b, err, sizeof(err))) != NULL);
	free(text);

	/* Refusals, each naming the field and the rule. */
	n.type = 'u';
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node type 117: "
	    "not 0, 'c' (character) or 'b' (block)");
	n.type = 'b';
	n.major = 4096;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node major "
	    "4096: above 4095");
	n.major = 4095;
	n.minor = KP_CDI_MINOR_MAX + 1;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node minor "
	    "1048576: above 1048575");
	n.minor = KP_CDI_MINOR_MAX;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), 0);
	n.type = 0;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node major "
	    "4095: needs a type");
	n.major = 0;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &n), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "device node minor "
	    "1048575: needs a major");
	kp_cdi_builder_free(b);

	/* A caller compiled before the numbers: struct_size ends at
	 * file_mode, and what lies beyond it is not read. */
	memset(&old, 0xff, sizeof(old));
	old.struct_size = offsetof(struct kp_cdi_device_node, file_mode) +
	    sizeof(old.file_mode);
	old.path = "/dev/null";
	old.host_path = NULL;
	old.permissions = NULL;
	old.file_mode = 0;
	CHECK_EQ(kp_cdi_builder_new(DRV "/pci", &b), 0);
	CHECK_EQ(kp_cdi_add_device(b, "d"), 0);
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &old), 0);
	t = built(b);
	x = json_array_get(json_object_get(json_object_get(t,
	    "containerEdits"), "deviceNodes"), 0);
	CHECK_STREQ(json_string_value(json_object_get(x, "path")),
	    "/dev/null");
	CHECK_EQ(json_object_size(x), 1);
	json_decref(t);
	old.struct_size--;
	CHECK_EQ(kp_cdi_add_device_node(b, NULL, &old), KP_EINVAL);
	CHECK_CONTAINS(kp_cdi_builder_last_error(b), "smaller than the first "
	    "release's");
	kp_cdi_builder_free(b);
}

static void
test_ids(void)
{
	char		 id[64];
	const char	*why;

	CHECK_EQ(kp_cdi_device_id(DRV "/pci", "fn0", id, sizeof(id)), 0);
	CHECK_STREQ(id, DRV "/pci=fn0");
	CHECK_EQ(cdi_id_check(id, &why), 0);
	CHECK_EQ(kp_cdi_device_id(DRV "/pci", "fn0", id, 10),
	    KP_ENAMETOOLONG);
	CHECK_EQ(kp_cdi_device_id(DRV, "fn0", id, sizeof(id)), KP_EINVAL);
	CHECK_EQ(kp_cdi_device_id(DRV "/pci", "fn 0", id, sizeof(id)),
	    KP_EINVAL);
	CHECK_EQ(kp_cdi_device_id(NULL, "x", id, sizeof(id)), KP_EINVAL);
	CHECK_EQ(cdi_id_check("not a cdi id", &why), -1);
	CHECK_CONTAINS(why, "not <vendor>/<class>=<name>");
	CHECK_EQ(cdi_id_check("vendor.com/class=", &why), -1);
	CHECK_CONTAINS(why, "device name is not");
	CHECK_EQ(cdi_id_check("1vendor.com/class=x", &why), -1);
	CHECK_CONTAINS(why, "vendor is not");
	CHECK_EQ(cdi_id_check("vendor.com/cl ass=x", &why), -1);
	CHECK_CONTAINS(why, "class is not");
	CHECK_EQ(cdi_id_check("vendor.com/class=a:b.c_d-e", &why), 0);
	CHECK_EQ(cdi_id_check("vendor.com/class=a=b", &why), -1);

	CHECK_EQ(kp_cdi_claim_spec_name(DRV, "0b1c-uid", id, sizeof(id)), 0);
	CHECK_STREQ(id, DRV "_claim-0b1c-uid.json");
	CHECK_EQ(kp_cdi_claim_spec_name(DRV, "../x", id, sizeof(id)),
	    KP_EINVAL);
	CHECK_EQ(kp_cdi_claim_spec_name(DRV, "u", id, 8), KP_ENAMETOOLONG);
	CHECK_EQ(kp_cdi_claim_spec_name("Bad_Driver", "u", id, sizeof(id)),
	    KP_EINVAL);
}

int
main(void)
{
	if (kp_options_new(&o) != 0 || kp_driver_name(o, DRV) != 0 ||
	    kp_cdi_allow_device_prefix(o, "/dev/vfio/") != 0 ||
	    kp_cdi_allow_mount_prefix(o, "/opt/drv") != 0 ||
	    kp_cdi_allow_hook(o, "/usr/libexec/drv-hook") != 0 ||
	    kp_cdi_allow_device(o, "/dev/null") != 0 ||
	    kp_cdi_allow_device_number(o, "/dev/kp-absent[0-9]*", 'c', 240,
	    0, 15) != 0)
		return (1);
	test_basic();
	test_versions();
	test_edits();
	test_numbers();
	test_ids();
	kp_options_free(o);
	return (test_done("test_cdi_build"));
}
