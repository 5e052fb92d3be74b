/*
 * check.c - field rules applied to every frame after it unpacked and before
 * any handler sees it (ntp_dns.c checks its strings the same way). The
 * per-role, per-state rules live in rules.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kubeletplugin.h"
#include "base/health.h"
#include "base/names.h"
#include "base/utf8.h"
#include "ipc/ipc.h"
#include "base/utf8.h"
#include "base/log.h"

#define MAX_MESSAGE	1024		/* Result.message */
#define MAX_KUBELET_ERR	4096		/* RegStatus.error */

/* err gets the rule broken; returns KP_EPROTO (stats.c uses it too). */
int
ipc_fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return (KP_EPROTO);
}

/*
 * protobuf-c keeps fields it does not know; a peer speaking another schema
 * is as suspect as a malformed one. Walks nested messages by descriptor.
 */
static int
has_unknown(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor	*d = m->descriptor;
	const ProtobufCFieldDescriptor		*f;
	unsigned				 i;
	size_t					 k, n;

	if (m->n_unknown_fields != 0)
		return (1);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			const ProtobufCMessage * const *v = *(void **)
			    ((const char *)m + f->offset);

			n = *(const size_t *)((const char *)m +
			    f->quantifier_offset);
			for (k = 0; k < n; k++)
				if (v[k] == NULL || has_unknown(v[k]))
					return (1);
			continue;
		}
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)((const char *)m +
		    f->quantifier_offset) != f->id)
			continue;
		{
			const ProtobufCMessage *v = *(void **)
			    ((const char *)m + f->offset);

			if (v != NULL && has_unknown(v))
				return (1);
		}
	}
	return (0);
}

/*
 * A Kubernetes object name: a DNS-1123 subdomain of at most max characters
 * (labels of [a-z0-9-] joined by dots). Returns 0 or -1.
 */
int
ipc_check_k8s_name(const char *s, size_t max)
{
	size_t	 len;

	if (s == NULL || (len = strlen(s)) == 0 || len > max)
		return (-1);
	return (name_is_subdomain(s, len) ? 0 : -1);
}

/* The nodeserver's rule for a claim UID (base/names.c): the two must
 * agree, or a kubelet request gets the nodeserver killed. */
static int
check_uid(const char *s)
{
	return (name_is_claim_uid(s, strlen(s)) ? 0 : -1);
}

static int
check_result(const Kpipc__Result *r, char *err, size_t errsize)
{
	if (r == NULL)
		return (ipc_fail(err, errsize, "result: required"));
	if (r->code > 0 || r->code <= KP_ERRNO_MAX)
		return (ipc_fail(err, errsize, "result.code %d: not a KP_E* "
		    "code", (int)r->code));
	if (strlen(r->message) > MAX_MESSAGE)
		return (ipc_fail(err, errsize, "result.message: longer than %d "
		    "bytes", MAX_MESSAGE));
	return (0);
}

static int
check_claim_get(const Kpipc__ClaimGet *g, char *err, size_t errsize)
{
	if (strlen(g->namespace_) > NAME_MAX_LABEL ||
	    !name_is_label(g->namespace_, strlen(g->namespace_)))
		return (ipc_fail(err, errsize, "claim_get.namespace \"%.64s\": "
		    "not a DNS label", g->namespace_));
	if (ipc_check_k8s_name(g->name, 253) != 0)
		return (ipc_fail(err, errsize, "claim_get.name \"%.64s\": not a "
		    "DNS subdomain", g->name));
	if (check_uid(g->uid) != 0)
		return (ipc_fail(err, errsize, "claim_get.uid \"%.64s\": not a "
		    "UID", g->uid));
	return (0);
}

