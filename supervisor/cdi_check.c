/*
 * cdi_check.c - what a CDI spec from the nodeserver may say before the
 * supervisor writes it into the shared CDI directory (files.c). The
 * container runtime applies a spec as root on the host: its kind picks
 * whose devices it defines, a device node or a mount hands a host file to
 * the container, a hook runs a host program as root. The nodeserver runs
 * the driver's hooks and may be hostile, so only what the driver declared
 * in its own process before kp_start() passes (kp_cdi_allow_*(), struct
 * policy_opts): the kind "<driver>/<class>", env, device nodes the
 * driver's rules name (cdi_node.c: by path and by the host's node), bind
 * mounts beneath the declared prefixes, hooks running a declared program.
 * Every other field of CDI 0.3.0 to 0.8.0 and every unknown one is
 * refused; each refusal names the JSON path and the rule.
 *
 * The input is hostile JSON parsed as root: at most KP_IPC_MAX_CDI_CONTENT
 * bytes (ipc/check.c), then a lexical pass bounds nesting, containers and
 * values before jansson allocates anything (it would otherwise build up
 * to ~100 bytes of tree per input byte and recurse 2048 deep), then
 * json_loadb with duplicate keys refused and nothing after the value.
 *
 * Runs in: the broker (a pure function but for cdi_node.c's lstat(2) of
 * device nodes; tests/unit/test_cdi_check.c, tests/fuzz/fuzz_cdi_check.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/cdi.h"
#include "base/names.h"
#include "supervisor/supervisor.h"

#define CDI_MAX_DEPTH		8	/* the deepest: hooks[].args[] is 7 */
#define CDI_MAX_CONTAINERS	8192	/* objects and arrays */
#define CDI_MAX_COMMAS		32768	/* about the number of values */
#define CDI_MAX_DEVICES		1024
#define CDI_MAX_ENV		256
#define CDI_MAX_NODES		256
#define CDI_MAX_MOUNTS		64
#define CDI_MAX_HOOKS		16
#define CDI_MAX_ARGS		64
#define CDI_MAX_OPTIONS		32
#define CDI_MAX_ANNOTATIONS	64
#define CDI_MAX_STR		4096	/* env, args */
#define CDI_MAX_OPTION		128
#define CDI_MAX_DEVNAME		128
#define CDI_MAX_CLASS		63
#define CDI_MAX_PATH		255
#define CDI_AT			160	/* a JSON path as messages show it */

#define R_DEVNAME	"not a CDI device name (1 to 128 letters, digits, " \
			"'_', '-', '.' or ':', starting and ending with a " \
			"letter or digit)"
#define R_CLASS		"class not 1 to 63 letters, digits, '_', '.' or " \
			"'-' starting with a letter and ending with a " \
			"letter or digit"
#define R_ENV		"not NAME=value with NAME a letter or '_' then " \
			"letters, digits or '_'"
#define R_ANNOTATION	"key not a qualified name ([DNS subdomain/]1 to " \
			"63 letters, digits, '-', '_' or '.', starting and " \
			"ending with a letter or digit)"

struct walk {
	const struct policy_opts	*po;
	const char			*driver;
	char				*err;
	size_t				 errsize;
};

static const char *const versions[] = {
	"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", NULL
};

/* OCI runtime-spec hook names, as CDI takes them. */
/*
 * Mount options a spec may ask for: bind mounts, read-only or not,
 * restricted, with private or slave propagation. Not "shared"/"rshared"
 * (mounts made in the container would reach the host), "suid", "dev",
 * "exec" or file-system data: the runtime passes what it does not know
 * on as mount data.
 */
static const char *const mount_options[] = {
	"bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec",
	"private", "rprivate", "slave", "rslave", NULL
};

static const char *const hook_names[] = {
	"prestart", "createRuntime", "createContainer", "startContainer",
	"poststart", "poststop", NULL
};

static int	fail(struct walk *, const char *, ...) KP_PRINTF(2, 3);

static int
fail(struct walk *w, const char *fmt, ...)
{
	va_list	 ap;

	if (w->errsize > 0) {
		va_start(ap, fmt);
		vsnprintf(w->err, w->errsize, fmt, ap);
		va_end(ap);
	}
	return (KP_EINVAL);
}

