/*
 * options_channels.c - the callbacks of the channels between the driver
 * process, the library and the hooks: the nodeserver's state function
 * (kp_state_callback) and the driver process's error function
 * (kp_error_callback, upstream HandleError).
 *
 * Runs in: the driver process.
 */
#include "api/api.h"

int
kp_state_callback(struct kp_options *opts, kp_state_fn fn, void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	opts->state_fn = fn;
	opts->state_user = fn != NULL ? user : NULL;
	return (0);
}

int
kp_error_callback(struct kp_options *opts, kp_error_fn fn, void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	opts->error_fn = fn;
	opts->error_user = fn != NULL ? user : NULL;
	return (0);
}
