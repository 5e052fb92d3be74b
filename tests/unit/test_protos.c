/*
 * test_protos.c - the protobuf-c code generated from the proto/ files.
 *
 * 1. Every message of every proto file round-trips: a sample with every
 *    field set (non-default scalars, two elements per repeated field,
 *    nested messages, each oneof case in turn and none) is packed,
 *    unpacked and compared field by field, walking the descriptors, and
 *    re-packing gives the same bytes.
 * 2. Hand-built kubelet messages: map fields with several keys, v1 Device
 *    share_id absent / present-empty / present-non-empty.
 * 3. Golden wire bytes, computed by hand from the protobuf encoding rules,
 *    for at least one message per service.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "pluginregistration.pb-c.h"
#include "dra_v1alpha4.pb-c.h"
#include "dra_v1beta1.pb-c.h"
#include "dra_v1.pb-c.h"
#include "dra_health_v1alpha1.pb-c.h"
#include "ipc.pb-c.h"
#include "test.h"

#define MAX_DEPTH	8

/* Short names for the generated ones. */
#define V1T(x)		K8s__Io__Kubelet__Pkg__Apis__Dra__V1__##x
#define V1FN(x)		k8s__io__kubelet__pkg__apis__dra__v1__##x
#define V1INIT(X)	K8S__IO__KUBELET__PKG__APIS__DRA__V1__##X##__INIT
#define B1T(x)		K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__##x
#define B1FN(x)		k8s__io__kubelet__pkg__apis__dra__v1beta1__##x
#define B1INIT(X)	K8S__IO__KUBELET__PKG__APIS__DRA__V1BETA1__##X##__INIT
#define V1_SHARE_ID	\
    K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE___SHARE_ID_SHARE_ID
#define V1_SHARE_NOT_SET	\
    K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE___SHARE_ID__NOT_SET

static const ProtobufCMessageDescriptor *all[] = {
	&pluginregistration__info_request__descriptor,
	&pluginregistration__plugin_info__descriptor,
	&pluginregistration__registration_status__descriptor,
	&pluginregistration__registration_status_response__descriptor,

	&v1alpha3__node_prepare_resources_request__descriptor,
	&v1alpha3__node_prepare_resources_response__descriptor,
	&v1alpha3__node_prepare_resources_response__claims_entry__descriptor,
	&v1alpha3__node_prepare_resource_response__descriptor,
	&v1alpha3__device__descriptor,
	&v1alpha3__node_unprepare_resources_request__descriptor,
	&v1alpha3__node_unprepare_resources_response__descriptor,
	&v1alpha3__node_unprepare_resources_response__claims_entry__descriptor,
	&v1alpha3__node_unprepare_resource_response__descriptor,
	&v1alpha3__claim__descriptor,

#define V1B1(x) &B1FN(x##__descriptor)
	V1B1(node_prepare_resources_request),
	V1B1(node_prepare_resources_response),
	V1B1(node_prepare_resources_response__claims_entry),
	V1B1(node_prepare_resource_response),
	V1B1(device),
	V1B1(node_unprepare_resources_request),
	V1B1(node_unprepare_resources_response),
	V1B1(node_unprepare_resources_response__claims_entry),
	V1B1(node_unprepare_resource_response),
	V1B1(claim),
#undef V1B1

#define V1(x) &V1FN(x##__descriptor)
	V1(node_prepare_resources_request),
	V1(node_prepare_resources_response),
	V1(node_prepare_resources_response__claims_entry),
	V1(node_prepare_resource_response),
	V1(device),
	V1(node_unprepare_resources_request),
	V1(node_unprepare_resources_response),
	V1(node_unprepare_resources_response__claims_entry),
	V1(node_unprepare_resource_response),
	V1(claim),
#undef V1

	&v1alpha1__node_watch_resources_request__descriptor,
	&v1alpha1__device_identifier__descriptor,
	&v1alpha1__device_health__descriptor,
	&v1alpha1__node_watch_resources_response__descriptor,

	&kpipc__result__descriptor,
	&kpipc__ready__descriptor,
	&kpipc__start_failed__descriptor,
	&kpipc__reg_status__descriptor,
	&kpipc__claim_get__descriptor,
	&kpipc__allocated_device__descriptor,
	&kpipc__claim_reply__descriptor,
	&kpipc__attribute__descriptor,
	&kpipc__capacity__descriptor,
	&kpipc__device__descriptor,
	&kpipc__slice__descriptor,
	&kpipc__selector_requirement__descriptor,
	&kpipc__node_selector__descriptor,
	&kpipc__pool__descriptor,
	&kpipc__publish__descriptor,
	&kpipc__reg_status_query__descriptor,
	&kpipc__reg_status_reply__descriptor,
	&kpipc__stop__descriptor,
	&kpipc__log__descriptor,
	&kpipc__msg__descriptor,
};

