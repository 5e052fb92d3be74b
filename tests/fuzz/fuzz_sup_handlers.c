/*
 * fuzz_sup_handlers.c - libFuzzer target for what the supervisor does
 * with a child's bytes: the path of its poll loop (sup_dispatch_child:
 * ipc_read, the gate, ipc_unpack, ipc_check, the state table, the
 * handlers of supervisor/: files.c, metadata.c, relay.c, health.c,
 * events.c, status.c, cdi_queue.c ...) on a real struct sup with CDI,
 * metadata and state directories of its own (under /dev/shm). The input
 * is
 *   byte 0: the role that sends (nodeserver, registrar, publisher,
 *           observer);
 *   byte 1: its state (starting, ready, stopping: killed, not reaped);
 *   byte 2: the supervisor's phase (starting each role, running,
 *           stopping);
 *   byte 3: bits 0-3: the other roles up and ready; bit 4: a desired
 *           state (Publish, HealthReport, StateSet) is held for a
 *           restarted child; bit 5: the child closes its end after
 *           writing (it exits);
 *   the rest: what the child writes on its control channel, through a
 *           real socketpair, read by the loop's ipc_read() as it arrives;
 *           after each read the loop's timers run (CDI queue, claim
 *           look-ups, status, drain) as sup_timers() runs them.
 * No process is forked or signalled: kill() and fork() are wrapped
 * (-Wl,--wrap, tests/fuzz/CMakeLists.txt). The children's pids are above
 * any pid_max; a kill() of any other pid (0, -1, a process group, a real
 * process) traps; fork() returns another such pid without forking.
 * Invariants (trap on a breach):
 *  - every frame the supervisor queues for a child, the driver or the
 *    events channel unpacks and passes ipc_check(), as the receiver's
 *    ipc_next() requires;
 *  - the CDI directory holds only spec files of the driver's names whose
 *    content passes cdi_check() (or metadata specs that mount only files
 *    of the metadata directory), no temporary file, at most 1024 files;
 *  - every log line is NUL-terminated; no leak, no memory error, no UB
 *    (ASan and UBSan, in protobuf-c and jansson too: make fuzz-build).
 * Run: ./tests/fuzz/fuzz_sup_handlers -max_total_time=60 corpus/
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "base/log.h"
#include "base/names.h"
#include "supervisor/supervisor.h"

#define DRV		"pci.example.com"
#define FAKE_PID	0x7fff0000	/* above any pid_max (2^22) */
#define MAX_ROUNDS	64		/* reads of one input */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	__wrap_kill(pid_t, int);
pid_t	__wrap_fork(void);

static struct kp_options	*o;
static char			 top[64];
static char			 cdi[64], meta[128];
static pid_t			 next_pid = FAKE_PID + 16;

/* Signals only ever reach our pretend children. */
int
__wrap_kill(pid_t pid, int sig)
{
	if (pid < FAKE_PID)
		__builtin_trap();
	(void)sig;
	return (0);
}

/* A restart "forks" a child that is never there (its channel's other
 * end is closed by child_spawn). */
pid_t
__wrap_fork(void)
{
	if (next_pid == 0x7ffffff0)
		next_pid = FAKE_PID + 16;
	return (next_pid++);
}

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	if (memchr(msg, '\0', KP_LOG_MAX) == NULL)
		__builtin_trap();
}

static void
mkdirs(const char *sub)
{
	char	 p[256];

	snprintf(p, sizeof(p), "%s/%s", top, sub);
	if (mkdir(p, 0755) == -1 && errno != EEXIST)
		abort();
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (f->level > 0)
		(void)remove(path);
	return (0);
}

static void
rm_top(void)
{
	(void)nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	(void)rmdir(top);
}

