/*
 * test_health.c - resource health: the option setters and their defaults
 * in supported_versions, the rules of a device health entry (shared by
 * the driver process, the supervisor's frame check and the nodeserver),
 * the merging table, the frame check, and kp_hook_health_report outside
 * the nodeserver.
 */
#include <string.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "base/health.h"
#include "ipc/ipc.h"
#include "test.h"

static void
test_setters(void)
{
	struct kp_options	*o;
	size_t			 i;
	static const char *const all[] = { "v1.DRAPlugin",
	    "v1beta1.DRAPlugin", "v1.DRAResourceHealth",
	    "v1alpha1.DRAResourceHealth" };

	CHECK_EQ(kp_health_service(NULL, 1), KP_EINVAL);
	CHECK_EQ(kp_health_v1(NULL, 1), KP_EINVAL);
	CHECK_EQ(kp_health_v1alpha1(NULL, 1), KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	/* defaults: everything on, DRA first, then v1, then v1alpha1 */
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 4);
	for (i = 0; i < 4 && i < o->n_advertised; i++)
		CHECK_STREQ(o->advertised[i], all[i]);
	CHECK_EQ(kp_health_service(o, 2), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o),
	    "kp_health_service (HealthService): 2 must be 0 or 1");
	CHECK_EQ(kp_health_v1(o, -1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_health_v1 (HealthV1)");
	CHECK_EQ(kp_health_v1alpha1(o, 5), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o),
	    "kp_health_v1alpha1 (HealthV1alpha1)");
	/* a failed call changed nothing */
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 4);
	CHECK_EQ(kp_health_v1(o, 0), 0);
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 3);
	CHECK_STREQ(o->advertised[2], "v1alpha1.DRAResourceHealth");
	CHECK_EQ(kp_health_v1(o, 1), 0);
	CHECK_EQ(kp_health_v1alpha1(o, 0), 0);
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 3);
	CHECK_STREQ(o->advertised[2], "v1.DRAResourceHealth");
	CHECK_EQ(kp_health_service(o, 0), 0);
	CHECK_EQ(kp_health_v1alpha1(o, 1), 0);
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 2);
	CHECK_EQ(kp_node_v1alpha4(o, 1), 0);
	CHECK_EQ(kp_health_service(o, 1), 0);
	opt_advertise(o);
	CHECK_EQ(o->n_advertised, 6);	/* within KP_MAX_ADVERTISED */
	CHECK_STREQ(o->advertised[3], "1.0.0");
	CHECK_STREQ(o->advertised[4], "v1.DRAResourceHealth");
	kp_options_free(o);
}

static int
check_one(const struct kp_device_health *d, char *err)
{
	err[0] = '\0';
	return (health_check_all(d, 1, err, KP_ERROR_SIZE));
}

static void
test_rules(void)
{
	struct kp_device_health	 d = { KP_DEVICE_HEALTH_INIT }, bad;
	char			 err[KP_ERROR_SIZE], msg[KP_HEALTH_MESSAGE_MAX + 2];

	d.pool = "node-1/pool.a";
	d.device = "gpu-0";
	d.status = KP_HEALTH_HEALTHY;
	CHECK_EQ(check_one(&d, err), 0);
	CHECK_EQ(health_check_all(NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ(health_check_all(NULL, 1, err, sizeof(err)), KP_EINVAL);
	bad = d;
	bad.struct_size = 8;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0].struct_size 8: must be at least");
	bad = d;
	bad.pool = "";
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0].pool: must be DNS subdomains");
	bad.pool = "a//b";
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	bad.pool = NULL;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	bad = d;
	bad.device = "GPU";
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0].device: must be a DNS label");
	bad.device = NULL;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	bad = d;
	bad.status = (enum kp_health_status)3;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0].status 3");
	bad = d;
	bad.last_updated = -1;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "last_updated");
	bad = d;
	bad.timeout_s = 86401;
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0].timeout_s 86401");
	bad = d;
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	bad.message = msg;	/* 1025 bytes */
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "longer than 1024 bytes");
	msg[KP_HEALTH_MESSAGE_MAX] = '\0';	/* 1024: the limit itself */
	CHECK_EQ(check_one(&bad, err), 0);
	bad.message = "bad \xff utf-8";
	CHECK_EQ(check_one(&bad, err), KP_EINVAL);
	CHECK_CONTAINS(err, "not valid UTF-8");
}