/* ------------------------------------------------------------------------
 * Descriptor-driven sample builder and comparator.
 */

static unsigned int	counter;

/* The oneof group of field i: its index in the group and the group size. */
static void
oneof_pos(const ProtobufCMessageDescriptor *d, unsigned int i,
    unsigned int *idx, unsigned int *size)
{
	unsigned int	j;

	*idx = *size = 0;
	for (j = 0; j < d->n_fields; j++) {
		if (!(d->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
		    d->fields[j].quantifier_offset !=
		    d->fields[i].quantifier_offset)
			continue;
		if (j < i)
			(*idx)++;
		(*size)++;
	}
}

/* The largest oneof group of d and of the messages below it. */
static unsigned int
max_oneof(const ProtobufCMessageDescriptor *d, int depth)
{
	unsigned int	i, idx, size, m = 0, sub;

	if (depth > MAX_DEPTH)
		return (0);
	for (i = 0; i < d->n_fields; i++) {
		if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			oneof_pos(d, i, &idx, &size);
			if (size > m)
				m = size;
		}
		if (d->fields[i].type == PROTOBUF_C_TYPE_MESSAGE) {
			sub = max_oneof(d->fields[i].descriptor, depth + 1);
			if (sub > m)
				m = sub;
		}
	}
	return (m);
}

static void *fill(const ProtobufCMessageDescriptor *, unsigned int, int);

/* A non-default value of field f at p. */
static void
fill_value(const ProtobufCFieldDescriptor *f, void *p, unsigned int variant,
    int depth)
{
	const ProtobufCEnumDescriptor	*e;
	ProtobufCBinaryData		*bd;
	char				 s[64];
	unsigned int			 n = ++counter;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		/* Negative on odd counts: sign extension on the wire. */
		*(int32_t *)p = (n & 1) ? -(int32_t)n * 1000 : (int32_t)n;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)p = 0x80000000u + n;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)p = (int64_t)n * ((n & 1) ? -(INT64_C(1) << 33) :
		    INT64_C(1) << 33);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)p = 0x8000000000000000ull + n;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)p = 0.5f + (float)n;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)p = 0.25 + n;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)p = 1;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		e = f->descriptor;
		*(int *)p = e->values[e->n_values - 1].value;
		break;
	case PROTOBUF_C_TYPE_STRING:
		/* Unique: map keys differ between entries. */
		snprintf(s, sizeof(s), "%s-%u", f->name, n);
		*(char **)p = strdup(s);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		bd = p;
		bd->len = 3;
		bd->data = malloc(3);
		if (bd->data != NULL)
			memcpy(bd->data, "\0\1\2", 3);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(void **)p = fill(f->descriptor, variant, depth + 1);
		break;
	}
}

static size_t
value_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return (4);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return (8);
	case PROTOBUF_C_TYPE_FLOAT:
		return (sizeof(float));
	case PROTOBUF_C_TYPE_DOUBLE:
		return (sizeof(double));
	case PROTOBUF_C_TYPE_BOOL:
		return (sizeof(protobuf_c_boolean));
	case PROTOBUF_C_TYPE_ENUM:
		return (sizeof(int));
	case PROTOBUF_C_TYPE_STRING:
		return (sizeof(char *));
	case PROTOBUF_C_TYPE_BYTES:
		return (sizeof(ProtobufCBinaryData));
	case PROTOBUF_C_TYPE_MESSAGE:
		return (sizeof(void *));
	}
	return (0);
}

/*
 * A message of type d with every field set. variant picks the member of
 * each oneof group (variant >= group size: none set).
 */
static void *
fill(const ProtobufCMessageDescriptor *d, unsigned int variant, int depth)
{
	const ProtobufCFieldDescriptor	*f;
	ProtobufCMessage		*m;
	unsigned int			 i, idx, size;
	size_t				 k, n;
	char				*arr;

	if ((m = calloc(1, d->sizeof_message)) == NULL)
		return (NULL);
	protobuf_c_message_init(d, m);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			oneof_pos(d, i, &idx, &size);
			if (idx != variant)
				continue;
			*(uint32_t *)(void *)((char *)m +
			    f->quantifier_offset) = f->id;
			fill_value(f, (char *)m + f->offset, variant, depth);
		} else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = depth < MAX_DEPTH ? 2 : 0;
			arr = n ? calloc(n, value_size(f)) : NULL;
			if (arr == NULL)
				n = 0;
			for (k = 0; k < n; k++)
				fill_value(f, arr + k * value_size(f), variant,
				    depth);
			*(size_t *)(void *)((char *)m + f->quantifier_offset) =
			    n;
			*(void **)(void *)((char *)m + f->offset) = arr;
		} else {
			if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
			    f->quantifier_offset != 0)
				*(protobuf_c_boolean *)(void *)((char *)m +
				    f->quantifier_offset) = 1;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    depth >= MAX_DEPTH)
				continue;
			fill_value(f, (char *)m + f->offset, variant, depth);
		}
	}
	return (m);
}

