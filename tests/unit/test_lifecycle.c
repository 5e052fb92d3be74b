/*
 * test_lifecycle.c - issue 14: the setters of the drain budget, the
 * hung-child timeout (issue 28) and the termination message path, the
 * termination message itself (only an existing file, one line, no symlink
 * followed), and the field rules and
 * state table of the Event frames (what a hostile nodeserver may ask).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "ipc/ipc.h"
#include "monitor/monitor.h"
#include "supervisor/supervisor.h"
#include "test.h"

static void
test_setters(void)
{
	struct kp_options	*o;
	char			 longp[300];

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(o->shutdown_grace_ms, 25000);
	CHECK_EQ(kp_shutdown_grace(o, 0), 0);
	CHECK_EQ(kp_shutdown_grace(o, 600000), 0);
	CHECK_EQ(kp_shutdown_grace(o, -1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_shutdown_grace");
	CHECK_EQ(kp_shutdown_grace(o, 600001), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "between 0 and 600000");
	CHECK_EQ(o->shutdown_grace_ms, 600000);
	CHECK_EQ(kp_termination_message_path(o, "relative/log"), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "must be an absolute path");
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	CHECK_EQ(kp_termination_message_path(o, longp), KP_ENAMETOOLONG);
	CHECK_EQ(kp_termination_message_path(o, "/tmp/x"), 0);
	CHECK_STREQ(o->termlog, "/tmp/x");
	CHECK_EQ(kp_termination_message_path(o, NULL), 0);
	CHECK_EQ(o->termlog_off, 1);
	CHECK_EQ(kp_shutdown_grace(NULL, 1), KP_EINVAL);
	/* The hung-child timeout: 0 (never) or 3 s..300 s, 10 s default. */
	CHECK_EQ(o->hung_ms, 10000);
	CHECK_EQ(kp_hung_child_timeout(o, 0), 0);
	CHECK_EQ(o->hung_ms, 0);
	CHECK_EQ(kp_hung_child_timeout(o, 3000), 0);
	CHECK_EQ(kp_hung_child_timeout(o, 300000), 0);
	CHECK_EQ(kp_hung_child_timeout(o, 2999), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_hung_child_timeout");
	CHECK_CONTAINS(kp_options_last_error(o), "0 (never) or between 3000 "
	    "and 300000");
	CHECK_EQ(kp_hung_child_timeout(o, 300001), KP_EINVAL);
	CHECK_EQ(kp_hung_child_timeout(o, -1), KP_EINVAL);
	CHECK_EQ(o->hung_ms, 300000);
	CHECK_EQ(kp_hung_child_timeout(NULL, 5000), KP_EINVAL);
	kp_options_free(o);
}

static void
read_file(const char *path, char *buf, size_t size)
{
	FILE	*f = fopen(path, "r");
	size_t	 n = 0;

	if (f != NULL) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static void
test_termlog(void)
{
	struct kp_options	*o;
	char			 dir[] = "/tmp/kp-termlog-XXXXXX", path[128];
	char			 link[128], buf[256];
	struct stat		 st;
	int			 fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK_EQ(kp_options_new(&o), 0);
	/* Not there: not created. */
	CHECK_EQ(kp_termination_message_path(o, path), 0);
	termlog_write(o, "first reason");
	CHECK(stat(path, &st) == -1);
	/* There: truncated, one line. */
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(write(fd, "old text that is longer\n", 24) == 24);
	close(fd);
	termlog_write(o, "socket gone");
	read_file(path, buf, sizeof(buf));
	CHECK_STREQ(buf, "socket gone\n");
	/* A symbolic link is not followed. */
	CHECK_EQ(symlink(path, link), 0);
	CHECK_EQ(kp_termination_message_path(o, link), 0);
	termlog_write(o, "through the link");
	read_file(path, buf, sizeof(buf));
	CHECK_STREQ(buf, "socket gone\n");
	/* Disabled: nothing written. */
	CHECK_EQ(kp_termination_message_path(o, NULL), 0);
	termlog_write(o, "off");
	read_file(path, buf, sizeof(buf));
	CHECK_STREQ(buf, "socket gone\n");
	unlink(link);
	unlink(path);
	rmdir(dir);
	kp_options_free(o);
}

static int
check_ask(int kind, const char *sys, char *err, size_t errsize)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__EventAsk	 a = KPIPC__EVENT_ASK__INIT;

	a.kind = kind;
	a.syscall = (char *)sys;
	m.m_case = KPIPC__MSG__M_EVENT_ASK;
	m.event_ask = &a;
	return (ipc_check(&m, err, errsize));
}

static int
check_post(int kind, const char *note, char *err, size_t errsize)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__EventPost	 e = KPIPC__EVENT_POST__INIT;

	e.kind = kind;
	e.note = (char *)note;
	m.m_case = KPIPC__MSG__M_EVENT_POST;
	m.event_post = &e;
	return (ipc_check(&m, err, errsize));
}

static void
test_event_frames(void)
{
	char	 err[KP_ERROR_SIZE], big[1100];
	int	 denied = KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED;

	CHECK_EQ(check_ask(denied, "socket", err, sizeof(err)), 0);
	CHECK_EQ(check_ask(denied, "clock_nanosleep", err, sizeof(err)), 0);
	/* The journal's report carries nothing of the nodeserver's. */
	CHECK_EQ(check_ask(KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT, "",
	    err, sizeof(err)), 0);
	CHECK_EQ(check_ask(KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT, "socket",
	    err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "must be empty for EVENT_JOURNAL_CORRUPT");
	CHECK_EQ(check_ask(KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "",
	    err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "only EVENT_SYSCALL_DENIED and EVENT_JOURNAL_CORRUPT");
	CHECK_EQ(check_ask(denied, "", err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(check_ask(denied, "Socket", err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "byte 0 is not one of [a-z0-9_]");
	CHECK_EQ(check_ask(denied, "a b", err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(check_ask(denied, "abcdefghijabcdefghijabcdefghijabc", err,
	    sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "33 bytes, must be 1 to 32");
	/* The supervisor's note to the publisher. */
	CHECK_EQ(check_post(KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "ok", err,
	    sizeof(err)), 0);
	CHECK_EQ(check_post(0, "x", err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(check_post(99, "x", err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(check_post(1, "line\nbreak", err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(check_post(1, "\xff", err, sizeof(err)), KP_EPROTO);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ(check_post(1, big, err, sizeof(err)), KP_EPROTO);
	/* Who may send them: the nodeserver asks; nobody sends a post to
	 * the supervisor. */
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_EVENT_ASK, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_STARTING,
	    KPIPC__MSG__M_EVENT_ASK, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_REGISTRAR, CS_READY,
	    KPIPC__MSG__M_EVENT_ASK, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_PUBLISHER, CS_READY,
	    KPIPC__MSG__M_EVENT_POST, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_EVENT_POST, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_gate(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_EVENT_ASK, 129, err, sizeof(err)), KP_EPROTO);
}

int
main(void)
{
	test_setters();
	test_termlog();
	test_event_frames();
	return (test_done("test_lifecycle"));
}