static int
check_claim_cancel(const Kpipc__ClaimCancel *c, char *err, size_t errsize)
{
	size_t	 i;

	if (c->n_ids == 0 || c->n_ids > KP_IPC_MAX_CANCEL)
		return (ipc_fail(err, errsize, "claim_cancel.ids: %zu ids, "
		    "not 1 to %d", c->n_ids, KP_IPC_MAX_CANCEL));
	for (i = 0; i < c->n_ids; i++)
		if (c->ids[i] == 0)
			return (ipc_fail(err, errsize, "claim_cancel.ids[%zu]: "
			    "0 is no look-up", i));
	return (0);
}

static int
check_claim_reply(const Kpipc__ClaimReply *r, char *err, size_t errsize)
{
	size_t	 i;

	if (check_result(r->result, err, errsize) != 0)
		return (KP_EPROTO);
	if (strlen(r->namespace_) > 63 || strlen(r->name) > 253 ||
	    strlen(r->uid) > NAME_MAX_UID)
		return (ipc_fail(err, errsize, "claim_reply: claim name too long"));
	if (r->n_results > KP_IPC_MAX_RESULTS)
		return (ipc_fail(err, errsize, "claim_reply.results: more than "
		    "%d", KP_IPC_MAX_RESULTS));
	for (i = 0; i < r->n_results; i++) {
		if (strlen(r->results[i]->request) > KP_IPC_MAX_REQUEST ||
		    strlen(r->results[i]->pool) > KP_IPC_MAX_POOL ||
		    strlen(r->results[i]->device) > KP_IPC_MAX_DEVICE)
			return (ipc_fail(err, errsize, "claim_reply.results[%zu]: "
			    "name too long", i));
	}
	if (strlen(r->config_json) > KP_IPC_MAX_CONFIG)
		return (ipc_fail(err, errsize, "claim_reply.config_json: longer "
		    "than %u bytes", KP_IPC_MAX_CONFIG));
	if (r->pod_claim_name[0] != '\0' &&
	    (strlen(r->pod_claim_name) > NAME_MAX_LABEL ||
	    !name_is_label(r->pod_claim_name, strlen(r->pod_claim_name))))
		return (ipc_fail(err, errsize, "claim_reply."
		    "pod_claim_name \"%.64s\": not a DNS label",
		    r->pod_claim_name));
	if (strlen(r->claim_json) > KP_IPC_MAX_CLAIM_JSON)
		return (ipc_fail(err, errsize, "claim_reply.claim_json: longer "
		    "than %u bytes", KP_IPC_MAX_CLAIM_JSON));
	if (r->api_version[0] != '\0' &&
	    strcmp(r->api_version, "resource.k8s.io/v1") != 0 &&
	    strcmp(r->api_version, "resource.k8s.io/v1beta2") != 0 &&
	    strcmp(r->api_version, "resource.k8s.io/v1beta1") != 0)
		return (ipc_fail(err, errsize, "claim_reply.api_version "
		    "\"%.64s\": not a resource.k8s.io version the publisher "
		    "speaks", r->api_version));
	return (0);
}

/*
 * The CDI requests' size rules. The name rule itself (the driver's
 * prefix, the characters) and UTF-8 are the supervisor's to refuse with
 * an answer (files.c): a hook that passes a bad name gets an error, the
 * nodeserver is not killed. Only a frame no wrapper sends breaks these.
 */
static int
check_cdi_name(const char *what, const char *name, char *err,
    size_t errsize)
{
	size_t	 n = strlen(name);

	if (n == 0 || n > NAME_MAX_CDI_SPEC)
		return (ipc_fail(err, errsize, "%s.name: empty or longer than %d "
		    "bytes", what, NAME_MAX_CDI_SPEC));
	return (0);
}

/*
 * Device metadata: the names become path components and a CDI device
 * name, so they must be exactly what kubelet's names are (the nodeserver
 * checks the request names a hook gave before sending).
 */
