/*
 * slices.h - private interface of the ResourceSlice controller: the JSON
 * conversions (convert.c), the cache the watch fills (slices_watch.c) and
 * the pool sync (slices_sync.c), all behind slice_ctl_* (slices.c).
 */
#ifndef KP_SLICES_H
#define KP_SLICES_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "base/quantity.h"
#include "publisher/publisher.h"

#define SL_SYNC_DELAY_MS	1000	/* default delay after a watch event */
#define SL_MUTATION_TTL_S	60	/* own writes outlive a relist, s */
#define SL_BACKOFF_MIN_MS	5	/* per-pool retry: 5 ms doubling ... */
#define SL_BACKOFF_MAX_MS	60000	/* ... to 60 s (upstream: 1000 s) */
#define SL_EVENT_FAILURES	3	/* failed syncs of a pool: an Event */
#define SL_WATCH_BACKOFF_MIN_MS	800	/* list/watch errors: 0.8 s doubling */
#define SL_WATCH_BACKOFF_MAX_MS	30000	/* ... to 30 s */
#define SL_LIST_LIMIT		500
#define SL_INDEX_MIN		5	/* hex digits of a slice name's index */
#define SL_WARN_EVERY_S		60	/* a fault that lasts: warned again */
#define SL_FORBIDDEN_RETRY_MS	5000	/* a 403: the least retry delay */

/*
 * One desired slice, borrowed from the Kpipc__Publish tree it came from.
 * selector NULL: node-local (spec.nodeName = node).
 */
struct conv_slice {
	const char			 *driver;
	const char			 *node;
	const char			 *pool;
	int64_t				  generation;
	int64_t				  count;
	const Kpipc__NodeSelector	 *selector;
	int				  all_nodes;	/* Pool.AllNodes */
	const Kpipc__Slice		 *slice;	/* NULL: devices only */
	Kpipc__Device			**devices;
	size_t				  n_devices;
};

/*
 * A slice as the server has it, reduced to what the controller compares.
 * Every pointer is owned by the record.
 */
struct slice_rec {
	char		*name;
	char		*uid;
	char		*rv;
	char		*pool;
	int64_t		 generation;
	int64_t		 count;
	int		 node_local;	/* spec.nodeName is set */
	char		**dev_names;	/* sorted */
	size_t		 n_dev_names;
	json_t		*neutral;	/* conv_neutral_spec() of spec */
	json_t		*metadata;	/* as served, the base of a PUT */
};

/* convert.c */
json_t	*conv_slice_spec(enum kube_version, const struct conv_slice *);
json_t	*conv_slice_object(enum kube_version, const struct conv_slice *,
	    const json_t *, const char *, const char *);
json_t	*conv_owner_ref(const char *, const char *);
int	 conv_check_version(enum kube_version, const Kpipc__Pool *, char *,
	    size_t);
void	 conv_adopt_taint_times(enum kube_version, json_t *, const json_t *);
int	 conv_dropped_fields(const json_t *, const json_t *, char *, size_t);
json_t	*conv_delete_options(const char *, const char *);
json_t	*conv_neutral_spec(enum kube_version, const json_t *);
int	 conv_parse_slice(enum kube_version, const json_t *,
	    struct slice_rec *, char *, size_t);
void	 conv_rec_free(struct slice_rec *);
int	 conv_rec_copy(const struct slice_rec *, struct slice_rec *);
int	 conv_names_cmp(const void *, const void *);
char	*conv_status_message(const char *, long);
const char *conv_api_version(enum kube_version);

/* One cache entry: a live slice or a tombstone (deleted at rv). */
struct sl_entry {
	struct slice_rec rec;
	int		 stream;	/* SL_NODE or SL_SELECTOR */
	uint64_t	 rv;
	int		 deleted;
	int		 mutation;	/* from our own write */
	time_t		 written;	/* when, for SL_MUTATION_TTL_S */
};