static int msg_eq(const ProtobufCMessage *, const ProtobufCMessage *,
    const char *);

static int
value_eq(const ProtobufCFieldDescriptor *f, const void *a, const void *b,
    const char *path)
{
	const ProtobufCBinaryData	*ba = a, *bb = b;
	const char			*sa, *sb;

	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		sa = *(char *const *)a;
		sb = *(char *const *)b;
		if (sa == NULL || sb == NULL)
			return (sa == sb);
		return (strcmp(sa, sb) == 0);
	case PROTOBUF_C_TYPE_BYTES:
		return (ba->len == bb->len && (ba->len == 0 ||
		    memcmp(ba->data, bb->data, ba->len) == 0));
	case PROTOBUF_C_TYPE_MESSAGE:
		return (msg_eq(*(ProtobufCMessage *const *)a,
		    *(ProtobufCMessage *const *)b, path));
	default:
		return (memcmp(a, b, value_size(f)) == 0);
	}
}

/* Field by field; prints the path of the first difference. */
static int
msg_eq(const ProtobufCMessage *a, const ProtobufCMessage *b,
    const char *path)
{
	const ProtobufCMessageDescriptor	*d;
	const ProtobufCFieldDescriptor		*f;
	const char				*ca = (const char *)a;
	const char				*cb = (const char *)b;
	char					 sub[512];
	unsigned int				 i;
	size_t					 k, na, nb, sz;
	uint32_t				 qa, qb;
	protobuf_c_boolean			 ha, hb;

	if (a == NULL || b == NULL) {
		if (a != b)
			fprintf(stderr, "%s: one side NULL\n", path);
		return (a == b);
	}
	d = a->descriptor;
	if (b->descriptor != d || b->n_unknown_fields != 0) {
		fprintf(stderr, "%s: descriptor or unknown fields\n", path);
		return (0);
	}
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			qa = *(const uint32_t *)(const void *)(ca +
			    f->quantifier_offset);
			qb = *(const uint32_t *)(const void *)(cb +
			    f->quantifier_offset);
			if (qa != qb) {
				fprintf(stderr, "%s: oneof case %u != %u\n",
				    sub, qa, qb);
				return (0);
			}
			if (qa != f->id)
				continue;
		} else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			na = *(const size_t *)(const void *)(ca +
			    f->quantifier_offset);
			nb = *(const size_t *)(const void *)(cb +
			    f->quantifier_offset);
			if (na != nb) {
				fprintf(stderr, "%s: %zu != %zu elements\n",
				    sub, na, nb);
				return (0);
			}
			sz = value_size(f);
			for (k = 0; k < na; k++)
				if (!value_eq(f, *(char *const *)(const void *)
				    (ca + f->offset) + k * sz,
				    *(char *const *)(const void *)(cb +
				    f->offset) + k * sz, sub)) {
					fprintf(stderr, "%s[%zu] differs\n",
					    sub, k);
					return (0);
				}
			continue;
		} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		    f->quantifier_offset != 0) {
			ha = *(const protobuf_c_boolean *)(const void *)(ca +
			    f->quantifier_offset);
			hb = *(const protobuf_c_boolean *)(const void *)(cb +
			    f->quantifier_offset);
			if (ha != hb)
				return (0);
			if (!ha)
				continue;
		}
		if (!value_eq(f, ca + f->offset, cb + f->offset, sub)) {
			fprintf(stderr, "%s differs\n", sub);
			return (0);
		}
	}
	return (1);
}

/* Pack m, unpack, compare, re-pack and compare the bytes. */
static void
round_trip(const ProtobufCMessage *m, const char *what)
{
	ProtobufCMessage	*u;
	uint8_t			*buf, *buf2;
	size_t			 len, len2;

	len = protobuf_c_message_get_packed_size(m);
	if ((buf = malloc(len + 1)) == NULL)
		return;
	CHECK_EQ(protobuf_c_message_pack(m, buf), len);
	u = protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
	CHECK(u != NULL);
	if (u != NULL) {
		if (!msg_eq(m, u, what)) {
			fprintf(stderr, "round trip of %s failed\n", what);
			CHECK(0);
		}
		len2 = protobuf_c_message_get_packed_size(u);
		CHECK_EQ(len2, len);
		if (len2 == len && (buf2 = malloc(len + 1)) != NULL) {
			CHECK_EQ(protobuf_c_message_pack(u, buf2), len);
			CHECK(memcmp(buf, buf2, len) == 0);
			free(buf2);
		}
		protobuf_c_message_free_unpacked(u, NULL);
	}
	free(buf);
}

