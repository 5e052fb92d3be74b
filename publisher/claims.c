/*
 * claims.c - the one GET behind a claim look-up: fetch a ResourceClaim and
 * reduce it to this driver's allocation (results and opaque configuration).
 *
 * Result codes in reply->result: 0; KP_ENOENT "claim ns/name not found"
 * (404) or "claim ns/name got replaced" (another UID, or an answer naming
 * another namespace or name: upstream compares the UID only, but an
 * object from another path is no answer for this one); KP_EINVAL "claim
 * ns/name not allocated" (or ": name too long", which a ClaimGet that
 * passed ipc/check.c cannot be); KP_EKUBE any other API or transport error, with
 * the Status message; KP_EPROTO a body that is not a ResourceClaim (or
 * not JSON jansson takes: invalid UTF-8, a NUL, a key twice);
 * KP_ENOMEM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "ipc/ipc.h"
#include "publisher/slices.h"

/* Store code and "claim <ns>/<name><what>" ("" for success). */
static int
set_result(Kpipc__ClaimReply *r, int code, const Kpipc__ClaimGet *g,
    const char *what)
{
	Kpipc__Result	*res;
	char		 buf[KP_ERROR_SIZE];

	if (code != 0)
		snprintf(buf, sizeof(buf), "claim %s/%s%s", g->namespace_,
		    g->name, what);
	if (r->result == NULL) {
		if ((res = malloc(sizeof(*res))) == NULL)
			return (KP_ENOMEM);
		kpipc__result__init(res);
		r->result = res;
	} else if (r->result->message != protobuf_c_empty_string)
		free(r->result->message);
	r->result->code = code;
	r->result->message = (char *)protobuf_c_empty_string;
	if (code != 0 && (r->result->message = strdup(buf)) == NULL) {
		r->result->message = (char *)protobuf_c_empty_string;
		return (KP_ENOMEM);
	}
	return (code);
}

/* A result's request, pool and device ("" when absent or not strings). */
struct result_strs {
	const char	*s[3];
	size_t		 len[3];
};

static const char *const result_keys[3] = { "request", "pool", "device" };
static const size_t result_max[3] = { KP_IPC_MAX_REQUEST, KP_IPC_MAX_POOL,
    KP_IPC_MAX_DEVICE };

static void
result_strs(const json_t *res, struct result_strs *rs)
{
	const json_t	*v;
	size_t		 k;

	for (k = 0; k < 3; k++) {
		v = json_object_get(res, result_keys[k]);
		if ((rs->s[k] = json_string_value(v)) == NULL)
			rs->s[k] = "";
		rs->len[k] = strlen(rs->s[k]);
	}
}

