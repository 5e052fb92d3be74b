/*
 * options_lifecycle.c - how the plugin ends (issue 14): the budget a
 * draining stop gives calls in flight, and the file a fatal exit leaves
 * its one-line reason in (kubelet's terminationMessagePath), and when a
 * child that stopped answering is replaced. The rules of every setter are
 * options.c's.
 */
#include <string.h>

#include "api/api.h"

int
kp_shutdown_grace(struct kp_options *opts, int ms)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (ms < 0 || ms > KP_MAX_SHUTDOWN_GRACE_MS)
		return (opt_fail(opts, KP_EINVAL, "%s: %d ms must be between "
		    "0 and %d", OPT_GRACE, ms, KP_MAX_SHUTDOWN_GRACE_MS));
	opts->shutdown_grace_ms = ms;
	return (0);
}

int
kp_hung_child_timeout(struct kp_options *opts, int ms)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (ms != 0 && (ms < KP_MIN_HUNG_MS || ms > KP_MAX_HUNG_MS))
		return (opt_fail(opts, KP_EINVAL, "%s: %d ms must be 0 (never) "
		    "or between %d and %d", OPT_HUNG, ms, KP_MIN_HUNG_MS,
		    KP_MAX_HUNG_MS));
	opts->hung_ms = ms;
	return (0);
}

int
kp_termination_message_path(struct kp_options *opts, const char *path)
{
	char	 q[OPT_QUOTE_SIZE];
	size_t	 len;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (path == NULL) {
		opts->termlog_off = 1;
		opts->termlog[0] = '\0';
		return (0);
	}
	opt_quote(path, q, sizeof(q));
	len = strlen(path);
	if (path[0] != '/')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must be an absolute "
		    "path", OPT_TERMLOG, q));
	if (len > KP_TERMLOG_MAX)
		return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s is %zu bytes, "
		    "at most %d", OPT_TERMLOG, q, len, KP_TERMLOG_MAX));
	memcpy(opts->termlog, path, len + 1);
	opts->termlog_off = 0;
	return (0);
}
