/*
 * rpc_int.h - private interface of the rpc/ module. The gRPC types stay in
 * grpc_core.c: here a grpc_call is a void pointer and a completion-queue tag
 * is a struct rpc_tag, so server.c, call.c and accept.c compile without the
 * gRPC headers.
 */
#ifndef KP_RPC_INT_H
#define KP_RPC_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rpc/rpc.h"
#include "ipc/ipc.h"

/* What a completion-queue event is about. */
enum rpc_tag_kind {
	TAG_REQUEST,		/* an armed request for a registered method */
	TAG_GENERIC,		/* the armed request for any other method */
	TAG_CLOSE,		/* RECV_CLOSE_ON_SERVER of a call */
	TAG_SEND,		/* one streamed message */
	TAG_DONE,		/* the final batch of a call */
	TAG_SHUTDOWN		/* grpc_server_shutdown_and_notify */
};

struct rpc_tag {
	enum rpc_tag_kind	 kind;
	void			*owner;
};

/*
 * One call. References: the dispatcher's (until the handler returned), the
 * answer's (until the final batch completed), the RECV_CLOSE batch's and
 * one per streamed message in flight. The last one returns the call to the
 * server's pool (call.c): lock and cond come first and survive reuse, every
 * field from srv on is zeroed for the next call.
 */
struct rpc_call {
	pthread_mutex_t			 lock;		/* fields marked L */
	pthread_cond_t			 cond;
	struct rpc_call			*next;		/* worker FIFO, pool */

	struct rpc_server		*srv;		/* reset from here */
	const struct rpc_method		*method;	/* NULL: unknown */
	void				*gcall;		/* grpc_call * */
	struct rpc_tag			 close_tag;
	struct rpc_tag			 send_tag;
	struct rpc_tag			 done_tag;
	atomic_int			 refs;
	atomic_int			 cancelled;
	int				 close_cancelled;
	int64_t				 deadline_ms;	/* monotonic; -1 none */
	uint64_t			 request_id;
	const uint8_t			*req;		/* in req_buf */
	size_t				 req_len;
	void				*req_buf;	/* grpc_byte_buffer * */
	void				*resp_buf;	/* rpc_call_reply_buf */
	uint8_t				*resp_ptr;	/* its bytes */
	size_t				 resp_size;
	size_t				 n_passed;	/* BEFORE passed */
	int				 in_flight;	/* a unary call the
							 * drain waits for */
	int				 stats_method;	/* stats.c; -1 */
	int64_t				 t0_us;		/* its start */

	int				 answered;	/* L */
	int				 md_sent;	/* L: initial metadata */
	int				 send_busy;	/* L */
	int				 send_ok;	/* L */
	uint64_t			 send_gen;	/* L: sends */
	void				*send_buf;	/* L: grpc_byte_buffer * */
	rpc_sent_fn			 sent_fn;	/* L: async send: */
	void				*sent_arg;	/* L: its completion */
	rpc_closed_fn			 closed_fn;	/* L: rpc_call_on_close */
	void				*closed_arg;	/* L */
	int				 closed;	/* L: the close came */
	/* rpc_call_on_cancel: called once, under lock, on a cancel. */
	void				(*cancel_fn)(void *);	/* L */
	void				*cancel_arg;		/* L */
	/* rpc_call_resume: what a pool thread runs next for the call. */
	void				(*resume_fn)(void *, struct rpc_call *);
	void				*resume_arg;
};

struct rpc_core;

/*
 * A connection the accept loop knows: pending (accepted, not yet handed
 * to the core: deadline set) or handed off (dev/ino of its socket, to see
 * when the core closed it; accept.c explains why that is enough).
 */
struct rpc_conn {
	int				 fd;
	int				 partial;	/* preface begun */
	int64_t				 deadline_ms;	/* pending only */
	dev_t				 dev;		/* handed off only */
	ino_t				 ino;
	int64_t				 since_ms;	/* handed off */
	int				 used;		/* a call came on it
							 * (conn_lock) */
};

/* At most one log line per second per kind; the rest are counted. */
struct rpc_ratelim {
	int64_t				 last_ms;
	uint64_t			 quiet;		/* not logged */
};

/* What the accept loop refused or closed, by reason (logs, tests). */
struct rpc_conn_stats {
	uint64_t			 over_cap;
	uint64_t			 timed_out;
	uint64_t			 bad_preface;
	uint64_t			 peer_gone;
	uint64_t			 uid_refused;
	uint64_t			 evicted;	/* idle, for a new one */
	struct rpc_ratelim		 rl_cap;
	struct rpc_ratelim		 rl_evict;
	struct rpc_ratelim		 rl_timeout;
	struct rpc_ratelim		 rl_bad;
	struct rpc_ratelim		 rl_uid;
	struct rpc_ratelim		 rl_accept;
};

