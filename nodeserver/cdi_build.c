/*
 * cdi_build.c - the CDI spec builder of the public header (kp_cdi_*):
 * a jansson tree shaped like the CDI module's specs-go types, checked
 * field by field as it is built (base/cdi.c names the rules), dumped
 * with the lowest cdiVersion its fields require. The supervisor checks
 * the result again before writing it (supervisor/cdi_check.c): this side
 * gives the driver an early, precise message; that side is the boundary.
 *
 * Runs in: any process (pure), the nodeserver for kp_cdi_builder_write.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/cdi.h"
#include "base/names.h"
#include "base/utf8.h"
#include "kubeletplugin.h"
#include "nodeserver/journal.h"

#define CDI_BUILDER_MAGIC	0x6b706364u	/* "kpcd" */
#define CDI_MAX_DEVNAME		128
#define CDI_MAX_PATHLEN		4096

struct kp_cdi_builder {
	uint32_t	 magic;
	json_t		*root;		/* cdiVersion, kind, devices */
	json_t		*edits;		/* the spec's own; NULL: none */
	char		 err[KP_ERROR_SIZE];
};

static int	bfail(const struct kp_cdi_builder *, int, const char *, ...)
		    KP_PRINTF(3, 4);

static int
bfail(const struct kp_cdi_builder *cb, int code, const char *fmt, ...)
{
	struct kp_cdi_builder	*b = (struct kp_cdi_builder *)cb;
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	return (code);
}

static int
valid(const struct kp_cdi_builder *b)
{
	return (b != NULL && b->magic == CDI_BUILDER_MAGIC);
}

int
kp_cdi_builder_new(const char *kind, struct kp_cdi_builder **out)
{
	struct kp_cdi_builder	*b;

	if (out == NULL)
		return (KP_EINVAL);
	*out = NULL;
	if (kind == NULL || !cdi_kind_ok(kind) || strlen(kind) > 253 + 64)
		return (KP_EINVAL);
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return (KP_ENOMEM);
	b->magic = CDI_BUILDER_MAGIC;
	b->root = json_pack("{s:s, s:s, s:[]}", "cdiVersion", "0.3.0", "kind",
	    kind, "devices");
	if (b->root == NULL) {
		free(b);
		return (KP_ENOMEM);
	}
	*out = b;
	return (0);
}

void
kp_cdi_builder_free(struct kp_cdi_builder *b)
{
	if (!valid(b))
		return;
	json_decref(b->root);
	json_decref(b->edits);
	b->magic = 0;
	free(b);
}

const char *
kp_cdi_builder_last_error(const struct kp_cdi_builder *b)
{
	return (valid(b) ? b->err : "");
}

static json_t *
find_device(const struct kp_cdi_builder *b, const char *name)
{
	json_t	*d;
	size_t	 i;

	json_array_foreach(json_object_get(b->root, "devices"), i, d)
		if (strcmp(json_string_value(json_object_get(d, "name")),
		    name) == 0)
			return (d);
	return (NULL);
}

int
kp_cdi_add_device(struct kp_cdi_builder *b, const char *name)
{
	json_t	*d;

	if (!valid(b))
		return (KP_EINVAL);
	b->err[0] = '\0';
	if (name == NULL)
		return (bfail(b, KP_EINVAL, "device name: NULL"));
	if (strlen(name) > CDI_MAX_DEVNAME ||
	    !cdi_device_name_ok(name, strlen(name)))
		return (bfail(b, KP_EINVAL, "device name \"%.64s\": not %s, "
		    "at most %d bytes", name, CDI_R_DEVICE, CDI_MAX_DEVNAME));
	if (find_device(b, name) != NULL)
		return (bfail(b, KP_EINVAL, "device name \"%s\": added "
		    "before (names are unique in a spec)", name));
	if ((d = json_pack("{s:s, s:{}}", "name", name, "containerEdits")) ==
	    NULL || json_array_append_new(json_object_get(b->root, "devices"),
	    d) != 0)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	return (0);
}

