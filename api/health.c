/*
 * health.c - kp_health_report(): the driver process keeps the latest state
 * of every device it reported and sends the whole list each time, so the
 * supervisor can hand a restarted nodeserver the full picture with one
 * frame.
 *
 * Runs in: the driver process.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* The table as a HealthReport; strings borrowed from it. */
static int
send_table(struct kp_plugin *p)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__HealthReport	 hr = KPIPC__HEALTH_REPORT__INIT;
	Kpipc__DeviceHealth	*d, **dp;
	size_t			 i, n = p->health.n;
	int			 r;

	d = calloc(n + 1, sizeof(*d));
	dp = calloc(n + 1, sizeof(*dp));
	if (d == NULL || dp == NULL) {
		free(d);
		free(dp);
		return (api_fail(p, KP_ENOMEM, "kp_health_report: out of "
		    "memory"));
	}
	for (i = 0; i < n; i++) {
		kpipc__device_health__init(&d[i]);
		d[i].pool = p->health.e[i].pool;
		d[i].device = p->health.e[i].device;
		d[i].status = p->health.e[i].status;
		d[i].last_updated = p->health.e[i].last_updated;
		d[i].timeout_seconds = p->health.e[i].timeout_s;
		d[i].message = p->health.e[i].message;
		dp[i] = &d[i];
	}
	hr.n_devices = n;
	hr.devices = dp;
	m.m_case = KPIPC__MSG__M_HEALTH_REPORT;
	m.health_report = &hr;
	r = api_request(p, &m, "kp_health_report");
	free(d);
	free(dp);
	return (r);
}

int
kp_health_report(struct kp_plugin *p, const struct kp_device_health *devices,
    size_t n)
{
	char	 err[KP_ERROR_SIZE];
	int	 r;

	if (p == NULL || p->magic != KP_PLUGIN_MAGIC)
		return (KP_EINVAL);
	if ((r = health_check_all(devices, n, err, sizeof(err))) != 0)
		return (api_fail(p, r, "kp_health_report: %s", err));
	pthread_mutex_lock(&p->health_lock);
	if ((r = health_table_merge(&p->health, devices, n)) != 0)
		r = api_fail(p, r, "kp_health_report: devices: more than %d "
		    "in all", KP_HEALTH_MAX_DEVICES);
	else
		r = send_table(p);
	pthread_mutex_unlock(&p->health_lock);
	return (r);
}
