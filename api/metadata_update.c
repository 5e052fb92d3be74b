/*
 * metadata_update.c - kp_update_request_metadata() (upstream
 * Helper.UpdateRequestMetadata, v0.36): the driver process checks the
 * arguments and renders each device's "attributes" and "networkData"
 * members with the encoder the nodeserver uses (base/mdjson.c); the
 * supervisor reads the old file for its generation and pod claim name and
 * writes the new one (supervisor/md_update.c).
 *
 * Runs in: the driver process.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/mdjson.h"
#include "base/names.h"
#include "ipc/ipc.h"

#define FN	"kp_update_request_metadata"

/* Why request (or "<request>/<subrequest>") is refused, or NULL. */
static const char *
request_problem(const char *req)
{
	const char	*slash = strchr(req, '/');
	size_t		 bl = slash != NULL ? (size_t)(slash - req) :
			    strlen(req);

	if (bl > NAME_MAX_LABEL || !name_is_label(req, bl) || (slash != NULL &&
	    (strlen(slash + 1) > NAME_MAX_LABEL ||
	    !name_is_label(slash + 1, strlen(slash + 1)))))
		return ("a DNS label, or <label>/<label> for a subrequest");
	return (NULL);
}

/* Device d's members into md, or why not. */
static const char *
render_device(const struct kp_metadata_device *d, Kpipc__MetadataDevice *md,
    struct md_buf *ab, struct md_buf *nb, const char **field)
{
	const char	*why;

	*field = "struct_size";
	if (d->struct_size != sizeof(*d))
		return ("initialise with KP_METADATA_DEVICE_INIT");
	*field = "pool";
	if (d->pool == NULL || d->pool[0] == '\0' ||
	    strlen(d->pool) > KP_IPC_MAX_POOL)
		return ("required, at most 253 bytes");
	*field = "device";
	if (d->device == NULL || strlen(d->device) > NAME_MAX_LABEL ||
	    !name_is_label(d->device, strlen(d->device)))
		return ("required, a DNS label");
	*field = "attributes";
	if (d->n_attributes > 0 &&
	    (why = md_attrs_json(ab, d->attributes, d->n_attributes)) != NULL)
		return (why);
	*field = "network data";
	if ((d->interface_name != NULL || d->n_ips > 0 ||
	    d->hardware_address != NULL) && (why = md_net_json(nb,
	    d->interface_name, d->ips, d->n_ips, d->hardware_address)) != NULL)
		return (why);
	if (ab->oom || nb->oom)
		return ("out of memory");
	md->pool = (char *)d->pool;
	md->device = (char *)d->device;
	md->attributes = ab->p != NULL ? ab->p : (char *)"";
	md->network_data = nb->p != NULL ? nb->p : (char *)"";
	return (NULL);
}

int
kp_update_request_metadata(struct kp_plugin *p, const char *ns,
    const char *name, const char *uid, const char *request,
    const struct kp_metadata_device *devices, size_t n)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataUpdate	 u = KPIPC__METADATA_UPDATE__INIT;
	Kpipc__MetadataDevice	*md = NULL, **mdp = NULL;
	struct md_buf		*bufs = NULL;
	const char		*why = NULL, *field = "";
	size_t			 i;
	int			 r;

	if (p == NULL || p->magic != KP_PLUGIN_MAGIC)
		return (KP_EINVAL);
	if (ns == NULL || strlen(ns) > NAME_MAX_LABEL ||
	    !name_is_label(ns, strlen(ns)))
		return (api_fail(p, KP_EINVAL, FN ": claim_namespace: "
		    "required, a DNS label"));
	if (name == NULL || strlen(name) > NAME_MAX_SUBDOMAIN ||
	    !name_is_subdomain(name, strlen(name)))
		return (api_fail(p, KP_EINVAL, FN ": claim_name: required, a "
		    "DNS subdomain"));
	if (uid == NULL || !name_is_claim_uid(uid, strlen(uid)))
		return (api_fail(p, KP_EINVAL, FN ": claim_uid: required, a "
		    "UID (at most %d bytes of [A-Za-z0-9-])", NAME_MAX_UID));
	if (request == NULL)
		return (api_fail(p, KP_EINVAL, FN ": request: required"));
	if ((why = request_problem(request)) != NULL)
		return (api_fail(p, KP_EINVAL, FN ": request \"%.64s\": %s",
		    request, why));
	if (n > KP_IPC_MAX_METADATA_DEVICES || (n > 0 && devices == NULL))
		return (api_fail(p, KP_EINVAL, FN ": devices: at most %d, not "
		    "NULL with a count", KP_IPC_MAX_METADATA_DEVICES));
	if (n > 0 && ((md = calloc(n, sizeof(*md))) == NULL ||
	    (mdp = calloc(n, sizeof(*mdp))) == NULL ||
	    (bufs = calloc(2 * n, sizeof(*bufs))) == NULL)) {
		r = api_fail(p, KP_ENOMEM, FN ": out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		kpipc__metadata_device__init(&md[i]);
		if ((why = render_device(&devices[i], &md[i], &bufs[2 * i],
		    &bufs[2 * i + 1], &field)) != NULL)
			break;
		mdp[i] = &md[i];
	}
	if (why != NULL) {
		r = api_fail(p, strcmp(why, "out of memory") == 0 ? KP_ENOMEM :
		    KP_EINVAL, FN ": devices[%zu].%s: %s", i, field, why);
		goto out;
	}
	u.namespace_ = (char *)ns;
	u.name = (char *)name;
	u.uid = (char *)uid;
	u.request = (char *)request;
	u.devices = mdp;
	u.n_devices = n;
	m.m_case = KPIPC__MSG__M_METADATA_UPDATE;
	m.metadata_update = &u;
	r = api_request(p, &m, FN);
out:
	for (i = 0; bufs != NULL && i < 2 * n; i++)
		free(bufs[i].p);
	free(bufs);
	free(md);
	free(mdp);
	return (r);
}