/* A string as messages show it: 64 printable ASCII bytes at most. */
const char *
cdi_shown(const char *s, char *buf, size_t size)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i < 64 && i + 4 < size; i++)
		buf[i] = (s[i] < 0x20 || s[i] >= 0x7f) ? '?' : s[i];
	if (s[i] != '\0' && i + 4 <= size) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return (buf);
}

/* at.key, or key at the top. */
static const char *
field(char *buf, const char *at, const char *key)
{
	char	 b[80];

	/* Paths are short; a cut one still names the place. */
	if (snprintf(buf, CDI_AT, "%s%s%s", at, at[0] != '\0' ? "." : "",
	    cdi_shown(key, b, sizeof(b))) < 0)
		buf[0] = '\0';
	return (buf);
}

static const char *
elem(char *buf, const char *at, size_t i)
{
	if (snprintf(buf, CDI_AT, "%s[%zu]", at, i) < 0)
		buf[0] = '\0';
	return (buf);
}

static int
in_list(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return (1);
	return (0);
}

/*
 * Before jansson: nesting, containers and commas counted on the bytes,
 * strings skipped (the input is UTF-8 without NUL, files.c).
 */
static int
scan(struct walk *w, const char *j, size_t len)
{
	size_t	 i, depth = 0, boxes = 0, commas = 0;
	int	 str = 0;

	for (i = 0; i < len; i++) {
		if (str) {
			if (j[i] == '\\')
				i++;
			else if (j[i] == '"')
				str = 0;
			continue;
		}
		switch (j[i]) {
		case '"':
			str = 1;
			break;
		case '{':
		case '[':
			if (++depth > CDI_MAX_DEPTH)
				return (fail(w, "nested deeper than %d (byte "
				    "%zu)", CDI_MAX_DEPTH, i));
			if (++boxes > CDI_MAX_CONTAINERS)
				return (fail(w, "more than %d objects and "
				    "arrays", CDI_MAX_CONTAINERS));
			break;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (++commas > CDI_MAX_COMMAS)
				return (fail(w, "more than %d values",
				    CDI_MAX_COMMAS));
			break;
		}
	}
	return (0);
}

static int
want_string(struct walk *w, const char *at, const json_t *v, size_t max,
    const char **out)
{
	if (!json_is_string(v))
		return (fail(w, "%s: not a string", at));
	if (json_string_length(v) > max)
		return (fail(w, "%s: longer than %zu bytes", at, max));
	*out = json_string_value(v);
	return (0);
}

static int
want_array(struct walk *w, const char *at, const json_t *v, size_t max)
{
	if (!json_is_array(v))
		return (fail(w, "%s: not an array", at));
	if (json_array_size(v) > max)
		return (fail(w, "%s: more than %zu entries", at, max));
	return (0);
}

static int
want_object(struct walk *w, const char *at, const json_t *v)
{
	if (!json_is_object(v))
		return (fail(w, "%s: not an object", at));
	return (0);
}

static int
want_int(struct walk *w, const char *at, const json_t *v, json_int_t min,
    json_int_t max)
{
	if (!json_is_integer(v))
		return (fail(w, "%s: not an integer", at));
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return (fail(w, "%s %lld: not %lld to %lld", at,
		    (long long)json_integer_value(v), (long long)min,
		    (long long)max));
	return (0);
}

/*
 * A path as it names exactly one file: absolute, at most 255 bytes, no
 * empty, "." or ".." component, no trailing '/', no control bytes. "/"
 * passes (no prefix can hold it).
 */
static int
want_path(struct walk *w, const char *at, const json_t *v, const char **out)
{
	const char	*p, *c;
	char		 b[80];
	size_t		 n;
	int		 r;

	if ((r = want_string(w, at, v, CDI_MAX_PATH, out)) != 0)
		return (r);
	p = *out;
	if (p[0] != '/')
		return (fail(w, "%s \"%s\": not an absolute path", at,
		    cdi_shown(p, b, sizeof(b))));
	for (c = p; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return (fail(w, "%s \"%s\": contains a control "
			    "character", at, cdi_shown(p, b, sizeof(b))));
	if (p[1] == '\0')
		return (0);
	for (c = p; *c == '/'; c += n) {
		c++;
		n = strcspn(c, "/");
		if (n == 0)
			return (fail(w, "%s \"%s\": has an empty component or "
			    "a trailing '/'", at, cdi_shown(p, b, sizeof(b))));
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' &&
		    c[1] == '.'))
			return (fail(w, "%s \"%s\": has a '.' or '..' "
			    "component", at, cdi_shown(p, b, sizeof(b))));
	}
	return (0);
}