static int
check_metadata_claim(const char *what, const char *ns, const char *name,
    const char *uid, char *err, size_t errsize)
{
	if (strlen(ns) > NAME_MAX_LABEL || !name_is_label(ns, strlen(ns)))
		return (ipc_fail(err, errsize, "%s.namespace \"%.64s\": not "
		    "a DNS label", what, ns));
	if (ipc_check_k8s_name(name, 253) != 0)
		return (ipc_fail(err, errsize, "%s.name \"%.64s\": not a "
		    "DNS subdomain", what, name));
	if (check_uid(uid) != 0)
		return (ipc_fail(err, errsize, "%s.uid \"%.64s\": not a UID",
		    what, uid));
	return (0);
}

static int
check_metadata_write(const Kpipc__MetadataWrite *w, char *err,
    size_t errsize)
{
	const char	*p = w->pod_claim_name;

	if (check_metadata_claim("metadata_write", w->namespace_, w->name,
	    w->uid, err, errsize) != 0)
		return (KP_EPROTO);
	if (strlen(w->request) > NAME_MAX_LABEL ||
	    !name_is_label(w->request, strlen(w->request)))
		return (ipc_fail(err, errsize, "metadata_write.request "
		    "\"%.64s\": not a DNS label", w->request));
	if (p[0] != '\0' && (strlen(p) > NAME_MAX_LABEL ||
	    !name_is_label(p, strlen(p))))
		return (ipc_fail(err, errsize, "metadata_write."
		    "pod_claim_name \"%.64s\": not a DNS label", p));
	if (w->content.len > KP_IPC_MAX_METADATA)
		return (ipc_fail(err, errsize, "metadata_write.content: "
		    "longer than %u bytes", KP_IPC_MAX_METADATA));
	return (0);
}

/*
 * kp_update_request_metadata, from the driver process: names as
 * MetadataWrite's (the request may carry a subrequest), the rendered
 * members UTF-8 and, together, within the file's limit.
 */
static int
check_metadata_update(const Kpipc__MetadataUpdate *u, char *err,
    size_t errsize)
{
	const Kpipc__MetadataDevice	*d;
	const char			*req = u->request, *slash;
	size_t				 i, total = 0, bl;

	if (check_metadata_claim("metadata_update", u->namespace_, u->name,
	    u->uid, err, errsize) != 0)
		return (KP_EPROTO);
	slash = strchr(req, '/');
	bl = slash != NULL ? (size_t)(slash - req) : strlen(req);
	if (bl > NAME_MAX_LABEL || !name_is_label(req, bl) || (slash != NULL &&
	    (strlen(slash + 1) > NAME_MAX_LABEL ||
	    !name_is_label(slash + 1, strlen(slash + 1)))))
		return (ipc_fail(err, errsize, "metadata_update.request "
		    "\"%.64s\": not a DNS label or <label>/<label>", req));
	if (u->n_devices > KP_IPC_MAX_METADATA_DEVICES)
		return (ipc_fail(err, errsize, "metadata_update.devices: more "
		    "than %d", KP_IPC_MAX_METADATA_DEVICES));
	for (i = 0; i < u->n_devices; i++) {
		d = u->devices[i];
		if (d->pool[0] == '\0' || strlen(d->pool) > KP_IPC_MAX_POOL ||
		    !utf8_valid(d->pool))
			return (ipc_fail(err, errsize, "metadata_update."
			    "devices[%zu].pool: 1 to %d bytes of UTF-8", i,
			    KP_IPC_MAX_POOL));
		if (strlen(d->device) > NAME_MAX_LABEL ||
		    !name_is_label(d->device, strlen(d->device)))
			return (ipc_fail(err, errsize, "metadata_update."
			    "devices[%zu].device \"%.64s\": not a DNS label",
			    i, d->device));
		if (!utf8_valid(d->attributes) || !utf8_valid(d->network_data))
			return (ipc_fail(err, errsize, "metadata_update."
			    "devices[%zu]: attributes or network_data not "
			    "UTF-8", i));
		total += strlen(d->pool) + strlen(d->attributes) +
		    strlen(d->network_data);
	}
	if (total > KP_IPC_MAX_METADATA)
		return (ipc_fail(err, errsize, "metadata_update.devices: more "
		    "than %u bytes", KP_IPC_MAX_METADATA));
	return (0);
}

