/*
 * mon.h - the monitor's channels to the broker (docs/design.md, "The
 * privileged core"): one frame layout of one size for every message, so
 * the monitor needs no decoder: a datagram (SOCK_SEQPACKET) of exactly
 * sizeof(struct mon_msg), a type it knows, strings NUL-checked, at most
 * the fds the type carries (OpenSSH's mm_request_send, bgpd's exact-size
 * imsg_get_data). Nothing else the broker sends reaches the monitor.
 *
 * Two channels: "ctl", both ways, asynchronous (SPAWN, KILL, ... from the
 * broker; STARTED, EXITED, SOCKET ... from the monitor), and "files",
 * requests of the broker answered at once (PUT, REMOVE, REOPEN), so that
 * a CDI write stays one call in the broker's files.c.
 */
#ifndef KP_MON_H
#define KP_MON_H

#include <stddef.h>
#include <stdint.h>

#include "kubeletplugin.h"
#include "ipc/ipc.h"

enum mon_type {
	/* broker -> monitor, ctl */
	MON_SPAWN = 1,		/* role; gen: the state's generation, fd: the
				 * driver's state for a nodeserver (a
				 * memfd), optional */
	MON_KILL,		/* role, pid, arg: SIGTERM or SIGKILL */
	MON_HIDE,		/* n, paths: for nodeservers from now on */
	MON_RUNNING,		/* the start is done: sockets repaired
				 * from now on */
	MON_STOPPING,		/* the stop began: registration socket off */
	MON_FATAL,		/* text: termination message, fatal page */
	MON_DONE,		/* arg: exit code; every child reaped */
	/* monitor -> broker, ctl */
	MON_STARTED,		/* role, pid; fds: ctl, log, stderr */
	MON_SPAWN_FAILED,	/* role, arg: KP_E*, text */
	MON_EXITED,		/* role, pid, arg: wait status */
	MON_SOCKET,		/* role: SUP_LISTEN_*, arg: enum mon_sock,
				 * text */
	MON_STOP,		/* the monitor was signalled, or is fatal:
				 * arg: exit code */
	/* broker -> monitor, files; each answered by MON_RESULT */
	MON_PUT,		/* text: a CDI spec's name; fd: a sealed
				 * memfd with its content */
	MON_REMOVE,		/* text: a CDI spec's name */
	MON_REOPEN,		/* the CDI directory again; MON_RESULT with
				 * its fd */
	MON_RESULT,		/* arg: 0 or an errno; text: why */
	MON_TYPE_MAX
};

/* MON_SOCKET's arg: what happened to listener role. */
enum mon_sock {
	MON_SOCK_OK = 0,	/* connects (again): /healthz may pass */
	MON_SOCK_BAD,		/* text: why /healthz fails */
	MON_SOCK_RECREATED,	/* text: the Event; the holder gets the new
				 * listener at its next start */
	MON_SOCK_SHUT,		/* text: the Event; the holder was killed */
	MON_SOCK_LOST		/* text: the Event; the plugin stops */
};

#define MON_TEXT	KP_ERROR_SIZE
#define MON_MAX_FDS	3

struct mon_msg {
	uint32_t	 type;
	int32_t		 role;
	int32_t		 pid;
	int32_t		 arg;
	uint64_t	 gen;
	uint32_t	 n;
	char		 text[MON_TEXT];
	char		 paths[KP_IPC_MAX_HIDE][KP_IPC_PATH_MAX];
};

void	mon_init(struct mon_msg *, enum mon_type);
int	mon_send(int, const struct mon_msg *, const int *, size_t);
int	mon_recv(int, struct mon_msg *, int *, size_t *, char *, size_t);
int	mon_call(int, const struct mon_msg *, const int *, size_t,
	    struct mon_msg *, int *, int, char *, size_t);

#endif /* KP_MON_H */