/* p lies beneath one of the n prefixes (or is one, when self). */
int
cdi_beneath(const char (*list)[POL_PATH_MAX], size_t n, const char *p,
    int self)
{
	size_t	 i, k;

	for (i = 0; i < n; i++) {
		k = strlen(list[i]);
		if (strncmp(p, list[i], k) == 0 && ((p[k] == '/' &&
		    p[k + 1] != '\0') || (self && p[k] == '\0')))
			return (1);
	}
	return (0);
}

/* CDI's device name rule (base/cdi.c), bounded. */
static int
devname_ok(const char *s)
{
	size_t	 n = strlen(s);

	return (n <= CDI_MAX_DEVNAME && cdi_device_name_ok(s, n));
}

/* CDI's class rule (parser.go ValidateClassName), bounded. */
static int
class_ok(const char *s)
{
	size_t	 n = strlen(s);

	return (n <= CDI_MAX_CLASS && cdi_vendor_ok(s, n));
}

static int
check_annotations(struct walk *w, const char *at, const json_t *v)
{
	const char	*key, *s;
	json_t		*val;
	char		 a[CDI_AT], b[80];
	int		 r;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	if (json_object_size(v) > CDI_MAX_ANNOTATIONS)
		return (fail(w, "%s: more than %d entries", at,
		    CDI_MAX_ANNOTATIONS));
	json_object_foreach((json_t *)v, key, val) {
		if (snprintf(a, sizeof(a), "%s[\"%s\"]", at,
		    cdi_shown(key, b, sizeof(b))) < 0)
			a[0] = '\0';
		if (!cdi_annotation_key_ok(key))
			return (fail(w, "%s: %s", a, R_ANNOTATION));
		if ((r = want_string(w, a, val, KP_IPC_MAX_CDI_CONTENT,
		    &s)) != 0)
			return (r);
	}
	return (0);
}

/* An array of NAME=value strings (containerEdits.env, hooks[].env). */
static int
check_env(struct walk *w, const char *at, const json_t *v)
{
	const char	*s;
	char		 a[CDI_AT], b[80];
	size_t		 i;
	int		 r;

	if ((r = want_array(w, at, v, CDI_MAX_ENV)) != 0)
		return (r);
	for (i = 0; i < json_array_size(v); i++) {
		elem(a, at, i);
		if ((r = want_string(w, a, json_array_get(v, i), CDI_MAX_STR,
		    &s)) != 0)
			return (r);
		if (!cdi_env_ok(s))
			return (fail(w, "%s \"%s\": %s", a,
			    cdi_shown(s, b, sizeof(b)), R_ENV));
	}
	return (0);
}

static int
check_strings(struct walk *w, const char *at, const json_t *v, size_t max,
    size_t maxlen)
{
	const char	*s;
	char		 a[CDI_AT];
	size_t		 i;
	int		 r;

	if ((r = want_array(w, at, v, max)) != 0)
		return (r);
	for (i = 0; i < json_array_size(v); i++)
		if ((r = want_string(w, elem(a, at, i), json_array_get(v, i),
		    maxlen, &s)) != 0)
			return (r);
	return (0);
}

/*
 * A device node: its fields here, then its names and numbers against the
 * driver's rules and the host's node (cdi_node.c).
 */
