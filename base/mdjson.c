/*
 * mdjson.c - the device metadata file (KEP-5304) as upstream's Go encoder
 * writes it: shared by the nodeserver (after a prepare hook) and the
 * supervisor (kp_update_request_metadata from the driver process), so
 * both write byte-for-byte the same layout.
 *
 * The file (upstream metadataWriter.encodeMetadataStream): one
 * DeviceMetadata object per chosen version, in that order, each as Go's
 * json.MarshalIndent(obj, "", "  ") prints it, followed by "\n". A
 * device's "attributes" (map[QualifiedName]DeviceAttribute: keys sorted
 * bytewise, each value an object with one of int, bool, string, version,
 * ints, bools, strings, versions) and "networkData" members are rendered
 * first (md_attrs_json, md_net_json), then joined by md_encode.
 *
 * Runs in: the nodeserver and the supervisor (no I/O, no globals).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/mdjson.h"
#include "base/utf8.h"

#define MD_MAX_VALUES	48	/* list values of one device, as slices */
#define MD_MAX_NAME	(63 + 1 + 253)	/* domain/identifier */
#define MD_MAX_STRING	64
/* Indentation of a device's members in the file (md_encode). */
#define IN1	"          "
#define IN2	IN1 "  "
#define IN3	IN2 "  "
#define IN4	IN3 "  "

/* The first release's struct kp_attribute ends with n_values. */
#define ATTR_MIN	(offsetof(struct kp_attribute, n_values) + \
			    sizeof(size_t))

