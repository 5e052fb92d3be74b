/*
 * dra_format.c - compact text of DRA messages for call logging (the Go
 * helper logs whole messages), e.g.
 * {claims:[{namespace:"ns",uid:"u",name:"n"}]}. Every version is read with
 * the v1 messages (the wire is the same; see dra_v1.c). Text that does not
 * fit ends in "...".
 */
#include <stdio.h>
#include <string.h>

#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "dra_v1.pb-c.h"

typedef V1T(NodePrepareResourcesRequest)
    Request;
typedef V1T(NodePrepareResourcesResponse)
    PrepResp;
typedef V1T(NodePrepareResourceResponse)
    PrepClaim;
typedef V1T(NodeUnprepareResourcesResponse)
    UnprepResp;
typedef V1T(Device) Device;

struct text {
	char	*p;
	size_t	 size;
	size_t	 len;
	int	 full;
};

static void
put(struct text *t, const char *s, size_t n)
{
	if (t->full)
		return;
	if (t->len + n + 1 > t->size) {
		n = t->size - 1 - t->len;
		t->full = 1;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void
puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A quoted string; bytes outside printable ASCII as \xNN. */
static void
quoted(struct text *t, const char *s)
{
	char	esc[8];

	put(t, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = *s;
			put(t, esc, 2);
		} else if ((unsigned char)*s < 0x20 ||
		    (unsigned char)*s >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x",
			    (unsigned char)*s);
			put(t, esc, 4);
		} else
			put(t, s, 1);
	}
	put(t, "\"", 1);
}

static void
field(struct text *t, const char *sep, const char *name, const char *value)
{
	puts_(t, sep);
	puts_(t, name);
	puts_(t, ":");
	quoted(t, value);
}

static void
strings(struct text *t, const char *name, char **v, size_t n)
{
	size_t	i;

	if (n == 0)
		return;
	puts_(t, ",");
	puts_(t, name);
	puts_(t, ":[");
	for (i = 0; i < n; i++) {
		if (i > 0)
			puts_(t, ",");
		quoted(t, v[i]);
	}
	puts_(t, "]");
}

static int
text_begin(struct text *t, char *out, size_t size)
{
	t->p = out;
	t->size = size;
	t->len = 0;
	t->full = 0;
	if (size > 0)
		out[0] = '\0';
	return (size >= 4);
}

/* Mark cut text with "..." in its last bytes. */
static void
text_end(struct text *t)
{
	if (t->full)
		memcpy(t->p + t->size - 4, "...", 4);
}

static void
request_body(struct text *t, const ProtobufCMessage *msg)
{
	const Request	*m = (const Request *)msg;
	size_t		 i;

	puts_(t, "{claims:[");
	for (i = 0; i < m->n_claims; i++) {
		puts_(t, i > 0 ? ",{" : "{");
		field(t, "", "namespace", m->claims[i]->namespace_);
		field(t, ",", "uid", m->claims[i]->uid);
		field(t, ",", "name", m->claims[i]->name);
		puts_(t, "}");
	}
	puts_(t, "]}");
}

static void
device(struct text *t, const Device *d)
{
	puts_(t, "{");
	field(t, "", "pool_name", d->pool_name);
	field(t, ",", "device_name", d->device_name);
	strings(t, "request_names", d->request_names, d->n_request_names);
	strings(t, "cdi_device_ids", d->cdi_device_ids, d->n_cdi_device_ids);
	if (d->_share_id_case ==
	    V1_SHARE_ID_SET)
		field(t, ",", "share_id", d->share_id);
	puts_(t, "}");
}

/* A map entry's key, then its value's error when there is one. */
static void
entry_start(struct text *t, size_t i, const char *key)
{
	if (i > 0)
		puts_(t, ",");
	quoted(t, key);
	puts_(t, ":{");
}

static void
entry_error(struct text *t, const char *sep, const char *error)
{
	if (error != NULL && error[0] != '\0')
		field(t, sep, "error", error);
	puts_(t, "}");
}

static void
prepare_body(struct text *t, const ProtobufCMessage *msg)
{
	const PrepResp	*m = (const PrepResp *)msg;
	const PrepClaim	*v;
	size_t		 i, j;

	puts_(t, "{claims:{");
	for (i = 0; i < m->n_claims; i++) {
		entry_start(t, i, m->claims[i]->key);
		v = m->claims[i]->value;
		puts_(t, "devices:[");
		for (j = 0; v != NULL && j < v->n_devices; j++) {
			if (j > 0)
				puts_(t, ",");
			device(t, v->devices[j]);
		}
		puts_(t, "]");
		entry_error(t, ",", v != NULL ? v->error : NULL);
	}
	puts_(t, "}}");
}

static void
unprepare_body(struct text *t, const ProtobufCMessage *msg)
{
	const UnprepResp	*m = (const UnprepResp *)msg;
	size_t			 i;

	puts_(t, "{claims:{");
	for (i = 0; i < m->n_claims; i++) {
		entry_start(t, i, m->claims[i]->key);
		entry_error(t, "", m->claims[i]->value != NULL ?
		    m->claims[i]->value->error : NULL);
	}
	puts_(t, "}}");
}

/* Decode msg as desc and render it with body into out (size bytes). */
static void
render(const ProtobufCMessageDescriptor *desc,
    void (*body)(struct text *, const ProtobufCMessage *),
    const uint8_t *msg, size_t len, char *out, size_t size)
{
	struct text		 t;
	ProtobufCMessage	*m;
	char			 s[64];

	if (!text_begin(&t, out, size))
		return;
	if (ipc_wire_check(desc, msg, len, s, sizeof(s)) != 0 ||
	    (m = protobuf_c_message_unpack(desc, NULL, len, msg)) == NULL) {
		snprintf(s, sizeof(s), "<malformed, %zu bytes>", len);
		puts_(&t, s);
	} else {
		body(&t, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	text_end(&t);
}

void
dra_format_request(const uint8_t *msg, size_t len, char *out, size_t size)
{
	render(&V1(node_prepare_resources_request__descriptor),
	    request_body, msg, len, out, size);
}

void
dra_format_prepare_response(const uint8_t *msg, size_t len, char *out,
    size_t size)
{
	render(&V1(node_prepare_resources_response__descriptor),
	    prepare_body, msg, len, out, size);
}

void
dra_format_unprepare_response(const uint8_t *msg, size_t len, char *out,
    size_t size)
{
	render(&V1(node_unprepare_resources_response__descriptor),
	    unprepare_body, msg, len, out, size);
}
