/*
 * metadata_attrs.c - kp_prepare_device_metadata(): the attributes of a
 * prepared device for its device metadata file (upstream
 * Device.Metadata.Attributes, v0.36), a builder beside
 * kp_prepare_add_device() so that struct kp_prepared_device stays as it
 * is. They are rendered at once into the "attributes" and "networkData" members
 * of the device's object, as Go's json.MarshalIndent writes a
 * map[QualifiedName]DeviceAttribute: keys sorted bytewise, each value an
 * object with one of int, bool, string, version, ints, bools, strings,
 * versions.
 *
 * Runs in: the nodeserver, inside a prepare hook call.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "nodeserver/dra.h"

#define MD_MAX_ATTRS	32	/* v1beta1 maxProperties */
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
attrs_entry_free(struct md_attrs *m)
{
	free(m->pool);
	free(m->device);
	free(m->json);
}

void
md_attrs_free(struct dra_result *c)
{
	size_t	 i;

	for (i = 0; i < c->n_md_attrs; i++)
		attrs_entry_free(&c->md_attrs[i]);
	free(c->md_attrs);
	c->md_attrs = NULL;
	c->n_md_attrs = 0;
}

/* The rendered member (kind) of device pool/device, or NULL. */
const char *
md_attrs_find(const struct dra_result *c, const char *pool,
    const char *device, int kind)
{
	size_t	 i;

	for (i = c->n_md_attrs; i > 0; i--)	/* the last call wins */
		if (c->md_attrs[i - 1].kind == kind &&
		    strcmp(c->md_attrs[i - 1].pool, pool) == 0 &&
		    strcmp(c->md_attrs[i - 1].device, device) == 0)
			return (c->md_attrs[i - 1].json);
	return (NULL);
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
static const char *
copy_attrs(const struct kp_attribute *in, size_t n, struct kp_attribute *out)
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
 * Keep b (the member rendered for device pool/device of claim c, kind
 * MD_ATTRS or MD_NET) unless why says what is wrong; either way the
 * claim fails on an error, naming fn and the rule.
 */
static int
md_store(struct dra_result *c, const char *fn, const char *pool,
    const char *device, int kind, struct md_buf *b, const char *why)
{
	struct md_attrs	*na, e;
	char		 msg[KP_ERROR_SIZE];
	size_t		 i;

	if (why == NULL && c->error == NULL) {
		for (i = 0; i < c->n_devices; i++)
			if (strcmp(c->devices[i].pool, pool) == 0 &&
			    strcmp(c->devices[i].device, device) == 0)
				break;
		if (i == c->n_devices)
			why = "no such device in this claim (add it with "
			    "kp_prepare_add_device first)";
	}
	if (why != NULL) {
		free(b->p);
		snprintf(msg, sizeof(msg), "%s: %s", fn, why);
		(void)dra_result_fail_one(c, msg);
		return (KP_EINVAL);
	}
	if (c->error != NULL) {
		free(b->p);
		return (0);	/* a failed claim's devices are dropped */
	}
	memset(&e, 0, sizeof(e));
	e.kind = kind;
	if (b->oom || (e.pool = strdup(pool)) == NULL ||
	    (e.device = strdup(device)) == NULL ||
	    (na = reallocarray(c->md_attrs, c->n_md_attrs + 1,
	    sizeof(*na))) == NULL) {
		free(b->p);
		attrs_entry_free(&e);
		(void)dra_result_fail_one(c, "out of memory");
		return (KP_ENOMEM);
	}
	e.json = b->p;
	na[c->n_md_attrs++] = e;
	c->md_attrs = na;
	return (0);
}

int
kp_prepare_device_metadata(struct kp_prepare_results *res, size_t claim,
    const char *pool, const char *device, const struct kp_attribute *attrs,
    size_t n)
{
	struct kp_attribute	 v[MD_MAX_ATTRS];
	struct md_buf		 b = { NULL, 0, 0, 0 };
	struct dra_result	*c;
	const char		*why = NULL;
	size_t			 i, values = 0;

	if ((c = dra_prepare_claim(res, claim)) == NULL)
		return (KP_EINVAL);
	if (pool == NULL || device == NULL)
		why = "pool and device are required";
	else if (n == 0 || n > MD_MAX_ATTRS)
		why = "1 to 32 attributes";
	else if (attrs == NULL)
		why = "attrs is NULL";
	else
		why = copy_attrs(attrs, n, v);
	for (i = 0; why == NULL && i < n; i++)
		why = attr_problem(&v[i], &values);
	if (why == NULL) {
		qsort(v, n, sizeof(v[0]), by_name);
		for (i = 1; why == NULL && i < n; i++)
			if (strcmp(v[i].name, v[i - 1].name) == 0)
				why = "name: repeated";
	}
	if (why == NULL)
		render(&b, v, n);
	return (md_store(c, "kp_prepare_device_metadata", pool, device,
	    MD_ATTRS, &b, why));
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

int
kp_prepare_device_network_data(struct kp_prepare_results *res, size_t claim,
    const char *pool, const char *device, const char *interface_name,
    const char *const *ips, size_t n_ips, const char *hardware_address)
{
	struct md_buf		 b = { NULL, 0, 0, 0 };
	struct dra_result	*c;
	const char		*why = NULL, *sep = "";
	size_t			 i;

	if ((c = dra_prepare_claim(res, claim)) == NULL)
		return (KP_EINVAL);
	if (pool == NULL || device == NULL)
		why = "pool and device are required";
	else if (interface_name != NULL && !net_str_ok(interface_name, 256))
		why = "interface_name: UTF-8, at most 256 bytes";
	else if (hardware_address != NULL &&
	    !net_str_ok(hardware_address, 128))
		why = "hardware_address: UTF-8, at most 128 bytes";
	else if (n_ips > 16 || (n_ips > 0 && ips == NULL))
		why = "ips: at most 16, not NULL with a count";
	for (i = 0; why == NULL && i < n_ips; i++)
		if (ips[i] == NULL || ips[i][0] == '\0' ||
		    !net_str_ok(ips[i], 64))
			why = "ips: each a non-empty string of at most 64 "
			    "bytes";
	if (why == NULL) {
		/* upstream NetworkDeviceData: every member omitempty */
		puts_(&b, IN1 "\"networkData\": {");
		if (interface_name != NULL && interface_name[0] != '\0') {
			puts_(&b, "\n" IN2 "\"interfaceName\": ");
			md_json_string(&b, interface_name);
			sep = ",";
		}
		if (n_ips > 0) {
			puts_(&b, sep);
			puts_(&b, "\n" IN2 "\"ips\": [\n");
			for (i = 0; i < n_ips; i++) {
				puts_(&b, IN3);
				md_json_string(&b, ips[i]);
				puts_(&b, i + 1 < n_ips ? ",\n" : "\n");
			}
			puts_(&b, IN2 "]");
			sep = ",";
		}
		if (hardware_address != NULL && hardware_address[0] != '\0') {
			puts_(&b, sep);
			puts_(&b, "\n" IN2 "\"hardwareAddress\": ");
			md_json_string(&b, hardware_address);
			sep = ",";
		}
		/* Go writes an empty struct as {} */
		puts_(&b, sep[0] != '\0' ? "\n" IN1 "}" : "}");
	}
	return (md_store(c, "kp_prepare_device_network_data", pool, device,
	    MD_NET, &b, why));
}
