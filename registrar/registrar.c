/*
 * registrar.c - registrar_main(): the registration child. It faces
 * kubelet's plugin watcher and holds nothing worth stealing: it knows the
 * driver name, the endpoint and the supported versions, and can only tell
 * the supervisor what kubelet said. The sandbox (issue: policy) goes
 * between fd hygiene (done by the supervisor at fork) and serving.
 *
 * Runs in: the registrar child, the hardest sandbox: its own non-root
 * uid, no capabilities, an empty root, seccomp (policy/syscalls.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "ipc/child.h"
#include "policy/policy.h"
#include "registrar/registrar.h"
#include "rpc/serve.h"

int
registrar_main(struct child_env *env)
{
	const struct kp_options	*cfg = env->cfg;
	/* Static: the reader thread (registration.c) is never joined and
	 * may still run while this function returns into _exit(). */
	static struct reg_state	 rs;
	struct rpc_method	 methods[2];
	struct rpc_config	 rc;
	char			 err[KP_ERROR_SIZE];
	int			 code;

	memset(&rs, 0, sizeof(rs));
	rs.ctl = &env->ctl;
	pthread_mutex_init(&rs.ctl_lock, NULL);
	pthread_mutex_init(&rs.err_lock, NULL);
	if (reg_info_build(&rs, cfg) != 0)
		return (child_start_fail(env, KP_ENOMEM, "out of memory"));

	memset(&rc, 0, sizeof(rc));
	rc.name = "registrar";
	rc.listen_fd = env->listen_fd;
	rc.allowed_uids = cfg->peer_uids;
	rc.n_allowed_uids = cfg->n_peer_uids;
	rc.methods = methods;
	rc.n_methods = reg_methods(&rs, methods);
	rc.unary = cfg->unary;
	rc.n_unary = cfg->n_unary;
	rc.stream = cfg->stream;
	rc.n_stream = cfg->n_stream;
	rc.verbosity = cfg->grpc_verbosity;
	rc.max_conns = cfg->max_conns;
	rc.handshake_ms = cfg->handshake_ms;
	rc.workers = 1;
	rc.ctl_lock = &rs.ctl_lock;	/* the reader answers Pings */
	if (policy_apply(ROLE_REGISTRAR, env, err,
	    sizeof(err)) != 0)
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	/* Before READY: the supervisor sends the knobs right after it. */
	if (reg_reader_start(&rs) != 0)
		return (child_start_fail(env, KP_EIO, "cannot start the "
		    "reader of the supervisor's channel"));
	code = rpc_serve_child(env, &rc);
	free(rs.info);
	pthread_mutex_destroy(&rs.ctl_lock);
	return (code);
}
