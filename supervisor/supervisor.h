/*
 * supervisor.h - the supervisor process: its state and the role table
 * (relayd's procs[]), one struct child per role. Nothing here names gRPC,
 * libcurl or a role's internals: a role is its main function
 * (ipc/child.h) and its channel.
 */
#ifndef KP_SUPERVISOR_H
#define KP_SUPERVISOR_H

#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include "kubeletplugin.h"
#include "base/clock.h"
#include "ipc/ipc.h"
#include "base/config.h"
#include "ipc/child.h"

#define KP_START_TIMEOUT_MS	30000
#define KP_STOP_GRACE_MS	5000
#define KP_REQUEST_TIMEOUT_MS	10000
#define KP_BACKOFF_MIN_MS	100
#define KP_BACKOFF_MAX_MS	3200	/* a crash loop restarts at most every
					 * 3.2 s: a call kubelet makes meanwhile
					 * waits in the socket's backlog, well
					 * inside its 45 s deadline */
#define KP_HEALTHY_MS		60000	/* up this long: backoff resets */
#define KP_CLAIMS_INFLIGHT	64	/* look-ups at the publisher */
#define KP_LOG_LPS		200.0	/* log lines a second from a child, */
#define KP_LOG_BURST		1000.0	/* and in bursts */
#define KP_CLAIM_QPS		20.0	/* look-ups per second, and */
#define KP_CLAIM_BURST		50.0	/* bursts, from the nodeserver, at
					 * least: never below the configured
					 * kube QPS and burst (relay.c) */
#define KP_CLAIM_QPS_MAX	1000.0	/* with the kube limit disabled */
#define KP_CLAIM_WAIT_MS	10000	/* a look-up waits this long for a
					 * token or a (re)started publisher */

struct child {
	enum kp_role		 role;
	const char		*name;
	int			(*main)(struct child_env *);
	int			 enabled;
	pid_t			 pid;
	enum child_state	 state;
	struct ipc_chan		 ctl;
	int			 logfd;
	int			 errfd;		/* the child's stderr, a pipe */
	char			 errline[512];	/* its partial last line */
	size_t			 errlen;
	int			*listen_fd;	/* in struct sup */
	struct timespec		 started;
	struct timespec		 restart_at;
	int			 backoff_ms;
	int			 restarts;
	int			 storm;		/* crash loop reported */
	double			 log_tokens;	/* log rate limit */
	struct timespec		 log_refill;
	unsigned long long	 log_dropped;
};

/* A listening socket the supervisor owns. */
struct sup_socket {
	int		 fd;
	const char	*path;		/* NULL: listener without a path */
	int		 created;	/* we bound it: remove if unchanged */
	dev_t		 dev;
	ino_t		 ino;
};

/* Start order: the publisher (claim look-ups work once kubelet calls),
 * the nodeserver (serving before kubelet can learn its endpoint), then
 * the registrar. */
/*
 * A claim look-up at the publisher. The supervisor numbers look-ups
 * itself: ids the nodeserver picks restart with each nodeserver, and a
 * reply meant for a dead one must never reach its successor.
 */
struct sup_claim {
	uint64_t	 id;		/* ours, at the publisher; 0: free */
	uint64_t	 ns_id;		/* the nodeserver's */
	pid_t		 ns_pid;	/* the nodeserver that asked */
	int		 sent;		/* 0: waiting here (for a token or
					 * for the publisher) */
	struct timespec	 wait_until;	/* while waiting */
	char		 namespace_[64];	/* the claim, checked in */
	char		 name[254];		/* the reply */
	char		 uid[129];
};

enum sup_phase {
	PHASE_START_PUBLISHER,
	PHASE_START_NODESERVER,
	PHASE_START_REGISTRAR,
	PHASE_RUNNING,
	PHASE_STOPPING
};