/* The containerEdits of device (NULL: the spec's), or NULL with err. */
static json_t *
edits_of(struct kp_cdi_builder *b, const char *device)
{
	json_t	*d;

	b->err[0] = '\0';
	if (device == NULL) {
		if (b->edits == NULL && (b->edits = json_object()) == NULL)
			(void)bfail(b, KP_ENOMEM, "out of memory");
		return (b->edits);
	}
	if ((d = find_device(b, device)) == NULL) {
		(void)bfail(b, KP_EINVAL, "device \"%.64s\": not added "
		    "(kp_cdi_add_device first)", device);
		return (NULL);
	}
	return (json_object_get(d, "containerEdits"));
}

/* Append v to e[key] (an array made on first use); v is stolen. */
static int
append(struct kp_cdi_builder *b, json_t *e, const char *key, json_t *v)
{
	json_t	*a;

	if (v == NULL)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	if ((a = json_object_get(e, key)) == NULL) {
		if ((a = json_array()) == NULL ||
		    json_object_set_new(e, key, a) != 0) {
			json_decref(v);
			return (bfail(b, KP_ENOMEM, "out of memory"));
		}
	}
	if (json_array_append_new(a, v) != 0)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	return (0);
}

/*
 * The caller's struct (size ours, first released with min bytes) read
 * with its struct_size: what fits, the rest zero; bytes beyond ours must
 * be zero (kubeletplugin.h, "How this data grows").
 */
static int
abi_read(struct kp_cdi_builder *b, const char *what, const void *in,
    void *out, size_t ours, size_t min)
{
	const unsigned char	*p = in;
	size_t			 sz, k;

	memset(out, 0, ours);
	if (in == NULL)
		return (bfail(b, KP_EINVAL, "%s: NULL", what));
	sz = *(const size_t *)in;
	if (sz == 0)
		return (bfail(b, KP_EINVAL, "%s: struct_size is 0: initialise "
		    "with its KP_*_INIT macro", what));
	if (sz < min)
		return (bfail(b, KP_EINVAL, "%s: struct_size %zu is smaller "
		    "than the first release's %zu", what, sz, min));
	for (k = ours; k < sz; k++)
		if (p[k] != 0)
			return (bfail(b, KP_EINVAL, "%s: a field this library "
			    "does not know is set (byte %zu of struct_size "
			    "%zu): it needs a newer libkubeletplugin", what, k,
			    sz));
	memcpy(out, in, sz < ours ? sz : ours);
	return (0);
}

static int
path_ok(struct kp_cdi_builder *b, const char *what, const char *p, int need)
{
	if (p == NULL)
		return (need ? bfail(b, KP_EINVAL, "%s: required", what) : 0);
	if (p[0] != '/' || strlen(p) > CDI_MAX_PATHLEN || !utf8_valid(p))
		return (bfail(b, KP_EINVAL, "%s \"%.64s\": not an absolute "
		    "UTF-8 path of at most %d bytes", what, p,
		    CDI_MAX_PATHLEN));
	return (0);
}

/* A JSON array of n strings; NULL out of memory (also journal_dra.c). */
json_t *
cdi_json_strings(const char *const *v, size_t n)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) != 0) {
			json_decref(a);
			return (NULL);
		}
	return (a);
}

static int
strings_ok(struct kp_cdi_builder *b, const char *what,
    const char *const *v, size_t n)
{
	size_t	 i;

	if (n > 0 && v == NULL)
		return (bfail(b, KP_EINVAL, "%s: NULL with a count of %zu",
		    what, n));
	for (i = 0; i < n; i++)
		if (v[i] == NULL || !utf8_valid(v[i]))
			return (bfail(b, KP_EINVAL, "%s[%zu]: NULL or not "
			    "UTF-8", what, i));
	return (0);
}

int
kp_cdi_add_env(struct kp_cdi_builder *b, const char *device, const char *env)
{
	json_t	*e;

	if (!valid(b))
		return (KP_EINVAL);
	if ((e = edits_of(b, device)) == NULL)
		return (b->err[0] ? KP_EINVAL : KP_ENOMEM);
	if (env == NULL || !utf8_valid(env) || !cdi_env_ok(env))
		return (bfail(b, KP_EINVAL, "env \"%.64s\": not NAME=value "
		    "with NAME a letter or '_' then letters, digits or '_'",
		    env != NULL && utf8_valid(env) ? env : "(invalid)"));
	return (append(b, e, "env", json_string(env)));
}

