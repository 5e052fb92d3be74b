/*
 * health.c - the rules of a device health entry and the table that merges
 * reports by pool and device (health.h).
 *
 * Runs in: the driver process (kp_health_report), the supervisor (frame
 * checks) and the nodeserver (the streams, kp_hook_health_report).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/health.h"
#include "base/names.h"
#include "base/utf8.h"

/* The smallest struct a caller may pass: the first version's. */
#define HEALTH_MIN_SIZE	sizeof(struct kp_device_health)

/*
 * Entry i of an array the caller compiled with its own struct size, so a
 * caller built against a later header (more fields) still indexes right.
 */
const struct kp_device_health *
health_at(const struct kp_device_health *d, size_t i)
{
	return ((const struct kp_device_health *)(const void *)
	    ((const char *)d + i * d->struct_size));
}

/* A pool name: DNS subdomains joined by '/', at most 253 bytes. */
static int
pool_ok(const char *s)
{
	const char	*p, *slash;
	size_t		 len;

	if (s == NULL || (len = strlen(s)) == 0 || len > HEALTH_MAX_POOL)
		return (0);
	for (p = s; ; p = slash + 1) {
		slash = strchr(p, '/');
		len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (!name_is_subdomain(p, len))
			return (0);
		if (slash == NULL)
			return (1);
	}
}

/* 0 if entry i (already located) follows the rules; else KP_EINVAL. */
int
health_check(const struct kp_device_health *d, size_t i, char *err,
    size_t errsize)
{
	if (d->struct_size < HEALTH_MIN_SIZE) {
		snprintf(err, errsize, "devices[%zu].struct_size %zu: must be "
		    "at least %zu (start from KP_DEVICE_HEALTH_INIT)", i,
		    d->struct_size, HEALTH_MIN_SIZE);
		return (KP_EINVAL);
	}
	if (!pool_ok(d->pool)) {
		snprintf(err, errsize, "devices[%zu].pool: must be DNS "
		    "subdomains joined by '/', at most %d bytes", i,
		    HEALTH_MAX_POOL);
		return (KP_EINVAL);
	}
	if (d->device == NULL || strlen(d->device) > NAME_MAX_LABEL ||
	    !name_is_label(d->device, strlen(d->device))) {
		snprintf(err, errsize, "devices[%zu].device: must be a DNS "
		    "label (lower case alphanumerics and '-', at most %d)", i,
		    NAME_MAX_LABEL);
		return (KP_EINVAL);
	}
	if ((int)d->status < KP_HEALTH_UNKNOWN ||
	    (int)d->status > KP_HEALTH_UNHEALTHY) {
		snprintf(err, errsize, "devices[%zu].status %d: must be "
		    "KP_HEALTH_UNKNOWN, _HEALTHY or _UNHEALTHY", i,
		    (int)d->status);
		return (KP_EINVAL);
	}
	if (d->last_updated < 0) {
		snprintf(err, errsize, "devices[%zu].last_updated: must be "
		    ">= 0 (Unix seconds; 0: unknown)", i);
		return (KP_EINVAL);
	}
	if (d->timeout_s < 0 || d->timeout_s > HEALTH_MAX_TIMEOUT) {
		snprintf(err, errsize, "devices[%zu].timeout_s %d: must be "
		    "between 0 (kubelet's default) and %d", i, d->timeout_s,
		    HEALTH_MAX_TIMEOUT);
		return (KP_EINVAL);
	}
	if (d->message != NULL && strlen(d->message) > KP_HEALTH_MESSAGE_MAX) {
		snprintf(err, errsize, "devices[%zu].message: longer than %d "
		    "bytes", i, KP_HEALTH_MESSAGE_MAX);
		return (KP_EINVAL);
	}
	if (d->message != NULL && !utf8_valid(d->message)) {
		snprintf(err, errsize, "devices[%zu].message: not valid "
		    "UTF-8", i);
		return (KP_EINVAL);
	}
	return (0);
}

