/*
 * pub.h - the publisher process's own state (publisher.c, pub_claims.c).
 */
#ifndef KP_PUB_H
#define KP_PUB_H

#include <pthread.h>
#include <time.h>

#include "publisher/publisher.h"

#define PUB_CLAIMS_QUEUE	64	/* look-ups waiting at most */
#define PUB_CLAIMS_WAIT_MS	10000	/* for discovery, at start */
#define PUB_CLAIMS_THREADS	4	/* look-ups at once: one slow claim
					 * does not hold up the others */

struct child_env;
struct pub_events;
struct pub;

/* A claims thread and the look-up it serves (id 0: none), which a
 * ClaimCancel withdraws while it waits for its token. */
struct pub_claim_slot {
	struct pub		*p;
	uint64_t		 id;		/* under qlock */
	volatile int		 withdrawn;
};

struct pub {
	struct child_env	*env;
	const char		*driver;	/* env->cfg->driver_name */
	struct kube_config	 kc;
	struct http_client	*http;
	/* Claim GETs: their own token bucket of the configured QPS and
	 * burst, so publishing a large slice set never makes a prepare
	 * wait, nor a burst of prepares hold up publishing. */
	struct http_client	*http_claims;
	enum kube_version	 version;
	volatile int		 quit;
	pthread_mutex_t		 lock;		/* below, and the controller */
	pthread_cond_t		 cond;
	int			 discovered;	/* controller started */
	int			 have_version;	/* discovery done */
	struct slice_ctl	*ctl;
	Kpipc__Msg		*desired_msg;
	const Kpipc__Publish	*desired;
	char			 last_error[KP_ERROR_SIZE];
	struct slice_stats	 last_stats;
	pthread_mutex_t		 ctl_lock;	/* the supervisor channel */
	/* claim look-ups: their own lock and condition, so a queued
	 * look-up wakes one idle claims thread (not every thread waiting on
	 * cond) and does not contend with the controller */
	pthread_mutex_t		 qlock;		/* queue, qhead, qlen */
	pthread_cond_t		 qcond;
	Kpipc__Msg		*queue[PUB_CLAIMS_QUEUE];
	struct timespec		 qtime[PUB_CLAIMS_QUEUE];	/* arrival */
	size_t			 qhead, qlen;
	pthread_t		 claims_thread[PUB_CLAIMS_THREADS];
	struct pub_claim_slot	 claims_slot[PUB_CLAIMS_THREADS];
	int			 claims_started;
	struct pub_events	*events;	/* events.c; NULL: none */
};

/* publisher.c */
int	pub_send(struct pub *, const Kpipc__Msg *);

/* events.c */
int	pub_events_start(struct pub *);
void	pub_events_post(struct pub *, int, const char *);
void	pub_events_stop(struct pub *);
/* pub_stats.c */
void	pub_stats_api(const char *, long);
void	pub_pong(struct pub *, uint64_t);

/* pub_claims.c */
int	pub_claims_start(struct pub *);
void	pub_claims_queue(struct pub *, Kpipc__Msg *);
void	pub_claims_cancel(struct pub *, const Kpipc__ClaimCancel *);
void	pub_claims_stop(struct pub *);
void	pub_set_error(struct pub *, const char *);
void	pub_sleep(struct pub *, int);

#endif /* KP_PUB_H */