/* struct kp_cdi_device_node as first released: without type, major, minor. */
#define NODE_V1	(offsetof(struct kp_cdi_device_node, file_mode) + \
	sizeof(unsigned int))

/*
 * type, major and minor. The runtime uses the spec's numbers only with a
 * type and a major (else it stats the host's node and overwrites them),
 * and a missing minor then means 0: so a major needs a type, a minor a
 * major (cdi_node.c checks what the runtime will use).
 */
static int
numbers_ok(struct kp_cdi_builder *b, const struct kp_cdi_device_node *n)
{
	if (n->type != 0 && n->type != 'c' && n->type != 'b')
		return (bfail(b, KP_EINVAL, "device node type %d: not 0, 'c' "
		    "(character) or 'b' (block)", n->type));
	if (n->major > CDI_MAX_MAJOR)
		return (bfail(b, KP_EINVAL, "device node major %u: above %d "
		    "(the kernel's 12 bits)", n->major, CDI_MAX_MAJOR));
	if (n->minor > KP_CDI_MINOR_MAX)
		return (bfail(b, KP_EINVAL, "device node minor %u: above %u "
		    "(the kernel's 20 bits)", n->minor, KP_CDI_MINOR_MAX));
	if (n->major != 0 && n->type == 0)
		return (bfail(b, KP_EINVAL, "device node major %u: needs a "
		    "type ('c' or 'b'; without one the runtime takes the "
		    "host's node)", n->major));
	if (n->minor != 0 && n->major == 0)
		return (bfail(b, KP_EINVAL, "device node minor %u: needs a "
		    "major (major 0 is unset: the runtime takes the host's "
		    "numbers)", n->minor));
	return (0);
}

int
kp_cdi_add_device_node(struct kp_cdi_builder *b, const char *device,
    const struct kp_cdi_device_node *node)
{
	struct kp_cdi_device_node	 n;
	json_t				*e, *j;
	int				 r;

	if (!valid(b))
		return (KP_EINVAL);
	if ((e = edits_of(b, device)) == NULL)
		return (b->err[0] ? KP_EINVAL : KP_ENOMEM);
	if ((r = abi_read(b, "device node", node, &n, sizeof(n),
	    NODE_V1)) != 0 ||
	    (r = path_ok(b, "device node path", n.path, 1)) != 0 ||
	    (r = path_ok(b, "device node host_path", n.host_path, 0)) != 0)
		return (r);
	if (n.permissions != NULL && (n.permissions[0] == '\0' ||
	    strlen(n.permissions) > 3 ||
	    strspn(n.permissions, "rwm") != strlen(n.permissions)))
		return (bfail(b, KP_EINVAL, "device node permissions: not 1 "
		    "to 3 of 'r', 'w', 'm'"));
	if (n.file_mode > 0777)
		return (bfail(b, KP_EINVAL, "device node file_mode %o: not "
		    "a permission mode (at most 0777)", n.file_mode));
	if ((r = numbers_ok(b, &n)) != 0)
		return (r);
	if ((j = json_pack("{s:s}", "path", n.path)) == NULL)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	if ((n.host_path != NULL && json_object_set_new(j, "hostPath",
	    json_string(n.host_path)) != 0) ||
	    (n.permissions != NULL && json_object_set_new(j, "permissions",
	    json_string(n.permissions)) != 0) ||
	    (n.file_mode != 0 && json_object_set_new(j, "fileMode",
	    json_integer(n.file_mode)) != 0) ||
	    (n.type != 0 && json_object_set_new(j, "type",
	    json_string(n.type == 'c' ? "c" : "b")) != 0) ||
	    (n.major != 0 && (json_object_set_new(j, "major",
	    json_integer(n.major)) != 0 || json_object_set_new(j, "minor",
	    json_integer(n.minor)) != 0))) {
		json_decref(j);
		return (bfail(b, KP_ENOMEM, "out of memory"));
	}
	return (append(b, e, "deviceNodes", j));
}