static int
check_node(struct walk *w, const char *at, const json_t *v)
{
	struct cdi_node	 n = { NULL, NULL, 0, -1, -1 };
	const char	*key, *s;
	json_t		*val;
	char		 a[CDI_AT], b[80];
	int		 r;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	json_object_foreach((json_t *)v, key, val) {
		field(a, at, key);
		if (strcmp(key, "path") == 0)
			r = want_path(w, a, val, &n.path);
		else if (strcmp(key, "hostPath") == 0)
			r = want_path(w, a, val, &n.host);
		else if (strcmp(key, "type") == 0) {
			if ((r = want_string(w, a, val, 1, &s)) == 0 &&
			    strcmp(s, "c") != 0 && strcmp(s, "b") != 0)
				r = fail(w, "%s \"%s\": not \"c\" or \"b\" (a "
				    "character or block device)", a,
				    cdi_shown(s, b, sizeof(b)));
			n.type = r == 0 ? s[0] : 0;
		} else if (strcmp(key, "major") == 0) {
			if ((r = want_int(w, a, val, 0, CDI_MAX_MAJOR)) == 0)
				n.major = json_integer_value(val);
		} else if (strcmp(key, "minor") == 0) {
			if ((r = want_int(w, a, val, 0, KP_CDI_MINOR_MAX)) == 0)
				n.minor = json_integer_value(val);
		} else if (strcmp(key, "fileMode") == 0)
			r = want_int(w, a, val, 0, 0777);
		else if (strcmp(key, "permissions") == 0) {
			if ((r = want_string(w, a, val, 3, &s)) == 0 &&
			    (s[0] == '\0' || strspn(s, "rwm") != strlen(s)))
				r = fail(w, "%s \"%s\": not 1 to 3 of 'r', "
				    "'w', 'm'", a, cdi_shown(s, b, sizeof(b)));
		} else if (strcmp(key, "uid") == 0 || strcmp(key, "gid") == 0)
			r = want_int(w, a, val, 0, 4294967294LL);
		else
			r = fail(w, "%s: unknown field of a device node", a);
		if (r != 0)
			return (r);
	}
	if (n.path == NULL)
		return (fail(w, "%s.path: missing", at));
	return (cdi_node_check(w->po, at, &n, w->err, w->errsize));
}

static int
check_mount(struct walk *w, const char *at, const json_t *v)
{
	const char	*key, *s;
	json_t		*val;
	char		 a[CDI_AT], e[CDI_AT], b[80];
	size_t		 i;
	int		 r, host = 0, cont = 0;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	json_object_foreach((json_t *)v, key, val) {
		field(a, at, key);
		if (strcmp(key, "hostPath") == 0) {
			host = 1;
			if ((r = want_path(w, a, val, &s)) == 0 &&
			    !cdi_beneath(w->po->cdi_mnt, w->po->n_cdi_mnt, s,
			    1))
				r = fail(w, "%s \"%s\": not beneath a declared "
				    "mount prefix "
				    "(kp_cdi_allow_mount_prefix%s)",
				    a, cdi_shown(s, b, sizeof(b)),
				    w->po->n_cdi_mnt == 0 ?
				    ": none declared" : "");
		} else if (strcmp(key, "containerPath") == 0) {
			cont = 1;
			r = want_path(w, a, val, &s);
		} else if (strcmp(key, "type") == 0) {
			if ((r = want_string(w, a, val, CDI_MAX_OPTION,
			    &s)) == 0 && strcmp(s, "bind") != 0)
				r = fail(w, "%s \"%s\": not \"bind\" (other "
				    "file systems are not brokered)", a,
				    cdi_shown(s, b, sizeof(b)));
		} else if (strcmp(key, "options") == 0) {
			if ((r = check_strings(w, a, val, CDI_MAX_OPTIONS,
			    CDI_MAX_OPTION)) != 0)
				return (r);
			for (i = 0; i < json_array_size(val); i++) {
				s = json_string_value(json_array_get(val, i));
				if (!in_list(mount_options, s)) {
					r = fail(w, "%s \"%s\": not an allowed "
					    "mount option (bind, rbind, ro, rw, "
					    "nosuid, nodev, noexec, private, "
					    "rprivate, slave, rslave)",
					    elem(e, a, i), cdi_shown(s, b,
					    sizeof(b)));
					break;
				}
			}
		} else
			r = fail(w, "%s: unknown field of a mount", a);
		if (r != 0)
			return (r);
	}
	if (!host || !cont)
		return (fail(w, "%s.%s: missing", at, host ? "containerPath" :
		    "hostPath"));
	return (0);
}

