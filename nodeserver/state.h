/*
 * state.h - the driver process's state for the hooks, in the nodeserver
 * (state.c).
 */
#ifndef KP_NS_STATE_H
#define KP_NS_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "ipc/child.h"
#include "ipc/ipc.h"

struct ns_state {
	pthread_mutex_t	 lock;		/* data, len, gen */
	uint8_t		*data;
	size_t		 len;
	uint64_t	 gen;		/* 0: none yet */
	kp_state_fn	 fn;		/* kp_state_callback(); NULL */
	void		*user;
};

/* state.c */
int	ns_state_init(struct ns_state *, const struct child_env *);
void	ns_state_ipc(struct ns_state *, Kpipc__Msg *);
void	ns_state_free(struct ns_state *);

#endif /* KP_NS_STATE_H */
