/*
 * dra_alloc.c - struct dra_claim_alloc, the allocation data a claim
 * look-up returns for the prepare hook. Every string is owned by it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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

static void
configs_free(struct dra_claim_alloc *a)
{
	size_t	i;

	for (i = 0; i < a->n_configs; i++) {
		free((void *)a->configs[i].requests);
		free((char *)a->configs[i].parameters);
	}
	free(a->configs);
	json_decref(a->config_root);	/* NULL-safe */
	a->configs = NULL;
	a->n_configs = 0;
	a->config_root = NULL;
}

/* One element of the array into c; NULL or the rule it breaks. */
static const char *
config_one(json_t *e, const char *driver, struct kp_config *c)
{
	json_t		*src, *req, *par, *x;
	const char	**rq;
	size_t		 i;

	if (!json_is_object(e))
		return ("not an object");
	src = json_object_get(e, "source");
	if (src != NULL && !json_is_string(src))
		return ("source: not a string");
	req = json_object_get(e, "requests");
	if (req != NULL && !json_is_array(req))
		return ("requests: not an array");
	c->source = src != NULL ? json_string_value(src) : "";
	c->driver = driver;
	par = json_object_get(e, "parameters");
	c->parameters_json = par;
	/* The text of "parameters", for drivers without jansson. */
	if ((c->parameters = json_dumps(par != NULL ? par : json_null(),
	    JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return ("out of memory");
	c->n_requests = req != NULL ? json_array_size(req) : 0;
	if ((rq = calloc(c->n_requests + 1, sizeof(*rq))) == NULL)
		return ("out of memory");
	c->requests = rq;
	json_array_foreach(req, i, x) {
		if (!json_is_string(x))
			return ("requests: not an array of strings");
		rq[i] = json_string_value(x);
	}
	return (NULL);
}

/*
 * Set the opaque configuration: json is the publisher's array (copied,
 * and parsed into a->configs for the hook, for driver driver). NULL
 * clears it. Returns 0, KP_ENOMEM, or KP_EPROTO with the rule in err
 * (a publisher's answer that does not have the documented shape).
 */
int
dra_claim_alloc_config(struct dra_claim_alloc *a, const char *json,
    const char *driver, char *err, size_t errsize)
{
	json_t		*root, *e;
	const char	*why;
	char		*s = NULL;
	size_t		 i;

	configs_free(a);
	free(a->config_json);
	a->config_json = NULL;
	if (json == NULL)
		return (0);
	if ((s = strdup(json)) == NULL)
		return (KP_ENOMEM);
	a->config_json = s;
	if ((root = json_loads(json, JSON_REJECT_DUPLICATES, NULL)) == NULL ||
	    !json_is_array(root)) {
		json_decref(root);
		snprintf(err, errsize, "opaque configuration: not a JSON "
		    "array");
		return (KP_EPROTO);
	}
	a->config_root = root;
	if ((a->configs = calloc(json_array_size(root) + 1,
	    sizeof(*a->configs))) == NULL)
		return (KP_ENOMEM);
	json_array_foreach(root, i, e) {
		a->n_configs = i + 1;
		if ((why = config_one(e, driver, &a->configs[i])) != NULL) {
			snprintf(err, errsize, "opaque configuration: "
			    "config[%zu]: %s", i, why);
			return (strcmp(why, "out of memory") == 0 ?
			    KP_ENOMEM : KP_EPROTO);
		}
	}
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
	free(a->claim_json);
	configs_free(a);
	memset(a, 0, sizeof(*a));
}