/* Every entry of a report, with one struct size for all of them. */
int
health_check_all(const struct kp_device_health *d, size_t n, char *err,
    size_t errsize)
{
	size_t	 i;
	int	 rv;

	if (n > 0 && d == NULL) {
		snprintf(err, errsize, "devices: NULL with n %zu", n);
		return (KP_EINVAL);
	}
	if (n > KP_HEALTH_MAX_DEVICES) {
		snprintf(err, errsize, "devices: %zu entries, more than %d", n,
		    KP_HEALTH_MAX_DEVICES);
		return (KP_EINVAL);
	}
	if (n > 0 && d->struct_size < HEALTH_MIN_SIZE)
		return (health_check(d, 0, err, errsize));
	for (i = 0; i < n; i++) {
		if (health_at(d, i)->struct_size != d->struct_size) {
			snprintf(err, errsize, "devices[%zu].struct_size: "
			    "differs from devices[0]'s", i);
			return (KP_EINVAL);
		}
		if ((rv = health_check(health_at(d, i), i, err, errsize)) != 0)
			return (rv);
	}
	return (0);
}

static struct health_entry *
find(struct health_table *t, const char *pool, const char *device)
{
	size_t	 i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->e[i].pool, pool) == 0 &&
		    strcmp(t->e[i].device, device) == 0)
			return (&t->e[i]);
	return (NULL);
}

static int
set(struct health_entry *e, const struct kp_device_health *d)
{
	char	*msg;

	if ((msg = strdup(d->message != NULL ? d->message : "")) == NULL)
		return (KP_ENOMEM);
	free(e->message);
	e->message = msg;
	e->status = (int)d->status;
	e->last_updated = d->last_updated;
	e->timeout_s = d->timeout_s;
	return (0);
}

/*
 * Merge n checked entries: a known device takes the new state, a new one
 * is appended (report order is list order). KP_ENOMEM when the table
 * would hold more than KP_HEALTH_MAX_DEVICES devices; entries merged
 * before that stay merged.
 */
int
health_table_merge(struct health_table *t, const struct kp_device_health *d,
    size_t n)
{
	const struct kp_device_health	*x;
	struct health_entry		*e, *ne;
	size_t				 i;

	for (i = 0; i < n; i++) {
		x = health_at(d, i);
		if ((e = find(t, x->pool, x->device)) == NULL) {
			if (t->n >= KP_HEALTH_MAX_DEVICES)
				return (KP_ENOMEM);
			if (t->n == t->cap) {
				ne = reallocarray(t->e, t->cap ? t->cap * 2 :
				    16, sizeof(*ne));
				if (ne == NULL)
					return (KP_ENOMEM);
				t->e = ne;
				t->cap = t->cap ? t->cap * 2 : 16;
			}
			e = &t->e[t->n];
			memset(e, 0, sizeof(*e));
			if ((e->pool = strdup(x->pool)) == NULL ||
			    (e->device = strdup(x->device)) == NULL) {
				free(e->pool);
				return (KP_ENOMEM);
			}
			t->n++;
		}
		if (set(e, x) != 0)
			return (KP_ENOMEM);
	}
	return (0);
}

/* The smallest per-device timeout; HEALTH_DEFAULT_TIMEOUT when none. */
int64_t
health_table_min_timeout(const struct health_table *t)
{
	int64_t	 min = 0;
	size_t	 i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].timeout_s > 0 &&
		    (min == 0 || t->e[i].timeout_s < min))
			min = t->e[i].timeout_s;
	return (min > 0 ? min : HEALTH_DEFAULT_TIMEOUT);
}

void
health_table_free(struct health_table *t)
{
	size_t	 i;

	for (i = 0; i < t->n; i++) {
		free(t->e[i].pool);
		free(t->e[i].device);
		free(t->e[i].message);
	}
	free(t->e);
	memset(t, 0, sizeof(*t));
}