struct sup {
	const struct kp_options	*cfg;
	const struct kp_hooks	*hooks;
	struct ipc_chan		 driver;
	struct sup_socket	 plugin_sock;
	struct sup_socket	 reg_sock;
	struct child		 children[ROLE_COUNT];
	enum sup_phase		 phase;
	struct timespec		 start_deadline;
	struct timespec		 stop_deadline;
	int			 stop_replied;
	int			 exit_code;
	int			 reg_state;
	char			 reg_error[4097];
	int			 sigfd;
	int			 got_chld;
	int			 got_term;
	Kpipc__Msg		*desired;	/* last Publish, re-sent to
						 * a restarted publisher */
	Kpipc__PublishStatus	 pub_status;
	char			 pub_error[KP_ERROR_SIZE];
	struct sup_claim	 claims[KP_CLAIMS_INFLIGHT];
	uint64_t		 next_claim_id;
	double			 claim_tokens;
	struct timespec		 claim_refill;
	/* Resource health (health.c) */
	Kpipc__Msg		*health;	/* last HealthReport, re-sent
						 * to a restarted nodeserver */
	unsigned long long	 health_stale;	/* warnings so far */
	/* The nodeserver's CDI spec requests (files.c). */
	int			 cdi_fd;	/* the CDI directory; -1 */
	char			 cdi_err[KP_ERROR_SIZE];	/* why -1 */
	double			 cdi_tokens;
	size_t			 cdi_files;	/* this driver's specs, */
	size_t			 cdi_bytes;	/* counted at start */
	struct timespec		 cdi_refill;
	int			 lock_fd;	/* serialize.lock for the nodeserver
						 * being forked; -1 (lockfile.c) */
	/* The driver's registration test knobs, [0] GetInfo, [1]
	 * NotifyRegistrationStatus; "" = none (relay.c). */
	char			 reg_errs[2][KP_IPC_MAX_REG_ERR + 1];
	/* Namespaces and hidden files (children.c). */
	int			 pidns_fd;	/* our pid namespace; -1:
						 * children share it */
	char			 pub_hide[KP_IPC_MAX_HIDE][KP_IPC_PATH_MAX];
	size_t			 n_pub_hide;	/* publisher's READY */
};

/* sockets.c */
int	sock_check_path(const char *, const char *, char *, size_t);
int	sock_listen(struct sup_socket *, const char *, unsigned int,
	    char *, size_t);
void	sock_remove(struct sup_socket *);
int	sock_from_listener(struct sup_socket *, int, const char *);

/* children.c */
void	child_table_init(struct sup *);
void	child_ns_init(struct sup *);
int	child_ready(struct sup *, struct child *, const Kpipc__Ready *);
int	child_spawn(struct sup *, struct child *);
void	child_kill(struct child *, int);
void	child_set_name(const char *);
void	child_reaped(struct sup *, struct child *, int);
void	child_schedule_restart(struct sup *, struct child *);
int	fd_close_except(const int *, size_t);

/* cdi_check.c */
int	cdi_check(const char *, size_t, const struct kp_options *, char *,
	    size_t);

/* files.c */
int	files_prepare(struct sup *, char *, size_t);
void	files_cdi(struct sup *, struct child *, const Kpipc__Msg *);
void	files_close(struct sup *);

/* lockfile.c */
int	lock_open(struct sup *, char *, size_t);
int	lock_child_open(struct sup *);
void	lock_close(struct sup *);

/* relay.c */
void	relay_reg_status(struct sup *, const Kpipc__RegStatus *);
void	relay_reg_error(struct sup *, const Kpipc__RegError *);
void	relay_reg_errors_ready(struct sup *, struct child *);
void	relay_claim_get(struct sup *, Kpipc__Msg *);
void	relay_claim_reply(struct sup *, struct child *, Kpipc__Msg *);
void	relay_claims_abort(struct sup *);
void	relay_claims_tick(struct sup *);
double	relay_claim_burst(const struct sup *);
long long relay_claims_next_ms(struct sup *);
void	relay_publish(struct sup *, Kpipc__Msg *);
void	relay_publish_status(struct sup *, const Kpipc__PublishStatus *);
void	relay_publish_status_reply(struct sup *);

/* health.c */
void	health_relay_report(struct sup *, Kpipc__Msg *);
void	health_relay_stale(struct sup *, const Kpipc__HealthStale *);
void	health_child_ready(struct sup *, struct child *);

/* supervisor.c */
int	sup_reply_driver(struct sup *, int, const char *);
void	sup_queue(struct sup *, struct child *, const Kpipc__Msg *);
int	supervisor_main(const struct kp_options *, const struct kp_hooks *,
	    int, struct sup_socket *, struct sup_socket *);
void	sup_child_violation(struct sup *, struct child *, const char *);
void	sup_drain_stderr(struct sup *, struct child *, int);
int	sup_log_allowed(struct child *);

#endif /* KP_SUPERVISOR_H */
