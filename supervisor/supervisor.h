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
#include <stdarg.h>
#include <sys/types.h>
#include <time.h>

#include "kubeletplugin.h"
#include "base/clock.h"
#include "ipc/ipc.h"
#include "base/config.h"
#include "base/names.h"
#include "ipc/child.h"
#include "ipc/mon.h"

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
#define KP_CANCEL_QPS		100.0	/* ClaimCancel frames a second from */
#define KP_CANCEL_BURST		200.0	/* the nodeserver, and in bursts: one
					 * per cancelled call and 64 claims
					 * (an honest one sends a few) */
#define KP_CLAIM_QPS		20.0	/* look-ups per second, and */
#define KP_CLAIM_BURST		50.0	/* bursts, from the nodeserver, at
					 * least: never below the configured
					 * kube QPS and burst (relay.c) */
#define KP_CLAIM_QPS_MAX	1000.0	/* with the kube limit disabled */
#define KP_CLAIM_WAIT_MS	10000	/* a look-up waits this long for a
					 * token or a (re)started publisher */
#define KP_CDI_QUEUE		64	/* CDI and metadata requests waiting
					 * for a token at most (cdi_queue.c) */
#define KP_HEARTBEAT_MS		2000	/* a Ping to each child, and the
					 * observer's snapshot, this often:
					 * each one wakes every process of
					 * the tree (issue 27: idle) */
#define KP_HEARTBEAT_TIMEOUT_MS	5000	/* no answer this long: unhealthy */
#define KP_SYNC_STALE_S		300	/* pools pending this long: too */
#define KP_STATE_QUEUE		(4u * 1024 * 1024)	/* unsent bytes to the
					 * nodeserver beyond which a new state
					 * waits (only the latest is sent) */
#define KP_EVENTS_QUEUE		(64u * 1024)	/* unsent event bytes */

/*
 * A token bucket (charge.c): qps a second, bursts of burst, full at its
 * first use; what it refused is counted until reported.
 */
struct bucket {
	double			 tokens;
	struct timespec		 refill;	/* when tokens was right */
	unsigned long long	 dropped;	/* not yet reported */
	unsigned long long	 total;		/* dropped ever: /metrics */
	struct timespec		 told;		/* the last report of them */
};

/* A CDI or metadata request of the nodeserver waiting for a token. */
struct sup_cdi_wait {
	Kpipc__Msg		*m;
	pid_t			 pid;		/* the nodeserver that asked */
	size_t			 bytes;		/* its frame's size */
	int			 checked;	/* valid, and only a token is
						 * missing (files_cdi_run) */
	struct timespec		 until;		/* then KP_EBUSY */
};

struct child {
	enum kp_role		 role;
	const char		*name;
	int			 enabled;
	pid_t			 pid;
	enum child_state	 state;
	struct ipc_chan		 ctl;
	int			 logfd;
	int			 errfd;		/* the child's stderr, a pipe */
	char			 errline[512];	/* its partial last line */
	size_t			 errlen;
	struct timespec		 relay_at;	/* logfd, errfd rest until
						 * (logrelay.c) */
	int			 spawning;	/* MON_SPAWN sent, no answer */
	struct timespec		 started;
	struct timespec		 restart_at;
	int			 backoff_ms;
	int			 restarts;
	int			 storm;		/* crash loop reported */
	int			 journal_told;	/* corrupt journal reported */
	/* What its frames may cost (charge.c), kept across restarts: the
	 * budget is the role's, not one process's. */
	struct bucket		 log;		/* lines, ours about it too */
	struct bucket		 errs;		/* the driver's error function */
	int			 errs_code;	/* of the last one dropped */
	struct bucket		 events;	/* Events it made us ask for */
	struct bucket		 cancels;	/* its ClaimCancel frames */
	/* Draining (drain.c): SIGTERM sent, the frames of calls in flight
	 * still relayed, SIGKILL at kill_at. */
	int			 draining;
	struct timespec		 kill_at;
	/* The heartbeat (status.c). */
	uint64_t		 hb_seq;	/* of the last Ping */
	int			 hb_out;	/* its answer is due */
	struct timespec		 hb_ok;		/* READY or the last Pong */
	struct timespec		 hb_sent;	/* the Ping now due */
	int			 hb_warned;	/* its silence was logged */
	int			 hung;		/* killed for it (heal.c) */
	int			 violated;	/* killed for a violation */
	int			 start_failed;	/* sent START_FAILED (logged) */
	int			 stop_killed;	/* the stop's SIGKILL (logged once) */
};

