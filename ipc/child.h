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

/*
 * Children started by fork + exec of the driver's own binary
 * (/proc/self/exe; monitor/child_exec.c), so that each has a fresh
 * address space. The library's constructor (role_exec.c) sees
 * CHILD_EXEC_ENV and removes it from the environment. Two kinds:
 *  - "<role>:<CHILD_EXEC_VERSION>": a role that runs no driver code (the
 *    publisher, the observer, a registrar without interceptors, the
 *    broker) runs from the constructor, before the driver's main();
 *  - "<role>:<CHILD_EXEC_VERSION>:main": the nodeserver (hooks) and a
 *    registrar with interceptors need the driver's functions, which only
 *    its main() can name: main() runs again with the driver's argv, and
 *    the first kp_start() it reaches becomes the role
 *    (role_exec_main.c) once its options match the monitor's copy.
 * The child finds its channels at fixed fds; CHILD_FD_OPTS is a pipe
 * holding the flat copy of the options (child_opts.c), CHILD_FD_LISTEN
 * the role's listener; the nodeserver's lock file, the driver's state
 * (a sealed memfd, when set) and a pipe with the state's generation and
 * the paths to hide (struct child_ns_extra) follow.
 */
#define CHILD_EXEC_ENV		"KP_ROLE_EXEC"
#define CHILD_EXEC_VERSION	1
#define CHILD_EXEC_MAIN		"main"
#define CHILD_FD_CTL		3
#define CHILD_FD_LOG		4
#define CHILD_FD_OPTS		5
#define CHILD_FD_LISTEN		6
#define CHILD_FD_LOCK		7
#define CHILD_FD_STATE		8
#define CHILD_FD_EXTRA		9
#define CHILD_FD_COUNT		10	/* 0-2 are stdio */
/* The broker, exec'd too (monitor/broker.c): its two channels to the
 * monitor, the options, the driver process's request and event
 * channels. */
#define BROKER_FD_CTL		3
#define BROKER_FD_FILES		4
#define BROKER_FD_OPTS		CHILD_FD_OPTS
#define BROKER_FD_DRIVER	6
#define BROKER_FD_EVENTS	7
#define BROKER_FD_COUNT		8
#define EXEC_FD_MAX		CHILD_FD_COUNT	/* the larger of the two */

/* What an exec'd nodeserver reads from CHILD_FD_EXTRA, then n_hide
 * paths of KP_IPC_PATH_MAX bytes each, NUL-terminated. */
#define CHILD_NS_EXTRA_MAGIC	0x6b706e78u	/* "kpnx" */
struct child_ns_extra {
	uint32_t	 magic;
	uint32_t	 n_hide;		/* <= KP_IPC_MAX_HIDE */
	uint64_t	 state_gen;		/* 0: no state */
};

/* supervisor/supervisor.c: the broker's loop (exec'd: role_exec.c) */
int	broker_main(const struct kp_options *, int, int, int, int);

/* child.c */
int	child_start_fail(struct child_env *, int, const char *, ...)
	    KP_PRINTF(3, 4);
int	child_supervisor_gone(int);
int	child_role_configured(const struct kp_options *, enum kp_role);

/* child_opts.c */
int	child_opts_flatten(const struct kp_options *, uint8_t **, size_t *,
	    char *, size_t);
int	child_opts_load(const uint8_t *, size_t, struct kp_options **,
	    char *, size_t);

/* role_exec.c */
int	role_exec_marker(enum kp_role, const struct kp_options *, char *,
	    size_t);
char *const *role_exec_argv(void);
void	role_exec_die(const char *, ...)
	    __attribute__((noreturn, format(printf, 1, 2)));
int	role_exec_fd_check(int, mode_t, const char *, char *, size_t);
int	role_exec_opts_read(int, uint8_t **, size_t *, char *, size_t);

/* role_exec_main.c: the exec'd nodeserver or registrar whose main()
 * runs again (ROLE_COUNT when this process is none) */
enum kp_role role_exec_pending(void);
void	role_exec_main_begin(enum kp_role);
void	role_exec_main(struct kp_options *, const struct kp_hooks *)
	    __attribute__((noreturn));
void	role_exec_main_failed(int, const char *);

/* policy/denied.c: code that is not ours (the init hook, main() run
 * again) under the monitor's filter, a denied call EPERM and named */
void	policy_denied_begin(const char *, int, int);
void	policy_denied_end(const char *, int, char *, size_t);

/* child_opts.c */
int	child_opts_diff(const uint8_t *, size_t, const uint8_t *, size_t,
	    char *, size_t);

#endif /* KP_CHILD_H */
