/*
 * publish_rules.c - the ResourceSlice controller's 1.38 rules that leave
 * a pool out of kp_publish_resources() instead of failing the call
 * (validate.c fails the call for the API server's rules):
 *  - ValidateQualifiedNames (kubernetes PR #142218, on by default): an
 *    attribute or capacity name qualified with the driver's own domain
 *    ("gpu.example.com/model" for driver "gpu.example.com") must use the
 *    short name ("model"). Such a pool is not published: the state last
 *    sent for it stays (its slices are neither updated nor deleted), as
 *    upstream's controller returns from the pool's sync before any write
 *    and does not retry.
 *  - ReconcilePoolWithName (PR #141108): the pool of that name replaces
 *    the desired state; every other pool is left out.
 * Each pool left out is reported once per call to the driver's error
 * function (events_note), KP_EINVAL, recoverable, with its field path.
 *
 * Runs in: the driver process, under the plugin's pub_lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "api/api.h"

/* The first name of the pool in the driver's own domain, as a message
 * naming its path under the pool; 0 if none. */
static int
qualified_name(const char *driver, const Kpipc__Pool *pool, char *why,
    size_t size)
{
	const Kpipc__Device	*d;
	const char		*name, *what;
	size_t			 dl = strlen(driver), i, j, k, n;

	for (i = 0; i < pool->n_slices; i++)
		for (j = 0; j < pool->slices[i]->n_devices; j++) {
			d = pool->slices[i]->devices[j];
			n = d->n_attributes + d->n_capacities;
			for (k = 0; k < n; k++) {
				if (k < d->n_attributes) {
					name = d->attributes[k]->name;
					what = "attributes";
				} else {
					name = d->capacities[k -
					    d->n_attributes]->name;
					what = "capacity";
				}
				if (strncmp(name, driver, dl) != 0 ||
				    name[dl] != '/')
					continue;
				snprintf(why, size, "slices[%zu].devices[%zu]."
				    "%s[\"%s\"]: qualified with the driver's "
				    "own domain: use the short name \"%s\" "
				    "(ValidateQualifiedNames)", i, j, what,
				    name, name + dl + 1);
				return (1);
			}
		}
	return (0);
}

/* The last state sent of pool name, from prev (unpacked once). */
static Kpipc__Pool *
last_pool(struct kp_plugin *p, Kpipc__Publish **prev, const char *name)
{
	size_t	 i;

	if (*prev == NULL && p->last_pub != NULL)
		*prev = kpipc__publish__unpack(NULL, p->last_pub_len,
		    p->last_pub);
	for (i = 0; *prev != NULL && i < (*prev)->n_pools; i++)
		if (strcmp((*prev)->pools[i]->name, name) == 0)
			return ((*prev)->pools[i]);
	return (NULL);
}

/*
 * publish_rules - the rules above on pub (valid already). Returns 0: send
 * pub as it is; 1: send shell, whose pools array is allocated here (the
 * caller frees shell->pools, and *prev with kpipc__publish__free_unpacked
 * when not NULL: shell may hold pools of it); KP_ENOMEM (err says so).
 * Every pool left out is queued for the error function.
 */
int
publish_rules(struct kp_plugin *p, const Kpipc__Publish *pub,
    Kpipc__Publish *shell, Kpipc__Publish **prev, char *err, size_t errsize)
{
	Kpipc__Pool	*keep;
	char		 why[KP_ERROR_SIZE];
	size_t		 i, n = 0;
	int		 left = 0;

	*prev = NULL;
	kpipc__publish__init(shell);
	if ((shell->pools = calloc(pub->n_pools + 1,
	    sizeof(*shell->pools))) == NULL ||
	    (shell->keep_pools = calloc(pub->n_pools + 1,
	    sizeof(*shell->keep_pools))) == NULL) {
		free(shell->pools);
		shell->pools = NULL;
		snprintf(err, errsize, "out of memory");
		return (KP_ENOMEM);
	}
	for (i = 0; i < pub->n_pools; i++) {
		const Kpipc__Pool *pl = pub->pools[i];

		keep = pub->pools[i];
		if (p->reconcile_pool[0] != '\0' &&
		    strcmp(pl->name, p->reconcile_pool) != 0) {
			events_note(p, KP_EINVAL, "kp_publish_resources: "
			    "pools[%zu] \"%.64s\": not published: "
			    "ReconcilePoolWithName=\"%.64s\" publishes only "
			    "that pool", i, pl->name, p->reconcile_pool);
			keep = NULL;
		} else if (p->qnames && qualified_name(p->driver, pl, why,
		    sizeof(why))) {
			keep = last_pool(p, prev, pl->name);
			/* No last state here (a restart): the publisher
			 * leaves the stored slices as they are. */
			if (keep == NULL)
				shell->keep_pools[shell->n_keep_pools++] =
				    pl->name;
			events_note(p, KP_EINVAL, "kp_publish_resources: "
			    "pools[%zu] \"%.64s\": %s; the pool is not "
			    "published (its slices stay as they are)", i,
			    pl->name, why);
		}
		if (keep != pub->pools[i])
			left = 1;
		if (keep != NULL)
			shell->pools[n++] = keep;
	}
	if (!left) {
		free(shell->pools);
		free(shell->keep_pools);
		shell->pools = NULL;
		shell->keep_pools = NULL;
		shell->n_keep_pools = 0;
		return (0);
	}
	shell->n_pools = n;
	return (1);
}

/* What was sent is the state a pool left out later keeps. */
void
publish_rules_sent(struct kp_plugin *p, const Kpipc__Publish *sent)
{
	size_t	 len = kpipc__publish__get_packed_size(sent);
	uint8_t	*buf;

	if ((buf = malloc(len > 0 ? len : 1)) == NULL) {
		/* Without it a pool left out later is just not sent. */
		log_warnx("kp_publish_resources: out of memory keeping the "
		    "state sent");
		len = 0;
	} else
		kpipc__publish__pack(sent, buf);
	free(p->last_pub);
	p->last_pub = buf;
	p->last_pub_len = len;
}