static void
test_all_round_trips(void)
{
	ProtobufCMessage	*m;
	unsigned int		 v, nv;
	size_t			 i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		/* Every oneof member in turn, then none. */
		nv = max_oneof(all[i], 0) + 1;
		for (v = 0; v < nv; v++) {
			m = fill(all[i], v, 0);
			CHECK(m != NULL);
			if (m == NULL)
				continue;
			CHECK(protobuf_c_message_check(m));
			round_trip(m, all[i]->name);
			protobuf_c_message_free_unpacked(m, NULL);
		}
	}
}

/* The comparator itself notices a change deep down and a oneof case. */
static void
test_comparator(void)
{
	const ProtobufCMessageDescriptor *d =
	    &V1FN(node_prepare_resources_response__descriptor);
	V1T(NodePrepareResourcesResponse) *a, *b;
	V1T(Device)	*dev;
	uint8_t		*buf;
	size_t		 len;

	a = fill(d, 0, 0);
	if (a == NULL)
		return;
	len = protobuf_c_message_get_packed_size(&a->base);
	if ((buf = malloc(len)) == NULL)
		return;
	protobuf_c_message_pack(&a->base, buf);
	b = (void *)protobuf_c_message_unpack(d, NULL, len, buf);
	CHECK(b != NULL);
	if (b != NULL) {
		CHECK(msg_eq(&a->base, &b->base, "same"));
		CHECK_EQ(b->n_claims, 2);
		dev = b->claims[1]->value->devices[1];
		CHECK_EQ(dev->_share_id_case, V1_SHARE_ID);
		dev->share_id[0] ^= 1;
		fprintf(stderr, "(a difference is expected next)\n");
		CHECK(!msg_eq(&a->base, &b->base, "changed"));
		dev->share_id[0] ^= 1;
		dev->_share_id_case = 0;
		fprintf(stderr, "(a difference is expected next)\n");
		CHECK(!msg_eq(&a->base, &b->base, "case"));
		dev->_share_id_case = V1_SHARE_ID;
		CHECK(msg_eq(&a->base, &b->base, "restored"));
		protobuf_c_message_free_unpacked(&b->base, NULL);
	}
	free(buf);
	protobuf_c_message_free_unpacked(&a->base, NULL);
}

/* ------------------------------------------------------------------------
 * Hand-built messages.
 */

typedef V1T(Device) V1Device;
typedef V1T(Claim) V1Claim;
typedef V1T(NodePrepareResourcesRequest) V1PrepReq;
typedef V1T(NodePrepareResourcesResponse) V1PrepResp;
typedef V1T(NodePrepareResourcesResponse__ClaimsEntry) V1PrepEntry;
typedef V1T(NodePrepareResourceResponse) V1PrepOne;
typedef V1T(NodeUnprepareResourcesResponse) V1UnprepResp;
typedef V1T(NodeUnprepareResourcesResponse__ClaimsEntry) V1UnprepEntry;
typedef V1T(NodeUnprepareResourceResponse) V1UnprepOne;
typedef B1T(Device) B1Device;
typedef B1T(NodePrepareResourcesResponse) B1PrepResp;
typedef B1T(NodePrepareResourcesResponse__ClaimsEntry) B1PrepEntry;
typedef B1T(NodePrepareResourceResponse) B1PrepOne;

#define V1_DEVICE_INIT	V1INIT(DEVICE)

static void
check_bytes(const ProtobufCMessage *m, const uint8_t *want, size_t len,
    const char *what)
{
	uint8_t	buf[256];
	size_t	n, i;

	n = protobuf_c_message_get_packed_size(m);
	CHECK_EQ(n, len);
	if (n != len || n > sizeof(buf)) {
		fprintf(stderr, "%s: %zu bytes, want %zu\n", what, n, len);
		return;
	}
	CHECK_EQ(protobuf_c_message_pack(m, buf), len);
	if (len != 0 && memcmp(buf, want, len) != 0) {
		fprintf(stderr, "%s: got", what);
		for (i = 0; i < n; i++)
			fprintf(stderr, " %02x", buf[i]);
		fprintf(stderr, "\n");
		CHECK(0);
	}
}

