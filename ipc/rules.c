/*
 * rules.c - which role may send which message in which state: the
 * supervisor's state table (OpenSSH monitor.c mon_table). A frame that is
 * not in the table for its sender and the sender's state is a violation:
 * the child is killed and restarted.
 */
#include <stdio.h>

#include "kubeletplugin.h"
#include "ipc/ipc.h"

#define ST(s)	(1u << (s))

struct ipc_rule {
	int		 mcase;
	enum kp_role	 role;
	unsigned	 states;
};

static const struct ipc_rule rules[] = {
	{ KPIPC__MSG__M_READY, ROLE_NODESERVER, ST(CS_STARTING) },
	{ KPIPC__MSG__M_READY, ROLE_REGISTRAR, ST(CS_STARTING) },
	{ KPIPC__MSG__M_READY, ROLE_PUBLISHER, ST(CS_STARTING) },
	{ KPIPC__MSG__M_START_FAILED, ROLE_NODESERVER, ST(CS_STARTING) },
	{ KPIPC__MSG__M_START_FAILED, ROLE_REGISTRAR, ST(CS_STARTING) },
	{ KPIPC__MSG__M_START_FAILED, ROLE_PUBLISHER, ST(CS_STARTING) },
	/* kubelet's verdict, relayed by the registrar */
	{ KPIPC__MSG__M_REG_STATUS, ROLE_REGISTRAR, ST(CS_READY) },
	/* claim look-ups: nodeserver asks, publisher answers */
	{ KPIPC__MSG__M_CLAIM_GET, ROLE_NODESERVER, ST(CS_READY) },
	{ KPIPC__MSG__M_CLAIM_REPLY, ROLE_PUBLISHER, ST(CS_READY) },
	/* ... and withdraws what its call no longer waits for */
	{ KPIPC__MSG__M_CLAIM_CANCEL, ROLE_NODESERVER, ST(CS_READY) },
	{ KPIPC__MSG__M_PUBLISH_STATUS, ROLE_PUBLISHER, ST(CS_READY) },
	/*
	 * CDI spec files, from the nodeserver only. Also while STARTING:
	 * the init hook (privileged, before the sandbox) rewrites the specs
	 * a reboot removed from the tmpfs /var/run/cdi; the supervisor's
	 * rules are the same in both states.
	 */
	{ KPIPC__MSG__M_CDI_WRITE, ROLE_NODESERVER,
	    ST(CS_STARTING) | ST(CS_READY) },
	{ KPIPC__MSG__M_CDI_REMOVE, ROLE_NODESERVER,
	    ST(CS_STARTING) | ST(CS_READY) },
	{ KPIPC__MSG__M_CDI_LIST, ROLE_NODESERVER,
	    ST(CS_STARTING) | ST(CS_READY) },
	/* device metadata: written for prepare and unprepare calls only */
	{ KPIPC__MSG__M_METADATA_WRITE, ROLE_NODESERVER, ST(CS_READY) },
	{ KPIPC__MSG__M_METADATA_REMOVE, ROLE_NODESERVER, ST(CS_READY) },
	/* the driver process, always READY once the plugin started */
	{ KPIPC__MSG__M_REG_STATUS_QUERY, ROLE_DRIVER, ST(CS_READY) },
	{ KPIPC__MSG__M_PUBLISH, ROLE_DRIVER, ST(CS_READY) },
	{ KPIPC__MSG__M_PUBLISH_STATUS_QUERY, ROLE_DRIVER, ST(CS_READY) },
	{ KPIPC__MSG__M_STOP, ROLE_DRIVER, ST(CS_READY) },
	/* resource health: the driver reports, the nodeserver warns */
	{ KPIPC__MSG__M_HEALTH_REPORT, ROLE_DRIVER, ST(CS_READY) },
	{ KPIPC__MSG__M_HEALTH_STALE, ROLE_NODESERVER, ST(CS_READY) },
	/*
	 * The heartbeat's answer, with the counters (ipc/stats.c). The
	 * observer's carries none (ipc_check_pong): besides READY and log
	 * lines it only says it is alive, so a compromised observer has
	 * nothing to tell the supervisor; one that stops answering is
	 * replaced (supervisor/heal.c).
	 */
	{ KPIPC__MSG__M_PONG, ROLE_NODESERVER, ST(CS_READY) },
	{ KPIPC__MSG__M_PONG, ROLE_REGISTRAR, ST(CS_READY) },
	{ KPIPC__MSG__M_PONG, ROLE_PUBLISHER, ST(CS_READY) },
	{ KPIPC__MSG__M_PONG, ROLE_OBSERVER, ST(CS_READY) },
	{ KPIPC__MSG__M_READY, ROLE_OBSERVER, ST(CS_STARTING) },
	{ KPIPC__MSG__M_START_FAILED, ROLE_OBSERVER, ST(CS_STARTING) },
	/*
	 * State for the hooks: from the driver process only. No child has
	 * a rule for it, so a nodeserver that sends one back (to change
	 * what its successor starts from) is killed, never relayed.
	 */
	{ KPIPC__MSG__M_STATE_SET, ROLE_DRIVER, ST(CS_READY) },
	/* registration test knobs (kp_set_get_info_error, ...) */
	{ KPIPC__MSG__M_REG_ERROR, ROLE_DRIVER, ST(CS_READY) },
	/*
	 * kp_update_request_metadata: the driver process only. A nodeserver
	 * that sends one (to rewrite a file without a prepare call) is
	 * killed: it has MetadataWrite, for the calls it serves, and no more.
	 */
	{ KPIPC__MSG__M_METADATA_UPDATE, ROLE_DRIVER, ST(CS_READY) },
	/* an Event from the fixed list: a hook's denied syscall */
	/* (a corrupt journal is found while the nodeserver starts) */
	{ KPIPC__MSG__M_EVENT_ASK, ROLE_NODESERVER,
	    ST(CS_STARTING) | ST(CS_READY) },
};

