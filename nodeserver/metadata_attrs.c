/*
 * metadata_attrs.c - kp_prepare_device_metadata(): the attributes of a
 * prepared device for its device metadata file (upstream
 * Device.Metadata.Attributes, v0.36), a builder beside
 * kp_prepare_add_device() so that struct kp_prepared_device stays as it
 * is. They are rendered at once into the "attributes" and "networkData" members
 * of the device's object, as Go's json.MarshalIndent writes a
 * map[QualifiedName]DeviceAttribute: keys sorted bytewise, each value an
 * object with one of int, bool, string, version, ints, bools, strings,
 * versions.
 *
 * Runs in: the nodeserver, inside a prepare hook call.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "nodeserver/dra.h"

static void
attrs_entry_free(struct md_attrs *m)
{
	free(m->pool);
	free(m->device);
	free(m->json);
}

void
md_attrs_free(struct dra_result *c)
{
	size_t	 i;

	for (i = 0; i < c->n_md_attrs; i++)
		attrs_entry_free(&c->md_attrs[i]);
	free(c->md_attrs);
	c->md_attrs = NULL;
	c->n_md_attrs = 0;
}

/* The rendered member (kind) of device pool/device, or NULL. */
const char *
md_attrs_find(const struct dra_result *c, const char *pool,
    const char *device, int kind)
{
	size_t	 i;

	for (i = c->n_md_attrs; i > 0; i--)	/* the last call wins */
		if (c->md_attrs[i - 1].kind == kind &&
		    strcmp(c->md_attrs[i - 1].pool, pool) == 0 &&
		    strcmp(c->md_attrs[i - 1].device, device) == 0)
			return (c->md_attrs[i - 1].json);
	return (NULL);
}


/*
 * Keep b (the member rendered for device pool/device of claim index
 * claim, kind MD_ATTRS or MD_NET) unless why says what is wrong; either
 * way the claim fails on an error, naming fn and the rule. b is freed
 * unless kept.
 */
static int
md_store(struct kp_prepare_results *res, size_t claim, const char *fn,
    const char *pool, const char *device, int kind, struct md_buf *b,
    const char *why)
{
	struct dra_result	*c;
	struct md_attrs		*na, e;
	char			 msg[KP_ERROR_SIZE];
	size_t			 i;

	if ((c = dra_prepare_claim(res, claim)) == NULL) {
		free(b->p);
		return (KP_EINVAL);
	}
	if (pool == NULL || device == NULL)
		why = "pool and device are required";
	if (why == NULL && c->error == NULL) {
		for (i = 0; i < c->n_devices; i++)
			if (strcmp(c->devices[i].pool, pool) == 0 &&
			    strcmp(c->devices[i].device, device) == 0)
				break;
		if (i == c->n_devices)
			why = "no such device in this claim (add it with "
			    "kp_prepare_add_device first)";
	}
	if (why != NULL) {
		free(b->p);
		snprintf(msg, sizeof(msg), "%s: %s", fn, why);
		(void)dra_result_fail_one(c, msg);
		return (KP_EINVAL);
	}
	if (c->error != NULL) {
		free(b->p);
		return (0);	/* a failed claim's devices are dropped */
	}
	memset(&e, 0, sizeof(e));
	e.kind = kind;
	if (b->oom || (e.pool = strdup(pool)) == NULL ||
	    (e.device = strdup(device)) == NULL ||
	    (na = reallocarray(c->md_attrs, c->n_md_attrs + 1,
	    sizeof(*na))) == NULL) {
		free(b->p);
		attrs_entry_free(&e);
		(void)dra_result_fail_one(c, "out of memory");
		return (KP_ENOMEM);
	}
	e.json = b->p;
	na[c->n_md_attrs++] = e;
	c->md_attrs = na;
	return (0);
}

int
kp_prepare_device_metadata(struct kp_prepare_results *res, size_t claim,
    const char *pool, const char *device, const struct kp_attribute *attrs,
    size_t n)
{
	struct md_buf	 b = { NULL, 0, 0, 0 };

	return (md_store(res, claim, "kp_prepare_device_metadata", pool,
	    device, MD_ATTRS, &b, pool != NULL && device != NULL ?
	    md_attrs_json(&b, attrs, n) : NULL));
}

int
kp_prepare_device_network_data(struct kp_prepare_results *res, size_t claim,
    const char *pool, const char *device, const char *interface_name,
    const char *const *ips, size_t n_ips, const char *hardware_address)
{
	struct md_buf	 b = { NULL, 0, 0, 0 };

	return (md_store(res, claim, "kp_prepare_device_network_data", pool,
	    device, MD_NET, &b, pool != NULL && device != NULL ?
	    md_net_json(&b, interface_name, ips, n_ips, hardware_address) :
	    NULL));
}
