/*
 * log.c - klog-style logging shared by every process role.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/utf8.h"
#include "ipc.pb-c.h"

static int		 log_verbosity;
static kp_log_fn	 log_fn;
static void		*log_user;
static const char	*log_rolename = "driver";
static int		 log_sink = -1;

/* A process whose lines must never block it (log_stderr_nonblocking):
 * how it writes stderr, the lines waiting in a bounded buffer for the
 * reader, and the lines that did not fit. */
#define ERR_BUF		(256 * 1024)
enum errmode { ERR_BLOCKING, ERR_OWN_FD, ERR_SOCKET, ERR_POLL, ERR_FILE };
static enum errmode	 err_mode = ERR_BLOCKING;
static int		 err_batch;	/* the owner flushes (log_stderr_batch) */
static pid_t		 err_pid;	/* the process that chose it */
static int		 err_fd = -1;	/* ERR_OWN_FD */
static char		 err_buf[ERR_BUF];
static size_t		 err_off, err_len;	/* waiting: [off, len) */
static unsigned long long err_lost;	/* not yet reported */
static unsigned long long err_lost_total;

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

/*
 * Lines on stderr that can never block this process (the supervisor: a
 * driver whose stderr pipe is read slowly must not stall the one thread
 * that serves every child). fd 2 is shared with the driver process, so
 * O_NONBLOCK on it would change the driver's stderr too: a pipe or a
 * terminal is opened again through /proc/self/fd/2, a description of our
 * own; a socket (journald's stream) is written with MSG_DONTWAIT; where
 * /proc cannot reopen it, poll() says whether a chunk fits first. A
 * regular file is written on fd 2 itself (it does not block, and a
 * description of our own would write over the driver's lines). Lines
 * the reader has no room for wait in a buffer of ERR_BUF bytes (a burst
 * while the reader is merely slow is not lost), written when the fd
 * takes them (log_stderr_flush(), the poll loop's POLLOUT); what does not
 * fit there is dropped and counted.
 */
void
log_stderr_nonblocking(void)
{
	struct stat	 st;
	int		 fd;

	err_pid = getpid();
	if (fstat(STDERR_FILENO, &st) == -1)
		return;
	if (S_ISREG(st.st_mode)) {
		err_mode = ERR_FILE;	/* fd 2 itself: see above */
		return;
	}
	if (S_ISSOCK(st.st_mode)) {
		err_mode = ERR_SOCKET;
		return;
	}
	if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) &&
	    (fd = open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC)) != -1) {
		err_fd = fd;
		err_mode = ERR_OWN_FD;
		return;
	}
	err_mode = ERR_POLL;
}

/*
 * From now on (after log_stderr_nonblocking) a line only joins what
 * waits, and the caller's loop writes them all with log_stderr_flush()
 * once per pass: one write for many lines (issue 27). A full buffer is
 * written out first.
 */
void
log_stderr_batch(void)
{
	err_batch = err_mode != ERR_BLOCKING;
}

/* Lines of this process stderr could not take (log_stderr_nonblocking),
 * ever: for /metrics. */
unsigned long long
log_stderr_dropped(void)
{
	return (err_lost_total);
}

/* The fd to poll for POLLOUT while lines wait, or -1. */
int
log_stderr_pending(void)
{
	if (err_off == err_len || err_pid != getpid())
		return (-1);
	return (err_mode == ERR_OWN_FD ? err_fd : STDERR_FILENO);
}

/* One write, never blocking: the bytes written, 0 when there is no room,
 * -1 when the reader is gone or the fd failed. */