static const char *const case_names[] = {
	[KPIPC__MSG__M_RESULT] = "result",
	[KPIPC__MSG__M_READY] = "ready",
	[KPIPC__MSG__M_START_FAILED] = "start_failed",
	[KPIPC__MSG__M_REG_STATUS] = "reg_status",
	[KPIPC__MSG__M_CLAIM_GET] = "claim_get",
	[KPIPC__MSG__M_CLAIM_REPLY] = "claim_reply",
	[KPIPC__MSG__M_CLAIM_CANCEL] = "claim_cancel",
	[KPIPC__MSG__M_PUBLISH] = "publish",
	[KPIPC__MSG__M_REG_STATUS_QUERY] = "reg_status_query",
	[KPIPC__MSG__M_REG_STATUS_REPLY] = "reg_status_reply",
	[KPIPC__MSG__M_STOP] = "stop",
	[KPIPC__MSG__M_LOG] = "log",
	[KPIPC__MSG__M_PUBLISH_STATUS] = "publish_status",
	[KPIPC__MSG__M_PUBLISH_STATUS_QUERY] = "publish_status_query",
	[KPIPC__MSG__M_HEALTH_REPORT] = "health_report",
	[KPIPC__MSG__M_HEALTH_STALE] = "health_stale",
	[KPIPC__MSG__M_CDI_WRITE] = "cdi_write",
	[KPIPC__MSG__M_CDI_REMOVE] = "cdi_remove",
	[KPIPC__MSG__M_CDI_LIST] = "cdi_list",
	[KPIPC__MSG__M_CDI_REPLY] = "cdi_reply",
	[KPIPC__MSG__M_CDI_CHANGED] = "cdi_changed",
	[KPIPC__MSG__M_METADATA_WRITE] = "metadata_write",
	[KPIPC__MSG__M_METADATA_REMOVE] = "metadata_remove",
	[KPIPC__MSG__M_METADATA_UPDATE] = "metadata_update",
	[KPIPC__MSG__M_PING] = "ping",
	[KPIPC__MSG__M_PONG] = "pong",
	[KPIPC__MSG__M_STATUS] = "status",
	[KPIPC__MSG__M_STATE_SET] = "state_set",
	[KPIPC__MSG__M_EVENT] = "event",
	[KPIPC__MSG__M_REG_ERROR] = "reg_error",
	[KPIPC__MSG__M_EVENT_ASK] = "event_ask",
	[KPIPC__MSG__M_EVENT_POST] = "event_post",
};

