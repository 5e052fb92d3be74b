/*
 * dra_v1.c - DRA API v1 (k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin), and
 * the wire codec shared by every version: v1alpha4, v1beta1 and v1 have
 * the same messages and field numbers, v1 adds only Device.share_id = 5.
 * Requests of any version decode as v1 requests; responses of the older
 * versions are v1 responses without share_id, byte for byte what their
 * own generated code would write (tests/unit/test_dra.c checks it).
 * Prepare and unprepare requests are the same message on the wire
 * (repeated Claim claims = 1), so one decoder reads both.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/names.h"
#include "base/utf8.h"
#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "dra_v1.pb-c.h"


typedef V1T(NodePrepareResourcesRequest)
    Request;
typedef V1T(Claim) Claim;
typedef V1T(NodePrepareResourcesResponse)
    PrepResp;
typedef V1T(NodePrepareResourcesResponse__ClaimsEntry)
    PrepEntry;
typedef V1T(NodePrepareResourceResponse)
    PrepClaim;
typedef V1T(Device) Device;
typedef V1T(NodeUnprepareResourcesResponse)
    UnprepResp;
typedef V1T(NodeUnprepareResourcesResponse__ClaimsEntry)
    UnprepEntry;
typedef V1T(NodeUnprepareResourceResponse)
    UnprepClaim;

#define REQUEST_DESC \
	V1(node_prepare_resources_request__descriptor)

const struct dra_version_info dra_v1_info = {
	"v1",
	"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
	"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
	1
};


/*
 * Check one claim as the API server would have: namespace a DNS label,
 * name a DNS subdomain, uid a short token (a UUID in practice). kubelet
 * only sends real claims; the rules keep anything else away from the
 * driver, which may put these strings into file names.
 */
static int
claim_check(const Claim *c, size_t i, char *msg, size_t msgsize)
{
	const char	*field = NULL, *rule = "required";
	char		 uid[NAME_MAX_UID + 1], shown[4 * 64 + 8];

	if (c->namespace_ == NULL || c->namespace_[0] == '\0')
		field = "namespace";
	else if (c->name == NULL || c->name[0] == '\0')
		field = "name";
	else if (strlen(c->namespace_) > NAME_MAX_LABEL ||
	    !name_is_label(c->namespace_, strlen(c->namespace_))) {
		field = "namespace";
		rule = "must be a DNS label";
	} else if (!name_is_subdomain(c->name, strlen(c->name))) {
		field = "name";
		rule = "must be a DNS subdomain";
	} else if (c->uid == NULL || c->uid[0] == '\0')
		field = "uid";
	else if (!name_is_claim_uid(c->uid, strlen(c->uid))) {
		/* The claim is named (its namespace and name passed);
		 * the UID is shown made printable and cut short. */
		snprintf(uid, sizeof(uid) < 65 ? sizeof(uid) : 65, "%s",
		    c->uid);
		log_sanitize(uid, shown, sizeof(shown));
		snprintf(msg, msgsize, "claims[%zu] %s/%s: uid \"%s\": %s", i,
		    c->namespace_, c->name, shown, NAME_R_UID);
		return (KP_EINVAL);
	}
	if (field == NULL)
		return (0);
	snprintf(msg, msgsize, "claims[%zu].%s: %s", i, field, rule);
	return (KP_EINVAL);
}

/*
 * FNV-1a over 8-byte words (a UID is 36 bytes: 5 multiplications, not
 * 36); a UID is random already, any spread will do.
 */
static size_t
uid_hash(const char *s)
{
	uint64_t	 h = 14695981039346656037u, w;
	size_t		 n = strlen(s);

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 1099511628211u;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 1099511628211u;
	return ((size_t)(h ^ (h >> 29)));
}

/*
 * Mark in dup[] every claim whose UID an earlier claim has: an open-
 * addressed table of claim indices + 1 (nslots a power of two, more than
 * twice the claims), so a large request costs one hash per claim. A
 * repeated UID must name the same claim: a UID is one object.
 */
static int
claims_dedup(const Request *m, size_t *slot, size_t nslots, char *dup,
    char *msg, size_t msgsize)
{
	const Claim	*first, *c;
	size_t		 i, h;

	for (i = 0; i < m->n_claims; i++) {
		c = m->claims[i];
		for (h = uid_hash(c->uid) & (nslots - 1); slot[h] != 0;
		    h = (h + 1) & (nslots - 1)) {
			first = m->claims[slot[h] - 1];
			if (strcmp(first->uid, c->uid) != 0)
				continue;
			if (strcmp(first->namespace_, c->namespace_) != 0 ||
			    strcmp(first->name, c->name) != 0) {
				snprintf(msg, msgsize, "claims[%zu].uid: "
				    "repeats claims[%zu] with another "
				    "namespace or name", i, slot[h] - 1);
				return (KP_EINVAL);
			}
			dup[i] = 1;
			break;
		}
		if (!dup[i])
			slot[h] = i + 1;
	}
	return (0);
}