/* share_id: absent, present and empty, present "x" stay distinct. */
static void
test_share_id(void)
{
	static const uint8_t	 absent[] = { 0x12, 0x01, 'p', 0x1a, 0x01,
	    'd' };
	static const uint8_t	 empty[] = { 0x12, 0x01, 'p', 0x1a, 0x01,
	    'd', 0x2a, 0x00 };
	static const uint8_t	 x[] = { 0x12, 0x01, 'p', 0x1a, 0x01, 'd',
	    0x2a, 0x01, 'x' };
	const uint8_t		*enc[3] = { absent, empty, x };
	size_t			 lens[3] = { sizeof(absent),
	    sizeof(empty), sizeof(x) };
	V1Device		 d = V1_DEVICE_INIT, *u;
	int			 i;

	d.pool_name = "p";
	d.device_name = "d";
	for (i = 0; i < 3; i++) {
		d._share_id_case = i == 0 ? V1_SHARE_NOT_SET : V1_SHARE_ID;
		d.share_id = i == 0 ? NULL : i == 1 ? "" : "x";
		check_bytes(&d.base, enc[i], lens[i], "v1 Device share_id");
		u = V1FN(device__unpack)(NULL, lens[i], enc[i]);
		CHECK(u != NULL);
		if (u == NULL)
			continue;
		CHECK_STREQ(u->pool_name, "p");
		CHECK_STREQ(u->device_name, "d");
		CHECK_EQ(u->n_request_names, 0);
		CHECK_EQ(u->n_cdi_device_ids, 0);
		CHECK_EQ(u->base.n_unknown_fields, 0);
		switch (i) {
		case 0:
			CHECK_EQ(u->_share_id_case, V1_SHARE_NOT_SET);
			break;
		case 1:
			CHECK_EQ(u->_share_id_case, V1_SHARE_ID);
			CHECK_STREQ(u->share_id, "");
			break;
		case 2:
			CHECK_EQ(u->_share_id_case, V1_SHARE_ID);
			CHECK_STREQ(u->share_id, "x");
			break;
		}
		V1FN(device__free_unpacked)(u, NULL);
	}
}

/* A v1 prepare response with three claims, found again by key. */
static void
test_v1_prepare_map(void)
{
	static const char	*keys[3] = { "uid-a", "uid-b", "uid-c" };
	char			*req_names[2] = { "req-0", "req-1/sub" };
	char			*cdi[1] = { "example.com/gpu=gpu0" };
	V1Device		 dev[2] = { V1_DEVICE_INIT, V1_DEVICE_INIT };
	V1Device		*devp[2] = { &dev[0], &dev[1] };
	V1PrepOne		 one[3];
	V1PrepEntry		 ent[3], *entp[3];
	V1PrepResp		 resp =
	    V1INIT(NODE_PREPARE_RESOURCES_RESPONSE);
	V1PrepResp		*u;
	V1PrepOne		*v;
	uint8_t			 buf[1024];
	size_t			 len, i, j, found;

	dev[0].n_request_names = 2;
	dev[0].request_names = req_names;
	dev[0].pool_name = "pool-0";
	dev[0].device_name = "gpu0";
	dev[0].n_cdi_device_ids = 1;
	dev[0].cdi_device_ids = cdi;
	dev[0]._share_id_case = V1_SHARE_ID;
	dev[0].share_id = "share-1";
	dev[1].pool_name = "pool-0";
	dev[1].device_name = "gpu1";
	for (i = 0; i < 3; i++) {
		V1FN(node_prepare_resource_response__init)(&one[i]);
		V1FN(node_prepare_resources_response__claims_entry__init)(
		    &ent[i]);
		ent[i].key = (char *)keys[i];
		ent[i].value = &one[i];
		entp[i] = &ent[i];
	}
	one[0].n_devices = 2;
	one[0].devices = devp;
	one[1].error = "claim uid-b: no such device";
	/* one[2]: success without devices. */
	resp.n_claims = 3;
	resp.claims = entp;

	len = protobuf_c_message_get_packed_size(&resp.base);
	CHECK(len <= sizeof(buf));
	if (len > sizeof(buf))
		return;
	protobuf_c_message_pack(&resp.base, buf);
	round_trip(&resp.base, "v1 NodePrepareResourcesResponse");
	u = V1FN(node_prepare_resources_response__unpack)(NULL, len, buf);
	CHECK(u != NULL);
	if (u == NULL)
		return;
	CHECK_EQ(u->n_claims, 3);
	for (i = 0; i < 3; i++) {
		v = NULL;
		found = 0;
		for (j = 0; j < u->n_claims; j++)
			if (strcmp(u->claims[j]->key, keys[i]) == 0) {
				v = u->claims[j]->value;
				found++;
			}
		CHECK_EQ(found, 1);
		CHECK(v != NULL);
		if (v == NULL)
			continue;
		switch (i) {
		case 0:
			CHECK_STREQ(v->error, "");
			CHECK_EQ(v->n_devices, 2);
			if (v->n_devices != 2)
				break;
			CHECK_EQ(v->devices[0]->n_request_names, 2);
			CHECK_STREQ(v->devices[0]->request_names[1],
			    "req-1/sub");
			CHECK_STREQ(v->devices[0]->pool_name, "pool-0");
			CHECK_STREQ(v->devices[0]->device_name, "gpu0");
			CHECK_EQ(v->devices[0]->n_cdi_device_ids, 1);
			CHECK_STREQ(v->devices[0]->cdi_device_ids[0],
			    "example.com/gpu=gpu0");
			CHECK_EQ(v->devices[0]->_share_id_case, V1_SHARE_ID);
			CHECK_STREQ(v->devices[0]->share_id, "share-1");
			CHECK_STREQ(v->devices[1]->device_name, "gpu1");
			CHECK_EQ(v->devices[1]->_share_id_case,
			    V1_SHARE_NOT_SET);
			break;
		case 1:
			CHECK_STREQ(v->error, "claim uid-b: no such device");
			CHECK_EQ(v->n_devices, 0);
			break;
		case 2:
			CHECK_STREQ(v->error, "");
			CHECK_EQ(v->n_devices, 0);
			break;
		}
	}
	V1FN(node_prepare_resources_response__free_unpacked)(u, NULL);
}