const char *
ipc_case_name(int mcase)
{
	if (mcase <= 0 || (size_t)mcase >= sizeof(case_names) /
	    sizeof(case_names[0]) || case_names[mcase] == NULL)
		return ("unknown");
	return (case_names[mcase]);
}

const char *
ipc_role_name(enum kp_role role)
{
	switch (role) {
	case ROLE_NODESERVER:
		return ("nodeserver");
	case ROLE_REGISTRAR:
		return ("registrar");
	case ROLE_PUBLISHER:
		return ("publisher");
	case ROLE_OBSERVER:
		return ("observer");
	case ROLE_DRIVER:
		return ("driver");
	case ROLE_SUPERVISOR:
		return ("supervisor");
	case ROLE_BROKER:
		return ("broker");
	default:
		return ("unknown");
	}
}

/*
 * The largest frame of each case a child may send, checked before the
 * frame is unpacked (ipc_next's gate): protobuf-c allocates a struct for
 * every (even empty) submessage, so a 1 MiB frame of empty ones costs
 * the supervisor a hundred times that. Small cases stay small; only
 * the publisher's claim answers may use a child's whole frame.
 */
static const struct {
	int	 mcase;
	size_t	 max;
} case_max[] = {
	{ KPIPC__MSG__M_READY, 8 * 1024 },
	{ KPIPC__MSG__M_START_FAILED, 8 * 1024 },
	{ KPIPC__MSG__M_REG_STATUS, 8 * 1024 },
	{ KPIPC__MSG__M_CLAIM_GET, 1024 },
	{ KPIPC__MSG__M_CLAIM_REPLY, KP_IPC_CHILD_FRAME },
	{ KPIPC__MSG__M_CLAIM_CANCEL, 1024 },
	{ KPIPC__MSG__M_PUBLISH_STATUS, 16 * 1024 },	/* 8 errors */
	{ KPIPC__MSG__M_CDI_WRITE, KP_IPC_MAX_CDI_CONTENT + 1024 },
	{ KPIPC__MSG__M_CDI_REMOVE, 1024 },
	{ KPIPC__MSG__M_CDI_LIST, 64 },
	{ KPIPC__MSG__M_METADATA_WRITE, KP_IPC_MAX_METADATA + 1024 },
	{ KPIPC__MSG__M_METADATA_REMOVE, 1024 },
	{ KPIPC__MSG__M_HEALTH_STALE, 8 * 1024 },
	{ KPIPC__MSG__M_EVENT_ASK, 128 },
	{ KPIPC__MSG__M_PONG, 64 * 1024 },
};

/*
 * Before unpacking a child's frame of len bytes whose one field is case
 * mcase: the state table, then the case's size. 0 or KP_EPROTO.
 */
int
ipc_rule_gate(enum kp_role role, enum child_state state, int mcase,
    size_t len, char *err, size_t errsize)
{
	size_t	 i;
	int	 r;

	if ((r = ipc_rule_check(role, state, mcase, err, errsize)) != 0)
		return (r);
	for (i = 0; i < sizeof(case_max) / sizeof(case_max[0]); i++)
		if (case_max[i].mcase == mcase) {
			if (len <= case_max[i].max)
				return (0);
			snprintf(err, errsize, "%s frame of %zu bytes from the "
			    "%s exceeds its limit of %zu", ipc_case_name(mcase),
			    len, ipc_role_name(role), case_max[i].max);
			return (KP_EPROTO);
		}
	snprintf(err, errsize, "%s frame from the %s has no size limit",
	    ipc_case_name(mcase), ipc_role_name(role));
	return (KP_EPROTO);
}

/* 0 if role may send mcase in state; else KP_EPROTO with the reason. */
int
ipc_rule_check(enum kp_role role, enum child_state state, int mcase,
    char *err, size_t errsize)
{
	size_t	 i;
	int	 known = 0;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].mcase != mcase || rules[i].role != role)
			continue;
		known = 1;
		if (rules[i].states & ST(state))
			return (0);
	}
	snprintf(err, errsize, "%s frame %s from the %s", known ?
	    "out-of-state" : "unpermitted", ipc_case_name(mcase),
	    ipc_role_name(role));
	return (KP_EPROTO);
}
