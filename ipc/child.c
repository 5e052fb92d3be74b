/*
 * child.c - the one thing every role does the same way before it serves:
 * tell the supervisor that it could not start. Runs in the children.
 */
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
