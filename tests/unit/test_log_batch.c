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
	(void)dup2(saved, STDERR_FILENO);
	return (test_done("test_log_batch"));
}