/* What status.c adds up for /metrics and decides for /healthz. */
#define STATUS_REASONS		5	/* exited, signaled, seccomp,
					 * protocol, hung */
#define STATUS_MAX_API		64	/* (verb, code) pairs */
#define STATUS_MAX_DENIALS	64	/* (role, syscall) pairs */
#define STATUS_MAX_POOLS	KP_STATS_POOLS
#define STATUS_REASON_MAX	256
#define STATUS_FAMILIES		24
#define STATUS_SAMPLES		1024

struct status_rpc {
	uint64_t	 count;
};

struct sup_status {
	struct timespec	 next_tick;
	char		 sock_err[2][STATUS_REASON_MAX];	/* DRA, reg. */
	int		 last_live_key;	/* what /healthz last failed for,
					 * logged once (live_reason) */
	time_t		 published_at;	/* first Publish; 0: none */
	struct status_rpc rpc[KP_STATS_METHODS][KP_STATS_CODES];
	struct {
		uint64_t	 buckets[KP_STATS_LAT_BOUNDS + 1];
		uint64_t	 count;
		double		 seconds;
	}		 lat[KP_STATS_METHODS];
	uint32_t	 in_flight[KP_STATS_METHODS];
	uint64_t	 lock_waits;
	double		 lock_wait_seconds;
	uint64_t	 restarts[ROLE_COUNT][STATUS_REASONS];
	struct {
		const char	*verb;
		int		 code;
		char		 code_s[8];
		uint64_t	 count;
	}		 api[STATUS_MAX_API];
	size_t		 n_api;
	struct {
		enum kp_role	 role;
		char		 syscall[32];
		uint64_t	 count;
	}		 denials[STATUS_MAX_DENIALS];
	size_t		 n_denials;
	struct {
		char		 name[KP_IPC_MAX_POOL + 1];
		uint32_t	 slices;
	}		 pools[STATUS_MAX_POOLS];
	size_t		 n_pools;
};

/* The two socket files, as status.c counts them (MON_SOCKET's role). */
#define SUP_LISTEN_DRA	0
#define SUP_LISTEN_REG	1

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
	int		 withdrawn;	/* sent, then cancelled: its answer
					 * goes to nobody */
	struct timespec	 wait_until;	/* while waiting */
	char		 namespace_[64];	/* the claim, checked in */
	char		 name[254];		/* the reply */
	char		 uid[129];
};

enum sup_phase {
	PHASE_START_OBSERVER,
	PHASE_START_PUBLISHER,
	PHASE_START_NODESERVER,
	PHASE_START_REGISTRAR,
	PHASE_RUNNING,
	PHASE_STOPPING
};

/*
 * A claim the publisher answered for the nodeserver (md_claims.c): a
 * MetadataWrite may name it for MD_SEEN_MS. At most MD_SEEN_MAX, the
 * oldest replaced.
 */
#define MD_SEEN_MAX	256
#define MD_SEEN_MS	60000
struct sup_md_seen {
	pid_t		 ns_pid;	/* the nodeserver it answered; 0: free */
	struct timespec	 until;
	char		 namespace_[64];
	char		 name[254];
	char		 uid[129];
	char		 pod_claim_name[64];
};

/* A change the supervisor made in the CDI directory itself, whose
 * inotify event is not sent on (cdi_watch.c). */
#define CDI_WATCH_OWN	64
struct sup_cdi_own {
	char	 name[NAME_MAX_CDI_SPEC + 1];
	int	 present;
	int	 send;	/* an event of this name was sent meanwhile */
};