/* The same map shape in v1alpha4 and v1beta1 (unprepare responses). */
static void
test_older_maps(void)
{
	V1alpha3__NodeUnprepareResourceResponse	 a_one[3];
	V1alpha3__NodeUnprepareResourcesResponse__ClaimsEntry a_ent[3];
	V1alpha3__NodeUnprepareResourcesResponse__ClaimsEntry *a_entp[3];
	V1alpha3__NodeUnprepareResourcesResponse a_resp =
	    V1ALPHA3__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
	B1PrepOne		 b_one[2];
	B1PrepEntry		 b_ent[2], *b_entp[2];
	B1PrepResp		 b_resp =
	    B1INIT(NODE_PREPARE_RESOURCES_RESPONSE);
	B1Device		 b_dev = B1INIT(DEVICE);
	B1Device		*b_devp = &b_dev;
	static const char	*keys[3] = { "k1", "k2", "k3" };
	int			 i;

	for (i = 0; i < 3; i++) {
		v1alpha3__node_unprepare_resource_response__init(&a_one[i]);
		v1alpha3__node_unprepare_resources_response__claims_entry__init(
		    &a_ent[i]);
		a_ent[i].key = (char *)keys[i];
		a_ent[i].value = &a_one[i];
		a_entp[i] = &a_ent[i];
	}
	a_one[1].error = "busy";
	a_resp.n_claims = 3;
	a_resp.claims = a_entp;
	round_trip(&a_resp.base, "v1alpha3 NodeUnprepareResourcesResponse");

	b_dev.pool_name = "p";
	b_dev.device_name = "d";
	for (i = 0; i < 2; i++) {
		B1FN(node_prepare_resource_response__init)(&b_one[i]);
		B1FN(node_prepare_resources_response__claims_entry__init)(
		    &b_ent[i]);
		b_ent[i].key = (char *)keys[i];
		b_ent[i].value = &b_one[i];
		b_entp[i] = &b_ent[i];
	}
	b_one[0].n_devices = 1;
	b_one[0].devices = &b_devp;
	b_one[1].error = "failed";
	b_resp.n_claims = 2;
	b_resp.claims = b_entp;
	round_trip(&b_resp.base, "v1beta1 NodePrepareResourcesResponse");
}

/* ------------------------------------------------------------------------
 * Golden bytes, one message or more per service.
 */

static const uint8_t claim_bytes[] = {
	0x0a, 0x02, 'n', 's', 0x12, 0x01, 'u', 0x1a, 0x01, 'n'
};