/* The request's memory goes with its arena (dra_arena.c). */
static void
arena_nofree(void *head_p, void *p)
{
	(void)head_p;
	(void)p;
}

/* Zeroed memory from the request's arena. */
static void *
arena_zalloc(struct dra_request *out, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > SIZE_MAX / size)
		return (NULL);
	if ((p = dra_arena_alloc(&out->arena, n * size)) != NULL)
		memset(p, 0, n * size);
	return (p);
}

/*
 * Check every claim, then keep the first claim of each UID, in request
 * order. kubelet never repeats a claim; if it did, its "left out" check
 * (entries < claims sent) would fail whatever we answered, since a map
 * holds a key once: one entry per distinct UID is the most we can do.
 */
static int
claims_collect(const Request *m, struct dra_request *out, char *msg,
    size_t msgsize)
{
	size_t		*slot, nslots = 4;
	char		*dup;
	size_t		 i;
	int		 rc;

	for (i = 0; i < m->n_claims; i++)
		if (claim_check(m->claims[i], i, msg, msgsize) != 0)
			return (KP_EINVAL);
	if (m->n_claims == 0)
		return (0);
	/* Only now: a hostile request of many bad claims is refused before
	 * its claims cost 64 bytes each (zeroed, so touched). */
	if ((out->claims = arena_zalloc(out, m->n_claims,
	    sizeof(*out->claims))) == NULL)
		return (KP_ENOMEM);
	while (nslots < 2 * m->n_claims)
		nslots *= 2;
	slot = arena_zalloc(out, nslots, sizeof(*slot));
	dup = arena_zalloc(out, m->n_claims, 1);
	if (slot == NULL || dup == NULL)
		return (KP_ENOMEM);
	if ((rc = claims_dedup(m, slot, nslots, dup, msg, msgsize)) == 0) {
		for (i = 0; i < m->n_claims; i++) {
			if (dup[i])
				continue;
			out->claims[out->n_claims].namespace_ =
			    m->claims[i]->namespace_;
			out->claims[out->n_claims].name = m->claims[i]->name;
			out->claims[out->n_claims].uid = m->claims[i]->uid;
			out->n_claims++;
		}
	}
	return (rc);
}

/*
 * Decode a prepare or unprepare request of any version. Returns 0,
 * KP_EPROTO (not a valid message), KP_EINVAL (a claim breaks a rule; msg
 * names the field) or KP_ENOMEM. Unknown fields are ignored: a newer
 * kubelet may send them (proto3).
 */
int
dra_decode_request(const uint8_t *buf, size_t len, struct dra_request *out,
    char *msg, size_t msgsize)
{
	ProtobufCAllocator	 al;
	Request			*m;
	char			 why[KP_ERROR_SIZE];
	int			 rc;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	/* The first chunk: room for the usual request (the unpacked claims
	 * take about three times their wire size) in one malloc. */
	if (dra_arena_grow(&out->arena, len < SIZE_MAX / 4 - 1024 ?
	    3 * len + 1024 : len) != 0)
		return (KP_ENOMEM);
	al.alloc = dra_arena_alloc;
	al.free = arena_nofree;
	al.allocator_data = &out->arena;
	if (ipc_wire_check(&REQUEST_DESC, buf, len, why, sizeof(why)) != 0 ||
	    (m = (Request *)protobuf_c_message_unpack(&REQUEST_DESC, &al, len,
	    buf)) == NULL) {
		dra_request_free(out);
		return (KP_EPROTO);
	}
	out->msg = m;
	out->n_requested = m->n_claims;
	if ((rc = claims_collect(m, out, msg, msgsize)) != 0)
		dra_request_free(out);
	return (rc);
}

/* Everything lives in the arena: no walk through the message. */
void
dra_request_free(struct dra_request *r)
{
	dra_arena_free(r->arena);
	memset(r, 0, sizeof(*r));
}

/* Pack m into a buffer from o (NULL: malloc'd; the caller frees it). */
static int
pack(const ProtobufCMessage *m, struct dra_out *o, uint8_t **out,
    size_t *len)
{
	size_t	n;

	n = protobuf_c_message_get_packed_size(m);
	*out = o != NULL && o->alloc != NULL ? o->alloc(o->arg, n) : NULL;
	if (*out == NULL) {
		if ((*out = malloc(n > 0 ? n : 1)) == NULL)
			return (KP_ENOMEM);
		if (o != NULL)
			o->malloced = 1;
	}
	*len = protobuf_c_message_pack(m, *out);
	return (0);
}

static void
device_fill(Device *w, const struct dra_device *d, int share_id)
{
	V1(device__init)(w);
	w->n_request_names = d->n_request_names;
	w->request_names = d->request_names;
	w->pool_name = d->pool;
	w->device_name = d->device;
	w->n_cdi_device_ids = d->n_cdi_ids;
	w->cdi_device_ids = d->cdi_ids;
	if (share_id && d->share_id != NULL) {
		w->_share_id_case =
		    V1_SHARE_ID_SET;
		w->share_id = d->share_id;
	}
}