int
kp_cdi_add_mount(struct kp_cdi_builder *b, const char *device,
    const struct kp_cdi_mount *mount)
{
	struct kp_cdi_mount	 m;
	json_t			*e, *j;
	int			 r;

	if (!valid(b))
		return (KP_EINVAL);
	if ((e = edits_of(b, device)) == NULL)
		return (b->err[0] ? KP_EINVAL : KP_ENOMEM);
	if ((r = abi_read(b, "mount", mount, &m, sizeof(m),
	    sizeof(m))) != 0 ||
	    (r = path_ok(b, "mount host_path", m.host_path, 1)) != 0 ||
	    (r = path_ok(b, "mount container_path", m.container_path,
	    1)) != 0 ||
	    (r = strings_ok(b, "mount options", m.options, m.n_options)) != 0)
		return (r);
	if (m.type != NULL && strcmp(m.type, "bind") != 0)
		return (bfail(b, KP_EINVAL, "mount type \"%.32s\": not "
		    "\"bind\" (the broker writes bind mounts only)",
		    utf8_valid(m.type) ? m.type : "?"));
	j = json_pack("{s:s, s:s}", "hostPath", m.host_path, "containerPath",
	    m.container_path);
	if (j == NULL || (m.type != NULL && json_object_set_new(j, "type",
	    json_string(m.type)) != 0) || (m.n_options > 0 &&
	    json_object_set_new(j, "options", cdi_json_strings(m.options,
	    m.n_options)) != 0)) {
		json_decref(j);
		return (bfail(b, KP_ENOMEM, "out of memory"));
	}
	return (append(b, e, "mounts", j));
}

int
kp_cdi_add_hook(struct kp_cdi_builder *b, const char *device,
    const struct kp_cdi_hook *hook)
{
	static const char *const names[] = { "prestart", "createRuntime",
	    "createContainer", "startContainer", "poststart", "poststop",
	    NULL };
	struct kp_cdi_hook	 h;
	json_t			*e, *j;
	size_t			 i;
	int			 r;

	if (!valid(b))
		return (KP_EINVAL);
	if ((e = edits_of(b, device)) == NULL)
		return (b->err[0] ? KP_EINVAL : KP_ENOMEM);
	if ((r = abi_read(b, "hook", hook, &h, sizeof(h), sizeof(h))) != 0 ||
	    (r = path_ok(b, "hook path", h.path, 1)) != 0 ||
	    (r = strings_ok(b, "hook args", h.args, h.n_args)) != 0)
		return (r);
	for (i = 0; names[i] != NULL; i++)
		if (h.hook_name != NULL && strcmp(h.hook_name, names[i]) == 0)
			break;
	if (names[i] == NULL)
		return (bfail(b, KP_EINVAL, "hook hook_name: not prestart, "
		    "createRuntime, createContainer, startContainer, "
		    "poststart or poststop"));
	if (h.timeout_s < 0)
		return (bfail(b, KP_EINVAL, "hook timeout_s %d: negative",
		    h.timeout_s));
	j = json_pack("{s:s, s:s}", "hookName", h.hook_name, "path", h.path);
	if (j == NULL || (h.n_args > 0 && json_object_set_new(j, "args",
	    cdi_json_strings(h.args, h.n_args)) != 0) || (h.timeout_s > 0 &&
	    json_object_set_new(j, "timeout", json_integer(h.timeout_s)) !=
	    0)) {
		json_decref(j);
		return (bfail(b, KP_ENOMEM, "out of memory"));
	}
	return (append(b, e, "hooks", j));
}