static int
check_hook(struct walk *w, const char *at, const json_t *v)
{
	const struct policy_opts	*po = w->po;
	const char			*key, *s;
	json_t				*val;
	char				 a[CDI_AT], b[80];
	size_t				 i;
	int				 r, name = 0, path = 0;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	json_object_foreach((json_t *)v, key, val) {
		field(a, at, key);
		if (strcmp(key, "hookName") == 0) {
			name = 1;
			if ((r = want_string(w, a, val, 64, &s)) == 0 &&
			    !in_list(hook_names, s))
				r = fail(w, "%s \"%s\": not an OCI hook name "
				    "(prestart, createRuntime, "
				    "createContainer, startContainer, "
				    "poststart, poststop)", a,
				    cdi_shown(s, b, sizeof(b)));
		} else if (strcmp(key, "path") == 0) {
			path = 1;
			if ((r = want_path(w, a, val, &s)) != 0)
				return (r);
			for (i = 0; i < po->n_cdi_hook; i++)
				if (strcmp(po->cdi_hook[i], s) == 0)
					break;
			if (i == po->n_cdi_hook)
				r = fail(w, "%s \"%s\": not a declared hook "
				    "(kp_cdi_allow_hook%s)", a,
				    cdi_shown(s, b, sizeof(b)),
				    po->n_cdi_hook == 0 ? ": none declared" :
				    "");
		} else if (strcmp(key, "args") == 0)
			r = check_strings(w, a, val, CDI_MAX_ARGS, CDI_MAX_STR);
		else if (strcmp(key, "env") == 0)
			/* The runtime runs the hook as root on the host with
			 * exactly this environment: LD_PRELOAD, BASH_ENV and
			 * the like act before the program's first line, so
			 * no list of bad names is safe enough. */
			r = fail(w, "%s: a hook's environment is not brokered "
			    "(it runs as root on the host)", a);
		else if (strcmp(key, "timeout") == 0)
			r = want_int(w, a, val, 1, 2147483647);
		else
			r = fail(w, "%s: unknown field of a hook", a);
		if (r != 0)
			return (r);
	}
	if (!name || !path)
		return (fail(w, "%s.%s: missing", at, name ? "path" :
		    "hookName"));
	return (0);
}

/* A list of n objects, each checked by fn. */
static int
check_list(struct walk *w, const char *at, const json_t *v, size_t max,
    int (*fn)(struct walk *, const char *, const json_t *))
{
	char	 a[CDI_AT];
	size_t	 i;
	int	 r;

	if ((r = want_array(w, at, v, max)) != 0)
		return (r);
	for (i = 0; i < json_array_size(v); i++)
		if ((r = fn(w, elem(a, at, i), json_array_get(v, i))) != 0)
			return (r);
	return (0);
}

static int
check_edits(struct walk *w, const char *at, const json_t *v)
{
	const char	*key;
	json_t		*val;
	char		 a[CDI_AT];
	int		 r;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	json_object_foreach((json_t *)v, key, val) {
		field(a, at, key);
		if (strcmp(key, "env") == 0)
			r = check_env(w, a, val);
		else if (strcmp(key, "deviceNodes") == 0)
			r = check_list(w, a, val, CDI_MAX_NODES, check_node);
		else if (strcmp(key, "mounts") == 0)
			r = check_list(w, a, val, CDI_MAX_MOUNTS, check_mount);
		else if (strcmp(key, "hooks") == 0)
			r = check_list(w, a, val, CDI_MAX_HOOKS, check_hook);
		else if (strcmp(key, "additionalGids") == 0)
			r = fail(w, "%s: not allowed (the broker passes no "
			    "group ids)", a);
		else if (strcmp(key, "intelRdt") == 0)
			r = fail(w, "%s: not allowed (the broker passes no "
			    "Intel RDT settings)", a);
		else if (strcmp(key, "netDevices") == 0)
			r = fail(w, "%s: not allowed (the broker passes no "
			    "host network devices)", a);
		else
			r = fail(w, "%s: unknown field of containerEdits", a);
		if (r != 0)
			return (r);
	}
	return (0);
}

static int
check_device(struct walk *w, const char *at, const json_t *v)
{
	const char	*key, *s;
	json_t		*val;
	char		 a[CDI_AT], b[80];
	int		 r, name = 0, edits = 0;

	if ((r = want_object(w, at, v)) != 0)
		return (r);
	json_object_foreach((json_t *)v, key, val) {
		field(a, at, key);
		if (strcmp(key, "name") == 0) {
			name = 1;
			if ((r = want_string(w, a, val, CDI_MAX_DEVNAME + 1,
			    &s)) == 0 && !devname_ok(s))
				r = fail(w, "%s \"%s\": %s", a,
				    cdi_shown(s, b, sizeof(b)), R_DEVNAME);
		} else if (strcmp(key, "containerEdits") == 0) {
			edits = 1;
			r = check_edits(w, a, val);
		} else if (strcmp(key, "annotations") == 0)
			r = check_annotations(w, a, val);
		else
			r = fail(w, "%s: unknown field of a device", a);
		if (r != 0)
			return (r);
	}
	if (!name || !edits)
		return (fail(w, "%s.%s: missing", at, name ? "containerEdits" :
		    "name"));
	return (0);
}