/* Scratch messages pointing into the results (nothing copied), in one
 * block: entries, values and entry pointers per claim, then devices and
 * device pointers. */
struct prep_wire {
	PrepEntry	 *entries;
	PrepEntry	**entry_ptrs;
	PrepClaim	 *values;
	Device		 *devs;
	Device		**dev_ptrs;
	void		 *mem;
};

static int
prep_wire_alloc(struct prep_wire *w, const struct dra_results *r)
{
	size_t	i, nd = 0, nc = r->n + 1;
	char	*p;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < r->n; i++)
		if (r->claims[i].error == NULL)
			nd += r->claims[i].n_devices;
	nd++;
	if (nc > SIZE_MAX / (sizeof(PrepEntry) + sizeof(PrepClaim) +
	    sizeof(PrepEntry *)) || nd > SIZE_MAX / 2 / (sizeof(Device) +
	    sizeof(Device *)))
		return (KP_ENOMEM);
	/* Largest alignment first: the messages, then the pointers. */
	if ((w->mem = malloc(nc * (sizeof(PrepEntry) + sizeof(PrepClaim) +
	    sizeof(PrepEntry *)) + nd * (sizeof(Device) +
	    sizeof(Device *)))) == NULL)
		return (KP_ENOMEM);
	p = w->mem;
	w->entries = (PrepEntry *)(void *)p;
	p += nc * sizeof(PrepEntry);
	w->values = (PrepClaim *)(void *)p;
	p += nc * sizeof(PrepClaim);
	w->devs = (Device *)(void *)p;
	p += nd * sizeof(Device);
	w->entry_ptrs = (PrepEntry **)(void *)p;
	p += nc * sizeof(PrepEntry *);
	w->dev_ptrs = (Device **)(void *)p;
	return (0);
}

/*
 * Encode a NodePrepareResourcesResponse: one entry per result, keyed by
 * claim UID. A failed claim carries only its error. share_id: 1 for v1.
 */
int
dra_encode_prepare(const struct dra_results *r, int share_id,
    struct dra_out *o, uint8_t **out, size_t *len)
{
	PrepResp		 resp;
	struct prep_wire	 w;
	const struct dra_result	*c;
	size_t			 i, j, nd = 0;
	int			 rc;

	if (prep_wire_alloc(&w, r) != 0)
		return (KP_ENOMEM);
	V1(node_prepare_resources_response__init)(&resp);
	for (i = 0; i < r->n; i++) {
		c = &r->claims[i];
		V1(node_prepare_resources_response__claims_entry__init)(
		    &w.entries[i]);
		V1(node_prepare_resource_response__init)(&w.values[i]);
		w.entries[i].key = (char *)c->uid;
		w.entries[i].value = &w.values[i];
		w.entry_ptrs[i] = &w.entries[i];
		if (c->error != NULL) {
			w.values[i].error = c->error;
			continue;
		}
		w.values[i].devices = &w.dev_ptrs[nd];
		w.values[i].n_devices = c->n_devices;
		for (j = 0; j < c->n_devices; j++, nd++) {
			device_fill(&w.devs[nd], &c->devices[j], share_id);
			w.dev_ptrs[nd] = &w.devs[nd];
		}
	}
	resp.n_claims = r->n;
	resp.claims = w.entry_ptrs;
	rc = pack(&resp.base, o, out, len);
	free(w.mem);
	return (rc);
}

/* Encode a NodeUnprepareResourcesResponse: one entry per result. */
int
dra_encode_unprepare(const struct dra_results *r, struct dra_out *o,
    uint8_t **out, size_t *len)
{
	UnprepResp	  resp;
	UnprepEntry	 *entries, **ptrs;
	UnprepClaim	 *values;
	size_t		  i;
	int		  rc = KP_ENOMEM;

	entries = calloc(r->n + 1, sizeof(*entries));
	ptrs = calloc(r->n + 1, sizeof(*ptrs));
	values = calloc(r->n + 1, sizeof(*values));
	if (entries == NULL || ptrs == NULL || values == NULL)
		goto done;
	V1(node_unprepare_resources_response__init)(&resp);
	for (i = 0; i < r->n; i++) {
		V1(node_unprepare_resources_response__claims_entry__init)(
		    &entries[i]);
		V1(node_unprepare_resource_response__init)(&values[i]);
		if (r->claims[i].error != NULL)
			values[i].error = r->claims[i].error;
		entries[i].key = (char *)r->claims[i].uid;
		entries[i].value = &values[i];
		ptrs[i] = &entries[i];
	}
	resp.n_claims = r->n;
	resp.claims = ptrs;
	rc = pack(&resp.base, o, out, len);
done:
	free(entries);
	free(ptrs);
	free(values);
	return (rc);
}