struct sup {
	const struct kp_options	*cfg;
	struct ipc_chan		 driver;
	int			 mon;		/* the monitor's control
						 * channel (ipc/mon.h); -1 */
	int			 mon_files;	/* its files channel; -1:
						 * none (tests): files.c writes
						 * the CDI directory itself */
	uid_t			 cdi_owner;	/* who owns the specs written
						 * (the monitor: root) */
	struct sup_status	*st;		/* status.c */
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
	/* Channels to the driver process and the hooks (channels.c). */
	Kpipc__Msg		*state;		/* last StateSet; NULL */
	int			 await_state;	/* the first nodeserver
						 * waits for the initial
						 * state (kp_state_initial) */
	int			 state_pending;	/* not yet queued to the
						 * nodeserver */
	struct ipc_chan		 events;	/* Event frames, one way */
	unsigned long long	 events_dropped;
	/* The nodeserver's CDI spec requests (files.c). */
	int			 cdi_fd;	/* the CDI directory; -1 */
	char			 cdi_err[KP_ERROR_SIZE];	/* why -1 */
	double			 cdi_tokens;
	size_t			 cdi_files;	/* the quota: this driver's
						 * specs, metadata files and
						 * directories, */
	size_t			 cdi_bytes;	/* counted at start */
	struct timespec		 cdi_refill;
	int			 cdi_sync_pending;	/* the directory */
	struct timespec		 cdi_sync_at;		/* fsync due */
	struct sup_cdi_wait	 cdi_q[KP_CDI_QUEUE];	/* a ring */
	size_t			 cdi_qhead, cdi_qlen, cdi_qbytes;
	int			 cdi_wfd;	/* inotify (cdi_watch.c); -1 */
	struct sup_cdi_own	 cdi_own[CDI_WATCH_OWN];	/* in order */
	size_t			 cdi_own_n;
	int			 cdi_copy;	/* the nodeserver may hold a
						 * copy: changes are sent */
	/* Device metadata (metadata.c): the root-owned directory the
	 * supervisor writes the metadata files into; -1: off. */
	int			 meta_fd;
	struct sup_md_seen	*md_seen;	/* MD_SEEN_MAX; NULL without
						 * a publisher */
	/* The driver's registration test knobs, [0] GetInfo, [1]
	 * NotifyRegistrationStatus; "" = none (relay.c). */
	char			 reg_errs[2][KP_IPC_MAX_REG_ERR + 1];
	/* Draining shutdown (drain.c). */
	int			 pub_stopped;	/* SIGTERM sent to it */
	/* The supervisor's own Events for the publisher (events.c); a
	 * child's are charged to the child (child.events). */
	struct bucket		 own_events;
};

/* children.c */
void	child_table_init(struct sup *);
int	child_ready(struct sup *, struct child *, const Kpipc__Ready *);
int	child_spawn(struct sup *, struct child *);
void	child_kill(struct child *, int);
void	child_signal(struct child *, int);
void	child_started(struct sup *, const struct mon_msg *, const int *,
	    size_t);
void	child_spawn_failed(struct sup *, const struct mon_msg *);
void	child_exited(struct sup *, const struct mon_msg *);
void	child_reaped(struct sup *, struct child *, int);
void	child_schedule_restart(struct sup *, struct child *);
void	child_mon_init(int);

/* mon_client.c: what the broker asks of the monitor */
void	sup_mon_read(struct sup *);
void	sup_mon_tell(struct sup *, enum mon_type, int, int, int,
	    const char *);
int	sup_mon_put(struct sup *, const char *, const uint8_t *, size_t,
	    char *, size_t);
int	sup_mon_remove(struct sup *, const char *, char *, size_t);
int	sup_mon_reopen(struct sup *);

/* cdi_check.c */
int	cdi_check(const char *, size_t, const struct kp_options *, char *,
	    size_t);
const char *cdi_shown(const char *, char *, size_t);
int	cdi_beneath(const char (*)[POL_PATH_MAX], size_t, const char *, int);

/* cdi_node.c: a spec's device node (type 0, major and minor -1: unset;
 * host NULL: path). */
struct cdi_node {
	const char	*path;
	const char	*host;
	int		 type;
	long long	 major;
	long long	 minor;
};
int	cdi_node_check(const struct policy_opts *, const char *,
	    const struct cdi_node *, char *, size_t);

/* cdi_watch.c */
void	cdi_watch_init(struct sup *);
void	cdi_watch_close(struct sup *);
void	cdi_watch_reopen(struct sup *);
int	cdi_watch_live(const struct sup *);
void	cdi_watch_own(struct sup *, const char *, int);
void	cdi_watch_reset(struct sup *);
void	cdi_watch_read(struct sup *);

/* cdi_queue.c */
void	cdi_queue_init(struct sup *);
int	cdi_queue_add(struct sup *, struct child *, Kpipc__Msg *);
void	cdi_queue_tick(struct sup *);
long long cdi_queue_next_ms(struct sup *);
void	cdi_queue_free(struct sup *);

/* files.c */
int	files_prepare(struct sup *, char *, size_t);
int	files_cdi_run(struct sup *, struct child *, const Kpipc__Msg *, int,
	    int *, int *);
void	files_close(struct sup *);
int	files_fail(char *, size_t, int, const char *, ...) KP_PRINTF(4, 5);
int	files_open_parent(const char *, const char *, const char **, char *,
	    size_t);
void	files_cdi_reopen(struct sup *);
int	files_put(int, const char *, const uint8_t *, size_t, const char *,
	    char *, size_t);
int	files_cdi_put(struct sup *, const char *, const uint8_t *, size_t,
	    char *, size_t);