static int
check_cdi_reply(const Kpipc__CdiReply *r, char *err, size_t errsize)
{
	size_t	 i;

	if (check_result(r->result, err, errsize) != 0)
		return (KP_EPROTO);
	if (r->n_names > KP_IPC_MAX_CDI_NAMES)
		return (ipc_fail(err, errsize, "cdi_reply.names: more than %d",
		    KP_IPC_MAX_CDI_NAMES));
	for (i = 0; i < r->n_names; i++)
		if (strlen(r->names[i]) > NAME_MAX_CDI_SPEC)
			return (ipc_fail(err, errsize, "cdi_reply.names[%zu]: "
			    "longer than %d bytes", i, NAME_MAX_CDI_SPEC));
	return (0);
}

static int
check_cdi_changed(const Kpipc__CdiChanged *c, char *err, size_t errsize)
{
	size_t	 i;

	if (c->n_changes > KP_IPC_MAX_CDI_CHANGES)
		return (ipc_fail(err, errsize, "cdi_changed.changes: more "
		    "than %d", KP_IPC_MAX_CDI_CHANGES));
	for (i = 0; i < c->n_changes; i++)
		if (check_cdi_name("cdi_changed.changes[]",
		    c->changes[i]->name, err, errsize) != 0)
			return (KP_EPROTO);
	return (0);
}

static int
check_log(const Kpipc__Log *l, char *err, size_t errsize)
{
	if (l->level < KP_LOG_ERROR || l->level > KP_LOG_INFO)
		return (ipc_fail(err, errsize, "log.level %d: out of range",
		    (int)l->level));
	if (l->verbosity < 0 || l->verbosity > 100)
		return (ipc_fail(err, errsize, "log.verbosity %d: out of range",
		    (int)l->verbosity));
	if (strlen(l->text) >= KP_LOG_MAX)
		return (ipc_fail(err, errsize, "log.text: longer than %d bytes",
		    KP_LOG_MAX - 1));
	if (strlen(l->role) > 16)
		return (ipc_fail(err, errsize, "log.role: longer than 16 "
		    "bytes"));
	return (0);
}

/* A syscall's name as libseccomp spells it: [a-z0-9_], 1..32 bytes. */
static int
check_event_ask(const Kpipc__EventAsk *a, char *err, size_t errsize)
{
	const char	*s = a->syscall;
	size_t		 n = strlen(s), i;

	/* The journal's own report: the supervisor writes the whole note,
	 * so nothing of the nodeserver's rides along. */
	if (a->kind == KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT) {
		if (n != 0)
			return (ipc_fail(err, errsize, "event_ask.syscall: must "
			    "be empty for EVENT_JOURNAL_CORRUPT"));
		return (0);
	}
	if (a->kind != KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED)
		return (ipc_fail(err, errsize, "event_ask.kind %d: only "
		    "EVENT_SYSCALL_DENIED and EVENT_JOURNAL_CORRUPT may be "
		    "asked for", (int)a->kind));
	if (n == 0 || n > KP_IPC_MAX_SYSCALL)
		return (ipc_fail(err, errsize, "event_ask.syscall: %zu bytes, "
		    "must be 1 to %d", n, KP_IPC_MAX_SYSCALL));
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '_'))
			return (ipc_fail(err, errsize, "event_ask.syscall: byte "
			    "%zu is not one of [a-z0-9_]", i));
	return (0);
}

