/*
 * registrar.h - the registrar role: serves kubelet's plugin registration.
 */
#ifndef KP_REGISTRAR_H
#define KP_REGISTRAR_H

#include <pthread.h>
#include <stdint.h>

#include "ipc/ipc.h"
#include "rpc/rpc.h"
#include "base/config.h"

struct reg_state {
	uint8_t			*info;		/* packed PluginInfo */
	size_t			 info_len;
	struct ipc_chan		*ctl;
	pthread_mutex_t		 ctl_lock;
	pthread_t		 hb;		/* heartbeat.c */
	int			 hb_stop[2];
	int			 hb_started;
};

/* heartbeat.c */
int	reg_heartbeat_start(struct reg_state *);
void	reg_heartbeat_stop(struct reg_state *);

/* registration.c */
int	reg_info_build(struct reg_state *, const struct kp_options *);
size_t	reg_methods(struct reg_state *, struct rpc_method *);

#endif /* KP_REGISTRAR_H */
