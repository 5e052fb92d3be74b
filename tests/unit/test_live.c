/*
 * test_live.c - the socket paths this process's plugins serve (api/live.c):
 * a path claimed twice is refused with the option and the path, nothing of
 * a refused claim stays recorded, a release frees the owner's paths only,
 * and a forked child does not inherit its parent's plugins.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "test.h"

static const char *const what[LIVE_MAX] = { "plugin", "registrar" };

static int
claim(const void *owner, const char *a, const char *b, char *err,
    size_t size)
{
	const char	*paths[LIVE_MAX] = { a, b };

	err[0] = '\0';
	return (live_claim(owner, what, paths, LIVE_MAX, err, size));
}

int
main(void)
{
	struct kp_plugin	*A = (struct kp_plugin *)0x1000;
	struct kp_plugin	*B = (struct kp_plugin *)0x2000;
	char			 err[KP_ERROR_SIZE];
	pid_t			 pid;
	int			 st;

	CHECK_EQ(claim(A, "/k/a/dra.sock", "/k/reg/a.sock", err,
	    sizeof(err)), 0);
	/* The DRA socket of A again, with a new registration socket. */
	CHECK_EQ(claim(B, "/k/a/dra.sock", "/k/reg/b.sock", err,
	    sizeof(err)), KP_EBUSY);
	CHECK_STREQ(err, "plugin: already served by a plugin started in this "
	    "process (kp_stop() it first): /k/a/dra.sock");
	/* A's registration socket, with B's DRA socket: the DRA one is
	 * recorded first and dropped again when the second is refused. */
	CHECK_EQ(claim(B, "/k/b/dra.sock", "/k/reg/a.sock", err,
	    sizeof(err)), KP_EBUSY);
	CHECK_CONTAINS(err, "registrar: already served");
	CHECK_CONTAINS(err, "/k/reg/a.sock");
	CHECK_EQ(claim(B, "/k/b/dra.sock", "/k/reg/b.sock", err,
	    sizeof(err)), 0);
	/* NULL: a service that is off. */
	CHECK_EQ(claim(A, NULL, NULL, err, sizeof(err)), 0);

	/* A child forked now runs none of these plugins. */
	if ((pid = fork()) == 0)
		_exit(claim(B, "/k/a/dra.sock", "/k/reg/a.sock", err,
		    sizeof(err)) == 0 ? 0 : 1);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0);

	live_release(A);
	CHECK_EQ(claim(A, "/k/b/dra.sock", NULL, err, sizeof(err)), KP_EBUSY);
	CHECK_EQ(claim(A, "/k/a/dra.sock", "/k/reg/a.sock", err,
	    sizeof(err)), 0);
	live_release(A);
	live_release(B);
	live_release(B);	/* nothing left: no-op */
	CHECK_EQ(claim(B, "/k/b/dra.sock", "/k/reg/a.sock", err,
	    sizeof(err)), 0);
	live_release(B);
	return (test_done("test_live"));
}
