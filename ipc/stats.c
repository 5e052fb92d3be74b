/*
 * stats.c - the counters children report in a Pong (the heartbeat's
 * answer) and the rules the supervisor applies to them: every label value
 * comes from a fixed table (gRPC method paths, HTTP verbs) or is checked
 * as a Kubernetes name or a syscall name, and every list is bounded, so a
 * hostile child can make /metrics lie about its own counters but never
 * grow the supervisor's tables or put arbitrary text on the page.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kubeletplugin.h"
#include "base/names.h"
#include "ipc/ipc.h"

/* Seconds; as the Kubernetes gRPC latency buckets (component-base). */
const double kp_stats_lat_bounds[KP_STATS_LAT_BOUNDS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
};

/* The gRPC methods a role serves; anything else is not reported. */
static const struct {
	const char	*path;
	enum kp_role	 role;
} methods[KP_STATS_METHODS] = {
	{ "/pluginregistration.Registration/GetInfo", ROLE_REGISTRAR },
	{ "/pluginregistration.Registration/NotifyRegistrationStatus",
	    ROLE_REGISTRAR },
	{ "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
	    ROLE_NODESERVER },
	{ "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
	    ROLE_NODESERVER },
	{ "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"
	    "NodePrepareResources", ROLE_NODESERVER },
	{ "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"
	    "NodeUnprepareResources", ROLE_NODESERVER },
	{ "/v1alpha3.Node/NodePrepareResources", ROLE_NODESERVER },
	{ "/v1alpha3.Node/NodeUnprepareResources", ROLE_NODESERVER },
	{ "/v1.DRAResourceHealth/NodeWatchResources", ROLE_NODESERVER },
	{ "/v1alpha1.DRAResourceHealth/NodeWatchResources",
	    ROLE_NODESERVER },
};

/* gRPC's names of its status codes, as grpc-go's codes.Code.String(). */
static const char *const codes[KP_STATS_CODES] = {
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
	"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
	"Internal", "Unavailable", "DataLoss", "Unauthenticated"
};

static const char *const verbs[KP_STATS_VERBS] = {
	"GET", "POST", "PUT", "PATCH", "DELETE"
};

const char *
kp_stats_method(int i)
{
	return (i >= 0 && i < KP_STATS_METHODS ? methods[i].path : NULL);
}

/* The index of method path in the table, or -1. */
int
kp_stats_method_index(const char *path)
{
	int	 i;

	for (i = 0; path != NULL && i < KP_STATS_METHODS; i++)
		if (strcmp(methods[i].path, path) == 0)
			return (i);
	return (-1);
}

enum kp_role
kp_stats_method_role(int i)
{
	return (methods[i].role);
}

const char *
kp_stats_code_name(int c)
{
	return (c >= 0 && c < KP_STATS_CODES ? codes[c] : "Unknown");
}

const char *
kp_stats_verb(int i)
{
	return (i >= 0 && i < KP_STATS_VERBS ? verbs[i] : NULL);
}

int
kp_stats_verb_index(const char *verb)
{
	int	 i;

	for (i = 0; verb != NULL && i < KP_STATS_VERBS; i++)
		if (strcmp(verbs[i], verb) == 0)
			return (i);
	return (-1);
}

/* A syscall name as libseccomp spells them: [a-z0-9_], 1..31 bytes. */
static int
syscall_name_ok(const char *s)
{
	size_t	 n = strlen(s), i;

	if (n == 0 || n > 31)
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return (0);
	return (1);
}

/* A pool name: DNS subdomains joined by '/', at most 253 bytes. */
static int
pool_name_ok(const char *s)
{
	const char	*p = s, *slash;
	size_t		 n = strlen(s);

	if (n == 0 || n > KP_IPC_MAX_POOL)
		return (0);
	for (;;) {
		slash = strchr(p, '/');
		if (!name_is_subdomain(p, slash != NULL ? (size_t)(slash - p) :
		    strlen(p)))
			return (0);
		if (slash == NULL)
			return (1);
		p = slash + 1;
	}
}

