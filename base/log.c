/*
 * log.c - klog-style logging shared by every process role.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/utf8.h"
#include "ipc.pb-c.h"

static int		 log_verbosity;
static kp_log_fn	 log_fn;
static void		*log_user;
static const char	*log_rolename = "driver";
static int		 log_sink = -1;

void
log_init(int verbosity, kp_log_fn fn, void *user)
{
	log_verbosity = verbosity;
	log_fn = fn;
	log_user = user;
}

void
log_procinit(const char *role)
{
	log_rolename = role;
}

/* A child's lines go to the supervisor as datagrams on fd. */
void
log_set_sink(int fd)
{
	log_sink = fd;
}

const char *
log_role(void)
{
	return (log_rolename);
}

int
log_enabled(int verbosity)
{
	return (verbosity <= log_verbosity);
}

/* klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg; here the
 * emitting process's pid and its role stand for thread id and file. */
static void
log_stderr(const char *role, int pid, enum kp_log_level level,
    const char *text)
{
	static const char	 letters[] = "EWI";
	char			 line[KP_LOG_MAX + 128];
	struct timeval		 tv;
	struct tm		 tm;
	int			 n;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
	    "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s] %s\n",
	    letters[level <= KP_LOG_INFO ? level : KP_LOG_INFO],
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (long)tv.tv_usec, pid, role, text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* One write per line keeps lines of several processes whole. */
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

/* Characters that end or reorder lines on a terminal or in a log
 * collector: C0/C1 controls, DEL, U+2028/9, bidi overrides. */
static int
is_control(const unsigned char *s, size_t n)
{
	if (n == 1)
		return (s[0] < 0x20 || s[0] == 0x7f);
	if (n == 2)
		return (s[0] == 0xc2 && s[1] <= 0x9f);
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80)
		return (s[2] == 0xa8 || s[2] == 0xa9 ||
		    (s[2] >= 0xaa && s[2] <= 0xae));
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x81)
		return (s[2] >= 0xa6 && s[2] <= 0xa9);
	return (0);
}

/*
 * Make text safe to print as one log line: text may come from kubelet,
 * the API server or a compromised child. Controls and invalid UTF-8
 * become '?'; writes at most size bytes to out, NUL included.
 */
void
log_sanitize(const char *text, char *out, size_t size)
{
	const unsigned char	*s = (const unsigned char *)text;
	size_t			 o = 0, n, left = strlen(text);

	while (left > 0 && o + 1 < size) {
		n = utf8_char((const char *)s, left);
		if (n == 0 || is_control(s, n)) {
			out[o++] = '?';
			n = n ? n : 1;
		} else if (o + n >= size)
			break;
		else {
			memcpy(out + o, s, n);
			o += n;
		}
		s += n;
		left -= n;
	}
	out[o] = '\0';
}

/* Emit a line that is known to be for this process's sink. */
void
log_emit(const char *role, int pid, enum kp_log_level level, int verbosity,
    const char *text)
{
	char	 safe[KP_LOG_MAX];

	log_sanitize(text, safe, sizeof(safe));
	if (log_fn != NULL)
		log_fn(log_user, level, verbosity, role, safe);
	else
		log_stderr(role, pid, level, safe);
}

static void
log_send(enum kp_log_level level, int verbosity, const char *text)
{
	Kpipc__Log	 rec = KPIPC__LOG__INIT;
	Kpipc__Msg	 msg = KPIPC__MSG__INIT;
	uint8_t		 buf[KP_LOG_MAX + 64];
	size_t		 len;

	rec.level = level;
	rec.verbosity = verbosity;
	rec.text = (char *)text;
	msg.m_case = KPIPC__MSG__M_LOG;
	msg.log = &rec;
	len = kpipc__msg__get_packed_size(&msg);
	if (len > sizeof(buf))
		return;
	kpipc__msg__pack(&msg, buf);
	/* A datagram is atomic: no lock needed among serving threads. */
	(void)send(log_sink, buf, len, MSG_NOSIGNAL);
}

void
log_vmsg(enum kp_log_level level, int verbosity, const char *fmt, va_list ap)
{
	char	 text[KP_LOG_MAX];
	int	 saved = errno;

	if (level == KP_LOG_INFO && !log_enabled(verbosity)) {
		errno = saved;
		return;
	}
	vsnprintf(text, sizeof(text), fmt, ap);
	if (log_sink != -1)
		log_send(level, verbosity, text);
	else
		log_emit(log_rolename, (int)getpid(), level, verbosity, text);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	char	 text[KP_LOG_MAX];
	int	 saved = errno;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_warnx("%s: %s", text, strerror(saved));
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(KP_LOG_WARNING, 0, fmt, ap);
	va_end(ap);
}

void
log_errorx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(KP_LOG_ERROR, 0, fmt, ap);
	va_end(ap);
}

void
log_info(int verbosity, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(KP_LOG_INFO, verbosity, fmt, ap);
	va_end(ap);
}

/* The public entry point (include/kubeletplugin.h): one line through
 * whatever sink this process has. */
void
kp_log(enum kp_log_level level, int verbosity, const char *fmt, ...)
{
	va_list	 ap;

	if (level != KP_LOG_ERROR && level != KP_LOG_WARNING)
		level = KP_LOG_INFO;
	if (level != KP_LOG_INFO)
		verbosity = 0;
	va_start(ap, fmt);
	log_vmsg(level, verbosity, fmt, ap);
	va_end(ap);
}

#define KP_STR_(x)	#x
#define KP_STR(x)	KP_STR_(x)

const char *
kp_version(void)
{
	return (KP_STR(KP_VERSION_MAJOR) "." KP_STR(KP_VERSION_MINOR) "."
	    KP_STR(KP_VERSION_PATCH));
}

