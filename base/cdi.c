/*
 * cdi.c - CDI name rules and the version a spec needs (cdi.h).
 *
 * Runs in: the nodeserver and the supervisor (pure functions).
 */
#include <stdio.h>
#include <string.h>

#include "base/cdi.h"
#include "base/names.h"

/* Character classes of the CDI name rules: one table load per byte. */
#define C_LETTER	1
#define C_DIGIT		2
#define C_PUNCT		4	/* '_', '-', '.' */
#define C_COLON		8
#define C_ALNUM		(C_LETTER | C_DIGIT)

static const unsigned char cclass[256] = {
	['0' ... '9'] = C_DIGIT,
	['a' ... 'z'] = C_LETTER,
	['A' ... 'Z'] = C_LETTER,
	['_'] = C_PUNCT, ['-'] = C_PUNCT, ['.'] = C_PUNCT,
	[':'] = C_COLON
};

static int
is_class(char c, unsigned char want)
{
	return ((cclass[(unsigned char)c] & want) != 0);
}

static int
is_letter(int c)
{
	return (is_class((char)c, C_LETTER));
}

static int
is_alnum(int c)
{
	return (is_class((char)c, C_ALNUM));
}

/* The inner characters of s[0..n), n >= 2, all of classes want. */
static int
inner_ok(const char *s, size_t n, unsigned char want)
{
	size_t	 i;

	for (i = 1; i + 1 < n; i++)
		if (!is_class(s[i], want))
			return (0);
	return (1);
}

/* parser.go validateVendorOrClassName. */
int
cdi_vendor_ok(const char *s, size_t n)
{
	return (n > 0 && is_class(s[0], C_LETTER) &&
	    is_class(s[n - 1], C_ALNUM) &&
	    inner_ok(s, n, C_ALNUM | C_PUNCT));
}

/* parser.go ValidateDeviceName. */
int
cdi_device_name_ok(const char *s, size_t n)
{
	return (n > 0 && is_class(s[0], C_ALNUM) &&
	    is_class(s[n - 1], C_ALNUM) &&
	    inner_ok(s, n, C_ALNUM | C_PUNCT | C_COLON));
}

/* "<vendor>/<class>" */
int
cdi_kind_ok(const char *kind)
{
	const char	*slash = strchr(kind, '/');

	return (slash != NULL && cdi_vendor_ok(kind, (size_t)(slash - kind)) &&
	    cdi_vendor_ok(slash + 1, strlen(slash + 1)));
}

/* parser.go ParseQualifiedName: "<vendor>/<class>=<name>". */
int
cdi_id_check(const char *id, const char **why)
{
	const char	*slash, *eq;

	if (strlen(id) > CDI_MAX_ID) {
		*why = "longer than 512 bytes";
		return (-1);
	}
	if ((eq = strchr(id, '=')) == NULL || (slash = memchr(id, '/',
	    (size_t)(eq - id))) == NULL) {
		*why = "not " CDI_R_ID;
		return (-1);
	}
	if (!cdi_vendor_ok(id, (size_t)(slash - id))) {
		*why = "vendor is not " CDI_R_VENDOR;
		return (-1);
	}
	if (!cdi_vendor_ok(slash + 1, (size_t)(eq - slash - 1))) {
		*why = "class is not " CDI_R_VENDOR;
		return (-1);
	}
	if (!cdi_device_name_ok(eq + 1, strlen(eq + 1))) {
		*why = "device name is not " CDI_R_DEVICE;
		return (-1);
	}
	return (0);
}

int
cdi_version_cmp(const char *a, const char *b)
{
	unsigned int	 x[3] = { 0 }, y[3] = { 0 };
	int		 i;

	(void)sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]);
	(void)sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]);
	for (i = 0; i < 3; i++)
		if (x[i] != y[i])
			return (x[i] < y[i] ? -1 : 1);
	return (0);
}

static const char *
at_least(const char *cur, const char *v)
{
	return (cdi_version_cmp(v, cur) > 0 ? v : cur);
}

/* The version the edits of one containerEdits object need. */
static const char *
edits_version(const json_t *e, const char *v)
{
	const json_t	*x;
	size_t		 i;

	if (!json_is_object(e))
		return (v);
	json_array_foreach(json_object_get(e, "mounts"), i, x)
		if (json_object_get(x, "type") != NULL)
			v = at_least(v, "0.4.0");	/* requiresV040 */
	json_array_foreach(json_object_get(e, "deviceNodes"), i, x) {
		x = json_object_get(x, "hostPath");
		if (json_is_string(x) && json_string_length(x) > 0)
			v = at_least(v, "0.5.0");	/* requiresV050 */
	}
	if (json_object_get(e, "intelRdt") != NULL ||
	    json_array_size(json_object_get(e, "additionalGids")) > 0)
		v = at_least(v, "0.7.0");		/* requiresV070 */
	return (v);
}

/*
 * specs-go/version.go MinimumRequiredVersion: 0.4.0 for a mount type,
 * 0.5.0 for a device name not starting with a letter or a device node's
 * hostPath, 0.6.0 for annotations or a '.' in the class, 0.7.0 for
 * intelRdt or additionalGids (0.8.0 changed no field).
 */
const char *
cdi_min_version(const json_t *spec)
{
	const json_t	*d, *n;
	const char	*v = "0.3.0", *kind, *slash;
	size_t		 i;

	v = edits_version(json_object_get(spec, "containerEdits"), v);
	if (json_object_size(json_object_get(spec, "annotations")) > 0)
		v = at_least(v, "0.6.0");
	kind = json_string_value(json_object_get(spec, "kind"));
	if (kind != NULL && (slash = strchr(kind, '/')) != NULL &&
	    slash != kind && strchr(slash + 1, '.') != NULL)
		v = at_least(v, "0.6.0");
	json_array_foreach(json_object_get(spec, "devices"), i, d) {
		n = json_object_get(d, "name");
		if (json_is_string(n) && json_string_length(n) > 0 &&
		    !is_letter(json_string_value(n)[0]))
			v = at_least(v, "0.5.0");
		if (json_object_size(json_object_get(d, "annotations")) > 0)
			v = at_least(v, "0.6.0");
		v = edits_version(json_object_get(d, "containerEdits"), v);
	}
	return (v);
}

/* NAME=value, NAME a letter or '_' then letters, digits or '_'. */
int
cdi_env_ok(const char *s)
{
	size_t	 i;

	if (!(is_letter(s[0]) || s[0] == '_'))
		return (0);
	for (i = 1; s[i] != '=' ; i++)
		if (s[i] == '\0' || !(is_alnum(s[i]) || s[i] == '_'))
			return (0);
	return (1);
}

/* Kubernetes' qualified name, the key rule of CDI annotations. */
int
cdi_annotation_key_ok(const char *s)
{
	const char	*slash = strchr(s, '/');
	size_t		 i, n;

	if (slash != NULL) {
		if (!name_is_subdomain(s, (size_t)(slash - s)))
			return (0);
		s = slash + 1;
	}
	n = strlen(s);
	if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return (0);
	for (i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return (0);
	return (1);
}
