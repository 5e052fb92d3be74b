/*
 * ns_wrap.h - the nodeserver's requests to the supervisor (ns_wrap.c).
 */
#ifndef KP_NS_WRAP_H
#define KP_NS_WRAP_H

#include <pthread.h>
#include <stdint.h>

#include "ipc/ipc.h"
#include "nodeserver/dra.h"

struct ns_wrap {
	struct ipc_chan	*ctl;
	pthread_mutex_t	 lock;	/* one request in flight at a time */
	uint64_t	 next_id;
};

/* ns_wrap.c */
void	ns_wrap_init(struct ns_wrap *, struct ipc_chan *);
void	ns_wrap_free(struct ns_wrap *);
int	ns_claim_get(void *, const char *, const char *, const char *,
	    struct dra_claim_alloc *, char *, size_t);

#endif /* KP_NS_WRAP_H */
