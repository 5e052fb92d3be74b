/*
 * observer.h - the observer role: /healthz, /readyz and /metrics over
 * HTTP from the status snapshots the supervisor sends (observer.c). The
 * HTTP server is libmicrohttpd behind http.c; what a request gets is
 * decided by render.c, which the fuzzer drives without a socket.
 */
#ifndef KP_OBSERVER_H
#define KP_OBSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc.h"

#define OBS_STALE_MS		5000	/* snapshot age that fails health */
#define OBS_MAX_BODY		(1024u * 1024)	/* /metrics page */
/*
 * Slow clients: libmicrohttpd's timeout is idle-based (each byte resets
 * it), so a client trickling a header held a slot for ever and 16 of them
 * starved kubelet's probe. Now one address gets OBS_PER_IP_CONNS slots,
 * all get OBS_MAX_CONNS (each an fd and at most 16 KiB of MHD memory,
 * far below the observer's RLIMIT_NOFILE), and a request must arrive
 * whole within OBS_REQUEST_DEADLINE_MS of the connection or of the last
 * answer on it (http.c closes it otherwise).
 */
#define OBS_MAX_CONNS		64
#define OBS_PER_IP_CONNS	4
#define OBS_CONN_TIMEOUT_S	10
#define OBS_REQUEST_DEADLINE_MS	2500

/* What the observer knows: the latest snapshot, rendered once. */
struct obs_state {
	int		 have;		/* a snapshot arrived */
	int64_t		 at_ms;		/* when (monotonic) */
	int		 live, ready;
	char		 live_reason[256];
	char		 ready_reason[256];
	char		*metrics;	/* the text page; NULL: none */
	size_t		 metrics_len;
};

/* One answer to a request. body is borrowed from the state or static. */
struct obs_reply {
	unsigned	 status;
	const char	*type;
	const char	*body;
	size_t		 len;
	char		 line[320];	/* a one-line body built here */
};

/* render.c */
int	obs_state_update(struct obs_state *, const Kpipc__Status *, int64_t);
void	obs_state_free(struct obs_state *);
void	obs_route(const struct obs_state *, const char *, const char *,
	    int64_t, struct obs_reply *);
int	obs_render_metrics(const Kpipc__Status *, char **, size_t *);

/* mhd_dl.c: libmicrohttpd is loaded, not linked; called before the
 * sandbox (observer/mhd_dl.h). 0 or KP_ENOTSUP, reason in the buffer. */
int	mhd_dl_load(char *, size_t);

/* http.c */
struct obs_http;
int	obs_http_start(int, struct obs_state *, struct obs_http **, int *,
	    char *, size_t);
int	obs_http_add(struct obs_http *, int);
int	obs_http_timeout_ms(struct obs_http *);
void	obs_http_run(struct obs_http *, int64_t);
void	obs_http_stop(struct obs_http *);

#endif /* KP_OBSERVER_H */