void	files_cdi_sync(struct sup *, int);
long long files_cdi_sync_ms(struct sup *);
int	files_cdi_unlink(struct sup *, const char *, int *, char *,
	    size_t);
int	files_quota_check(struct sup *, const char *, size_t, size_t, size_t,
	    char *, size_t);
void	files_quota_add(struct sup *, size_t, size_t);
void	files_quota_sub(struct sup *, size_t, size_t);
void	files_reply(struct sup *, struct child *, int, uint64_t, int, char *,
	    char **, size_t);

/* metadata.c */
#define MD_DIR_BYTES	4096	/* what the quota charges a directory */
int	metadata_prepare(struct sup *, char *, size_t);
void	metadata_count(struct sup *, size_t *, size_t *);
void	metadata_request(struct sup *, struct child *, const Kpipc__Msg *);
/* md_claims.c */
int	md_claims_init(struct sup *, char *, size_t);
void	md_claims_free(struct sup *);
void	md_claims_answered(struct sup *, pid_t, const Kpipc__ClaimReply *);
int	md_claims_known(struct sup *, pid_t, const Kpipc__MetadataWrite *,
	    char *, size_t);
/* md_update.c */
void	metadata_update(struct sup *, const Kpipc__Msg *);
void	metadata_close(struct sup *);
void	metadata_own(struct sup *);

/* relay.c */
void	relay_reg_status(struct sup *, const Kpipc__RegStatus *);
void	relay_reg_error(struct sup *, const Kpipc__RegError *);
void	relay_reg_errors_ready(struct sup *, struct child *);
void	relay_claim_get(struct sup *, Kpipc__Msg *);
void	relay_claim_reply(struct sup *, struct child *, Kpipc__Msg *);
void	relay_claim_cancel(struct sup *, const Kpipc__ClaimCancel *);
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

/* status.c */
int	status_init(struct sup *);
void	status_free(struct sup *);
void	status_set_socket(struct sup *, int, int, const char *);
void	status_child_ok(struct sup *, struct child *);
void	status_child_down(struct sup *, struct child *, int, int);
void	status_published(struct sup *);
void	status_pong(struct sup *, struct child *, const Kpipc__Pong *);
void	status_tick(struct sup *);
long long status_next_ms(struct sup *);
/* channels.c */
void	chan_state_set(struct sup *, Kpipc__Msg *);
void	chan_state_flush(struct sup *, struct child *);
void	chan_state_env(const struct sup *, struct child_env *);
void	chan_error(struct sup *, int, int, const char *, ...)
	    KP_PRINTF(4, 5);
void	chan_verror(struct sup *, int, int, const char *, va_list)
	    KP_PRINTF(4, 0);
void	chan_status(struct sup *, int);
void	chan_events_flush(struct sup *);
void	chan_log(void *, enum kp_log_level, int, const char *, const char *);
/* drain.c */
void	drain_begin(struct sup *);
void	drain_restart(struct sup *, struct child *);
void	drain_tick(struct sup *);
long long drain_next_ms(const struct sup *);
void	drain_hung(struct sup *, struct child *);

/* heal.c */
void	heal_tick(struct sup *);

/* events.c */
void	sup_event(struct sup *, int, const char *, ...) KP_PRINTF(3, 4);
void	sup_child_event(struct sup *, struct child *, int, const char *, ...)
	    KP_PRINTF(4, 5);
void	events_ask(struct sup *, struct child *, const Kpipc__EventAsk *);
void	events_child_exit(struct sup *, struct child *, int);

/* supervisor.c */
int	sup_reply_driver(struct sup *, int, const char *);
void	sup_begin_stop(struct sup *);
void	sup_queue(struct sup *, struct child *, const Kpipc__Msg *);
int	broker_main(const struct kp_options *, int, int, int, int);
void	sup_fail_start(struct sup *, int, const char *);
void	sup_child_violation(struct sup *, struct child *, const char *);
void	sup_dispatch_child(struct sup *, struct child *);

/* logrelay.c */
void	logrelay_read_log(struct sup *, struct child *, int);
void	logrelay_close_log(struct sup *, struct child *);
void	sup_drain_stderr(struct sup *, struct child *, int);
int	logrelay_resting(const struct child *);
long long logrelay_next_ms(const struct sup *);

/* charge.c */
int	charge_take(struct bucket *, double, double);
int	charge_log_allowed(struct child *);
void	charge_log(struct child *, enum kp_log_level, int, const char *, ...)
	    KP_PRINTF(4, 5);
void	charge_error(struct sup *, struct child *, int, int, const char *,
	    ...) KP_PRINTF(5, 6);
void	charge_tick(struct sup *);

#endif /* KP_SUPERVISOR_H */
