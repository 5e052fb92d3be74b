/*
 * discovery.c - which resource.k8s.io version the API server serves: the
 * APIGroup document at /apis/resource.k8s.io lists them; v1 is preferred,
 * then v1beta2, then v1beta1 (reference/resourceslice.md 1.1, 2.6).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "publisher/publisher.h"

#define DISC_PATH	"/apis/resource.k8s.io"

static const char *const disc_names[] = {
	[KUBE_V1BETA1] = "v1beta1",
	[KUBE_V1BETA2] = "v1beta2",
	[KUBE_V1] = "v1"
};

const char *
disc_version_name(enum kube_version v)
{
	if ((unsigned)v >= sizeof(disc_names) / sizeof(disc_names[0]))
		return ("unknown");
	return (disc_names[v]);
}

/* The Status message of an error body, or a prefix of the raw text. */
static void
disc_status_error(const struct http_response *resp, char *err, size_t size)
{
	json_t		*j, *m;

	j = json_loadb(resp->body, resp->body_len, 0, NULL);
	m = json_object_get(j, "message");
	if (json_is_string(m))
		snprintf(err, size, "GET %s: HTTP %ld: %s", DISC_PATH,
		    resp->status, json_string_value(m));
	else
		snprintf(err, size, "GET %s: HTTP %ld: %.80s", DISC_PATH,
		    resp->status, resp->body);
	json_decref(j);
}

/* Pick the preferred served version from an APIGroup document. */
static int
disc_pick(const struct http_response *resp, enum kube_version *out,
    char *err, size_t size)
{
	json_t		*j, *vs, *v;
	size_t		 i;
	int		 best = -1, k;
	const char	*name;

	if ((j = json_loadb(resp->body, resp->body_len, 0, NULL)) == NULL ||
	    !json_is_array(vs = json_object_get(j, "versions"))) {
		json_decref(j);
		snprintf(err, size, "GET %s: not an APIGroup document",
		    DISC_PATH);
		return (KP_EKUBE);
	}
	json_array_foreach(vs, i, v) {
		name = json_string_value(json_object_get(v, "version"));
		for (k = 0; name != NULL && k <= KUBE_V1; k++) {
			if (strcmp(name, disc_names[k]) == 0 && k > best)
				best = k;
		}
	}
	json_decref(j);
	if (best < 0) {
		snprintf(err, size, "resource.k8s.io: none of v1, v1beta2, "
		    "v1beta1 is served");
		return (KP_ENOTSUP);
	}
	*out = (enum kube_version)best;
	return (0);
}

/*
 * GET the resource.k8s.io APIGroup and choose its version. Errors:
 * KP_ENOTSUP (none of ours served; a 404 means the group is off),
 * KP_EKUBE (another status, or a body that is no APIGroup), KP_EIO and
 * KP_ETIMEDOUT (transport); err says which.
 */
int
disc_resource_version(struct http_client *c, enum kube_version *out,
    char *err, size_t size)
{
	struct http_response	 resp;
	int			 r;

	if ((r = http_request(c, "GET", DISC_PATH, NULL, HTTP_MAX_DISCOVERY,
	    &resp)) != 0)
		snprintf(err, size, "GET %s: %s", DISC_PATH, resp.error);
	else if (resp.status == 404) {
		/* The group is not served at all: DRA is off in this
		 * cluster (kube-apiserver --runtime-config, the
		 * DynamicResourceAllocation feature gate before 1.34). */
		snprintf(err, size, "GET %s: 404: the resource.k8s.io API "
		    "group is not served: is DRA (DynamicResourceAllocation) "
		    "enabled in this cluster?", DISC_PATH);
		r = KP_ENOTSUP;
	} else if (resp.status != 200) {
		disc_status_error(&resp, err, size);
		r = KP_EKUBE;
	} else
		r = disc_pick(&resp, out, err, size);
	http_response_free(&resp);
	return (r);
}
