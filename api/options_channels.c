/*
 * options_channels.c - the callbacks of the channels between the driver
 * process, the library and the hooks: the nodeserver's state function
 * (kp_state_callback) and the driver process's error function
 * (kp_error_callback, upstream HandleError).
 *
 * Runs in: the driver process.
 */
#include <stdlib.h>
#include <string.h>

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
kp_state_initial(struct kp_options *opts, const void *data, size_t len)
{
	struct kp_state_blob	*b = NULL;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (data == NULL && len > 0)
		return (opt_fail(opts, KP_EINVAL, "kp_state_initial: data: "
		    "NULL with len %zu", len));
	if (len > KP_STATE_MAX)
		return (opt_fail(opts, KP_EINVAL, "kp_state_initial: len: %zu "
		    "bytes exceed KP_STATE_MAX (%u bytes)", len,
		    (unsigned)KP_STATE_MAX));
	if (data != NULL) {
		if ((b = malloc(sizeof(*b) + len)) == NULL)
			return (opt_fail(opts, KP_ENOMEM, "kp_state_initial: "
			    "out of memory"));
		b->len = len;
		if (len > 0)
			memcpy(b->data, data, len);
	}
	free(opts->initial_state);
	opts->initial_state = b;
	opts->initial_state_set = b != NULL;
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
