/*
 * fuzz_dra.c - libFuzzer target for the DRA decoders: the input is fed as
 * a NodePrepareResources and a NodeUnprepareResources request of every
 * version (through dra_prepare/dra_unprepare, with a claim look-up and a
 * hook that exercise the result builders), and to the call-logging
 * renderers as request and responses. Responses that come back must decode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodeserver/dra.h"
#include "dra_v1.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A look-up that fails for some claims and fills the others. */
static int
lookup(void *user, const char *ns, const char *name, const char *uid,
    struct dra_claim_alloc *out, char *err, size_t errsize)
{
	if (uid[0] == 'x') {
		snprintf(err, errsize, "claim %s/%s got replaced", ns, name);
		return (1);
	}
	if (dra_claim_alloc_add(out, name, ns, uid, uid[0] == 'a') != 0)
		return (1);
	return (uid[0] == 'c' ? 0 : dra_claim_alloc_config(out, "[]", "d",
	    err, errsize));
}

static int
prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 d;
	const char			*names[2], *ids[1];
	char				 id[300];
	size_t				 i;

	for (i = 0; i < n; i++) {
		names[0] = claims[i].name;
		names[1] = claims[i].uid;
		memset(&d, 0, sizeof(d));
		d.struct_size = sizeof(d);
		d.request_names = names;
		d.n_request_names = 2;
		d.pool_name = claims[i].namespace_;
		d.device_name = claims[i].name;
		/* A valid CDI ID (a claim UID is a valid device name), but
		 * one that breaks the rule for UIDs starting with 'b'. */
		snprintf(id, sizeof(id), "%s%s", claims[i].uid[0] == 'b' ?
		    "" : "vendor.example.com/class=", claims[i].uid);
		ids[0] = id;
		d.cdi_device_ids = ids;
		d.n_cdi_device_ids = 1;
		d.share_id = claims[i].uid[0] == 's' ? claims[i].uid : NULL;
		kp_prepare_add_device(res, i, &d);
		if (claims[i].uid[0] == 'e')
			kp_prepare_claim_error(res, i, claims[i].name);
	}
	if (n > 0 && claims[0].uid[0] == 'f') {
		snprintf(errbuf, errsize, "hook failed");
		return (KP_EHOOK);
	}
	return (0);
}

static int
unprepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (claims[i].uid[0] == 'e')
			kp_unprepare_claim_error(res, i, claims[i].uid);
	return (0);
}

/* req_len: an empty request's answer is the empty message, 0 bytes. */
static void
check_response(int prepare_op, size_t req_len, const uint8_t *resp,
    size_t len)
{
	ProtobufCMessage			*m;
	const ProtobufCMessageDescriptor	*desc;
	char					 text[256];

	desc = prepare_op ?
	    &V1(node_prepare_resources_response__descriptor) :
	    &V1(node_unprepare_resources_response__descriptor);
	if ((m = protobuf_c_message_unpack(desc, NULL, len, resp)) == NULL)
		__builtin_trap();	/* we wrote something undecodable */
	if (req_len == 0 && len != 0)
		__builtin_trap();	/* a body for no claim (issue 28) */
	protobuf_c_message_free_unpacked(m, NULL);
	if (prepare_op)
		dra_format_prepare_response(resp, len, text, sizeof(text));
	else
		dra_format_unprepare_response(resp, len, text, sizeof(text));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kp_options	opts;
	static struct kp_hooks		hooks = { NULL, prepare,
					    unprepare, NULL };
	static struct dra_ctx		ctx;
	static int			ready;
	uint8_t				*resp;
	size_t				 len;
	char				 msg[512], text[256];
	int				 v, st;

	if (!ready) {
		opts.v1alpha4 = opts.v1beta1 = opts.v1 = 1;
		opts.serialize = 1;
		if (dra_init(&ctx, &opts, &hooks) != 0)
			return (0);
		ready = 1;
	}
	for (v = 0; v < DRA_NVERSIONS; v++) {
		ctx.lookup = v == DRA_V1 ? NULL : lookup;
		st = dra_prepare(&ctx, (enum dra_version)v, data, size, NULL,
		    NULL, &resp, &len, msg, sizeof(msg));
		if (st == RPC_OK)
			check_response(1, size, resp, len);
		free(resp);
		st = dra_unprepare(&ctx, (enum dra_version)v, data, size, NULL,
		    NULL, &resp, &len, msg, sizeof(msg));
		if (st == RPC_OK)
			check_response(0, size, resp, len);
		free(resp);
	}
	dra_format_request(data, size, text, sizeof(text));
	dra_format_prepare_response(data, size, text, sizeof(text));
	dra_format_unprepare_response(data, size, text, sizeof(text));
	return (0);
}