static char *
dup_len(const char *s, size_t len)
{
	char	*d;

	if ((d = malloc(len + 1)) != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return (d);
}

static int
add_result(Kpipc__ClaimReply *r, const json_t *res,
    const struct result_strs *rs)
{
	Kpipc__AllocatedDevice	**nv, *d;

	if ((nv = reallocarray(r->results, r->n_results + 1,
	    sizeof(*nv))) == NULL)
		return (KP_ENOMEM);
	r->results = nv;
	if ((d = malloc(sizeof(*d))) == NULL)
		return (KP_ENOMEM);
	kpipc__allocated_device__init(d);
	d->request = dup_len(rs->s[0], rs->len[0]);
	d->pool = dup_len(rs->s[1], rs->len[1]);
	d->device = dup_len(rs->s[2], rs->len[2]);
	d->admin_access = json_is_true(json_object_get(res, "adminAccess"));
	r->results[r->n_results++] = d;
	if (d->request == NULL || d->pool == NULL || d->device == NULL)
		return (KP_ENOMEM);
	return (0);
}

/* Why allocation result i cannot be passed on, or NULL. */
static const char *
result_invalid(const Kpipc__ClaimReply *r, const struct result_strs *rs,
    size_t i)
{
	static __thread char	 why[128];
	size_t			 k;

	if (r->n_results >= KP_IPC_MAX_RESULTS) {
		snprintf(why, sizeof(why), ": more than %d allocation "
		    "results", KP_IPC_MAX_RESULTS);
		return (why);
	}
	for (k = 0; k < 3; k++)
		if (rs->len[k] > result_max[k]) {
			snprintf(why, sizeof(why), ": results[%zu].%s longer "
			    "than %zu bytes", i, result_keys[k], result_max[k]);
			return (why);
		}
	return (NULL);
}

/* The opaque configs for this driver, as [{source, requests, parameters}]. */
static char *
configs_json(const json_t *config, const char *driver)
{
	json_t		*out = NULL, *c, *op, *e, *x;
	const char	*d;
	char		*s;
	size_t		 i;

	json_array_foreach(config, i, c) {
		op = json_object_get(c, "opaque");
		d = json_string_value(json_object_get(op, "driver"));
		if (d == NULL || strcmp(d, driver) != 0)
			continue;
		if (out == NULL && (out = json_array()) == NULL)
			return (NULL);
		if ((e = json_object()) == NULL)
			goto fail;
		if ((x = json_object_get(c, "source")) != NULL)
			json_object_set(e, "source", x);
		if ((x = json_object_get(c, "requests")) != NULL &&
		    !json_is_null(x))
			json_object_set(e, "requests", x);
		if ((x = json_object_get(op, "parameters")) != NULL)
			json_object_set(e, "parameters", x);
		if (json_array_append_new(out, e) != 0)
			goto fail;
	}
	/* None for this driver, the usual case: what the dump would be. */
	if (out == NULL)
		return (strdup("[]"));
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	return (s);
fail:
	json_decref(out);
	return (NULL);
}

/* r->claim_json: o as compact JSON. KP_ENOMEM, or KP_ENOSPC over
 * KP_IPC_MAX_CLAIM_JSON (the supervisor would refuse the frame). */
static int
claim_dump(const json_t *o, Kpipc__ClaimReply *r)
{
	char	*s;

	if ((s = json_dumps(o, JSON_COMPACT)) == NULL)
		return (KP_ENOMEM);
	if (strlen(s) > KP_IPC_MAX_CLAIM_JSON) {
		free(s);
		return (KP_ENOSPC);
	}
	if (r->claim_json != protobuf_c_empty_string)
		free(r->claim_json);
	r->claim_json = s;
	return (0);
}

/*
 * The pure part of claims_get(): a 200 body -> reply (results of this
 * driver, config_json). Returns the result code it also stores.
 */
int
claims_parse(const char *body, const char *driver, const Kpipc__ClaimGet *g,
    Kpipc__ClaimReply *r)
{
	json_t			*o, *md, *alloc, *devs, *res;
	const char		*uid, *mns, *mname, *d, *what, *pc;
	struct result_strs	 rs;
	size_t			 i;
	int			 rc = 0;

	r->id = g->id;
	/* Duplicate keys are refused: jansson keeps the first, Go's
	 * decoder the last, and no API server writes them. */
	if (body == NULL || (o = json_loads(body, JSON_REJECT_DUPLICATES,
	    NULL)) == NULL ||
	    !json_is_object(json_object_get(o, "metadata"))) {
		if (body != NULL)
			json_decref(o);	/* NULL-safe */
		return (set_result(r, KP_EPROTO, g,
		    ": not a ResourceClaim"));
	}
	md = json_object_get(o, "metadata");
	uid = json_string_value(json_object_get(md, "uid"));
	mns = json_string_value(json_object_get(md, "namespace"));
	mname = json_string_value(json_object_get(md, "name"));
	if ((g->uid != NULL && g->uid[0] != '\0' &&
	    (uid == NULL || strcmp(uid, g->uid) != 0)) ||
	    (mns != NULL && strcmp(mns, g->namespace_) != 0) ||
	    (mname != NULL && strcmp(mname, g->name) != 0)) {
		json_decref(o);
		return (set_result(r, KP_ENOENT, g, " got replaced"));
	}
	/* A template's claim: the pod's name for it, for device metadata
	 * (upstream newClaimRef). Anything but a DNS label is left out. */
	pc = json_string_value(json_object_get(json_object_get(
	    json_object_get(o, "metadata"), "annotations"),
	    "resource.kubernetes.io/pod-claim-name"));
	if (pc != NULL && strlen(pc) <= NAME_MAX_LABEL &&
	    name_is_label(pc, strlen(pc)) &&
	    (r->pod_claim_name = strdup(pc)) == NULL)
		r->pod_claim_name = (char *)protobuf_c_empty_string;
	alloc = json_object_get(json_object_get(o, "status"), "allocation");
	if (!json_is_object(alloc)) {
		json_decref(o);
		return (set_result(r, KP_EINVAL, g, " not allocated"));
	}
	devs = json_object_get(alloc, "devices");
	json_array_foreach(json_object_get(devs, "results"), i, res) {
		d = json_string_value(json_object_get(res, "driver"));
		if (d == NULL || strcmp(d, driver) != 0)
			continue;
		/* What the supervisor would refuse is an API error here,
		 * not a reason to get the publisher killed. */
		result_strs(res, &rs);
		if ((what = result_invalid(r, &rs, i)) != NULL) {
			json_decref(o);
			return (set_result(r, KP_EKUBE, g, what));
		}
		if ((rc = add_result(r, res, &rs)) != 0)
			break;
	}
	if (rc == 0) {
		char	*c = configs_json(json_object_get(devs, "config"),
			    driver);

		if (c == NULL)
			rc = KP_ENOMEM;
		else if (strlen(c) > KP_IPC_MAX_CONFIG) {
			free(c);
			json_decref(o);
			return (set_result(r, KP_EKUBE, g, ": opaque "
			    "configuration larger than 512 KiB"));
		} else {
			if (r->config_json != protobuf_c_empty_string)
				free(r->config_json);
			r->config_json = c;
		}
	}
	/* The whole claim, for the hook's kp_claim_info(): compact, as
	 * jansson checked it (valid UTF-8, no NUL, no key twice), without
	 * managedFields (the API server's bookkeeping, a second copy of
	 * the claim's field names; kubectl hides it too). */
	if (rc == 0) {
		json_object_del(json_object_get(o, "metadata"),
		    "managedFields");
		rc = claim_dump(o, r);
	}
	json_decref(o);
	if (rc == KP_ENOSPC) {
		claims_reply_free(r);
		return (set_result(r, KP_EKUBE, g, ": larger than 1 MiB as "
		    "compact JSON"));
	}
	/* The whole answer must fit a frame from a child (the supervisor
	 * would take a larger one for an attack): results, configuration
	 * and the claim are each bounded, not their sum. */
	if (rc == 0 && kpipc__claim_reply__get_packed_size(r) >
	    KP_IPC_CHILD_FRAME - 2048) {
		claims_reply_free(r);
		return (set_result(r, KP_EKUBE, g, ": allocation, "
		    "configuration and claim together larger than 1 MiB"));
	}
	if (rc != 0)
		return (set_result(r, rc, g, ": out of memory"));
	return (set_result(r, 0, g, ""));
}

/* What http_escape() (curl_easy_escape) leaves as it is. */
#define UNRESERVED	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789-._~"
/* "/apis/<group/version>/namespaces/<ns>/resourceclaims/<name>" with a
 * label (63) and a subdomain (253, ipc/check.c), each percent-encoded at
 * worst (3 bytes a byte), fits. */
#define CLAIM_PATH_MAX	1024

/* Append s to the path, percent-encoded when it needs it (a checked name
 * never does: no allocation then). KP_ENOMEM, or KP_EINVAL over size. */
static int
path_add(char *b, size_t size, size_t *len, const char *s, int escape)
{
	char	*e = NULL;
	size_t	 n;
	int	 r = 0;

	if (escape && s[strspn(s, UNRESERVED)] != '\0' &&
	    (s = e = http_escape(s)) == NULL)
		return (KP_ENOMEM);
	if ((n = strlen(s)) >= size - *len)
		r = KP_EINVAL;
	else {
		memcpy(b + *len, s, n + 1);
		*len += n;
	}
	free(e);
	return (r);
}

/*
 * Exactly one GET of namespaces/<ns>/resourceclaims/<name> in version v,
 * retries included within budget_s seconds (what is left of
 * KP_CLAIM_BUDGET_S once the look-up waited for a thread); a set *cancel
 * (NULL: none) withdraws it while it waits for its token: KP_EALREADY,
 * no GET, no token spent. No token due within the budget: KP_EKUBE
 * naming the rate limit, no GET. reply
 * (initialised by the caller, KPIPC__CLAIM_REPLY__INIT) gets id, result
 * and, on success, results and config_json; free its contents with
 * claims_reply_free(). Returns the result code.
 */
int
claims_get(struct http_client *http, enum kube_version v, const char *driver,
    const Kpipc__ClaimGet *g, double budget_s, volatile int *cancel,
    Kpipc__ClaimReply *r)
{
	struct http_response	 resp;
	char			 path[CLAIM_PATH_MAX], *m;
	char			 what[KP_ERROR_SIZE];
	size_t			 len = 0;
	int			 rc;

	r->id = g->id;
	if ((rc = path_add(path, sizeof(path), &len, "/apis/", 0)) != 0 ||
	    (rc = path_add(path, sizeof(path), &len, conv_api_version(v),
	    0)) != 0 ||
	    (rc = path_add(path, sizeof(path), &len, "/namespaces/", 0)) != 0 ||
	    (rc = path_add(path, sizeof(path), &len, g->namespace_, 1)) != 0 ||
	    (rc = path_add(path, sizeof(path), &len, "/resourceclaims/",
	    0)) != 0 ||
	    (rc = path_add(path, sizeof(path), &len, g->name, 1)) != 0)
		return (set_result(r, rc, g, rc == KP_ENOMEM ?
		    ": out of memory" : ": name too long"));
	memset(&resp, 0, sizeof(resp));
	/* Well within kubelet's 45 s: the nodeserver still answers. */
	rc = http_request_within(http, "GET", path, NULL, HTTP_MAX_OBJECT,
	    budget_s, cancel, &resp);
	if (rc == KP_EALREADY && resp.status == 0) {
		http_response_free(&resp);
		return (set_result(r, KP_EALREADY, g, ": look-up withdrawn "
		    "before its GET"));
	}
	if (resp.status == 200) {
		if ((rc = claims_parse(resp.body, driver, g, r)) == 0)
			r->api_version = (char *)conv_api_version(v);
	} else if (resp.status == 404)
		rc = set_result(r, KP_ENOENT, g, " not found");
	else {
		if (resp.status == 0)
			m = strdup(resp.error[0] ? resp.error :
			    kp_strerror(rc));
		else
			m = conv_status_message(resp.body, resp.status);
		snprintf(what, sizeof(what), ": %s", m != NULL ? m :
		    "API error");
		free(m);
		rc = set_result(r, KP_EKUBE, g, what);
	}
	http_response_free(&resp);
	return (rc);
}

/* Free what claims_get()/claims_parse() put into r (not r itself). */
void
claims_reply_free(Kpipc__ClaimReply *r)
{
	size_t	i;

	if (r == NULL)
		return;
	if (r->result != NULL) {
		if (r->result->message != protobuf_c_empty_string)
			free(r->result->message);
		free(r->result);
		r->result = NULL;
	}
	for (i = 0; i < r->n_results; i++) {
		free(r->results[i]->request);
		free(r->results[i]->pool);
		free(r->results[i]->device);
		free(r->results[i]);
	}
	free(r->results);
	r->results = NULL;
	r->n_results = 0;
	if (r->config_json != protobuf_c_empty_string)
		free(r->config_json);
	r->config_json = (char *)protobuf_c_empty_string;
	if (r->pod_claim_name != protobuf_c_empty_string)
		free(r->pod_claim_name);
	r->pod_claim_name = (char *)protobuf_c_empty_string;
	if (r->claim_json != protobuf_c_empty_string)
		free(r->claim_json);
	r->claim_json = (char *)protobuf_c_empty_string;
	r->api_version = (char *)protobuf_c_empty_string;	/* static */
}