/* The note the supervisor wrote: bounded, UTF-8, no control bytes. */
static int
check_event_post(const Kpipc__EventPost *e, char *err, size_t errsize)
{
	size_t	 i, n = strlen(e->note);

	if (e->kind <= KPIPC__EVENT_KIND__EVENT_NONE ||
	    e->kind > KPIPC__EVENT_KIND__EVENT_SOCKET_LOST)
		return (ipc_fail(err, errsize, "event_post.kind %d: out of range",
		    (int)e->kind));
	if (n > KP_IPC_MAX_NOTE)
		return (ipc_fail(err, errsize, "event_post.note: longer than %d "
		    "bytes", KP_IPC_MAX_NOTE));
	if (!utf8_valid(e->note))
		return (ipc_fail(err, errsize, "event_post.note: not UTF-8"));
	for (i = 0; i < n; i++)
		if ((unsigned char)e->note[i] < 0x20 || e->note[i] == 0x7f)
			return (ipc_fail(err, errsize, "event_post.note: control "
			    "byte at %zu", i));
	return (0);
}

/* The driver's health report: the rules kp_health_report() applied. */
static int
check_health_report(const Kpipc__HealthReport *r, char *err,
    size_t errsize)
{
	struct kp_device_health	 d = { KP_DEVICE_HEALTH_INIT };
	const Kpipc__DeviceHealth *x;
	char			 why[KP_ERROR_SIZE];
	size_t			 i;

	if (r->n_devices > KP_HEALTH_MAX_DEVICES)
		return (ipc_fail(err, errsize, "health_report.devices: more than "
		    "%d", KP_HEALTH_MAX_DEVICES));
	for (i = 0; i < r->n_devices; i++) {
		x = r->devices[i];
		if (x->timeout_seconds < 0 ||
		    x->timeout_seconds > HEALTH_MAX_TIMEOUT)
			return (ipc_fail(err, errsize, "health_report.devices[%zu]"
			    ": field out of range", i));
		d.pool = x->pool;
		d.device = x->device;
		d.status = (enum kp_health_status)x->status;
		d.last_updated = x->last_updated;
		d.timeout_s = (int)x->timeout_seconds;
		d.message = x->message;
		if (health_check(&d, i, why, sizeof(why)) != 0)
			return (ipc_fail(err, errsize, "health_report.%s", why));
	}
	return (0);
}

/*
 * The driver's state for the hooks (kp_state_set): what that call
 * applied. Generations start at 1; the supervisor also checks that each
 * is above the last (order), which a field rule cannot.
 */
static int
check_state_set(const Kpipc__StateSet *st, char *err, size_t errsize)
{
	if (st->generation == 0)
		return (ipc_fail(err, errsize, "state_set.generation: must be at "
		    "least 1"));
	if (st->data.len > KP_STATE_MAX)
		return (ipc_fail(err, errsize, "state_set.data: %zu bytes exceed "
		    "KP_STATE_MAX (%u bytes)", st->data.len,
		    (unsigned)KP_STATE_MAX));
	if (st->data.len > 0 && st->data.data == NULL)
		return (ipc_fail(err, errsize, "state_set.data: missing"));
	return (0);
}

/* The supervisor's events for the driver process (api/events.c). */
static int
check_event(const Kpipc__Event *e, char *err, size_t errsize)
{
	if (e->kind < IPC_EVENT_ERROR || e->kind > IPC_EVENT_PUBLISH)
		return (ipc_fail(err, errsize, "event.kind %d: out of range",
		    (int)e->kind));
	if (e->kind == IPC_EVENT_ERROR && (e->code >= 0 ||
	    e->code <= KP_ERRNO_MAX))
		return (ipc_fail(err, errsize, "event.code %d: not a KP_E* code",
		    (int)e->code));
	if (strlen(e->message) >= KP_ERROR_SIZE)
		return (ipc_fail(err, errsize, "event.message: longer than %d "
		    "bytes", KP_ERROR_SIZE - 1));
	return (0);
}

/* Field rules of every message case; the case itself is checked by
 * rules.c against the sender's role and state. */
/*
 * A path another process will mount over (Ready.hide_paths): absolute,
 * not the root, no "." or ".." component, no control bytes, bounded. A
 * lying publisher can then only hide more from the nodeserver.
 */