static ssize_t
write_nb(const char *p, size_t n)
{
	struct pollfd	 pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
	ssize_t		 w;

	if (err_mode == ERR_POLL) {
		/* POLLOUT on a pipe: PIPE_BUF bytes fit without blocking. */
		if (poll(&pfd, 1, 0) != 1)
			return (0);
		if (!(pfd.revents & POLLOUT))
			return (pfd.revents & (POLLERR | POLLHUP) ? -1 : 0);
	}
	if (err_mode == ERR_SOCKET)
		w = send(STDERR_FILENO, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		w = write(err_mode == ERR_OWN_FD ? err_fd : STDERR_FILENO, p,
		    n);
	if (w == -1 && (errno == EAGAIN || errno == EINTR))
		return (0);
	return (w);
}

/*
 * Write what waits, as far as the fd takes it, in chunks of whole lines
 * of at most PIPE_BUF bytes (a pipe takes such a write whole or not at
 * all: never half a line among the driver's). A reader that is gone
 * loses what waits (counted), or the poll loop would spin on POLLERR.
 */
void
log_stderr_flush(void)
{
	size_t	 n, i;
	ssize_t	 w;

	while (err_off < err_len) {
		n = err_len - err_off;
		if (n > PIPE_BUF) {
			n = PIPE_BUF;
			while (n > 1 && err_buf[err_off + n - 1] != '\n')
				n--;
		}
		if ((w = write_nb(err_buf + err_off, n)) == 0)
			return;
		if (w < 0) {
			for (i = err_off; i < err_len; i++)
				if (err_buf[i] == '\n') {
					err_lost++;
					err_lost_total++;
				}
			err_off = err_len = 0;
			return;
		}
		err_off += (size_t)w;
	}
	err_off = err_len = 0;
}

/* Whether n more bytes fit what waits (moved to the front if need be). */
static int
err_fits(size_t n)
{
	if (err_len + n > ERR_BUF && err_off > 0) {
		memmove(err_buf, err_buf + err_off, err_len - err_off);
		err_len -= err_off;
		err_off = 0;
	}
	return (err_len + n <= ERR_BUF);
}

/* Append n bytes to what waits: 1, or 0 when there is no room. */
static int
err_append(const char *p, size_t n)
{
	if (!err_fits(n))
		return (0);
	memcpy(err_buf + err_len, p, n);
	err_len += n;
	return (1);
}

/*
 * Wait at most ms for what waits to go out (the supervisor's last lines,
 * before it exits).
 */
void
log_stderr_drain(int ms)
{
	struct pollfd	 p;
	struct timespec	 end;

	ts_deadline(&end, CLOCK_MONOTONIC, ms);
	while ((p.fd = log_stderr_pending()) != -1 &&
	    ts_ms_until(&end) > 0) {
		p.events = POLLOUT;
		(void)poll(&p, 1, (int)ts_ms_until(&end));
		log_stderr_flush();
	}
}

/* klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg; here the
 * emitting process's pid and its role stand for thread id and file.
 * Returns the length, '\n' included, or -1. */
static int
klog_line(char *line, size_t size, const char *role, int pid,
    enum kp_log_level level, const char *text)
{
	static const char	 letters[] = "EWI";
	struct timeval		 tv;
	struct tm		 tm;
	int			 n;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, size,
	    "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s] %s\n",
	    letters[level <= KP_LOG_INFO ? level : KP_LOG_INFO],
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (long)tv.tv_usec, pid, role, text);
	if (n < 0)
		return (-1);
	if ((size_t)n >= size) {
		n = (int)size - 1;
		line[n - 1] = '\n';
	}
	return (n);
}

/*
 * Queue line (n bytes, '\n' last) behind what waits and write what the
 * fd takes; a line with no room is counted, and the count goes out first,
 * as a line of its own, once there is room. A line is cut to PIPE_BUF
 * bytes at a character's start (log_stderr_flush writes whole lines).
 */
static void
log_stderr_try(char *line, size_t n)
{
	char	 lost[256], text[128];
	int	 k;

	if (n > PIPE_BUF) {
		n = PIPE_BUF;
		while (n > 1 && ((unsigned char)line[n - 1] & 0xc0) == 0x80)
			n--;
		line[n - 1] = '\n';
	}
	if (!err_batch || err_len + n > ERR_BUF)
		log_stderr_flush();
	if (err_lost > 0) {
		snprintf(text, sizeof(text), "%llu log lines dropped: stderr "
		    "was full (not read fast enough)", err_lost);
		/* With the line, or not yet: a count that fits alone
		 * would say "1 dropped" for every line while full. */
		if ((k = klog_line(lost, sizeof(lost), log_rolename,
		    (int)getpid(), KP_LOG_WARNING, text)) > 0 &&
		    err_fits((size_t)k + n) && err_append(lost, (size_t)k))
			err_lost = 0;
	}
	if (err_lost > 0 || !err_append(line, n)) {
		err_lost++;
		err_lost_total++;
	}
	if (!err_batch)
		log_stderr_flush();
}

static void
log_stderr(const char *role, int pid, enum kp_log_level level,
    const char *text)
{
	char	 line[KP_LOG_MAX + 128];
	int	 n;

	if ((n = klog_line(line, sizeof(line), role, pid, level, text)) < 0)
		return;
	if (err_mode != ERR_BLOCKING && err_pid == getpid()) {
		log_stderr_try(line, (size_t)n);
		return;
	}
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

