/*
 * serve.h - what a gRPC child (registrar, nodeserver) runs after its own
 * set-up: see serve.c.
 */
#ifndef KP_SERVE_H
#define KP_SERVE_H

#include "rpc/rpc.h"

struct child_env;

/* serve.c */
int	rpc_serve_child(struct child_env *, const struct rpc_config *);

#endif /* KP_SERVE_H */