static int
check_hide_path(const char *p, size_t i, char *err, size_t errsize)
{
	const char	*c;
	size_t		 len = strlen(p), n;

	if (p[0] != '/' || len < 2)
		return (ipc_fail(err, errsize, "ready.hide_paths[%zu]: must be an "
		    "absolute path other than /", i));
	if (len >= KP_IPC_PATH_MAX)
		return (ipc_fail(err, errsize, "ready.hide_paths[%zu]: longer "
		    "than %d bytes", i, KP_IPC_PATH_MAX - 1));
	for (c = p; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return (ipc_fail(err, errsize, "ready.hide_paths[%zu]: "
			    "control character", i));
	for (c = p; *c != '\0'; c += n) {
		c++;			/* the slash */
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' &&
		    c[1] == '.'))
			return (ipc_fail(err, errsize, "ready.hide_paths[%zu]: "
			    "\".\" or \"..\" component", i));
	}
	return (0);
}

static int
check_ready(const Kpipc__Ready *r, char *err, size_t errsize)
{
	size_t	 i;
	int	 rc;

	if (r->pid <= 0)
		return (ipc_fail(err, errsize, "ready.pid: must be > 0"));
	if (r->n_hide_paths > KP_IPC_MAX_HIDE)
		return (ipc_fail(err, errsize, "ready.hide_paths: more than %d",
		    KP_IPC_MAX_HIDE));
	for (i = 0; i < r->n_hide_paths; i++)
		if ((rc = check_hide_path(r->hide_paths[i], i, err,
		    errsize)) != 0)
			return (rc);
	return (0);
}

