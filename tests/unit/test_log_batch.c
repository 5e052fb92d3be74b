/*
 * test_log_batch.c - log_stderr_batch() (the broker's relay, issue 27):
 * lines only join what waits until the loop's log_stderr_flush(), which
 * writes them in one write. fd 2 is a SOCK_SEQPACKET socket here, so
 * each write is one record and the writes can be counted.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "test.h"

/*
 * A reader that stops reading: 200 lines of 4000 bytes (800 KB, the
 * buffer keeps 256 KiB) wait and the rest is dropped. Once it reads
 * again, the count comes once, with the total; not "1 log lines dropped"
 * for each line while full (a count fitting where the line did not).
 */
static void
full_once(int rd)
{
	char		 line[4001], buf[8192];
	unsigned long long before = log_stderr_dropped();
	int		 i, reports = 0, lines = 0;
	ssize_t		 n;

	memset(line, 'z', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (i = 0; i < 200; i++)
		log_emit("nodeserver", 7, KP_LOG_WARNING, 0, line);
	CHECK(log_stderr_dropped() > before);
	for (i = 0; i < 10000 && (log_stderr_pending() != -1 || i == 0);
	    i++) {
		log_stderr_flush();
		while ((n = recv(rd, buf, sizeof(buf) - 1,
		    MSG_DONTWAIT)) > 0) {
			buf[n] = '\0';
			reports += strstr(buf, "stderr was full") != NULL;
			lines += strstr(buf, "zzzz") != NULL;
		}
		if (i == 0)	/* then one more line: the count first */
			log_emit("nodeserver", 7, KP_LOG_WARNING, 0, "last");
	}
	CHECK_EQ(log_stderr_pending(), -1);
	CHECK_EQ(reports, 1);
	CHECK_EQ(lines + (int)(log_stderr_dropped() - before), 200);
}

int
main(void)
{
	char	 buf[8192];
	int	 sp[2], saved;
	ssize_t	 n;

	saved = dup(STDERR_FILENO);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) == 0);
	CHECK(dup2(sp[1], STDERR_FILENO) == STDERR_FILENO);
	log_init(0, NULL, NULL);
	log_procinit("broker");
	log_stderr_nonblocking();
	log_stderr_batch();
	log_emit("nodeserver", 7, KP_LOG_WARNING, 0, "stderr: one");
	log_emit("nodeserver", 7, KP_LOG_WARNING, 0, "stderr: two");
	log_emit("nodeserver", 7, KP_LOG_INFO, 0, "three");
	/* Nothing written yet: the lines wait for the loop's flush. */
	n = recv(sp[0], buf, sizeof(buf), MSG_DONTWAIT);
	CHECK(n == -1 && errno == EAGAIN);
	CHECK(log_stderr_pending() == STDERR_FILENO);
	log_stderr_flush();
	CHECK_EQ(log_stderr_pending(), -1);
	/* One record: one write for the three lines. */
	n = recv(sp[0], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "nodeserver] stderr: one\n") != NULL);
	CHECK(strstr(buf, "nodeserver] stderr: two\n") != NULL);
	CHECK(strstr(buf, "nodeserver] three\n") != NULL);
	CHECK(buf[0] == 'W');
	n = recv(sp[0], buf, sizeof(buf), MSG_DONTWAIT);
	CHECK(n == -1 && errno == EAGAIN);
	CHECK_EQ(log_stderr_dropped(), 0);
	full_once(sp[0]);
	(void)dup2(saved, STDERR_FILENO);
	return (test_done("test_log_batch"));
}