int
kp_cdi_add_annotation(struct kp_cdi_builder *b, const char *device,
    const char *key, const char *value)
{
	json_t	*owner, *a;

	if (!valid(b))
		return (KP_EINVAL);
	b->err[0] = '\0';
	owner = device == NULL ? b->root : find_device(b, device);
	if (owner == NULL)
		return (bfail(b, KP_EINVAL, "device \"%.64s\": not added "
		    "(kp_cdi_add_device first)", device));
	if (key == NULL || !cdi_annotation_key_ok(key))
		return (bfail(b, KP_EINVAL, "annotation key: not a qualified "
		    "name ([DNS subdomain/]1 to 63 letters, digits, '-', '_' "
		    "or '.', starting and ending with a letter or digit)"));
	if (value == NULL || !utf8_valid(value))
		return (bfail(b, KP_EINVAL, "annotation %s: value NULL or "
		    "not UTF-8", key));
	if ((a = json_object_get(owner, "annotations")) == NULL &&
	    ((a = json_object()) == NULL ||
	    json_object_set_new(owner, "annotations", a) != 0))
		return (bfail(b, KP_ENOMEM, "out of memory"));
	if (json_object_set_new(a, key, json_string(value)) != 0)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	return (0);
}

/* The spec as it is written: the spec's edits only when it has any. */
static json_t *
spec_tree(const struct kp_cdi_builder *b)
{
	json_t	*t;

	if ((t = json_deep_copy(b->root)) == NULL)
		return (NULL);
	if (b->edits != NULL && json_object_size(b->edits) > 0 &&
	    json_object_set(t, "containerEdits", b->edits) != 0) {
		json_decref(t);
		return (NULL);
	}
	if (json_object_set_new(t, "cdiVersion",
	    json_string(cdi_min_version(t))) != 0) {
		json_decref(t);
		return (NULL);
	}
	return (t);
}

const char *
kp_cdi_builder_version(const struct kp_cdi_builder *b)
{
	const char	*v;
	json_t		*t;

	if (!valid(b) || (t = spec_tree(b)) == NULL)
		return ("");
	v = cdi_min_version(t);	/* a static string */
	json_decref(t);
	return (v);
}

int
kp_cdi_builder_json(const struct kp_cdi_builder *b, char **out)
{
	json_t	*t;

	if (out != NULL)
		*out = NULL;
	if (!valid(b) || out == NULL)
		return (KP_EINVAL);
	if (json_array_size(json_object_get(b->root, "devices")) == 0)
		return (bfail(b, KP_EINVAL, "devices: none added (a spec "
		    "defines at least one)"));
	if ((t = spec_tree(b)) == NULL)
		return (bfail(b, KP_ENOMEM, "out of memory"));
	*out = json_dumps(t, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(t);
	return (*out != NULL ? 0 : bfail(b, KP_ENOMEM, "out of memory"));
}

int
kp_cdi_builder_write(const struct kp_cdi_builder *b, const char *name,
    char *err, size_t errsize)
{
	char	*text;
	int	 r;

	if ((r = kp_cdi_builder_json(b, &text)) != 0) {
		if (err != NULL && errsize > 0)
			snprintf(err, errsize, "CDI spec %.64s: %s",
			    name != NULL ? name : "(NULL)",
			    kp_cdi_builder_last_error(b));
		return (r);
	}
	r = kp_cdi_spec_write(name, text, strlen(text), err, errsize);
	free(text);
	return (r);
}

int
kp_cdi_device_id(const char *kind, const char *name, char *out, size_t size)
{
	int	 n;

	if (kind == NULL || name == NULL || out == NULL || size == 0 ||
	    !cdi_kind_ok(kind) || !cdi_device_name_ok(name, strlen(name)))
		return (KP_EINVAL);
	n = snprintf(out, size, "%s=%s", kind, name);
	if (n < 0 || (size_t)n >= size || n > CDI_MAX_ID) {
		out[0] = '\0';
		return (KP_ENAMETOOLONG);
	}
	return (0);
}

int
kp_cdi_claim_spec_name(const char *driver, const char *uid, char *out,
    size_t size)
{
	int	 n;

	if (driver == NULL || uid == NULL || out == NULL || size == 0 ||
	    !name_is_subdomain(driver, strlen(driver)) ||
	    !name_is_claim_uid(uid, strlen(uid)))
		return (KP_EINVAL);
	n = snprintf(out, size, "%s_claim-%s.json", driver, uid);
	if (n < 0 || (size_t)n >= size ||
	    !name_is_cdi_spec(driver, out, (size_t)n)) {
		out[0] = '\0';
		return (KP_ENAMETOOLONG);
	}
	return (0);
}
