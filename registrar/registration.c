/*
 * registration.c - pluginregistration.Registration: GetInfo answers from
 * bytes built once at start (never waits on anything: kubelet gives it
 * 1 s), NotifyRegistrationStatus relays kubelet's verdict to the
 * supervisor and, when kubelet refused, answers with an error as upstream.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "pluginregistration.pb-c.h"
#include "registrar/registrar.h"


static const char *const DRA_PLUGIN_TYPE = "DRAPlugin";

/* Build the PluginInfo once: GetInfo is immutable data. */
int
reg_info_build(struct reg_state *rs, const struct kp_options *cfg)
{
	Pluginregistration__PluginInfo	 info =
	    PLUGINREGISTRATION__PLUGIN_INFO__INIT;

	info.type = (char *)DRA_PLUGIN_TYPE;
	info.name = cfg->driver_name;
	info.endpoint = cfg->kubelet_plugin_socket_path != NULL ?
	    cfg->kubelet_plugin_socket_path : cfg->plugin_socket_path;
	if (info.endpoint == NULL)
		info.endpoint = "";
	info.n_supported_versions = cfg->n_advertised;
	info.supported_versions = (char **)cfg->advertised;
	rs->info_len = pluginregistration__plugin_info__get_packed_size(&info);
	if ((rs->info = malloc(rs->info_len)) == NULL)
		return (KP_ENOMEM);
	pluginregistration__plugin_info__pack(&info, rs->info);
	return (0);
}

/* The knob for which (1 GetInfo, 2 Notify) into msg; 1 if set. */
static int
reg_error_get(struct reg_state *rs, int which, char *msg, size_t size)
{
	int	 set;

	pthread_mutex_lock(&rs->err_lock);
	set = rs->errs[which - 1][0] != '\0';
	snprintf(msg, size, "%s", rs->errs[which - 1]);
	pthread_mutex_unlock(&rs->err_lock);
	return (set);
}

/*
 * The only frames the supervisor sends a registrar: RegError and the
 * heartbeat's Ping. ipc_next()
 * ran ipc_check() (which is 1 or 2, length, UTF-8); anything else is
 * logged and dropped. Runs until the channel closes.
 */
static void *
reg_reader(void *arg)
{
	struct reg_state	*rs = arg;
	Kpipc__Msg		*m;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	for (;;) {
		if ((r = ipc_recv(rs->ctl, &m, -1, err, sizeof(err))) != 0) {
			if (r == KP_EPROTO) {
				log_warnx("supervisor frame: %s", err);
				continue;
			}
			return (NULL);
		}
		if (m->m_case == KPIPC__MSG__M_PING)
			reg_pong(rs, m->ping->seq);	/* heartbeat.c */
		else if (m->m_case == KPIPC__MSG__M_REG_ERROR) {
			pthread_mutex_lock(&rs->err_lock);
			snprintf(rs->errs[m->reg_error->which - 1],
			    sizeof(rs->errs[0]), "%s", m->reg_error->message);
			pthread_mutex_unlock(&rs->err_lock);
		} else
			log_warnx("unexpected %s frame from the supervisor",
			    ipc_case_name(m->m_case));
		ipc_free(m);
	}
}

int
reg_reader_start(struct reg_state *rs)
{
	pthread_t	 th;

	if (pthread_create(&th, NULL, reg_reader, rs) != 0)
		return (KP_EIO);
	pthread_detach(th);
	return (0);
}

static void
reg_get_info(void *user, struct rpc_call *call, const uint8_t *req,
    size_t len)
{
	struct reg_state		*rs = user;
	Pluginregistration__InfoRequest	*ir;
	char				 msg[KP_IPC_MAX_REG_ERR + 1];

	if (ipc_wire_check(&pluginregistration__info_request__descriptor, req,
	    len, msg, sizeof(msg)) != 0 ||
	    (ir = pluginregistration__info_request__unpack(NULL, len,
	    req)) == NULL) {
		rpc_call_reply(call, RPC_INVALID_ARGUMENT, "GetInfo: "
		    "malformed InfoRequest", NULL, 0);
		return;
	}
	pluginregistration__info_request__free_unpacked(ir, NULL);
	/* upstream: the set error, returned as is (a Go error: Unknown) */
	if (reg_error_get(rs, KP_IPC_REG_ERR_GET_INFO, msg, sizeof(msg))) {
		rpc_call_reply(call, RPC_UNKNOWN, msg, NULL, 0);
		return;
	}
	rpc_call_reply(call, RPC_OK, NULL, rs->info, rs->info_len);
}