static void
test_golden_dra(void)
{
	static const uint8_t	 prep_req[] = {
		0x0a, 0x0a, 0x0a, 0x02, 'n', 's', 0x12, 0x01, 'u', 0x1a, 0x01,
		'n'
	};
	/* {"u": {error: "e"}}: entry = key (1) + value (2) */
	static const uint8_t	 unprep_resp[] = {
		0x0a, 0x08, 0x0a, 0x01, 'u', 0x12, 0x03, 0x0a, 0x01, 'e'
	};
	/* {"u": {}}: an empty value message is still written. */
	static const uint8_t	 prep_resp[] = {
		0x0a, 0x05, 0x0a, 0x01, 'u', 0x12, 0x00
	};
	V1alpha3__Claim		 ac = V1ALPHA3__CLAIM__INIT;
	B1T(Claim)		 bc = B1INIT(CLAIM);
	V1Claim			 c = V1INIT(CLAIM);
	V1Claim			*cp = &c, *u;
	V1PrepReq		 req = V1INIT(NODE_PREPARE_RESOURCES_REQUEST);
	V1UnprepOne		 uone =
	    V1INIT(NODE_UNPREPARE_RESOURCE_RESPONSE);
	V1UnprepEntry		 uent =
	    V1INIT(NODE_UNPREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY);
	V1UnprepEntry		*uentp = &uent;
	V1UnprepResp		 uresp =
	    V1INIT(NODE_UNPREPARE_RESOURCES_RESPONSE);
	V1PrepOne		 pone = V1INIT(NODE_PREPARE_RESOURCE_RESPONSE);
	V1PrepEntry		 pent =
	    V1INIT(NODE_PREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY);
	V1PrepEntry		*pentp = &pent;
	V1PrepResp		 presp =
	    V1INIT(NODE_PREPARE_RESOURCES_RESPONSE);

	/* Claim{namespace:"ns", uid:"u", name:"n"} in all three versions. */
	ac.namespace_ = bc.namespace_ = c.namespace_ = "ns";
	ac.uid = bc.uid = c.uid = "u";
	ac.name = bc.name = c.name = "n";
	check_bytes(&ac.base, claim_bytes, sizeof(claim_bytes),
	    "v1alpha3 Claim");
	check_bytes(&bc.base, claim_bytes, sizeof(claim_bytes),
	    "v1beta1 Claim");
	check_bytes(&c.base, claim_bytes, sizeof(claim_bytes), "v1 Claim");
	u = V1FN(claim__unpack)(NULL, sizeof(claim_bytes), claim_bytes);
	CHECK(u != NULL);
	if (u != NULL) {
		CHECK_STREQ(u->namespace_, "ns");
		CHECK_STREQ(u->uid, "u");
		CHECK_STREQ(u->name, "n");
		V1FN(claim__free_unpacked)(u, NULL);
	}

	req.n_claims = 1;
	req.claims = &cp;
	check_bytes(&req.base, prep_req, sizeof(prep_req),
	    "v1 NodePrepareResourcesRequest");

	uone.error = "e";
	uent.key = "u";
	uent.value = &uone;
	uresp.n_claims = 1;
	uresp.claims = &uentp;
	check_bytes(&uresp.base, unprep_resp, sizeof(unprep_resp),
	    "v1 NodeUnprepareResourcesResponse");

	pent.key = "u";
	pent.value = &pone;
	presp.n_claims = 1;
	presp.claims = &pentp;
	check_bytes(&presp.base, prep_resp, sizeof(prep_resp),
	    "v1 NodePrepareResourcesResponse");
}

static void
test_golden_registration(void)
{
	static const uint8_t	 info[] = {
		0x0a, 0x09, 'D', 'R', 'A', 'P', 'l', 'u', 'g', 'i', 'n',
		0x12, 0x01, 'd',
		0x1a, 0x02, '/', 'e',
		0x22, 0x0c, 'v', '1', '.', 'D', 'R', 'A', 'P', 'l', 'u', 'g',
		'i', 'n',
		0x22, 0x11, 'v', '1', 'b', 'e', 't', 'a', '1', '.', 'D', 'R',
		'A', 'P', 'l', 'u', 'g', 'i', 'n'
	};
	static const uint8_t	 status[] = { 0x08, 0x01, 0x12, 0x01, 'x' };
	char			*versions[2] = { "v1.DRAPlugin",
	    "v1beta1.DRAPlugin" };
	Pluginregistration__PluginInfo pi =
	    PLUGINREGISTRATION__PLUGIN_INFO__INIT;
	Pluginregistration__RegistrationStatus rs =
	    PLUGINREGISTRATION__REGISTRATION_STATUS__INIT;
	Pluginregistration__InfoRequest ir =
	    PLUGINREGISTRATION__INFO_REQUEST__INIT;
	Pluginregistration__PluginInfo *u;

	pi.type = "DRAPlugin";
	pi.name = "d";
	pi.endpoint = "/e";
	pi.n_supported_versions = 2;
	pi.supported_versions = versions;
	check_bytes(&pi.base, info, sizeof(info), "PluginInfo");
	u = pluginregistration__plugin_info__unpack(NULL, sizeof(info), info);
	CHECK(u != NULL);
	if (u != NULL) {
		CHECK_STREQ(u->type, "DRAPlugin");
		CHECK_STREQ(u->endpoint, "/e");
		CHECK_EQ(u->n_supported_versions, 2);
		CHECK_STREQ(u->supported_versions[1], "v1beta1.DRAPlugin");
		pluginregistration__plugin_info__free_unpacked(u, NULL);
	}
	rs.plugin_registered = 1;
	rs.error = "x";
	check_bytes(&rs.base, status, sizeof(status), "RegistrationStatus");
	check_bytes(&ir.base, NULL, 0, "InfoRequest");
}