int
ipc_check(const Kpipc__Msg *m, char *err, size_t errsize)
{
	size_t	 i;

	if (has_unknown(&m->base))
		return (ipc_fail(err, errsize, "unknown fields in a %s frame",
		    m->m_case == KPIPC__MSG__M__NOT_SET ? "typeless" :
		    "typed"));
	switch (m->m_case) {
	case KPIPC__MSG__M_RESULT:
		return (check_result(m->result, err, errsize));
	case KPIPC__MSG__M_READY:
		return (check_ready(m->ready, err, errsize));
	case KPIPC__MSG__M_START_FAILED:
		return (check_result(m->start_failed->result, err, errsize));
	case KPIPC__MSG__M_REG_STATUS:
		if (strlen(m->reg_status->error) > MAX_KUBELET_ERR)
			return (ipc_fail(err, errsize, "reg_status.error: longer "
			    "than %d bytes", MAX_KUBELET_ERR));
		return (0);
	case KPIPC__MSG__M_CLAIM_GET:
		return (check_claim_get(m->claim_get, err, errsize));
	case KPIPC__MSG__M_CLAIM_REPLY:
		return (check_claim_reply(m->claim_reply, err, errsize));
	case KPIPC__MSG__M_CLAIM_CANCEL:
		return (check_claim_cancel(m->claim_cancel, err, errsize));
	case KPIPC__MSG__M_PUBLISH:
		return (ipc_check_resources(m->publish, err, errsize));
	case KPIPC__MSG__M_REG_STATUS_QUERY:
	case KPIPC__MSG__M_PUBLISH_STATUS_QUERY:
	case KPIPC__MSG__M_STOP:
		return (0);
	case KPIPC__MSG__M_PUBLISH_STATUS:
		if (strlen(m->publish_status->last_error) > MAX_MESSAGE ||
		    m->publish_status->pending_pools < 0 ||
		    m->publish_status->last_sync < 0)
			return (ipc_fail(err, errsize, "publish_status: field out "
			    "of range"));
		if (m->publish_status->n_errors > KP_IPC_MAX_PUB_ERRORS)
			return (ipc_fail(err, errsize, "publish_status.errors: "
			    "more than %d", KP_IPC_MAX_PUB_ERRORS));
		for (i = 0; i < m->publish_status->n_errors; i++)
			if (strlen(m->publish_status->errors[i]) >
			    MAX_MESSAGE)
				return (ipc_fail(err, errsize, "publish_status."
				    "errors[%zu]: longer than %d bytes", i,
				    MAX_MESSAGE));
		return (0);
	case KPIPC__MSG__M_REG_STATUS_REPLY:
		if (m->reg_status_reply->state < KP_REGISTRATION_NONE ||
		    m->reg_status_reply->state > KP_REGISTRATION_FAILED)
			return (ipc_fail(err, errsize, "reg_status_reply.state: "
			    "out of range"));
		return (0);
	case KPIPC__MSG__M_LOG:
		return (check_log(m->log, err, errsize));
	case KPIPC__MSG__M_HEALTH_REPORT:
		return (check_health_report(m->health_report, err, errsize));
	case KPIPC__MSG__M_HEALTH_STALE:
		if (strlen(m->health_stale->message) > MAX_MESSAGE)
			return (ipc_fail(err, errsize, "health_stale.message: "
			    "longer than %d bytes", MAX_MESSAGE));
		return (0);
	case KPIPC__MSG__M_CDI_WRITE:
		if (m->cdi_write->content.len > KP_IPC_MAX_CDI_CONTENT)
			return (ipc_fail(err, errsize, "cdi_write.content: longer "
			    "than %u bytes", KP_IPC_MAX_CDI_CONTENT));
		return (check_cdi_name("cdi_write", m->cdi_write->name, err,
		    errsize));
	case KPIPC__MSG__M_CDI_REMOVE:
		return (check_cdi_name("cdi_remove", m->cdi_remove->name, err,
		    errsize));
	case KPIPC__MSG__M_CDI_LIST:
		return (0);
	case KPIPC__MSG__M_CDI_REPLY:
		return (check_cdi_reply(m->cdi_reply, err, errsize));
	case KPIPC__MSG__M_CDI_CHANGED:
		return (check_cdi_changed(m->cdi_changed, err, errsize));
	case KPIPC__MSG__M_METADATA_WRITE:
		return (check_metadata_write(m->metadata_write, err, errsize));
	case KPIPC__MSG__M_METADATA_UPDATE:
		return (check_metadata_update(m->metadata_update, err,
		    errsize));
	case KPIPC__MSG__M_METADATA_REMOVE:
		return (check_metadata_claim("metadata_remove",
		    m->metadata_remove->namespace_, m->metadata_remove->name,
		    m->metadata_remove->uid, err, errsize));
	case KPIPC__MSG__M_PING:
	case KPIPC__MSG__M_STATUS:
		return (0);	/* from the supervisor only (rules.c) */
	case KPIPC__MSG__M_PONG:
		return (0);	/* per role: ipc_check_pong() */
	case KPIPC__MSG__M_STATE_SET:
		return (check_state_set(m->state_set, err, errsize));
	case KPIPC__MSG__M_EVENT:
		return (check_event(m->event, err, errsize));
	case KPIPC__MSG__M_REG_ERROR:
		if (m->reg_error->which != KP_IPC_REG_ERR_GET_INFO &&
		    m->reg_error->which != KP_IPC_REG_ERR_NOTIFY)
			return (ipc_fail(err, errsize, "reg_error.which: %u is "
			    "neither 1 (GetInfo) nor 2 "
			    "(NotifyRegistrationStatus)", m->reg_error->which));
		if (strlen(m->reg_error->message) > MAX_MESSAGE ||
		    !utf8_valid(m->reg_error->message))
			return (ipc_fail(err, errsize, "reg_error.message: must be "
			    "at most %d bytes of UTF-8", MAX_MESSAGE));
		return (0);
	case KPIPC__MSG__M_EVENT_ASK:
		return (check_event_ask(m->event_ask, err, errsize));
	case KPIPC__MSG__M_EVENT_POST:
		return (check_event_post(m->event_post, err, errsize));
	default:
		return (ipc_fail(err, errsize, "frame without a known type (%d)",
		    (int)m->m_case));
	}
}

