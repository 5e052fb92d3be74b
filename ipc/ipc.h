/*
 * ipc.h - frames between the driver process, the supervisor and its
 * children: a 4-byte big-endian length, then one packed kpipc.Msg. The
 * length is checked against the channel's cap before anything is
 * allocated; a frame that does not unpack, carries unknown fields or an fd
 * is a protocol violation (STYLE 6, 9).
 */
#ifndef KP_IPC_H
#define KP_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "ipc.pb-c.h"
#include "base/config.h"

#define KP_IPC_MAX_FRAME	(16u * 1024 * 1024)	/* driver's Publish */
#define KP_IPC_CHILD_FRAME	(1u * 1024 * 1024)	/* from children */
#define KP_IPC_SMALL_FRAME	(16u * 1024)		/* registrar */
#define KP_IPC_MAX_QUEUE	(2 * KP_IPC_MAX_FRAME + 64)	/* unsent */

/* Limits of a ClaimReply, checked by the publisher before it sends one
 * and by the supervisor when it receives one. */
#define KP_IPC_MAX_RESULTS	4096		/* allocation results */
#define KP_IPC_MAX_CANCEL	64		/* ClaimCancel.ids */
#define KP_IPC_MAX_CONFIG	(512u * 1024)	/* config_json bytes */
#define KP_IPC_MAX_CLAIM_JSON	(1u * 1024 * 1024) /* claim_json bytes */
#define KP_IPC_MAX_REQUEST	253		/* request name bytes */
#define KP_IPC_MAX_POOL		253		/* pool name bytes */
#define KP_IPC_MAX_HIDE		10		/* Ready.hide_paths */
#define KP_IPC_REG_ERR_GET_INFO	1		/* RegError.which */
#define KP_IPC_REG_ERR_NOTIFY	2
#define KP_IPC_MAX_REG_ERR	1024		/* RegError.message */
#define KP_IPC_PATH_MAX		256		/* a hidden path, NUL incl. */
#define KP_IPC_MAX_DEVICE	63		/* device name bytes */
#define KP_IPC_MAX_PUB_ERRORS	8		/* PublishStatus.errors */

/* Limits of the CDI spec requests (supervisor/files.c). */
#define KP_IPC_MAX_CDI_CONTENT	(256u * 1024)	/* bytes of one spec */
#define KP_IPC_MAX_CDI_NAMES	1024		/* names in a CdiReply */
#define KP_IPC_MAX_CDI_CHANGES	256		/* in a CdiChanged */
/* Bytes of one request's device metadata (supervisor/metadata.c). */
#define KP_IPC_MAX_METADATA	(64u * 1024)
#define KP_IPC_MAX_METADATA_DEVICES	128	/* one request's, an update */
#define KP_IPC_MAX_NOTE		1024	/* an Event's note (the API server's limit) */
#define KP_IPC_MAX_SYSCALL	32	/* a syscall's name in an EventAsk */

/* Kinds of the supervisor's Event frames to the driver process. */
#define IPC_EVENT_ERROR		1	/* for kp_error_callback */
#define IPC_EVENT_REGISTRATION	2	/* kp_registration_status changed */
#define IPC_EVENT_PUBLISH	3	/* kp_publish_status changed */

/* A child's state as the supervisor tracks it (monitor.c's mon_table
 * states). READY and START_FAILED move a child out of STARTING, so each
 * can arrive only once. */
enum child_state {
	CS_STOPPED = 0,
	CS_STARTING = 1,
	CS_READY = 2,
	CS_STOPPING = 3
};

/* A channel's buffers; used non-blocking by the supervisor and blocking
 * (ipc_recv) by children and the driver. */
/* Called by ipc_next() with a frame's one field number (its oneof case)
 * and size before it is unpacked; non-zero rejects it (KP_EPROTO). */
typedef int (*ipc_gate_fn)(void *, int, size_t, char *, size_t);

struct ipc_chan {
	int		 fd;
	size_t		 max_frame;
	ipc_gate_fn	 gate;		/* NULL: none (trusted peers) */
	void		*gate_user;
	uint8_t		*rbuf;
	size_t		 rlen, rcap;
	uint8_t		*wbuf;
	size_t		 wlen, wcap;
};

/* frame.c */
void	ipc_chan_init(struct ipc_chan *, int, size_t);
void	ipc_chan_close(struct ipc_chan *);
int	ipc_queue(struct ipc_chan *, const Kpipc__Msg *);
int	ipc_flush(struct ipc_chan *);
int	ipc_read(struct ipc_chan *);
int	ipc_next(struct ipc_chan *, Kpipc__Msg **, char *, size_t);
Kpipc__Msg *ipc_unpack(const uint8_t *, size_t, char *, size_t);
int	ipc_wire_check(const ProtobufCMessageDescriptor *, const uint8_t *,
	    size_t, char *, size_t);
int	ipc_send(struct ipc_chan *, const Kpipc__Msg *);
int	ipc_recv(struct ipc_chan *, Kpipc__Msg **, int, char *, size_t);
void	ipc_free(Kpipc__Msg *);
int	ipc_send_result(struct ipc_chan *, int, const char *);

/* rules.c */
int	ipc_rule_check(enum kp_role, enum child_state, int, char *, size_t);
int	ipc_rule_gate(enum kp_role, enum child_state, int, size_t, char *,
	    size_t);
const char *ipc_case_name(int);
const char *ipc_role_name(enum kp_role);

/* stats.c: the counters of a Pong (the heartbeat's answer) */
#define KP_STATS_LAT_BOUNDS	11	/* latency buckets, +Inf apart */
#define KP_STATS_METHODS	10	/* gRPC methods we serve */
#define KP_STATS_CODES		17	/* gRPC status codes */
#define KP_STATS_VERBS		5	/* HTTP verbs of the publisher */
#define KP_STATS_POOLS		128	/* pools reported */
#define KP_STATS_DENIALS	32	/* syscalls per Pong */
#define KP_STATS_MAX_DELTA	(1ull << 40)	/* per Pong and counter */
extern const double kp_stats_lat_bounds[KP_STATS_LAT_BOUNDS];
const char *kp_stats_method(int);
int	kp_stats_method_index(const char *);
enum kp_role kp_stats_method_role(int);
const char *kp_stats_code_name(int);
const char *kp_stats_verb(int);
int	kp_stats_verb_index(const char *);
int	ipc_check_pong(enum kp_role, const Kpipc__Pong *, char *, size_t);

/* check.c */
int	ipc_fail(char *, size_t, const char *, ...) KP_PRINTF(3, 4);
int	ipc_check(const Kpipc__Msg *, char *, size_t);
int	ipc_check_resources(const Kpipc__Publish *, char *, size_t);
int	ipc_check_k8s_name(const char *, size_t);

#endif /* KP_IPC_H */
