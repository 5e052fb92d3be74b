/*
 * log.h - the one logger. klog-style lines on stderr by default, or the
 * driver's kp_log_fn. In a child, log_set_sink() sends every line as a Log
 * datagram to the supervisor, which emits it with the child's role.
 */
#ifndef KP_LOG_H
#define KP_LOG_H

#include <stdarg.h>

#include "kubeletplugin.h"

#define KP_LOG_MAX 4096		/* bytes of one log text, NUL included */

/* log.c */
void	log_init(int verbosity, kp_log_fn fn, void *user);
void	log_procinit(const char *role);
void	log_set_sink(int fd);
void	log_stderr_nonblocking(void);
void	log_stderr_batch(void);
int	log_stderr_pending(void);
void	log_stderr_flush(void);
void	log_stderr_drain(int);
unsigned long long log_stderr_dropped(void);
const char *log_role(void);
int	log_enabled(int verbosity);
void	log_sanitize(const char *, char *, size_t);
void	log_emit(const char *role, int pid, enum kp_log_level level,
	    int verbosity, const char *text);
void	log_warn(const char *fmt, ...) KP_PRINTF(1, 2);
void	log_warnx(const char *fmt, ...) KP_PRINTF(1, 2);
void	log_errorx(const char *fmt, ...) KP_PRINTF(1, 2);
void	log_info(int verbosity, const char *fmt, ...) KP_PRINTF(2, 3);
void	log_vmsg(enum kp_log_level level, int verbosity, const char *fmt,
	    va_list ap) KP_PRINTF(3, 0);

#endif /* KP_LOG_H */