/* Relay to the supervisor; the channel is shared by gRPC threads. */
static void
reg_relay(struct reg_state *rs, const Pluginregistration__RegistrationStatus
    *st)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__RegStatus rsm = KPIPC__REG_STATUS__INIT;
	char		 err[4097];

	/* The supervisor's rule caps kubelet's text at 4096 bytes. */
	snprintf(err, sizeof(err), "%s", st->error);
	rsm.registered = st->plugin_registered;
	rsm.error = err;
	m.m_case = KPIPC__MSG__M_REG_STATUS;
	m.reg_status = &rsm;
	pthread_mutex_lock(&rs->ctl_lock);
	if (ipc_send(rs->ctl, &m) != 0)
		log_warnx("cannot relay the registration status");
	pthread_mutex_unlock(&rs->ctl_lock);
}

static void
reg_notify(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	struct reg_state			*rs = user;
	Pluginregistration__RegistrationStatus	*st;
	char					 msg[4200];
	char					 knob[KP_IPC_MAX_REG_ERR + 1];

	st = ipc_wire_check(&pluginregistration__registration_status__descriptor,
	    req, len, msg, sizeof(msg)) != 0 ? NULL :
	    pluginregistration__registration_status__unpack(NULL, len, req);
	if (st == NULL) {
		rpc_call_reply(call, RPC_INVALID_ARGUMENT,
		    "NotifyRegistrationStatus: malformed RegistrationStatus",
		    NULL, 0);
		return;
	}
	/* The knob: this verdict is not recorded, kubelet sees a failed
	 * call (1.36+ drops the registration and retries). */
	if (reg_error_get(rs, KP_IPC_REG_ERR_NOTIFY, knob, sizeof(knob))) {
		rpc_call_reply(call, RPC_UNKNOWN, knob, NULL, 0);
		pluginregistration__registration_status__free_unpacked(st,
		    NULL);
		return;
	}
	reg_relay(rs, st);
	if (st->plugin_registered) {
		uint8_t	 empty[1];

		rpc_call_reply(call, RPC_OK, NULL, empty, 0);
	} else {
		/* Upstream: status Unknown, "failed registration process:
		 * <kubelet's error>". A 1.36 kubelet retries on it. */
		snprintf(msg, sizeof(msg), "failed registration process: %s",
		    st->error);
		rpc_call_reply(call, RPC_UNKNOWN, msg, NULL, 0);
	}
	pluginregistration__registration_status__free_unpacked(st, NULL);
}

static void
fmt_info(const uint8_t *b, size_t len, char *out, size_t size)
{
	Pluginregistration__PluginInfo	*i;
	size_t				 k, n;

	if (ipc_wire_check(&pluginregistration__plugin_info__descriptor, b,
	    len, out, size) != 0 ||
	    (i = pluginregistration__plugin_info__unpack(NULL, len, b)) ==
	    NULL) {
		snprintf(out, size, "(%zu bytes)", len);
		return;
	}
	n = (size_t)snprintf(out, size, "{type:\"%s\",name:\"%s\","
	    "endpoint:\"%s\",supported_versions:[", i->type, i->name,
	    i->endpoint);
	for (k = 0; k < i->n_supported_versions && n < size; k++)
		n += (size_t)snprintf(out + n, size - n, "%s\"%s\"",
		    k ? "," : "", i->supported_versions[k]);
	if (n < size)
		snprintf(out + n, size - n, "]}");
	pluginregistration__plugin_info__free_unpacked(i, NULL);
}

static void
fmt_status(const uint8_t *b, size_t len, char *out, size_t size)
{
	Pluginregistration__RegistrationStatus	*s;

	s = ipc_wire_check(&pluginregistration__registration_status__descriptor,
	    b, len, out, size) != 0 ? NULL :
	    pluginregistration__registration_status__unpack(NULL, len, b);
	if (s == NULL) {
		snprintf(out, size, "(%zu bytes)", len);
		return;
	}
	snprintf(out, size, "{plugin_registered:%s,error:\"%s\"}",
	    s->plugin_registered ? "true" : "false", s->error);
	pluginregistration__registration_status__free_unpacked(s, NULL);
}

static void
fmt_empty(const uint8_t *b, size_t len, char *out, size_t size)
{
	snprintf(out, size, len ? "(%zu bytes)" : "{}", len);
}

size_t
reg_methods(struct reg_state *rs, struct rpc_method *m)
{
	memset(m, 0, 2 * sizeof(*m));
	m[0].path = "/pluginregistration.Registration/GetInfo";
	m[0].inline_ok = 1;
	m[0].handler = reg_get_info;
	m[0].user = rs;
	m[0].format_request = fmt_empty;
	m[0].format_response = fmt_info;
	m[1].path = "/pluginregistration.Registration/"
	    "NotifyRegistrationStatus";
	m[1].inline_ok = 1;
	m[1].handler = reg_notify;
	m[1].user = rs;
	m[1].format_request = fmt_status;
	m[1].format_response = fmt_empty;
	return (2);
}