static void
test_golden_health(void)
{
	/* DeviceHealth is 22 bytes; 1700000000 = 80 e2 cf aa 06. */
	static const uint8_t	 resp[] = {
		0x0a, 0x16,
		0x0a, 0x06, 0x0a, 0x01, 'p', 0x12, 0x01, 'd',
		0x10, 0x01,
		0x18, 0x80, 0xe2, 0xcf, 0xaa, 0x06,
		0x20, 0x1e,
		0x2a, 0x02, 'o', 'k'
	};
	V1alpha1__DeviceIdentifier	 id =
	    V1ALPHA1__DEVICE_IDENTIFIER__INIT;
	V1alpha1__DeviceHealth		 h =
	    V1ALPHA1__DEVICE_HEALTH__INIT;
	V1alpha1__DeviceHealth		*hp = &h;
	V1alpha1__NodeWatchResourcesResponse r =
	    V1ALPHA1__NODE_WATCH_RESOURCES_RESPONSE__INIT;
	V1alpha1__NodeWatchResourcesResponse *u;

	id.pool_name = "p";
	id.device_name = "d";
	h.device = &id;
	h.health = V1ALPHA1__HEALTH_STATUS__HEALTHY;
	h.last_updated_time = 1700000000;
	h.health_check_timeout_seconds = 30;
	h.message = "ok";
	r.n_devices = 1;
	r.devices = &hp;
	check_bytes(&r.base, resp, sizeof(resp), "NodeWatchResourcesResponse");
	u = v1alpha1__node_watch_resources_response__unpack(NULL,
	    sizeof(resp), resp);
	CHECK(u != NULL);
	if (u != NULL) {
		CHECK_EQ(u->n_devices, 1);
		CHECK_EQ(u->devices[0]->health,
		    V1ALPHA1__HEALTH_STATUS__HEALTHY);
		CHECK_EQ(u->devices[0]->last_updated_time, 1700000000);
		CHECK_EQ(u->devices[0]->health_check_timeout_seconds, 30);
		CHECK_STREQ(u->devices[0]->device->device_name, "d");
		CHECK_STREQ(u->devices[0]->message, "ok");
		v1alpha1__node_watch_resources_response__free_unpacked(u,
		    NULL);
	}
}

static void
test_golden_ipc(void)
{
	/* int32 -22 is a ten-byte varint (sign-extended to 64 bits). */
	static const uint8_t	 result[] = {
		0x08, 0xea, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x01, 0x12, 0x01, 'm'
	};
	static const uint8_t	 ready[] = { 0x12, 0x02, 0x08, 0x07 };
	Kpipc__Result		 res = KPIPC__RESULT__INIT;
	Kpipc__Ready		 rd = KPIPC__READY__INIT;
	Kpipc__Msg		 msg = KPIPC__MSG__INIT;
	Kpipc__Msg		*u;

	res.code = -22;
	res.message = "m";
	check_bytes(&res.base, result, sizeof(result), "ipc Result");
	rd.pid = 7;
	msg.m_case = KPIPC__MSG__M_READY;
	msg.ready = &rd;
	check_bytes(&msg.base, ready, sizeof(ready), "ipc Msg{ready}");
	u = kpipc__msg__unpack(NULL, sizeof(ready), ready);
	CHECK(u != NULL);
	if (u != NULL) {
		CHECK_EQ(u->m_case, KPIPC__MSG__M_READY);
		CHECK_EQ(u->ready->pid, 7);
		kpipc__msg__free_unpacked(u, NULL);
	}
}

int
main(void)
{
	test_all_round_trips();
	test_comparator();
	test_share_id();
	test_v1_prepare_map();
	test_older_maps();
	test_golden_dra();
	test_golden_registration();
	test_golden_health();
	test_golden_ipc();
	return (test_done("test_protos"));
}
