/*
 * options_rpc.c - the connection limits of the two gRPC servers (issue
 * 10): how many connections each socket holds at once and how long a new
 * one may take to send the HTTP/2 client preface. rpc/accept.c applies
 * them; the rules of every setter are options.c's.
 */
#include "api/api.h"

int
kp_grpc_max_connections(struct kp_options *opts, int n)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (n < 1 || n > KP_MAX_CONNS)
		return (opt_fail(opts, KP_EINVAL, "%s: connection count %d "
		    "must be between 1 and %d", OPT_MAX_CONNS, n,
		    KP_MAX_CONNS));
	opts->max_conns = n;
	return (0);
}

int
kp_grpc_handshake_timeout(struct kp_options *opts, int ms)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (ms < KP_MIN_HANDSHAKE_MS || ms > KP_MAX_HANDSHAKE_MS)
		return (opt_fail(opts, KP_EINVAL, "%s: timeout %d ms must be "
		    "between %d and %d", OPT_HANDSHAKE, ms,
		    KP_MIN_HANDSHAKE_MS, KP_MAX_HANDSHAKE_MS));
	opts->handshake_ms = ms;
	return (0);
}
