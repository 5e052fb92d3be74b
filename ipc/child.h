/*
 * child.h - what the supervisor hands a child at fork, and the entry point
 * of each role (relayd's proc.h). The supervisor knows a role only by
 * these: it includes no role's header.
 */
#ifndef KP_CHILD_H
#define KP_CHILD_H

#include "kubeletplugin.h"
#include "base/config.h"
#include "ipc/ipc.h"

/* Exit codes of children: why a child ended (cf. OpenSSH mm_reap). */
enum kp_exit {
	KP_EXIT_OK = 0,		/* asked to stop */
	KP_EXIT_START = 1,	/* start failed; StartFailed was sent */
	KP_EXIT_IPC = 2,	/* the supervisor went away */
	KP_EXIT_SERVE = 3	/* serving failed */
};

/* What a child's main function gets; it owns ctl and logfd. */
struct child_env {
	const struct kp_options	*cfg;
	const struct kp_hooks	*hooks;
	struct ipc_chan		 ctl;
	int			 logfd;
	int			 listen_fd;	/* -1 for the publisher; the
						 * observer's is TCP */
	int			 lock_fd;	/* the nodeserver's serialize.lock
						 * (read-only), or -1 */
	/* Files the publisher reads (its kubeconfig and every file it
	 * names), as its READY reported them: the nodeserver hides them
	 * (policy/fs.c). Owned by the supervisor; n_hide 0 before the
	 * publisher's first READY and for the other roles. */
	const char		(*hide)[KP_IPC_PATH_MAX];
	size_t			 n_hide;
	/* The nodeserver: the driver's latest state for the hooks
	 * (kp_state_set) when it was forked, in the supervisor's memory
	 * (copied by fork); state_gen 0: none yet. */
	const uint8_t		*state;
	size_t			 state_len;
	uint64_t		 state_gen;
};

/* The role mains, one per role folder (registrar/registrar.c,
 * nodeserver/nodeserver.c, publisher/publisher.c, observer/observer.c). Each returns the
 * child's exit code (enum kp_exit). */
int	registrar_main(struct child_env *);
int	nodeserver_main(struct child_env *);
int	publisher_main(struct child_env *);
int	observer_main(struct child_env *);

/* child.c */
int	child_start_fail(struct child_env *, int, const char *, ...)
	    KP_PRINTF(3, 4);
int	child_supervisor_gone(int);

#endif /* KP_CHILD_H */