struct rpc_server {
	char				*name;
	int				 listen_fd;
	uid_t				*uids;
	size_t				 n_uids;
	const struct rpc_method		*methods;
	size_t				 n_methods;
	const struct interceptor	*unary;
	size_t				 n_unary;
	const struct interceptor	*stream;
	size_t				 n_stream;
	int				 verbosity;
	int				 workers;
	int				 max_conns;
	int				 handshake_ms;
	int				 keepalive_ms;

	/* The accept loop's own, touched by its thread only (accept.c);
	 * live[].used also by the core's (rpc_conn_used), and live[] is
	 * changed under conn_lock. */
	struct rpc_conn			*pend;		/* max_conns slots */
	size_t				 n_pend;
	struct rpc_conn			*live;		/* max_conns slots */
	size_t				 n_live;
	pthread_mutex_t			 conn_lock;
	struct pollfd			*pfd;		/* 2 + max_conns */
	int64_t				 swept_ms;
	struct rpc_conn_stats		 conn_stats;

	struct rpc_core			*core;		/* gRPC state */
	int				 ran;
	int				 sync_ok;	/* lock, conds made */
	atomic_int			 halting;	/* stopping, no lock */

	pthread_mutex_t			 lock;		/* fields below */
	pthread_cond_t			 cond;		/* followers */
	pthread_cond_t			 watch_cond;	/* the watcher */
	pthread_cond_t			 idle;		/* shutdown waits */
	struct rpc_call			*head;		/* calls waiting for */
	struct rpc_call			*tail;		/* a free worker */
	int				 stopping;
	int				 shutdown_done;
	int				 cq_down;	/* queue shut down */
	int				 polling;	/* threads in the CQ */
	int				 running;	/* ... in a handler */
	int				 watching;	/* a watcher exists */
	int				 n_followers;	/* asleep in cond */
	int				 watch_asleep;
	int				 handoff;	/* poll now */
	uint64_t			 handler_gen;	/* handlers started */
	size_t				 live_calls;
	int				 draining;	/* new calls refused */
	size_t				 unary_live;	/* in_flight calls */
	struct rpc_call			*pool;		/* released calls */
	size_t				 n_pool;
	pthread_t			*threads;	/* workers + 1 */
	int				 n_threads;
};

/* grpc_core.c */
int	 rpc_core_new(struct rpc_server *);
int	 rpc_core_start(struct rpc_server *);
int	 rpc_core_serve(struct rpc_server *);
void	 rpc_core_add_fd(struct rpc_server *, int);
void	 rpc_core_stop(struct rpc_server *);
void	 rpc_core_destroy(struct rpc_server *);
void	 rpc_core_free(struct rpc_server *);
int	 rpc_core_reply(struct rpc_call *, int, const char *,
	    const uint8_t *, size_t);
int	 rpc_core_send(struct rpc_call *, const uint8_t *, size_t);
int	 rpc_core_finish(struct rpc_call *, int, const char *);
void	 rpc_core_call_release(struct rpc_call *);
uint8_t	*rpc_core_reply_buf(struct rpc_call *, size_t);

/* server.c */
int	 rpc_thread_start(pthread_t *, void *(*)(void *), void *);
void	 rpc_server_dispatch(struct rpc_server *, struct rpc_call *);
void	 rpc_server_resume(struct rpc_server *, struct rpc_call *);
int	 rpc_server_left_poll(void);
int	 rpc_server_pool_join(struct rpc_server *);
void	 rpc_server_blocking(struct rpc_server *);
struct rpc_call *rpc_server_call_take(struct rpc_server *);
void	 rpc_server_call_gone(struct rpc_server *, struct rpc_call *, int);
void	 rpc_server_shutdown_done(struct rpc_server *);
int64_t	 rpc_now_ms(void);

/* call.c */
struct rpc_call *rpc_call_new(struct rpc_server *, const struct rpc_method *);
void	 rpc_call_unref(struct rpc_call *);
void	 rpc_call_destroy(struct rpc_call *);
void	 rpc_call_run(struct rpc_call *);
void	 rpc_call_continue(struct rpc_call *);
void	 rpc_call_abort(struct rpc_call *, int, const char *);
void	 rpc_call_closed(struct rpc_call *, int);
void	 rpc_call_sent(struct rpc_call *, int);

/* accept.c */
int	 rpc_accept_loop(struct rpc_server *, volatile sig_atomic_t *, int);
void	 rpc_conn_used(struct rpc_server *, const char *);

/* stats.c */
void	 rpc_stats_start(struct rpc_call *);
void	 rpc_stats_end(struct rpc_call *, int);

#endif /* KP_RPC_INT_H */
