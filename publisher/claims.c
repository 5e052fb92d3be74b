/*
 * claims.c - the one GET behind a claim look-up: fetch a ResourceClaim and
 * reduce it to this driver's allocation (results and opaque configuration).
 *
 * Result codes in reply->result: 0; KP_ENOENT "claim ns/name not found"
 * (404) or "claim ns/name got replaced" (another UID); KP_EINVAL "claim
 * ns/name not allocated"; KP_EKUBE any other API or transport error, with
 * the Status message; KP_EPROTO a body that is not a ResourceClaim;
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

	if (code == 0)
		buf[0] = '\0';
	else
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
	if ((r->result->message = strdup(buf)) == NULL) {
		r->result->message = (char *)protobuf_c_empty_string;
		return (KP_ENOMEM);
	}
	return (code);
}

static char *
dup_str(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return (strdup(s != NULL ? s : ""));
}

static int
add_result(Kpipc__ClaimReply *r, const json_t *res)
{
	Kpipc__AllocatedDevice	**nv, *d;

	if ((nv = reallocarray(r->results, r->n_results + 1,
	    sizeof(*nv))) == NULL)
		return (KP_ENOMEM);
	r->results = nv;
	if ((d = malloc(sizeof(*d))) == NULL)
		return (KP_ENOMEM);
	kpipc__allocated_device__init(d);
	d->request = dup_str(res, "request");
	d->pool = dup_str(res, "pool");
	d->device = dup_str(res, "device");
	d->admin_access = json_is_true(json_object_get(res, "adminAccess"));
	r->results[r->n_results++] = d;
	if (d->request == NULL || d->pool == NULL || d->device == NULL)
		return (KP_ENOMEM);
	return (0);
}

static size_t
str_len(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return (s != NULL ? strlen(s) : 0);
}

/* Why allocation result i cannot be passed on, or NULL. */
static const char *
result_invalid(const Kpipc__ClaimReply *r, const json_t *res, size_t i)
{
	static __thread char	 why[128];

	if (r->n_results >= KP_IPC_MAX_RESULTS)
		snprintf(why, sizeof(why), ": more than %d allocation "
		    "results", KP_IPC_MAX_RESULTS);
	else if (str_len(res, "request") > KP_IPC_MAX_REQUEST)
		snprintf(why, sizeof(why), ": results[%zu].request longer "
		    "than %d bytes", i, KP_IPC_MAX_REQUEST);
	else if (str_len(res, "pool") > KP_IPC_MAX_POOL)
		snprintf(why, sizeof(why), ": results[%zu].pool longer than "
		    "%d bytes", i, KP_IPC_MAX_POOL);
	else if (str_len(res, "device") > KP_IPC_MAX_DEVICE)
		snprintf(why, sizeof(why), ": results[%zu].device longer "
		    "than %d bytes", i, KP_IPC_MAX_DEVICE);
	else
		return (NULL);
	return (why);
}

/* The opaque configs for this driver, as [{source, requests, parameters}]. */
static char *
configs_json(const json_t *config, const char *driver)
{
	json_t		*out, *c, *op, *e, *x;
	const char	*d;
	char		*s;
	size_t		 i;

	if ((out = json_array()) == NULL)
		return (NULL);
	json_array_foreach(config, i, c) {
		op = json_object_get(c, "opaque");
		d = json_string_value(json_object_get(op, "driver"));
		if (d == NULL || strcmp(d, driver) != 0)
			continue;
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
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	return (s);
fail:
	json_decref(out);
	return (NULL);
}

/*
 * The pure part of claims_get(): a 200 body -> reply (results of this
 * driver, config_json). Returns the result code it also stores.
 */
int
claims_parse(const char *body, const char *driver, const Kpipc__ClaimGet *g,
    Kpipc__ClaimReply *r)
{
	json_t		*o, *alloc, *devs, *res;
	const char	*uid, *d, *what, *pc;
	size_t		 i;
	int		 rc = 0;

	r->id = g->id;
	if (body == NULL || (o = json_loads(body, 0, NULL)) == NULL ||
	    !json_is_object(json_object_get(o, "metadata"))) {
		if (body != NULL)
			json_decref(o);	/* NULL-safe */
		return (set_result(r, KP_EPROTO, g,
		    ": not a ResourceClaim"));
	}
	uid = json_string_value(json_object_get(json_object_get(o,
	    "metadata"), "uid"));
	if (g->uid != NULL && g->uid[0] != '\0' &&
	    (uid == NULL || strcmp(uid, g->uid) != 0)) {
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
		if ((what = result_invalid(r, res, i)) != NULL) {
			json_decref(o);
			return (set_result(r, KP_EKUBE, g, what));
		}
		if ((rc = add_result(r, res)) != 0)
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
	json_decref(o);
	if (rc != 0)
		return (set_result(r, rc, g, ": out of memory"));
	return (set_result(r, 0, g, ""));
}

/*
 * Exactly one GET of namespaces/<ns>/resourceclaims/<name> in version v.
 * reply (initialised by the caller, KPIPC__CLAIM_REPLY__INIT) gets id,
 * result and, on success, results and config_json; free its contents with
 * claims_reply_free(). Returns the result code.
 */
int
claims_get(struct http_client *http, enum kube_version v, const char *driver,
    const Kpipc__ClaimGet *g, Kpipc__ClaimReply *r)
{
	struct http_response	 resp;
	char			*ns, *name, *path = NULL, *m;
	char			 what[KP_ERROR_SIZE];
	int			 rc;

	r->id = g->id;
	ns = http_escape(g->namespace_);
	name = http_escape(g->name);
	if (ns == NULL || name == NULL || asprintf(&path,
	    "/apis/%s/namespaces/%s/resourceclaims/%s", conv_api_version(v),
	    ns, name) == -1) {
		free(ns);
		free(name);
		return (set_result(r, KP_ENOMEM, g, ": out of memory"));
	}
	free(ns);
	free(name);
	memset(&resp, 0, sizeof(resp));
	/* Well within kubelet's 45 s: the nodeserver still answers. */
	rc = http_request_within(http, "GET", path, NULL, HTTP_MAX_OBJECT,
	    KP_CLAIM_BUDGET_S, &resp);
	free(path);
	if (resp.status == 200)
		rc = claims_parse(resp.body, driver, g, r);
	else if (resp.status == 404)
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
}