static void
setup(void)
{
	static const char *const vers[] = { KP_METADATA_V1BETA1 };
	char		 p[256];

	/* tmpfs where there is one, as /run/cdi is: the supervisor's
	 * fsync()s cost nothing there. */
	snprintf(top, sizeof(top), "%s/kp-fuzz-sup-XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(top) == NULL)
		abort();
	atexit(rm_top);
	mkdirs("cdi");
	mkdirs("state");
	mkdirs("plugins");
	mkdirs("plugins/" DRV);
	mkdirs("registry");
	snprintf(cdi, sizeof(cdi), "%s/cdi", top);
	if (kp_options_new(&o) != 0 || kp_driver_name(o, DRV) != 0 ||
	    kp_node_name(o, "node-1") != 0 ||
	    kp_cdi_directory(o, cdi) != 0 ||
	    kp_cdi_allow_device_prefix(o, "/dev/vfio/") != 0 ||
	    kp_cdi_allow_mount_prefix(o, "/opt/drv") != 0 ||
	    kp_cdi_allow_hook(o, "/usr/libexec/drv-hook") != 0 ||
	    kp_device_metadata(o, 1, vers, 1) != 0 ||
	    kp_termination_message_path(o, NULL) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/state", top);
	if (kp_sandbox_state_dir(o, p) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/plugins/%s/dra.sock", top, DRV);
	if (kp_plugin_socket_path(o, p) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/registry/%s-reg.sock", top, DRV);
	if (kp_registrar_socket_path(o, p) != 0)
		abort();
	if (opt_dirs_resolve(o) != 0 || opt_check(o) != 0 ||
	    opt_metadata_resolve(o) != 0) {
		fprintf(stderr, "%s\n", kp_options_last_error(o));
		abort();
	}
	o->policy.ns_uid = geteuid();
	o->policy.ns_gid = getegid();
	snprintf(meta, sizeof(meta), "%s", o->metadata_dir);
	log_init(0, silent, NULL);
}

/* What earlier inputs wrote goes: each input starts from empty
 * directories. */
static void
clean(void)
{
	(void)nftw(cdi, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	(void)nftw(meta, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A heap copy of m, as the driver's frames are kept (ipc_free frees it). */
static Kpipc__Msg *
kept(const Kpipc__Msg *m)
{
	uint8_t		 b[256];
	size_t		 n = kpipc__msg__pack(m, b);
	Kpipc__Msg	*k;
	char		 err[KP_ERROR_SIZE];

	if ((k = kpipc__msg__unpack(NULL, n, b)) == NULL ||
	    ipc_check(k, err, sizeof(err)) != 0)
		abort();
	return (k);
}

static void
desired(struct sup *sup)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Publish		 pub = KPIPC__PUBLISH__INIT;
	Kpipc__HealthReport	 hr = KPIPC__HEALTH_REPORT__INIT;
	Kpipc__StateSet		 ss = KPIPC__STATE_SET__INIT;

	m.m_case = KPIPC__MSG__M_PUBLISH;
	m.publish = &pub;
	sup->desired = kept(&m);
	m.m_case = KPIPC__MSG__M_HEALTH_REPORT;
	m.health_report = &hr;
	sup->health = kept(&m);
	ss.generation = 1;
	ss.data.data = (uint8_t *)"state";
	ss.data.len = 5;
	m.m_case = KPIPC__MSG__M_STATE_SET;
	m.state_set = &ss;
	sup->state = kept(&m);
	sup->state_pending = 1;
}

/* The channel of c: the supervisor's end; *peer: the child's, or -1. */
static void
channel(struct child *c, int *peer)
{
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	c->ctl.fd = sv[0];
	if (peer != NULL)
		*peer = sv[1];
	else
		close(sv[1]);
}

/* A struct sup as broker_main() makes it, without signals or
 * forks. */
static struct sup *
sup_new(const uint8_t *hdr)
{
	struct sup	*sup;
	char		 err[KP_ERROR_SIZE];
	int		 sv[2], i;

	if ((sup = calloc(1, sizeof(*sup))) == NULL)
		abort();
	sup->cfg = o;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	close(sv[1]);
	ipc_chan_init(&sup->driver, sv[0], KP_IPC_MAX_FRAME);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	close(sv[1]);
	ipc_chan_init(&sup->events, sv[0], KP_IPC_SMALL_FRAME);
	sup->sigfd = -1;
	/* No monitor: a start or signal asked of it goes nowhere, and the
	 * CDI specs are written here (files.c without a files channel). */
	sup->mon = sup->mon_files = -1;
	sup->claim_tokens = relay_claim_burst(sup);
	clock_gettime(CLOCK_MONOTONIC, &sup->claim_refill);
	if (files_prepare(sup, err, sizeof(err)) != 0 ||
	    status_init(sup) != 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	child_table_init(sup);
	clock_gettime(CLOCK_MONOTONIC, &sup->start_deadline);
	ts_after_ms(&sup->start_deadline, KP_START_TIMEOUT_MS);
	sup->phase = (enum sup_phase)(hdr[2] % (PHASE_STOPPING + 1));
	for (i = 0; i < ROLE_COUNT; i++) {
		struct child	*c = &sup->children[i];

		c->enabled = 1;
		if (!(hdr[3] & (1 << i)))
			continue;
		c->pid = FAKE_PID + i;
		c->state = CS_READY;
		channel(c, NULL);
		clock_gettime(CLOCK_MONOTONIC, &c->started);
		c->hb_ok = c->started;	/* c->log and the other buckets are
					 * full at their first use */
	}
	if (hdr[3] & 0x10)
		desired(sup);
	return (sup);
}

static void
sup_free(struct sup *sup)
{
	int	 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		ipc_chan_close(&sup->children[i].ctl);
		if (sup->children[i].logfd != -1)
			close(sup->children[i].logfd);
		if (sup->children[i].errfd != -1)
			close(sup->children[i].errfd);
	}
	ipc_chan_close(&sup->driver);
	ipc_chan_close(&sup->events);
	ipc_free(sup->state);
	ipc_free(sup->desired);
	ipc_free(sup->health);
	files_close(sup);
	status_free(sup);
	free(sup);
}

/* Every frame queued on ch is one its receiver's ipc_next() takes; the
 * receiver read them all. */
static void
receive(struct ipc_chan *ch, size_t cap)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	size_t		 off = 0, len;

	while (off + 4 <= ch->wlen) {
		len = (size_t)ch->wbuf[off] << 24 | (size_t)ch->wbuf[off + 1]
		    << 16 | (size_t)ch->wbuf[off + 2] << 8 | ch->wbuf[off + 3];
		if (len > cap || off + 4 + len > ch->wlen ||
		    (m = ipc_unpack(ch->wbuf + off + 4, len, err,
		    sizeof(err))) == NULL)
			__builtin_trap();
		if (ipc_check(m, err, sizeof(err)) != 0) {
			fprintf(stderr, "queued frame refused: %s\n", err);
			__builtin_trap();
		}
		ipc_free(m);
		off += 4 + len;
	}
	if (off != ch->wlen)
		__builtin_trap();
	ch->wlen = 0;
}

static void
received(struct sup *sup)
{
	int	 i;

	for (i = 0; i < ROLE_COUNT; i++)
		receive(&sup->children[i].ctl, KP_IPC_MAX_FRAME);
	receive(&sup->driver, KP_IPC_MAX_FRAME);
	receive(&sup->events, KP_IPC_SMALL_FRAME);
}

/* What sup_timers() runs that a child's frames feed. */
static void
timers(struct sup *sup)
{
	int	 i;

	cdi_queue_tick(sup);
	if (sup->phase == PHASE_RUNNING) {
		relay_claims_tick(sup);
		status_tick(sup);
	}
	drain_tick(sup);
	for (i = 0; i < ROLE_COUNT; i++)
		chan_state_flush(sup, &sup->children[i]);
}

/* A metadata spec the supervisor wrote itself (metadata.c): read-only
 * bind mounts of files in the metadata directory, nothing else. */
static int
metadata_spec_ok(const char *buf, size_t n)
{
	json_t		*root, *dev, *e, *mnt;
	const char	*hp;
	size_t		 i, k, ml = strlen(meta);
	int		 ok = 1;

	if ((root = json_loadb(buf, n, 0, NULL)) == NULL)
		return (0);
	json_array_foreach(json_object_get(root, "devices"), i, dev) {
		e = json_object_get(dev, "containerEdits");
		if (json_object_size(e) != 1)
			ok = 0;
		json_array_foreach(json_object_get(e, "mounts"), k, mnt) {
			hp = json_string_value(json_object_get(mnt,
			    "hostPath"));
			if (hp == NULL || strncmp(hp, meta, ml) != 0 ||
			    hp[ml] != '/' || strstr(hp, "/..") != NULL)
				ok = 0;
		}
	}
	if (json_object_get(root, "containerEdits") != NULL ||
	    json_array_size(json_object_get(root, "devices")) == 0)
		ok = 0;
	json_decref(root);
	return (ok);
}

/* Only the driver's specs, each one cdi_check() passes, or a metadata
 * spec of the supervisor's. */
static void
cdi_dir_check(void)
{
	struct dirent	*de;
	DIR		*d;
	char		 p[256], *buf;
	size_t		 files = 0;
	ssize_t		 n;
	int		 fd;

	if ((d = opendir(cdi)) == NULL)
		abort();
	if ((buf = malloc(KP_IPC_MAX_CDI_CONTENT + 1)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!name_is_cdi_spec(DRV, de->d_name, strlen(de->d_name)) ||
		    ++files > 1024)
			__builtin_trap();
		snprintf(p, sizeof(p), "%s/%s", cdi, de->d_name);
		if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			__builtin_trap();
		n = read(fd, buf, KP_IPC_MAX_CDI_CONTENT + 1);
		close(fd);
		if (n < 0 || n > (ssize_t)KP_IPC_MAX_CDI_CONTENT)
			__builtin_trap();
		if (strncmp(de->d_name, DRV "_metadata_",
		    sizeof(DRV "_metadata_") - 1) == 0 ?
		    !metadata_spec_ok(buf, (size_t)n) :
		    cdi_check(buf, (size_t)n, o, NULL, 0) != 0)
			__builtin_trap();
	}
	free(buf);
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum child_state states[] = {
		CS_STARTING, CS_READY, CS_STOPPING
	};
	struct sup	*sup;
	struct child	*c;
	size_t		 off = 4;
	ssize_t		 w;
	int		 peer, rounds, pending;

	if (size < 4)
		return (0);
	if (o == NULL)
		setup();
	clean();
	sup = sup_new(data);
	c = &sup->children[data[0] % ROLE_COUNT];
	if (c->ctl.fd != -1)
		ipc_chan_close(&c->ctl);
	c->pid = FAKE_PID + (int)(data[0] % ROLE_COUNT);
	c->state = states[data[1] % 3];
	memset(&c->log, 0, sizeof(c->log));	/* full at its first use */
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	c->hb_ok = c->started;
	channel(c, &peer);
	for (rounds = 0; rounds < MAX_ROUNDS; rounds++) {
		if (off < size && (w = send(peer, data + off, size - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
			off += (size_t)w;
		if (off == size && peer != -1 && (data[3] & 0x20))
			peer = (close(peer), -1);
		if (c->ctl.fd == -1)
			break;
		sup_dispatch_child(sup, c);
		timers(sup);
		received(sup);
		if (off == size && (c->ctl.fd == -1 || ioctl(c->ctl.fd,
		    FIONREAD, &pending) == -1 || pending == 0))
			break;
	}
	if (peer != -1)
		close(peer);
	sup_free(sup);
	cdi_dir_check();
	return (0);
}