static void
md_grow(struct md_buf *b, size_t more)
{
	char	*p;
	size_t	 cap;

	if (b->oom || b->len + more + 1 <= b->cap)
		return;
	cap = b->cap == 0 ? 1024 : b->cap;
	while (cap < b->len + more + 1)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void
md_put(struct md_buf *b, const char *s, size_t n)
{
	md_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
md_puts(struct md_buf *b, const char *s)
{
	md_put(b, s, strlen(s));
}

static void	md_printf(struct md_buf *, const char *, ...) KP_PRINTF(2, 3);

static void
md_printf(struct md_buf *b, const char *fmt, ...)
{
	char	 tmp[128];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		md_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
		    sizeof(tmp) - 1);
}

/*
 * A JSON string as Go's encoding/json writes it (with HTML escaping, as
 * json.Marshal does): '"' and '\\' escaped, \n \r \t \b \f short (Go
 * 1.22+), other control characters, '<', '>' and '&' as \u00XX, U+2028
 * and U+2029 as \u2028 / \u2029, invalid UTF-8 as \ufffd, everything
 * else as it is.
 */
void
md_json_string(struct md_buf *b, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 len = strlen(s), i = 0, k;
	char			 esc[7];

	md_put(b, "\"", 1);
	while (i < len) {
		if (u[i] >= 0x80) {
			if ((k = utf8_char(s + i, len - i)) == 0) {
				md_puts(b, "\\ufffd");
				i++;
			} else if (k == 3 && u[i] == 0xe2 && u[i + 1] == 0x80 &&
			    (u[i + 2] == 0xa8 || u[i + 2] == 0xa9)) {
				md_puts(b, u[i + 2] == 0xa8 ? "\\u2028" :
				    "\\u2029");
				i += 3;
			} else {
				md_put(b, s + i, k);
				i += k;
			}
			continue;
		}
		switch (u[i]) {
		case '"':
			md_puts(b, "\\\"");
			break;
		case '\\':
			md_puts(b, "\\\\");
			break;
		case '\n':
			md_puts(b, "\\n");
			break;
		case '\r':
			md_puts(b, "\\r");
			break;
		case '\t':
			md_puts(b, "\\t");
			break;
		case '\b':
			md_puts(b, "\\b");
			break;
		case '\f':
			md_puts(b, "\\f");
			break;
		default:
			if (u[i] < 0x20 || u[i] == '<' || u[i] == '>' ||
			    u[i] == '&') {
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[u[i] >> 4];
				esc[5] = hex[u[i] & 0xf];
				md_put(b, esc, 6);
			} else
				md_put(b, s + i, 1);
		}
		i++;
	}
	md_put(b, "\"", 1);
}

/* "<indent>"key": " then a string value and "," unless last. */
static void
md_field(struct md_buf *b, const char *indent, const char *key,
    const char *value, int last)
{
	md_puts(b, indent);
	md_json_string(b, key);
	md_puts(b, ": ");
	md_json_string(b, value);
	md_puts(b, last ? "\n" : ",\n");
}

/*
 * One request's metadata file: the DeviceMetadata object once per
 * version (metadata.resource.k8s.io/v1alpha1 and v1beta1 have the same
 * shape), with metadata {name, namespace, uid, generation} (Go's
 * ObjectMeta order; empty fields omitted), podClaimName when known,
 * requests [{name, devices [{driver, pool, name, attributes?,
 * networkData?}]}], for cfg's driver and metadata versions. Returns 0
 * with *out malloc'd (the caller frees); KP_EINVAL when the file would be
 * over MD_MAX_CONTENT bytes (*outlen says how many, *out NULL); or
 * KP_ENOMEM.
 */
int
md_encode(const struct kp_options *cfg, const struct md_input *in,
    char **out, size_t *outlen)
{
	struct md_buf		 b = { NULL, 0, 0, 0 };
	const struct md_device	*d;
	size_t			 v, i;

	*out = NULL;
	*outlen = 0;
	for (v = 0; v < cfg->n_metadata_versions; v++) {
		md_puts(&b, "{\n");
		md_field(&b, "  ", "kind", "DeviceMetadata", 0);
		md_field(&b, "  ", "apiVersion", cfg->metadata_versions[v],
		    0);
		md_puts(&b, "  \"metadata\": {\n");
		md_field(&b, "    ", "name", in->name, 0);
		md_field(&b, "    ", "namespace", in->namespace_, 0);
		md_field(&b, "    ", "uid", in->uid, 0);
		md_printf(&b, "    \"generation\": %lld\n",
		    (long long)in->generation);
		md_puts(&b, "  },\n");
		if (in->pod_claim_name != NULL && in->pod_claim_name[0] != '\0')
			md_field(&b, "  ", "podClaimName", in->pod_claim_name,
			    0);
		md_puts(&b, "  \"requests\": [\n    {\n");
		md_field(&b, "      ", "name", in->request, in->n_devices == 0);
		if (in->n_devices > 0) {
			md_puts(&b, "      \"devices\": [\n");
			for (i = 0; i < in->n_devices; i++) {
				d = &in->devices[i];
				md_puts(&b, "        {\n");
				md_field(&b, "          ", "driver",
				    cfg->driver_name, 0);
				md_field(&b, "          ", "pool", d->pool, 0);
				md_field(&b, "          ", "name", d->name,
				    d->attrs == NULL && d->net == NULL);
				if (d->attrs != NULL) {
					md_puts(&b, d->attrs);
					md_puts(&b, d->net != NULL ? ",\n" :
					    "\n");
				}
				if (d->net != NULL) {
					md_puts(&b, d->net);
					md_puts(&b, "\n");
				}
				md_puts(&b, i + 1 < in->n_devices ?
				    "        },\n" : "        }\n");
			}
			md_puts(&b, "      ]\n");
		}
		md_puts(&b, "    }\n  ]\n}\n");
	}
	if (b.oom) {
		free(b.p);
		return (KP_ENOMEM);
	}
	*outlen = b.len;
	if (b.len > MD_MAX_CONTENT) {
		free(b.p);
		return (KP_EINVAL);
	}
	*out = b.p;
	return (0);
}

static int
str_ok(const char *s)
{
	return (s != NULL && strlen(s) <= MD_MAX_STRING && utf8_valid(s));
}

/* Why attribute a (ours, copied) cannot be written, or NULL. */
static const char *
attr_problem(const struct kp_attribute *a, size_t *values)
{
	size_t	 i;

	if (a->name == NULL || a->name[0] == '\0' ||
	    strlen(a->name) > MD_MAX_NAME || !utf8_valid(a->name))
		return ("name: required, UTF-8, at most 317 bytes");
	switch (a->type) {
	case KP_ATTR_TYPE_INT:
		return (NULL);
	case KP_ATTR_TYPE_BOOL:
		return (a->bool_value == 0 || a->bool_value == 1 ? NULL :
		    "bool_value: must be 0 or 1");
	case KP_ATTR_TYPE_STRING:
	case KP_ATTR_TYPE_VERSION:
		return (str_ok(a->string_value) ? NULL : "string_value: "
		    "required, UTF-8, at most 64 bytes");
	case KP_ATTR_TYPE_INTS:
	case KP_ATTR_TYPE_BOOLS:
	case KP_ATTR_TYPE_STRINGS:
	case KP_ATTR_TYPE_VERSIONS:
		break;
	default:
		return ("type: unknown");
	}
	if (a->n_values == 0 || a->n_values > MD_MAX_VALUES ||
	    (*values += a->n_values) > MD_MAX_VALUES)
		return ("n_values: 1 to 48, at most 48 list values a device");
	if ((a->type == KP_ATTR_TYPE_INTS && a->int_values == NULL) ||
	    (a->type == KP_ATTR_TYPE_BOOLS && a->bool_values == NULL) ||
	    (a->type >= KP_ATTR_TYPE_STRINGS && a->string_values == NULL))
		return ("values: NULL with a count");
	for (i = 0; i < a->n_values; i++) {
		if (a->type == KP_ATTR_TYPE_BOOLS && a->bool_values[i] != 0 &&
		    a->bool_values[i] != 1)
			return ("bool_values: must be 0 or 1");
		if (a->type >= KP_ATTR_TYPE_STRINGS &&
		    !str_ok(a->string_values[i]))
			return ("string_values: UTF-8, at most 64 bytes each");
	}
	return (NULL);
}

static int
by_name(const void *x, const void *y)
{
	const struct kp_attribute *a = x, *b = y;

	return (strcmp(a->name, b->name));
}

static void
scalar(struct md_buf *b, const struct kp_attribute *a, size_t i, int list)
{
	char	 num[32];

	switch (a->type) {
	case KP_ATTR_TYPE_INT:
	case KP_ATTR_TYPE_INTS:
		snprintf(num, sizeof(num), "%lld", (long long)(list ?
		    a->int_values[i] : a->int_value));
		md_put(b, num, strlen(num));
		break;
	case KP_ATTR_TYPE_BOOL:
	case KP_ATTR_TYPE_BOOLS:
		if (list ? a->bool_values[i] : a->bool_value)
			md_put(b, "true", 4);
		else
			md_put(b, "false", 5);
		break;
	default:
		md_json_string(b, list ? a->string_values[i] :
		    a->string_value);
	}
}

static void
puts_(struct md_buf *b, const char *s)
{
	md_put(b, s, strlen(s));
}

/* The member's lines, without the last newline (md_encode ends the
 * "name" line with "," and joins the members). */
static void
render(struct md_buf *b, const struct kp_attribute *v, size_t n)
{
	static const char *const keys[] = { "int", "bool", "string",
	    "version", "ints", "bools", "strings", "versions" };
	size_t	 i, k;

	puts_(b, IN1 "\"attributes\": {\n");
	for (i = 0; i < n; i++) {
		puts_(b, IN2);
		md_json_string(b, v[i].name);
		puts_(b, ": {\n" IN3 "\"");
		puts_(b, keys[v[i].type]);
		puts_(b, "\": ");
		if (v[i].type < KP_ATTR_TYPE_INTS)
			scalar(b, &v[i], 0, 0);
		else {
			puts_(b, "[\n");
			for (k = 0; k < v[i].n_values; k++) {
				puts_(b, IN4);
				scalar(b, &v[i], k, 1);
				puts_(b, k + 1 < v[i].n_values ? ",\n" : "\n");
			}
			puts_(b, IN3 "]");
		}
		puts_(b, "\n" IN2 "}");
		puts_(b, i + 1 < n ? ",\n" : "\n");
	}
	puts_(b, IN1 "}");
}

/*
 * The caller's array as ours: struct_size is the stride (at least the
 * first release's size, a multiple of the alignment, the same in every
 * element), bytes of a newer caller's struct beyond ours must be zero.
 */
const char *
md_copy_attrs(const struct kp_attribute *in, size_t n, struct kp_attribute *out)
{
	const unsigned char	*p;
	size_t			 stride, i, k;

	stride = in->struct_size;
	if (stride < ATTR_MIN || stride % _Alignof(struct kp_attribute) != 0)
		return ("struct_size: initialise with KP_ATTRIBUTE_INIT");
	for (i = 0; i < n; i++) {
		p = (const unsigned char *)in + i * stride;
		if (*(const size_t *)(const void *)p != stride)
			return ("struct_size: differs between elements");
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(&out[i], p, stride < sizeof(out[i]) ? stride :
		    sizeof(out[i]));
		for (k = sizeof(out[i]); k < stride; k++)
			if (p[k] != 0)
				return ("a field this library does not know "
				    "is set: it needs a newer "
				    "libkubeletplugin");
	}
	return (NULL);
}

/*
 * The "attributes" member for attrs[0 .. n-1] (the caller's array, any
 * struct_size this library accepts) into b, or why not (b untouched).
 */
const char *
md_attrs_json(struct md_buf *b, const struct kp_attribute *attrs, size_t n)
{
	struct kp_attribute	 v[MD_MAX_ATTRS];
	const char		*why;
	size_t			 i, values = 0;

	if (n == 0 || n > MD_MAX_ATTRS)
		return ("1 to 32 attributes");
	if (attrs == NULL)
		return ("attrs is NULL");
	if ((why = md_copy_attrs(attrs, n, v)) != NULL)
		return (why);
	for (i = 0; i < n; i++)
		if ((why = attr_problem(&v[i], &values)) != NULL)
			return (why);
	qsort(v, n, sizeof(v[0]), by_name);
	for (i = 1; i < n; i++)
		if (strcmp(v[i].name, v[i - 1].name) == 0)
			return ("name: repeated");
	render(b, v, n);
	return (NULL);
}

/* A string of at most max bytes of UTF-8 without control characters. */
static int
net_str_ok(const char *s, size_t max)
{
	const char	*p;

	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20)
			return (0);
	return (strlen(s) <= max && utf8_valid(s));
}

