/*
 * health.h - the nodeserver's resource health service (health.c):
 * v1.DRAResourceHealth and v1alpha1.DRAResourceHealth/NodeWatchResources.
 */
#ifndef KP_NS_HEALTH_H
#define KP_NS_HEALTH_H

#include <pthread.h>
#include <stdint.h>

#include "base/config.h"
#include "base/health.h"
#include "ipc/ipc.h"
#include "rpc/rpc.h"

#define NS_HEALTH_CHECK_MS	10000	/* stale check, as upstream */
#define NS_HEALTH_MAX_STREAMS	256	/* more: RESOURCE_EXHAUSTED */

struct ns_health;

/* One NodeWatchResources call. */
struct ns_health_stream {
	struct ns_health	*h;
	struct rpc_call		*call;
	int			 idle;		/* health off: never sends */
	int			 busy;		/* a message in flight */
	int			 failed;	/* the client went away */
	uint64_t		 sent_gen;	/* table generation sent */
	struct ns_health_stream	*next;
};

/* Called (on the health thread, nothing locked) when reports are stale. */
typedef void (*ns_health_stale_fn)(void *user, const char *msg);

struct ns_health {
	const struct kp_options	*cfg;
	ns_health_stale_fn	 stale;
	void			*stale_user;

	pthread_mutex_t		 lock;		/* everything below */
	pthread_cond_t		 cond;
	struct health_table	 table;
	uint64_t		 gen;		/* bumped by every change */
	long long		 last_report_ms;	/* monotonic; 0: none */
	long long		 watch_since_ms;	/* first stream */
	long long		 next_check_ms;
	int			 warned;	/* this stale period */
	struct ns_health_stream	*streams;
	size_t			 n_streams;
	int			 quit;
	int			 started;
	pthread_t		 thread;
};

/* health.c */
int	ns_health_init(struct ns_health *, const struct kp_options *);
int	ns_health_start(struct ns_health *);
void	ns_health_stop(struct ns_health *);
void	ns_health_free(struct ns_health *);
size_t	ns_health_methods(struct ns_health *, struct rpc_method *, size_t);
int	ns_health_report(struct ns_health *, const struct kp_device_health *,
	    size_t, char *, size_t);
void	ns_health_ipc(void *, Kpipc__Msg *);

#endif /* KP_NS_HEALTH_H */
