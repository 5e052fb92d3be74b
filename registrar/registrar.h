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
	/* The driver's test knobs (RegError), set by the reader thread. */
	pthread_mutex_t		 err_lock;
	char			 errs[2][KP_IPC_MAX_REG_ERR + 1];
};

/* heartbeat.c */
void	reg_pong(struct reg_state *, uint64_t);

/* registration.c */
int	reg_info_build(struct reg_state *, const struct kp_options *);
size_t	reg_methods(struct reg_state *, struct rpc_method *);
int	reg_reader_start(struct reg_state *);

#endif /* KP_REGISTRAR_H */
