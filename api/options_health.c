/*
 * options_health.c - the resource health options (Go helper v0.37
 * HealthService, HealthV1, HealthV1alpha1; all on by default). Stored
 * inverted in struct kp_options so a zeroed set holds the defaults.
 *
 * Runs in: the driver process.
 */
#include "api/api.h"

static int
set_on(struct kp_options *opts, const char *what, int *off, int enable)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (enable != 0 && enable != 1)
		return (opt_fail(opts, KP_EINVAL, "%s: %d must be 0 or 1", what,
		    enable));
	*off = !enable;
	return (0);
}

int
kp_health_service(struct kp_options *opts, int enable)
{
	return (set_on(opts, OPT_HEALTH, opts ? &opts->health_off : NULL,
	    enable));
}

int
kp_health_v1(struct kp_options *opts, int enable)
{
	return (set_on(opts, OPT_HEALTH_V1, opts ? &opts->health_v1_off :
	    NULL, enable));
}

int
kp_health_v1alpha1(struct kp_options *opts, int enable)
{
	return (set_on(opts, OPT_HEALTH_V1A1, opts ?
	    &opts->health_v1alpha1_off : NULL, enable));
}
