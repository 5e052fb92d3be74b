/*
 * metadata.c - device metadata (KEP-5304) on the nodeserver's side: after
 * the prepare hook, per request of each prepared claim, the metadata
 * JSON (encoded here, as upstream's Go encoder writes it) goes to the
 * supervisor, which writes the file and the CDI spec that mounts it
 * (supervisor/metadata.c); the CDI ID is appended to the request's first
 * device. After the unprepare hook the supervisor removes both; a
 * failure there is that claim's error. Drivers' hooks see nothing of
 * this: it works on the results they built, whatever builder they used.
 *
 * The file (upstream metadataWriter.encodeMetadataStream): one
 * DeviceMetadata object per chosen version, in that order, each as Go's
 * json.MarshalIndent(obj, "", "  ") prints it, followed by "\n".
 *
 * Runs in: the nodeserver (sandboxed), on the serving thread of the call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/names.h"
#include "base/utf8.h"
#include "nodeserver/dra.h"


/* Whether device d is one of request req's. */
static int
in_request(const struct dra_device *d, const char *req)
{
	size_t	 i;

	for (i = 0; i < d->n_request_names; i++)
		if (strcmp(d->request_names[i], req) == 0)
			return (1);
	return (0);
}

/*
 * The metadata of request req of claim c (result res): written through
 * the supervisor, then the CDI ID goes to the request's first device.
 * 0, or non-zero with the claim's error in err.
 */
static int
md_request(struct dra_ctx *ctx, const struct kp_claim *c, const char *pod,
    struct dra_result *res, const char *req, char *err, size_t errsize)
{
	const struct kp_options	 *cfg = ctx->cfg;
	struct md_device	 *devs;
	struct md_input		  in;
	char			  id[NAME_MAX_SUBDOMAIN + NAME_MAX_UID +
				    NAME_MAX_LABEL + 16], *json;
	size_t			  i, n = 0, len;
	int			  r;

	if (strlen(req) > NAME_MAX_LABEL || !name_is_label(req, strlen(req))) {
		snprintf(err, errsize, "write device metadata for request "
		    "\"%.64s\": the request name is not a DNS label", req);
		return (KP_EINVAL);
	}
	if ((devs = calloc(res->n_devices, sizeof(*devs))) == NULL)
		goto nomem;
	for (i = 0; i < res->n_devices; i++)
		if (in_request(&res->devices[i], req)) {
			devs[n].pool = res->devices[i].pool;
			devs[n].name = res->devices[i].device;
			devs[n].attrs = md_attrs_find(res, devs[n].pool,
			    devs[n].name, MD_ATTRS);
			devs[n].net = md_attrs_find(res, devs[n].pool,
			    devs[n].name, MD_NET);
			n++;
		}
	in = (struct md_input){ c->namespace_, c->name, c->uid, 1, pod, req,
	    devs, n };
	r = md_encode(cfg, &in, &json, &len);
	free(devs);
	if (r == KP_EINVAL) {
		snprintf(err, errsize, "write device metadata for request %s: "
		    "%zu bytes, more than %u", req, len, MD_MAX_CONTENT);
		return (KP_EINVAL);
	}
	if (r != 0)
		goto nomem;
	r = ctx->md_write(ctx->md_user, c->namespace_, c->name, c->uid, req,
	    pod != NULL ? pod : "", json, len, err, errsize);
	free(json);
	if (r != 0)
		return (r);
	snprintf(id, sizeof(id), "%s/metadata=%s_%s", cfg->driver_name,
	    c->uid, req);
	for (i = 0; i < res->n_devices; i++)
		if (in_request(&res->devices[i], req))
			return (dra_device_add_cdi_id(&res->devices[i], id) == 0 ? 0 :
			    KP_ENOMEM);
	return (0);
nomem:
	snprintf(err, errsize, "write device metadata for request %s: out of "
	    "memory", req);
	return (KP_ENOMEM);
}

/* Whether request req appears in devices[0 .. upto-1] already. */
static int
seen_before(const struct dra_result *res, size_t upto, const char *req)
{
	size_t	 i;

	for (i = 0; i < upto; i++)
		if (in_request(&res->devices[i], req))
			return (1);
	return (0);
}

/*
 * After the prepare hook: the metadata of every request of every claim
 * the hook prepared (claims[i] is r->claims[i]; al[i] its look-up, NULL
 * without Kubernetes access: no pod claim name then). A failure fails
 * that claim, naming the request.
 */
void
md_prepare(struct dra_ctx *ctx, const struct kp_claim *claims,
    const struct dra_claim_alloc *al, struct dra_results *r)
{
	struct dra_result	*res;
	char			 err[KP_ERROR_SIZE], msg[KP_ERROR_SIZE];
	size_t			 i, d, k;
	int			 rc;

	for (i = 0; i < r->n_hook; i++) {
		res = &r->claims[i];
		rc = 0;
		for (d = 0; rc == 0 && res->error == NULL &&
		    d < res->n_devices; d++)
			for (k = 0; rc == 0 &&
			    k < res->devices[d].n_request_names; k++) {
				if (seen_before(res, d,
				    res->devices[d].request_names[k]))
					continue;
				err[0] = '\0';
				rc = md_request(ctx, &claims[i], al != NULL ?
				    al[i].pod_claim_name : NULL, res,
				    res->devices[d].request_names[k], err,
				    sizeof(err));
			}
		if (rc != 0) {
			snprintf(msg, sizeof(msg), "%s", err);
			log_warnx("claim %s/%s: %s", claims[i].namespace_,
			    claims[i].name, msg);
			(void)dra_result_fail(r, i, msg);
		}
	}
}

/*
 * After the unprepare hook: remove the metadata of every claim the hook
 * did not fail (upstream cleanupClaim). A failure is the claim's error.
 */
void
md_unprepare(struct dra_ctx *ctx, const struct kp_claim *claims,
    struct dra_results *r)
{
	char	 err[KP_ERROR_SIZE], msg[KP_ERROR_SIZE + 32];
	size_t	 i;

	for (i = 0; i < r->n_hook; i++) {
		if (r->claims[i].error != NULL)
			continue;
		err[0] = '\0';
		if (ctx->md_remove(ctx->md_user, claims[i].namespace_,
		    claims[i].name, claims[i].uid, err, sizeof(err)) == 0)
			continue;
		/* upstream: fmt.Errorf("clean up device metadata: %w", err) */
		snprintf(msg, sizeof(msg), "clean up device metadata: %s", err);
		log_warnx("claim %s/%s: %s", claims[i].namespace_,
		    claims[i].name, msg);
		(void)dra_result_fail(r, i, msg);
	}
}