static int
check_rpc(enum kp_role role, const Kpipc__RpcStat *r, size_t i, char *err,
    size_t errsize)
{
	int	 m = kp_stats_method_index(r->method);
	size_t	 b;
	uint64_t sum = 0;

	if (m == -1 || kp_stats_method_role(m) != role)
		return (ipc_fail(err, errsize, "pong.rpc[%zu].method: not a method "
		    "the %s serves", i, ipc_role_name(role)));
	if (r->code < 0 || r->code > KP_STATS_CODES - 1)
		return (ipc_fail(err, errsize, "pong.rpc[%zu].code: %d is not a "
		    "gRPC status code", i, (int)r->code));
	if (r->n_buckets != KP_STATS_LAT_BOUNDS + 1)
		return (ipc_fail(err, errsize, "pong.rpc[%zu].buckets: %zu, not "
		    "%d", i, r->n_buckets, KP_STATS_LAT_BOUNDS + 1));
	for (b = 0; b < r->n_buckets; b++) {
		if (r->buckets[b] > KP_STATS_MAX_DELTA)
			return (ipc_fail(err, errsize, "pong.rpc[%zu].buckets: "
			    "out of range", i));
		sum += r->buckets[b];
	}
	if (sum != r->count || r->count > KP_STATS_MAX_DELTA)
		return (ipc_fail(err, errsize, "pong.rpc[%zu]: buckets do not add "
		    "up to count", i));
	if (!isfinite(r->seconds) || r->seconds < 0 ||
	    r->seconds > 1e9)
		return (ipc_fail(err, errsize, "pong.rpc[%zu].seconds: out of "
		    "range", i));
	return (0);
}

/*
 * The rules of a Pong from role, after ipc_check(): which lists the role
 * may fill, label values from the tables, bounded lists and counts.
 * 0 or KP_EPROTO with the field and the rule in err.
 */
int
ipc_check_pong(enum kp_role role, const Kpipc__Pong *p, char *err,
    size_t errsize)
{
	int	 gsrv = role == ROLE_REGISTRAR || role == ROLE_NODESERVER;
	size_t	 i;
	int	 r;

	if ((!gsrv && (p->n_rpc || p->n_in_flight)) ||
	    (role != ROLE_NODESERVER && (p->n_denials || p->lock_waits ||
	    p->lock_wait_seconds != 0)) ||
	    (role != ROLE_PUBLISHER && (p->n_api || p->n_pools)))
		return (ipc_fail(err, errsize, "pong: counters the %s does not "
		    "keep", ipc_role_name(role)));
	if (p->n_rpc > KP_STATS_METHODS * KP_STATS_CODES ||
	    p->n_in_flight > KP_STATS_METHODS ||
	    p->n_api > KP_STATS_VERBS * 8 || p->n_pools > KP_STATS_POOLS ||
	    p->n_denials > KP_STATS_DENIALS)
		return (ipc_fail(err, errsize, "pong: a list over its limit"));
	for (i = 0; i < p->n_rpc; i++)
		if ((r = check_rpc(role, p->rpc[i], i, err, errsize)) != 0)
			return (r);
	for (i = 0; i < p->n_in_flight; i++) {
		int m = kp_stats_method_index(p->in_flight[i]->method);

		if (m == -1 || kp_stats_method_role(m) != role ||
		    p->in_flight[i]->calls > KP_MAX_CONNS * 1024)
			return (ipc_fail(err, errsize, "pong.in_flight[%zu]: "
			    "unknown method or out of range", i));
	}
	if (!isfinite(p->lock_wait_seconds) || p->lock_wait_seconds < 0 ||
	    p->lock_wait_seconds > 1e9 || p->lock_waits > KP_STATS_MAX_DELTA)
		return (ipc_fail(err, errsize, "pong.lock_wait_seconds: out of "
		    "range"));
	for (i = 0; i < p->n_api; i++)
		if (kp_stats_verb_index(p->api[i]->verb) == -1 ||
		    (p->api[i]->code != 0 && (p->api[i]->code < 100 ||
		    p->api[i]->code > 599)) ||
		    p->api[i]->count > KP_STATS_MAX_DELTA)
			return (ipc_fail(err, errsize, "pong.api[%zu]: verb not "
			    "one of GET, POST, PUT, PATCH, DELETE, or code "
			    "not 0 or 100..599", i));
	for (i = 0; i < p->n_pools; i++)
		if (!pool_name_ok(p->pools[i]->pool) ||
		    p->pools[i]->slices > 1000000)
			return (ipc_fail(err, errsize, "pong.pools[%zu]: not a "
			    "pool name, or too many slices", i));
	for (i = 0; i < p->n_denials; i++)
		if (!syscall_name_ok(p->denials[i]->syscall) ||
		    p->denials[i]->count > KP_STATS_MAX_DELTA)
			return (ipc_fail(err, errsize, "pong.denials[%zu]: not a "
			    "syscall name ([a-z0-9_], 1..31 bytes)", i));
	return (0);
}
