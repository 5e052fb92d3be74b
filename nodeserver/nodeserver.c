/*
 * nodeserver.c - nodeserver_main(): the child that serves the DRA gRPC
 * services on the plugin socket and runs the driver's hooks. Claim
 * look-ups go through the supervisor to the publisher (ns_wrap.c); the
 * nodeserver never holds Kubernetes credentials.
 *
 * Runs in: the nodeserver child, with the driver's code: root with the
 * supervisor's capabilities, the declared ones and its filter until the
 * init hook returned, then its own uid, the driver's declared
 * capabilities, a private mount namespace, seccomp (docs/security.md).
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "ipc/child.h"
#include "nodeserver/dra.h"
#include "nodeserver/health.h"
#include "nodeserver/ns_wrap.h"
#include "nodeserver/state.h"
#include "policy/policy.h"
#include "rpc/serve.h"

#define NS_MAX_METHODS	16

/* Stale health reports: the driver process hears of it (its error
 * callback) through the supervisor. */
static void
ns_health_stale(void *user, const char *msg)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__HealthStale	 hs = KPIPC__HEALTH_STALE__INIT;

	hs.message = (char *)msg;
	m.m_case = KPIPC__MSG__M_HEALTH_STALE;
	m.health_stale = &hs;
	(void)ns_wrap_send(user, &m);
}

/* What the supervisor sends besides answers: the driver's health reports
 * and its state for the hooks (ns_wrap.c's reader thread). */
struct ns_other {
	struct ns_health	*health;
	struct ns_state		*state;
};

static void
ns_other(void *user, Kpipc__Msg *m)
{
	struct ns_other	*o = user;

	if (m->m_case == KPIPC__MSG__M_STATE_SET)
		ns_state_ipc(o->state, m);
	else
		ns_health_ipc(o->health, m);
}

int
nodeserver_main(struct child_env *env)
{
	const struct kp_options	*cfg = env->cfg;
	const struct kp_hooks	*hooks = env->hooks;
	struct dra_ctx		 ctx;
	struct ns_wrap		 wrap;
	struct ns_health	 health;
	struct ns_state		 state;
	struct ns_other		 other;
	struct rpc_method	 methods[NS_MAX_METHODS];
	struct rpc_config	 rc;
	char			 err[KP_ERROR_SIZE] = "";
	int			 code;

	/* Before the init hook: it may ask for CDI spec files, and read
	 * the state the driver process handed over before this fork. */
	ns_wrap_init(&wrap, &env->ctl, cfg->driver_name);
	if (ns_state_init(&state, env) != 0)
		return (child_start_fail(env, KP_ENOMEM, "out of memory"));
	/* The driver's own set-up, in this process, before serving: under
	 * the supervisor's filter, with its capabilities and the declared
	 * ones (policy/monitor.c). */
	if (hooks->init != NULL) {
		policy_init_begin(env);
		code = hooks->init(hooks->user, err, sizeof(err));
		if (code != 0 && err[0] == '\0')
			snprintf(err, sizeof(err), "(no message)");
		policy_init_end(env, code != 0, err, sizeof(err));
		if (code != 0)
			return (child_start_fail(env, KP_EHOOK, "init hook "
			    "failed: %s", err));
	}

	if (dra_init(&ctx, cfg, hooks) != 0)
		return (child_start_fail(env, KP_ENOMEM, "out of memory"));
	ctx.lock_fd = env->lock_fd;
	if (ns_health_init(&health, cfg) != 0)
		return (child_start_fail(env, KP_ENOMEM, "out of memory"));
	health.stale = ns_health_stale;
	health.stale_user = &wrap;
	other.health = &health;
	other.state = &state;
	wrap.other = ns_other;
	wrap.other_user = &other;
	/* Without Kubernetes access there is no publisher: claims reach
	 * the hook without allocation data. */
	if (cfg->kube_mode != KP_KUBE_NONE) {
		ctx.lookup = ns_claim_get;
		ctx.lookup_many = ns_claim_get_many;
		ctx.lookup_async = &ns_lookup_ops;
		ctx.lookup_user = &wrap;
	}
	/* Device metadata: files and specs written by the supervisor. */
	if (cfg->metadata) {
		ctx.md_write = ns_metadata_write;
		ctx.md_remove = ns_metadata_remove;
		ctx.md_user = &wrap;
	}

	memset(&rc, 0, sizeof(rc));
	rc.name = "nodeserver";
	rc.listen_fd = env->listen_fd;
	rc.allowed_uids = cfg->peer_uids;
	rc.n_allowed_uids = cfg->n_peer_uids;
	rc.methods = methods;
	rc.n_methods = dra_methods(&ctx, methods, NS_MAX_METHODS);
	rc.n_methods += ns_health_methods(&health, methods + rc.n_methods,
	    NS_MAX_METHODS - rc.n_methods);
	rc.unary = cfg->unary;
	rc.n_unary = cfg->n_unary;
	rc.stream = cfg->stream;
	rc.n_stream = cfg->n_stream;
	rc.verbosity = cfg->grpc_verbosity;
	rc.max_conns = cfg->max_conns;
	rc.handshake_ms = cfg->handshake_ms;
	/* On SIGTERM (kp_stop; supervisor/drain.c) new calls get
	 * UNAVAILABLE, calls in flight get this long. */
	rc.drain_ms = cfg->shutdown_grace_ms;
	/* Calls run on a pool even when serialized: dra.c holds its lock
	 * around the driver's hooks only, so claim look-ups of several
	 * calls overlap, as upstream (the lock is taken after them). */
	rc.workers = cfg->workers;
	rc.ctl_lock = &wrap.lock;	/* the reader answers Pings */
	/* The sandbox (policy/): the init hook above ran privileged. */
	if (policy_apply(ROLE_NODESERVER, env, err,
	    sizeof(err)) != 0)
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	/* The reader delivers claim look-ups, CDI spec answers and the
	 * driver's health reports. */
	if (ns_wrap_start(&wrap) != 0)
		return (child_start_fail(env, KP_EIO, "requests to the "
		    "supervisor: cannot start the reader"));
	/* The journal: read in the sandbox (the file is this process's
	 * own), entries of an earlier boot reported, CDI specs reconciled,
	 * all before kubelet can call. */
	if ((code = jr_start(&ctx, err, sizeof(err))) != 0)
		return (child_start_fail(env, code, "%s", err));
	if (ns_health_start(&health) != 0)
		return (child_start_fail(env, KP_ENOMEM, "health: cannot "
		    "start its thread"));
	code = rpc_serve_child(env, &rc);
	/* The server finished every stream: stop the pump (it sends on
	 * wrap), then the reader (it delivers into health). */
	ns_health_stop(&health);
	ns_wrap_free(&wrap);
	ns_health_free(&health);
	ns_state_free(&state);
	dra_free(&ctx);
	return (code);
}