/*
 * The informers. SL_NODE watches spec.nodeName=<node> (node-local pools);
 * SL_SELECTOR, started with the first pool that has a node selector,
 * watches spec.nodeName= (slices without a node) and keeps those whose
 * controller owner is this Node. With ReconcilePoolWithName only
 * SL_SELECTOR runs, from the start, and keeps the slices of that pool,
 * whoever owns them (upstream retainSlicesByPoolName).
 */
#define SL_NODE		0
#define SL_SELECTOR	1

struct sl_stream {
	struct slice_ctl	*ctl;
	int			 id;
	char			*field_selector;	/* escaped */
	int			 synced;	/* its first LIST is in */
	int			 running;
	pthread_t		 thread;
};

struct sl_pool {
	char		*name;
	int		 queued;
	struct timespec	 due;		/* CLOCK_MONOTONIC */
	int		 failures;
};

struct slice_ctl {
	/* configuration, fixed after start */
	struct http_client	*http;
	enum kube_version	 version;
	char			*driver;
	char			*node;
	char			*node_uid;	/* NULL until known */
	char			*reconcile_pool;	/* NULL: off */
	int			 sync_delay_ms;
	void			(*event)(void *, int, const char *);
	void			*event_user;

	pthread_mutex_t		 lock;		/* everything below */
	pthread_cond_t		 cond;		/* CLOCK_MONOTONIC */
	volatile int		 stop;
	struct sl_stream	 streams[2];
	struct sl_entry		*cache;
	size_t			 n_cache;
	uint64_t		 max_rv;	/* highest RV seen */
	struct sl_pool		*pools;
	size_t			 n_pools;
	Kpipc__Publish		*desired;	/* NULL: nothing published */
	unsigned int		 desired_gen;	/* bumped by update() */
	struct slice_stats	 stats;
	/* A condition that retrying does not fix (fields the server
	 * dropped, fields the served version lacks): shown as the last
	 * error while nothing newer failed; logged once. */
	char			 sticky[KP_ERROR_SIZE];
	/* The last SL_RECENT errors; recent[n % SL_RECENT] is number n+1
	 * (stats.errors counts them). */
	char			 recent[SL_RECENT][KP_ERROR_SIZE];
	/* Errors since the last success (sl_set_error, sl_clear_error):
	 * one warning per fault, then V(2) until SL_WARN_EVERY_S passed. */
	int			 err_streak;
	struct timespec		 err_warned;

	/* sync thread only: [{"want": neutral, "got": neutral}] of writes
	 * whose stored object lacked fields we sent (dropped by a feature
	 * gate that is off): "got" is then the desired state of "want". */
	json_t			*dropped;

	pthread_t		 sync_thread;
	int			 threads;
};

/* slices.c */
/* The stop flag is also read by http_watch() without the lock. */
#define sl_stopping(ctl)	__atomic_load_n(&(ctl)->stop, __ATOMIC_SEQ_CST)
void	sl_schedule(struct slice_ctl *, const char *, int);
void	sl_schedule_all(struct slice_ctl *, int);
void	sl_set_error(struct slice_ctl *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	sl_clear_error(struct slice_ctl *, const char *);
void	sl_set_sticky(struct slice_ctl *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	sl_wait_ms(struct slice_ctl *, int);
void	sl_deadline(struct timespec *, int);
int	sl_ready(struct slice_ctl *);

/* slices_watch.c */
void	*sl_watch_main(void *);
void	 sl_cache_own(struct slice_ctl *, const json_t *);
void	 sl_cache_gone(struct slice_ctl *, const char *, const char *);
void	 sl_cache_free(struct slice_ctl *);
int	 sl_cache_pool(struct slice_ctl *, const char *,
	    struct slice_rec **, size_t *);
uint64_t sl_rv_parse(const char *);

/* slices_sync.c */
int	sl_sync_pool(struct slice_ctl *, const char *, const Kpipc__Pool *,
	    long *);

#endif /* KP_SLICES_H */
