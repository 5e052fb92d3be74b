/*
 * registration.c - the registration test knobs of the Go helper:
 * SetGetInfoError (v0.34) and SetNotifyRegistrationStatusError (v0.36).
 * The driver process checks the message, the supervisor checks it again
 * (ipc/check.c), keeps it and hands it to the registrar, which answers
 * kubelet's GetInfo / NotifyRegistrationStatus with it.
 *
 * Runs in: the driver process.
 */
#include <string.h>

#include "api/api.h"
#include "base/utf8.h"

static int
set_error(struct kp_plugin *p, uint32_t which, const char *fn,
    const char *message)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__RegError	 e = KPIPC__REG_ERROR__INIT;

	if (p == NULL || p->magic != KP_PLUGIN_MAGIC)
		return (KP_EINVAL);
	if (message == NULL)
		message = "";
	if (strlen(message) > KP_IPC_MAX_REG_ERR || !utf8_valid(message))
		return (api_fail(p, KP_EINVAL, "%s: message: must be at most "
		    "%d bytes of UTF-8 (it becomes a gRPC status message)", fn,
		    KP_IPC_MAX_REG_ERR));
	e.which = which;
	e.message = (char *)message;
	m.m_case = KPIPC__MSG__M_REG_ERROR;
	m.reg_error = &e;
	return (api_request(p, &m, fn));
}

int
kp_set_get_info_error(struct kp_plugin *p, const char *message)
{
	return (set_error(p, KP_IPC_REG_ERR_GET_INFO, "kp_set_get_info_error",
	    message));
}

int
kp_set_notify_registration_status_error(struct kp_plugin *p,
    const char *message)
{
	return (set_error(p, KP_IPC_REG_ERR_NOTIFY,
	    "kp_set_notify_registration_status_error", message));
}
