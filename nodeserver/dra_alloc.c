/*
 * dra_alloc.c - struct dra_claim_alloc, the allocation data a claim
 * look-up returns for the prepare hook. Every string is owned by it.
 */
#include <stdlib.h>
#include <string.h>

#include "nodeserver/dra.h"

/*
 * Append one allocated device (strings copied). Returns 0, KP_EINVAL (a
 * NULL string) or KP_ENOMEM (a is unchanged).
 */
int
dra_claim_alloc_add(struct dra_claim_alloc *a, const char *request,
    const char *pool, const char *device, int admin_access)
{
	struct kp_allocated_device	*nr, *d;
	char				*r, *p, *v;

	if (request == NULL || pool == NULL || device == NULL)
		return (KP_EINVAL);
	if ((nr = reallocarray(a->results, a->n_results + 1,
	    sizeof(*nr))) == NULL)
		return (KP_ENOMEM);
	a->results = nr;
	r = strdup(request);
	p = strdup(pool);
	v = strdup(device);
	if (r == NULL || p == NULL || v == NULL) {
		free(r);
		free(p);
		free(v);
		return (KP_ENOMEM);
	}
	d = &a->results[a->n_results++];
	d->request = r;
	d->pool = p;
	d->device = v;
	d->admin_access = admin_access != 0;
	return (0);
}

/* Set the opaque configuration (a JSON array; copied). NULL clears it. */
int
dra_claim_alloc_config(struct dra_claim_alloc *a, const char *json)
{
	char	*s = NULL;

	if (json != NULL && (s = strdup(json)) == NULL)
		return (KP_ENOMEM);
	free(a->config_json);
	a->config_json = s;
	return (0);
}

void
dra_claim_alloc_free(struct dra_claim_alloc *a)
{
	size_t	i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_results; i++) {
		/* Owned copies: const only in the hook's view. */
		free((char *)a->results[i].request);
		free((char *)a->results[i].pool);
		free((char *)a->results[i].device);
	}
	free(a->results);
	free(a->config_json);
	free(a->pod_claim_name);
	memset(a, 0, sizeof(*a));
}