/* The "networkData" member (upstream NetworkDeviceData) into b, or why not. */
const char *
md_net_json(struct md_buf *b, const char *interface_name,
    const char *const *ips, size_t n_ips, const char *hardware_address)
{
	const char	*sep = "";
	size_t		 i;

	if (interface_name != NULL && !net_str_ok(interface_name, 256))
		return ("interface_name: UTF-8, at most 256 bytes");
	if (hardware_address != NULL && !net_str_ok(hardware_address, 128))
		return ("hardware_address: UTF-8, at most 128 bytes");
	if (n_ips > 16 || (n_ips > 0 && ips == NULL))
		return ("ips: at most 16, not NULL with a count");
	for (i = 0; i < n_ips; i++)
		if (ips[i] == NULL || ips[i][0] == '\0' ||
		    !net_str_ok(ips[i], 64))
			return ("ips: each a non-empty string of at most 64 "
			    "bytes");
	/* upstream NetworkDeviceData: every member omitempty */
	puts_(b, IN1 "\"networkData\": {");
	if (interface_name != NULL && interface_name[0] != '\0') {
		puts_(b, "\n" IN2 "\"interfaceName\": ");
		md_json_string(b, interface_name);
		sep = ",";
	}
	if (n_ips > 0) {
		puts_(b, sep);
		puts_(b, "\n" IN2 "\"ips\": [\n");
		for (i = 0; i < n_ips; i++) {
			puts_(b, IN3);
			md_json_string(b, ips[i]);
			puts_(b, i + 1 < n_ips ? ",\n" : "\n");
		}
		puts_(b, IN2 "]");
		sep = ",";
	}
	if (hardware_address != NULL && hardware_address[0] != '\0') {
		puts_(b, sep);
		puts_(b, "\n" IN2 "\"hardwareAddress\": ");
		md_json_string(b, hardware_address);
		sep = ",";
	}
	/* Go writes an empty struct as {} */
	puts_(b, sep[0] != '\0' ? "\n" IN1 "}" : "}");
	return (NULL);
}
