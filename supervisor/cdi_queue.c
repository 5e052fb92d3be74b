/*
 * cdi_queue.c - the pace of the nodeserver's CDI spec and device
 * metadata requests (files.c, metadata.c): the guard against a hostile
 * nodeserver flooding the node's disk (root writes the files; /var/run/cdi
 * is RAM) and keeping this single thread busy, without failing honest
 * load.
 *
 * Every request takes a token from a bucket of CDI_QPS a second with
 * bursts of CDI_BURST before anything of it is looked at: one that
 * writes nothing (a list, a spec identical to the file already there,
 * the removal of a missing file, a refused request) costs this thread
 * as much (a directory read, a JSON parse, a log line) and, free, let a
 * hostile nodeserver keep the root process busy (issue 24: 72-90 % of a
 * core on refused 16 KiB writes). A request over budget
 * waits here, in arrival order, and is done when its token is there; it
 * fails with KP_EBUSY only after CDI_WAIT_MS (within the nodeserver's own
 * 10 s wait), or at once when KP_CDI_QUEUE requests or CDI_QUEUE_BYTES of
 * frames already wait. The wrapper sends one request at a time, so an
 * honest nodeserver never has more than one here; the bounds are for one
 * that writes raw frames. The supervisor never blocks: the poll loop's
 * timeout wakes it for the next token (cdi_queue_next_ms).
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define CDI_QPS		50.0	/* files written or removed a second, */
#define CDI_BURST	100.0	/* and in bursts */
#define CDI_WAIT_MS	8000	/* the longest wait for a token */
#define CDI_QUEUE_BYTES	(4u * 1024 * 1024)	/* frames waiting, bytes */

void
cdi_queue_init(struct sup *sup)
{
	sup->cdi_tokens = CDI_BURST;
	clock_gettime(CLOCK_MONOTONIC, &sup->cdi_refill);
	sup->cdi_qhead = sup->cdi_qlen = sup->cdi_qbytes = 0;
}

static void
refill(struct sup *sup)
{
	long long	 ms = -ts_ms_until(&sup->cdi_refill);

	clock_gettime(CLOCK_MONOTONIC, &sup->cdi_refill);
	sup->cdi_tokens += ms * CDI_QPS / 1000.0;
	if (sup->cdi_tokens > CDI_BURST)
		sup->cdi_tokens = CDI_BURST;
}

static uint64_t
request_id(const Kpipc__Msg *m)
{
	switch (m->m_case) {
	case KPIPC__MSG__M_CDI_WRITE:
		return (m->cdi_write->id);
	case KPIPC__MSG__M_CDI_REMOVE:
		return (m->cdi_remove->id);
	case KPIPC__MSG__M_CDI_LIST:
		return (m->cdi_list->id);
	case KPIPC__MSG__M_METADATA_WRITE:
		return (m->metadata_write->id);
	default:
		return (m->metadata_remove->id);
	}
}

static void
busy(struct sup *sup, struct child *c, const Kpipc__Msg *m, const char *why)
{
	char	 err[KP_ERROR_SIZE];

	snprintf(err, sizeof(err), "%s", why);
	files_reply(sup, c, m->m_case, request_id(m), KP_EBUSY, err, NULL, 0);
}

/* Do m now if its token is there; 1 when answered. */
static int
run(struct sup *sup, struct child *c, const Kpipc__Msg *m, int *checked)
{
	int	 spent;

	if (sup->cdi_tokens < 1.0)
		return (0);
	sup->cdi_tokens -= 1.0;
	files_cdi_reopen(sup);
	if (m->m_case == KPIPC__MSG__M_METADATA_WRITE ||
	    m->m_case == KPIPC__MSG__M_METADATA_REMOVE)
		metadata_request(sup, c, m);
	else
		(void)files_cdi_run(sup, c, m, 1, checked, &spent);
	return (1);
}

static void
pop(struct sup *sup)
{
	struct sup_cdi_wait	*e = &sup->cdi_q[sup->cdi_qhead];

	ipc_free(e->m);
	sup->cdi_qbytes -= e->bytes;
	memset(e, 0, sizeof(*e));
	sup->cdi_qhead = (sup->cdi_qhead + 1) % KP_CDI_QUEUE;
	sup->cdi_qlen--;
}

/*
 * The waiting requests, in order, as far as the budget goes; those of a
 * nodeserver that died meanwhile are dropped unanswered.
 */
void
cdi_queue_tick(struct sup *sup)
{
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	struct sup_cdi_wait	*e;

	files_cdi_sync(sup, 0);
	refill(sup);
	while (sup->cdi_qlen > 0) {
		e = &sup->cdi_q[sup->cdi_qhead];
		if (e->pid != ns->pid) {
			pop(sup);
			continue;
		}
		if (!run(sup, ns, e->m, &e->checked)) {
			if (ts_ms_until(&e->until) > 0)
				return;
			busy(sup, ns, e->m, "CDI spec and metadata writes are "
			    "limited to 50 a second; waited 8 s; retry");
		}
		pop(sup);
	}
}

/* Milliseconds until cdi_queue_tick() has work; -1: none. */
long long
cdi_queue_next_ms(struct sup *sup)
{
	const struct sup_cdi_wait	*e;
	long long			 tok, d, s = files_cdi_sync_ms(sup);

	if (sup->cdi_qlen == 0)
		return (s);
	e = &sup->cdi_q[sup->cdi_qhead];
	d = ts_ms_until(&e->until);
	tok = sup->cdi_tokens >= 1.0 ? 0 :
	    (long long)((1.0 - sup->cdi_tokens) * 1000.0 / CDI_QPS) + 1;
	if (tok < d)
		d = tok;
	if (s >= 0 && s < d)
		d = s;
	return (d < 0 ? 0 : d);
}

/*
 * A CDI or metadata request m from the nodeserver c. Returns 1 when it
 * keeps m (it waits), 0 when m was answered and the caller frees it.
 */
int
cdi_queue_add(struct sup *sup, struct child *c, Kpipc__Msg *m)
{
	struct sup_cdi_wait	*e;
	size_t			 bytes = kpipc__msg__get_packed_size(m);
	int			 checked = 0;

	refill(sup);
	if (sup->cdi_qlen == 0 && run(sup, c, m, &checked))
		return (0);
	if (sup->cdi_qlen == KP_CDI_QUEUE ||
	    (sup->cdi_qlen > 0 && sup->cdi_qbytes + bytes > CDI_QUEUE_BYTES)) {
		busy(sup, c, m, "too many CDI spec and metadata requests "
		    "waiting; retry");
		return (0);
	}
	e = &sup->cdi_q[(sup->cdi_qhead + sup->cdi_qlen) % KP_CDI_QUEUE];
	e->m = m;
	e->pid = c->pid;
	e->bytes = bytes;
	e->checked = checked;
	clock_gettime(CLOCK_MONOTONIC, &e->until);
	ts_after_ms(&e->until, CDI_WAIT_MS);
	sup->cdi_qlen++;
	sup->cdi_qbytes += bytes;
	if (sup->cdi_qlen == 1)
		charge_log(c, KP_LOG_INFO, 3, "CDI requests wait for the "
		    "budget (%d a second)", (int)CDI_QPS);
	return (1);
}

void
cdi_queue_free(struct sup *sup)
{
	while (sup->cdi_qlen > 0)
		pop(sup);
}
