/*
 * child.c - the one thing every role does the same way before it serves:
 * tell the supervisor that it could not start (runs in the children); and
 * which roles a plugin runs (the monitor and the broker both ask).
 */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"
#include "ipc/child.h"

/* Report a failed start to the supervisor (it tells kp_start()). */
int
child_start_fail(struct child_env *env, int code, const char *fmt, ...)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__StartFailed	 sf = KPIPC__START_FAILED__INIT;
	Kpipc__Result		 res = KPIPC__RESULT__INIT;
	char			 msg[KP_ERROR_SIZE + 32], text[KP_ERROR_SIZE];
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s", log_role(), text);
	res.code = code;
	res.message = msg;
	sf.result = &res;
	m.m_case = KPIPC__MSG__M_START_FAILED;
	m.start_failed = &sf;
	(void)ipc_send(&env->ctl, &m);
	return (KP_EXIT_START);
}

/*
 * 1 if the supervisor is gone: the peer of the control channel (only the
 * supervisor holds it) hung up. Called right after PR_SET_PDEATHSIG, to
 * close the window in which the supervisor died before the signal was
 * armed. getppid() == 1 cannot tell in a pid namespace: there the parent
 * is outside and getppid() is 0 whether it lives or not.
 */
int
child_supervisor_gone(int ctl)
{
	struct pollfd	 p = { .fd = ctl, .events = POLLRDHUP };

	if (poll(&p, 1, 0) == -1)
		return (0);	/* unknown: the signal still comes */
	return ((p.revents & (POLLHUP | POLLRDHUP | POLLNVAL)) != 0);
}

/*
 * Whether role runs at all: the publisher only with Kubernetes access;
 * the nodeserver and the registrar unless switched off (kp_dra_service,
 * kp_registration_service); the observer only with an HTTP endpoint.
 */
int
child_role_configured(const struct kp_options *cfg, enum kp_role role)
{
	switch (role) {
	case ROLE_NODESERVER:
		return (!cfg->dra_off);
	case ROLE_REGISTRAR:
		return (!cfg->registration_off);
	case ROLE_PUBLISHER:
		return (cfg->kube_mode != KP_KUBE_NONE);
	case ROLE_OBSERVER:
		return (cfg->http_len != 0);
	default:
		return (0);
	}
}
