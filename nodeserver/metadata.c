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

#define MD_MAX_CONTENT	(64u * 1024)	/* KP_IPC_MAX_METADATA */

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
 * networkData?}]}]. Returns
 * 0 with
 * *out malloc'd (the caller frees) or KP_ENOMEM.
 */
int
md_encode(const struct md_input *in, char **out, size_t *outlen)
{
	struct md_buf	 b = { NULL, 0, 0, 0 };
	const char	*a, *net;
	size_t		 v, i;

	*out = NULL;
	*outlen = 0;
	for (v = 0; v < in->n_versions; v++) {
		md_puts(&b, "{\n");
		md_field(&b, "  ", "kind", "DeviceMetadata", 0);
		md_field(&b, "  ", "apiVersion", in->versions[v], 0);
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
				a = in->attrs != NULL ? in->attrs[i] : NULL;
				net = in->nets != NULL ? in->nets[i] : NULL;
				md_puts(&b, "        {\n");
				md_field(&b, "          ", "driver", in->driver,
				    0);
				md_field(&b, "          ", "pool",
				    in->devices[i]->pool, 0);
				md_field(&b, "          ", "name",
				    in->devices[i]->device, a == NULL &&
				    net == NULL);
				if (a != NULL) {
					md_puts(&b, a);
					md_puts(&b, net != NULL ? ",\n" :
					    "\n");
				}
				if (net != NULL) {
					md_puts(&b, net);
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
	*out = b.p;
	*outlen = b.len;
	return (0);
}

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
	const struct dra_device	**devs;
	const char		**attrs, **nets;
	struct md_input		  in;
	const char		 *vers[KP_MAX_METADATA_VERSIONS];
	char			  id[NAME_MAX_SUBDOMAIN + NAME_MAX_UID +
				    NAME_MAX_LABEL + 16], *json;
	size_t			  i, n = 0, len;
	int			  r;

	if (strlen(req) > NAME_MAX_LABEL || !name_is_label(req, strlen(req))) {
		snprintf(err, errsize, "write device metadata for request "
		    "\"%.64s\": the request name is not a DNS label", req);
		return (KP_EINVAL);
	}
	devs = calloc(res->n_devices, sizeof(*devs));
	attrs = calloc(res->n_devices, sizeof(*attrs));
	nets = calloc(res->n_devices, sizeof(*nets));
	if (devs == NULL || attrs == NULL || nets == NULL) {
		free(devs);
		free(attrs);
		free(nets);
		goto nomem;
	}
	for (i = 0; i < res->n_devices; i++)
		if (in_request(&res->devices[i], req)) {
			attrs[n] = md_attrs_find(res, res->devices[i].pool,
			    res->devices[i].device, MD_ATTRS);
			nets[n] = md_attrs_find(res, res->devices[i].pool,
			    res->devices[i].device, MD_NET);
			devs[n++] = &res->devices[i];
		}
	for (i = 0; i < cfg->n_metadata_versions; i++)
		vers[i] = cfg->metadata_versions[i];
	memset(&in, 0, sizeof(in));
	in.driver = cfg->driver_name;
	in.versions = vers;
	in.n_versions = cfg->n_metadata_versions;
	in.namespace_ = c->namespace_;
	in.name = c->name;
	in.uid = c->uid;
	in.generation = 1;
	in.pod_claim_name = pod;
	in.request = req;
	in.devices = devs;
	in.attrs = attrs;
	in.nets = nets;
	in.n_devices = n;
	r = md_encode(&in, &json, &len);
	free(devs);
	free(attrs);
	free(nets);
	if (r != 0)
		goto nomem;
	if (len > MD_MAX_CONTENT) {
		free(json);
		snprintf(err, errsize, "write device metadata for request %s: "
		    "%zu bytes, more than %u", req, len, MD_MAX_CONTENT);
		return (KP_EINVAL);
	}
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