/* The bounds of one device (validate.c's limits, counted again). */
static int
check_device_sizes(const Kpipc__Device *d, size_t i, size_t j, size_t k,
    char *err, size_t errsize)
{
	size_t	 a, c, lv = 0;

	if (d->n_attributes + d->n_capacities > 32 ||
	    d->n_consumes_counters > 2 || d->n_taints > 16 ||
	    d->n_binding_conditions > 4 ||
	    d->n_binding_failure_conditions > 4 ||
	    d->n_node_allocatable > 32)
		return (ipc_fail(err, errsize, "publish.pools[%zu].slices[%zu]."
		    "devices[%zu]: a list over its limit", i, j, k));
	for (c = 0; c < d->n_consumes_counters; c++)
		if (d->consumes_counters[c]->n_counters > 32)
			return (ipc_fail(err, errsize, "publish.pools[%zu].slices"
			    "[%zu].devices[%zu].consumesCounters[%zu]: more "
			    "than 32 counters", i, j, k, c));
	for (a = 0; a < d->n_attributes; a++) {
		const Kpipc__Attribute *at = d->attributes[a];

		lv += at->value_case == KPIPC__ATTRIBUTE__VALUE_INTS ?
		    at->ints->n_values : at->value_case ==
		    KPIPC__ATTRIBUTE__VALUE_BOOLS ? at->bools->n_values :
		    at->value_case == KPIPC__ATTRIBUTE__VALUE_STRINGS ?
		    at->strings->n_values : at->value_case ==
		    KPIPC__ATTRIBUTE__VALUE_VERSIONS ?
		    at->versions->n_values : 0;
	}
	if (lv > 48)
		return (ipc_fail(err, errsize, "publish.pools[%zu].slices[%zu]."
		    "devices[%zu]: more than 48 list attribute values", i, j,
		    k));
	return (0);
}

/* Size rules of a Publish frame; the API server's rules are applied by
 * kp_publish_resources() in the driver (validate.c). */
int
ipc_check_resources(const Kpipc__Publish *p, char *err, size_t errsize)
{
	const Kpipc__Slice	*s;
	size_t			 i, j, k;

	if (p->n_pools > 4096 || p->n_keep_pools > 4096)
		return (ipc_fail(err, errsize, "publish.pools: more than 4096"));
	for (i = 0; i < p->n_keep_pools; i++)
		if (strlen(p->keep_pools[i]) > 253)
			return (ipc_fail(err, errsize, "publish.keep_pools[%zu]: "
			    "longer than 253", i));
	for (i = 0; i < p->n_pools; i++) {
		if (strlen(p->pools[i]->name) > 253)
			return (ipc_fail(err, errsize, "publish.pools[%zu].name: "
			    "longer than 253", i));
		for (j = 0; j < p->pools[i]->n_slices; j++) {
			s = p->pools[i]->slices[j];
			if (s->n_devices > 128)
				return (ipc_fail(err, errsize, "publish.pools[%zu]"
				    ".slices[%zu]: more than 128 devices",
				    i, j));
			if (s->n_shared_counters > 8 ||
			    s->n_skip_node_operations > 3)
				return (ipc_fail(err, errsize, "publish.pools[%zu]"
				    ".slices[%zu]: a list over its limit",
				    i, j));
			for (k = 0; k < s->n_shared_counters; k++)
				if (s->shared_counters[k]->n_counters > 32)
					return (ipc_fail(err, errsize, "publish."
					    "pools[%zu].slices[%zu]."
					    "sharedCounters[%zu]: more than "
					    "32 counters", i, j, k));
			for (k = 0; k < s->n_devices; k++)
				if (check_device_sizes(s->devices[k], i, j, k,
				    err, errsize) != 0)
					return (KP_EPROTO);
		}
	}
	return (0);
}
