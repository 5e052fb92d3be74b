/*
 * logrelay.c - a child's log datagrams and stderr become log lines of
 * that child's, sanitised and charged to its log bucket (charge.c).
 *
 * Batched (issue 27: a hook's line cost about 60 us while the broker
 * woke, read and wrote once per line): after a read that found
 * something, the child's two log fds rest for RELAY_REST_MS before they
 * are polled again, so a child that logs per claim wakes the broker at
 * most 1000 / RELAY_REST_MS times a second, and each wake-up reads what
 * came meanwhile; the lines it lets through go out in one write per pass
 * (log_stderr_batch(), the loop's log_stderr_flush()). A child that logs
 * now and then is read at once, as before. What waits meanwhile sits in
 * the child's pipe or socket buffer (64 KiB, about 200 datagrams): one
 * that writes faster than that in RELAY_REST_MS waits for its own
 * writes, never the broker. Nothing here ever blocks: every fd is read
 * with MSG_DONTWAIT or is non-blocking, and a pass reads a bounded
 * amount.
 *
 * Runs in: the broker.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define RELAY_REST_MS		2	/* a child's log fds rest after a read */
#define RELAY_DGRAMS		256	/* log datagrams per pass: no starvation,
					 * and about a full socket buffer */
#define RELAY_READS		4	/* 4 KiB stderr reads per pass */
#define RELAY_BYTES		(16 * 1024)	/* text relayed from one
					 * child's datagrams per pass */
/*
 * A pass's lines go out at its end (log_stderr_batch), into a pipe (64
 * KiB) and a 256 KiB buffer behind it: a pass of one child must stay far
 * below that (16 KiB, 8 MB a second), or a burst within its budget
 * (1000 lines of 4 KiB) drops every other process's lines meanwhile,
 * from a reader that is not slow at all.
 */

/* Something was read: the fds rest before the next look. */
static void
rest(struct child *c)
{
	ts_deadline(&c->relay_at, CLOCK_MONOTONIC, RELAY_REST_MS);
}

/*
 * Up to budget datagrams and RELAY_BYTES of text relayed (SIZE_MAX:
 * until none is left, written out every RELAY_BYTES), each one Log
 * frame. hup: the poll reported the peer gone or done writing
 * (POLLRDHUP), so a read of nothing means the end, not an empty
 * datagram: else a child's shutdown(SHUT_WR) would be read as 256 empty
 * datagrams at every rest's end, for ever. Returns the datagrams read.
 */
static size_t
drain_log(struct sup *sup, struct child *c, int hup, size_t budget)
{
	uint8_t		 buf[KP_LOG_MAX + 64];
	char		 err[KP_ERROR_SIZE];
	Kpipc__Msg	*m;
	ssize_t		 n;
	size_t		 got = 0, out = 0;

	while (c->logfd != -1 && got < budget) {
		if (out >= RELAY_BYTES) {
			if (budget != SIZE_MAX)
				break;
			/* The last read of a dead child's: what stderr
			 * takes now, then the next pass's bytes. */
			log_stderr_flush();
			out = 0;
		}
		n = recv(c->logfd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if ((n == 0 && hup) || (n == -1 && errno != EAGAIN &&
		    errno != EINTR)) {
			/* The child closed its end (SOCK_SEQPACKET tells,
			 * with POLLHUP): stop polling it, or the loop would
			 * spin. */
			close(c->logfd);
			c->logfd = -1;
			break;
		}
		if (n < 0)
			break;
		got++;
		if (n == 0)
			continue;	/* an empty datagram: nothing */
		if ((size_t)n > sizeof(buf) || (m = ipc_unpack(buf, (size_t)n,
		    err, sizeof(err))) == NULL) {
			sup_child_violation(sup, c, "malformed log datagram");
			break;
		}
		if (m->m_case != KPIPC__MSG__M_LOG ||
		    ipc_check(m, err, sizeof(err)) != 0) {
			ipc_free(m);
			sup_child_violation(sup, c, "non-log frame on the "
			    "log channel");
			break;
		}
		if ((m->log->level != KP_LOG_INFO ||
		    log_enabled(m->log->verbosity)) && charge_log_allowed(c)) {
			log_emit(c->name, (int)c->pid, m->log->level,
			    m->log->verbosity, m->log->text);
			out += strlen(m->log->text);
		}
		ipc_free(m);
	}
	return (got);
}

void
logrelay_read_log(struct sup *sup, struct child *c, int hup)
{
	if (drain_log(sup, c, hup, RELAY_DGRAMS) > 0)
		rest(c);
}

/*
 * The child was reaped: what it sent before it died is read (the fd may
 * have been resting), then the channel closed. Bounded by what its
 * socket buffer held: nobody writes any more.
 */
void
logrelay_close_log(struct sup *sup, struct child *c)
{
	(void)drain_log(sup, c, 1, SIZE_MAX);
	if (c->logfd != -1)
		close(c->logfd);
	c->logfd = -1;
}

/* One line of a child's stderr, as a warning of that child's. */
static void
stderr_line(struct child *c, const char *line)
{
	char	 text[sizeof(c->errline) + 16];

	if (!charge_log_allowed(c))
		return;
	snprintf(text, sizeof(text), "stderr: %s", line);
	log_emit(c->name, (int)c->pid, KP_LOG_WARNING, 0, text);
}

/*
 * A child's stderr (monitor/spawn.c child_stdio) becomes log lines: a
 * line at a time, longer ones cut at sizeof(errline), each sanitised by
 * log_emit and rate-limited with the child's other lines. final: the
 * child was reaped; read what is left, flush the partial line, close the
 * pipe.
 */
void
sup_drain_stderr(struct sup *sup, struct child *c, int final)
{
	char	 buf[4096];
	ssize_t	 n;
	size_t	 i;
	int	 budget = RELAY_READS, got = 0;

	while (c->errfd != -1 && (final || budget-- > 0)) {
		n = read(c->errfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || final || errno != EAGAIN) {
				close(c->errfd);
				c->errfd = -1;
			}
			break;
		}
		got = 1;
		for (i = 0; i < (size_t)n; i++) {
			if (buf[i] != '\n')
				c->errline[c->errlen++] = buf[i];
			if (buf[i] == '\n' ||
			    c->errlen == sizeof(c->errline) - 1) {
				c->errline[c->errlen] = '\0';
				stderr_line(c, c->errline);
				c->errlen = 0;
			}
		}
	}
	if (final && c->errlen > 0) {
		c->errline[c->errlen] = '\0';
		stderr_line(c, c->errline);
		c->errlen = 0;
	}
	if (got && !final)
		rest(c);
}

/* Whether c's log fds rest now (not to be polled). */
int
logrelay_resting(const struct child *c)
{
	return (ts_ms_until(&c->relay_at) > 0);
}

/* Milliseconds until a resting child's log fds are looked at again; -1:
 * none rests. */
long long
logrelay_next_ms(const struct sup *sup)
{
	long long	 t = -1, d;
	int		 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		const struct child *c = &sup->children[i];

		if ((c->logfd == -1 && c->errfd == -1) ||
		    (d = ts_ms_until(&c->relay_at)) <= 0)
			continue;
		if (t < 0 || d < t)
			t = d;
	}
	return (t);
}
