/*
 * nodeserver.c - nodeserver_main(): the child that serves the DRA gRPC
 * services on the plugin socket and runs the driver's hooks. Claim
 * look-ups go through the supervisor to the publisher (ns_wrap.c); the
 * nodeserver never holds Kubernetes credentials.
 *
 * Runs in: the nodeserver child, with the driver's code: root until the
 * init hook returned, then its own uid, the driver's declared
 * capabilities, a private mount namespace, seccomp (docs/security.md).
 */
#include <string.h>

#include "base/log.h"
#include "ipc/child.h"
#include "nodeserver/dra.h"
#include "nodeserver/ns_wrap.h"
#include "policy/policy.h"
#include "rpc/serve.h"

#define NS_MAX_METHODS	16

int
nodeserver_main(struct child_env *env)
{
	const struct kp_options	*cfg = env->cfg;
	const struct kp_hooks	*hooks = env->hooks;
	struct dra_ctx		 ctx;
	struct ns_wrap		 wrap;
	struct rpc_method	 methods[NS_MAX_METHODS];
	struct rpc_config	 rc;
	char			 err[KP_ERROR_SIZE] = "";
	int			 code;

	/* The driver's own set-up, in this process, before serving. */
	if (hooks->init != NULL && hooks->init(hooks->user, err,
	    sizeof(err)) != 0)
		return (child_start_fail(env, KP_EHOOK, "init hook failed: %s",
		    err[0] ? err : "(no message)"));

	if (dra_init(&ctx, cfg, hooks) != 0)
		return (child_start_fail(env, KP_ENOMEM, "out of memory"));
	/* Without Kubernetes access there is no publisher: claims reach
	 * the hook without allocation data. */
	ns_wrap_init(&wrap, &env->ctl);
	if (cfg->kube_mode != KP_KUBE_NONE) {
		ctx.lookup = ns_claim_get;
		ctx.lookup_user = &wrap;
	}

	memset(&rc, 0, sizeof(rc));
	rc.name = "nodeserver";
	rc.listen_fd = env->listen_fd;
	rc.allowed_uids = cfg->peer_uids;
	rc.n_allowed_uids = cfg->n_peer_uids;
	rc.methods = methods;
	rc.n_methods = dra_methods(&ctx, methods, NS_MAX_METHODS);
	rc.unary = cfg->unary;
	rc.n_unary = cfg->n_unary;
	rc.stream = cfg->stream;
	rc.n_stream = cfg->n_stream;
	rc.verbosity = cfg->grpc_verbosity;
	/* Calls run on a pool even when serialized: dra.c holds its lock
	 * around the driver's hooks only, so claim look-ups of several
	 * calls overlap, as upstream (the lock is taken after them). */
	rc.workers = cfg->workers;
	/* The sandbox (policy/): the init hook above ran privileged. */
	if (policy_apply(ROLE_NODESERVER, env, err,
	    sizeof(err)) != 0)
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	if (ctx.lookup != NULL && ns_wrap_start(&wrap) != 0)
		return (child_start_fail(env, KP_EIO, "claim look-ups: cannot "
		    "start the reader"));
	code = rpc_serve_child(env, &rc);
	dra_free(&ctx);
	ns_wrap_free(&wrap);
	return (code);
}
