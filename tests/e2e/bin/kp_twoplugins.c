/*
 * kp_twoplugins - one driver process, two plugins: A, then B. B's prepare
 * hook (code in B's sandboxed nodeserver) plays a compromised driver: it
 * looks for writable shared anonymous pages it inherited (A's fatal-reason
 * page would be one) and writes a forged reason into each. Then the
 * driver kills A's supervisor and prints what kp_plugin_wait(A) reports.
 *
 *   kp_twoplugins ROOTDIR
 *
 * ROOTDIR holds plugins/ and plugins_registry/. Prints "ready" once both
 * run, waits for ROOTDIR/go (the test prepares a claim of B's first),
 * then "wait <KP_NAME> <reason>". B's hook logs "evil: wrote N page(s)".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubeletplugin.h"

static int
noop_prepare(void *u, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *r, char *e, size_t es)
{
	(void)u, (void)c, (void)n, (void)r, (void)e, (void)es;
	return (0);
}

static int
evil_prepare(void *u, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *r, char *e, size_t es)
{
	FILE		*f = fopen("/proc/self/maps", "r");
	char		 line[512], perms[8];
	unsigned long	 a, b;
	int		 hits = 0;

	(void)u, (void)c, (void)n, (void)r, (void)e, (void)es;
	if (f == NULL)
		return (0);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3)
			continue;
		if (strstr(line, "/dev/zero (deleted)") != NULL &&
		    perms[1] == 'w' && perms[3] == 's') {
			snprintf((char *)a, 64, "FORGED by plugin B");
			hits++;
		}
	}
	fclose(f);
	fprintf(stderr, "evil: wrote %d page(s)\n", hits);
	return (0);
}

static int
noop_unprepare(void *u, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *r, char *e, size_t es)
{
	(void)u, (void)c, (void)n, (void)r, (void)e, (void)es;
	return (0);
}

static struct kp_plugin *
start(const char *root, const char *drv, const struct kp_hooks *h)
{
	struct kp_options	*o;
	struct kp_plugin	*p = NULL;
	char			 a[600], b[600], d[512];

	snprintf(d, sizeof(d), "%s/plugins/%s", root, drv);
	(void)mkdir(d, 0755);
	snprintf(a, sizeof(a), "%s/dra.sock", d);
	snprintf(b, sizeof(b), "%s/plugins_registry/%s-reg.sock", root, drv);
	if (kp_options_new(&o) != 0)
		return (NULL);
	if (kp_driver_name(o, drv) != 0 || kp_node_name(o, "node1") != 0 ||
	    kp_plugin_socket_path(o, a) != 0 ||
	    kp_registrar_socket_path(o, b) != 0 || kp_start(o, h, &p) != 0) {
		printf("error %s: %s\n", drv, kp_options_last_error(o));
		p = NULL;
	}
	kp_options_free(o);
	return (p);
}

int
main(int argc, char **argv)
{
	struct kp_hooks		 ha = { NULL, noop_prepare, noop_unprepare,
				    NULL };
	struct kp_hooks		 hb = { NULL, evil_prepare, noop_unprepare,
				    NULL };
	struct kp_plugin	*A, *B;
	char			 reason[KP_ERROR_SIZE] = "", go[600];
	char			 cmd[256];
	int			 r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2)
		return (2);
	if ((A = start(argv[1], "a.example.com", &ha)) == NULL ||
	    (B = start(argv[1], "b.example.com", &hb)) == NULL)
		return (1);
	printf("ready\n");
	snprintf(go, sizeof(go), "%s/go", argv[1]);
	while (access(go, F_OK) != 0)
		usleep(100000);
	/* A's monitor: our first child named kp-monitor. */
	snprintf(cmd, sizeof(cmd), "kill -9 $(pgrep -P %d -x kp-monitor "
	    "| head -1)", (int)getpid());
	if (system(cmd) != 0)
		printf("kill failed\n");
	r = kp_plugin_wait(A, 10000, reason, sizeof(reason));
	printf("wait %s %s\n", kp_err_name(r), reason);
	(void)kp_stop(A);
	(void)kp_stop(B);
	return (0);
}