/* A caller built against a later header: bigger entries, same rules. */
struct later_health {
	struct kp_device_health	 h;
	long			 future_field;
};

static void
test_table(void)
{
	struct health_table	 t;
	struct later_health	 l[3];
	struct kp_device_health	 d[2] = { { KP_DEVICE_HEALTH_INIT },
	    { KP_DEVICE_HEALTH_INIT } };
	char			 err[KP_ERROR_SIZE];
	size_t			 i;

	memset(&t, 0, sizeof(t));
	d[0].pool = "p";
	d[0].device = "a";
	d[0].timeout_s = 40;
	d[1].pool = "p";
	d[1].device = "b";
	d[1].status = KP_HEALTH_UNHEALTHY;
	d[1].message = "hot";
	CHECK_EQ(health_check_all(d, 2, err, sizeof(err)), 0);
	CHECK_EQ(health_table_merge(&t, d, 2), 0);
	CHECK_EQ(t.n, 2);
	CHECK_EQ(health_table_min_timeout(&t), 40);
	/* a report for one device replaces only its state */
	d[0].status = KP_HEALTH_HEALTHY;
	d[0].timeout_s = 5;
	CHECK_EQ(health_table_merge(&t, d, 1), 0);
	CHECK_EQ(t.n, 2);
	CHECK_EQ(t.e[0].status, KP_HEALTH_HEALTHY);
	CHECK_STREQ(t.e[0].message, "");
	CHECK_STREQ(t.e[1].message, "hot");
	CHECK_EQ(health_table_min_timeout(&t), 5);
	health_table_free(&t);
	CHECK_EQ(health_table_min_timeout(&t), HEALTH_DEFAULT_TIMEOUT);

	memset(l, 0, sizeof(l));
	for (i = 0; i < 3; i++) {
		l[i].h.struct_size = sizeof(l[i]);
		l[i].h.pool = "p";
		l[i].h.device = i == 1 ? "b" : "a";
		l[i].future_field = -1;
	}
	CHECK_EQ(health_check_all(&l[0].h, 3, err, sizeof(err)), 0);
	CHECK_EQ(health_table_merge(&t, &l[0].h, 3), 0);
	CHECK_EQ(t.n, 2);
	CHECK_STREQ(t.e[1].device, "b");
	l[2].h.struct_size = sizeof(struct kp_device_health);
	CHECK_EQ(health_check_all(&l[0].h, 3, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "devices[2].struct_size: differs");
	health_table_free(&t);
}

static void
test_frame(void)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__HealthReport	 hr = KPIPC__HEALTH_REPORT__INIT;
	Kpipc__DeviceHealth	 d = KPIPC__DEVICE_HEALTH__INIT, *dp = &d;
	char			 err[KP_ERROR_SIZE];

	d.pool = "p";
	d.device = "a";
	d.status = 1;
	hr.devices = &dp;
	hr.n_devices = 1;
	m.m_case = KPIPC__MSG__M_HEALTH_REPORT;
	m.health_report = &hr;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	d.timeout_seconds = (int64_t)1 << 40;	/* would wrap an int */
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	d.timeout_seconds = 0;
	d.device = "A";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "health_report.devices[0].device");
	/* only the driver may report, only the nodeserver may warn */
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY,
	    KPIPC__MSG__M_HEALTH_REPORT, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_HEALTH_REPORT, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_HEALTH_STALE, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_REGISTRAR, CS_READY,
	    KPIPC__MSG__M_HEALTH_STALE, err, sizeof(err)), KP_EPROTO);
}

static void
test_hook_outside(void)
{
	struct kp_device_health	 d = { KP_DEVICE_HEALTH_INIT };
	char			 err[KP_ERROR_SIZE];

	d.pool = "p";
	d.device = "a";
	CHECK_EQ(kp_hook_health_report(&d, 1, err, sizeof(err)), KP_ENOTSUP);
	CHECK_CONTAINS(err, "only in the nodeserver");
	CHECK_EQ(kp_health_report(NULL, &d, 1), KP_EINVAL);
}

int
main(void)
{
	test_setters();
	test_rules();
	test_table();
	test_frame();
	test_hook_outside();
	return (test_done("test_health"));
}