static int
check_devices(struct walk *w, const json_t *v)
{
	const char	*s, *t;
	char		 b[80];
	size_t		 i, k;
	int		 r;

	if ((r = check_list(w, "devices", v, CDI_MAX_DEVICES,
	    check_device)) != 0)
		return (r);
	if (json_array_size(v) == 0)
		return (fail(w, "devices: empty (a spec defines at least one "
		    "device)"));
	/* Names are checked strings now; a name defined twice is
	 * ambiguous to the runtime. */
	for (i = 1; i < json_array_size(v); i++) {
		s = json_string_value(json_object_get(json_array_get(v, i),
		    "name"));
		for (k = 0; k < i; k++) {
			t = json_string_value(json_object_get(
			    json_array_get(v, k), "name"));
			if (strcmp(s, t) == 0)
				return (fail(w, "devices[%zu].name \"%s\": "
				    "repeats devices[%zu].name", i,
				    cdi_shown(s, b, sizeof(b)), k));
		}
	}
	return (0);
}

static int
check_kind(struct walk *w, const json_t *v)
{
	const char	*s;
	char		 b[80];
	size_t		 n = strlen(w->driver);
	int		 r;

	if ((r = want_string(w, "kind", v, n + 1 + CDI_MAX_CLASS, &s)) != 0)
		return (r);
	if (strncmp(s, w->driver, n) != 0 || s[n] != '/')
		return (fail(w, "kind \"%s\": not \"%s/<class>\" (a spec "
		    "defines devices of its own driver only)",
		    cdi_shown(s, b, sizeof(b)), w->driver));
	if (!class_ok(s + n + 1))
		return (fail(w, "kind \"%s\": %s", cdi_shown(s, b, sizeof(b)),
		    R_CLASS));
	return (0);
}

static int
check_spec(struct walk *w, const json_t *root)
{
	const char	*key, *s;
	json_t		*val;
	char		 b[80];
	int		 r, ver = 0, kind = 0, devs = 0;

	if (!json_is_object(root))
		return (fail(w, "not a JSON object"));
	json_object_foreach((json_t *)root, key, val) {
		if (strcmp(key, "cdiVersion") == 0) {
			ver = 1;
			if ((r = want_string(w, key, val, 16, &s)) == 0 &&
			    !in_list(versions, s))
				r = fail(w, "cdiVersion \"%s\": not a released "
				    "CDI version, 0.3.0 to 0.8.0",
				    cdi_shown(s, b, sizeof(b)));
		} else if (strcmp(key, "kind") == 0) {
			kind = 1;
			r = check_kind(w, val);
		} else if (strcmp(key, "devices") == 0) {
			devs = 1;
			r = check_devices(w, val);
		} else if (strcmp(key, "containerEdits") == 0)
			r = check_edits(w, key, val);
		else if (strcmp(key, "annotations") == 0)
			r = check_annotations(w, key, val);
		else
			r = fail(w, "%s: unknown field of a CDI spec",
			    cdi_shown(key, b, sizeof(b)));
		if (r != 0)
			return (r);
	}
	if (!ver || !kind || !devs)
		return (fail(w, "%s: missing", !ver ? "cdiVersion" : !kind ?
		    "kind" : "devices"));
	return (0);
}

int
cdi_check(const char *json, size_t len, const struct kp_options *cfg,
    char *err, size_t errsize)
{
	struct walk	 w = { &cfg->policy, cfg->driver_name, err, errsize };
	json_error_t	 je;
	json_t		*root;
	int		 r;

	if (errsize > 0)
		err[0] = '\0';
	if (len > KP_IPC_MAX_CDI_CONTENT)
		return (fail(&w, "more than %u bytes", KP_IPC_MAX_CDI_CONTENT));
	if ((r = scan(&w, json, len)) != 0)
		return (r);
	/* No JSON_DISABLE_EOF_CHECK (nothing may follow the value), no
	 * JSON_ALLOW_NUL ("\u0000" refused), no JSON_DECODE_ANY. */
	if ((root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL)
		return (fail(&w, "not JSON: %s (line %d, column %d)", je.text,
		    je.line, je.column));
	r = check_spec(&w, root);
	json_decref(root);
	return (r);
}
