/*
 * kp_attack - a driver whose prepare hook plays a fully compromised
 * nodeserver attacking the supervisor (tests/e2e/attack.test.js, the
 * review-attack branch). Claim "probe-<n>" runs the spec in the file
 * $KP_ATTACK_DIR/<n> (one line) and fails the claim with the outcome, in
 * the prepare hook and in the unprepare hook; any other claim prepares
 * one device.
 *
 * Specs:
 *   cdi-file:<name>:<path>     kp_cdi_spec_write(name, contents of path)
 *   cdi-node:<name>:<t>:<major>:<minor>:<path>
 *                              through the builder: one device "d" of
 *                              kind <driver>/loop with the node path, its
 *                              type <t> ('-': unset), major and minor
 *                              (kp_cdi_device_node), kp_cdi_builder_write
 *   cdi-flood:<count>:<bytes>  count specs of bytes each, names
 *                              <driver>_flood-<i>.json; "wrote <k> of <n>"
 *   cdi-rate:<count>           count small specs as fast as answers come,
 *                              no retry: "ok <k> busy <b> in <ms> ms"
 *   cdi-raw:<count>:<bytes>    count raw CdiWrite frames back to back, not
 *                              waiting for answers, specs of bytes named
 *                              <driver>_raw-<i>.json; "sent <k> of <n> at
 *                              <ms>" (CLOCK_MONOTONIC before the first)
 *   cdi-refuse:<count>:<bytes> the same, of specs the content rules refuse
 *                              (kind other.example.com/test)
 *   raw-amp:<devices>          one raw frame Msg{publish{pools[{slices[
 *                              {devices: <devices> empty}]}]}} (2 bytes a
 *                              device on the wire, ~200 unpacked)
 *   raw-stale:<count>:<bytes>  count raw HealthStale frames of bytes text
 *   raw-event:<kind>:<hex>     one raw EventAsk frame: kind, and as its
 *                              syscall the bytes <hex> spells (free text,
 *                              a newline, anything)
 *   raw-cancel:<count>:<name>  count ClaimGets, then hostile ClaimCancels
 *                              (raw-cancel65: and one of 65 ids)
 *   raw-cancel-flood:<n>:x     n ClaimCancel frames of 64 ids at once
 *   raw-claims:<count>:<name>  count raw ClaimGet frames at once, claims
 *                              default/<name>-<i> (i from 0), ids of our
 *                              own; "sent <k> of <n> at <ms>" (the
 *                              CLOCK_MONOTONIC time before the first)
 *   raw-claim:<nshex>:<namehex>  one raw ClaimGet frame of namespace and
 *                              name as the hex bytes spell them (a '/',
 *                              '..', a NUL, anything), a valid UID
 *   raw-events:<count>:<name>  count raw EventAsk frames at once, each
 *                              EVENT_SYSCALL_DENIED of syscall <name><i>
 *   md-raw:<count>:<bytes>     count raw MetadataWrite frames back to
 *                              back, claims default/md-<i> (UID ending in
 *                              i), request req-0, content bytes of 'a';
 *                              then a CdiRemove of a missing spec, which
 *                              the supervisor answers after every frame
 *                              before it: "md-raw: sent <k> of <n>,
 *                              barrier <code>"
 *   md-one:<name>:<uid>        one raw MetadataWrite for default/<name>
 *                              of that UID (content "aa"), the barrier
 *   stderr-flood:<count>[:<n>] count lines "FLOOD <i>" on stderr, one
 *                              write each (padded with n spaces)
 *   log-frame:ready            a READY datagram on the log channel
 *   log-shut:<wr|rdwr>         shutdown(2) of our end of the log channel
 *                              (SHUT_WR: the supervisor's end reads EOF
 *                              with POLLIN, never POLLHUP)
 *   log-burst:<count>:<bytes>  count kp_log warnings "BURST <i>" padded
 *                              to bytes with 'y', as fast as they go
 *   log-long:<lo>:<hi>         for each n in [lo, hi] a kp_log warning of
 *                              n 'y's, then a forged broker klog header
 *                              ("FORGED-LONG <n>"): the line's cuts
 *                              (4095 bytes of text, PIPE_BUF a line) fall
 *                              inside it for some n
 *   die:<count>[:<n>]          count lines "DYING-E <i>" on stderr and
 *                              "DYING-L <i>" by kp_log, 0.7 ms apart,
 *                              then _exit(7): the nodeserver ends with
 *                              the last ones unread; with n, stderr
 *                              lines only, padded with n 'z's, at once
 *   log-sendto:<path>          a Log datagram "SENDTO-PROBE" sent with
 *                              sendto(2) to the unix socket at path on the
 *                              log channel
 *   shutdown-listen:<rd|rdwr>  shutdown(2) of every listening socket this
 *                              process holds (found by SO_ACCEPTCONN, fds
 *                              3-1023: no /proc needed, so the registrar's
 *                              empty root does too); "fd <n> ok" each
 *   symlink:<target>:<link>    symlink(2) (needs --sandbox-syscall symlink)
 *   rename:<from>:<to>, mkdir:<path>, write:<path>
 *
 * The init hook (privileged, in STARTING, before the library's READY)
 * runs the spec in $KP_ATTACK_DIR/init once (it renames the file to
 * init.done first), outcome on stderr as "attack-init: ...":
 *   raw-ready:<path>           a raw READY frame with hide_paths [path]
 *                              (only the publisher may name them)
 *   thread                     leave a thread running (ids and
 *                              capabilities are per thread: the sandbox
 *                              must refuse to start)
 *
 * --registrar-attack <spec> installs a unary interceptor, which runs in
 * the registrar as a driver's does: the first GetInfo of any registrar
 * (a flag on a page shared by every process of this plugin; the
 * registrar's empty root has no file to remember it in) runs spec there,
 * outcome on stderr as "attack-registrar: ...". The page is inherited by
 * fork only: with --fork-hooks (kp_sandbox_exec(0)) the registrar is
 * forked and the spec runs once; exec'd, every registrar runs it.
 *
 * Options: those lib/plugin.js's TestDriver passes and a few kp_*
 * setters (--cdi-device-prefix, --cdi-device <pattern>,
 * --cdi-device-number <type>:<major>:<first>:<last>:<pattern>,
 * --cdi-mount-prefix, --cdi-hook: the kp_cdi_allow_*() declarations,
 * --device-metadata <version>,
 * --http-endpoint, --hung-ms (kp_hung_child_timeout), --shutdown-grace-ms
 * (kp_shutdown_grace), --kube-qps Q[:B]
 * (kp_kube_api_qps); --error-cb:
 * kp_error_callback printing "errcb <KP_NAME> rec=<0|1> <message>" on
 * stdout, as kp_testdriver's); after
 * kp_start it prints "ready <pid>", reads "stop" on stdin.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "base/fdio.h"
#include "ipc/ipc.h"

static char	 drv_name[254];

static void	 shutdown_listen(const char *, char *, size_t);

/* The channel to the supervisor: the one unnamed, connected AF_UNIX
 * stream socket (the gRPC connections are named, the log channel is
 * SOCK_SEQPACKET). -1 if not found. */
static int
ctl_fd(void)
{
	struct sockaddr_un	 sun;
	struct dirent		*de;
	socklen_t		 sl;
	DIR			*d;
	int			 fd, type, acc, found = -1;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		sl = sizeof(type);
		if (fd < 3 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
		    &sl) == -1 || type != SOCK_STREAM)
			continue;
		sl = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &sl) ||
		    acc)
			continue;
		sl = sizeof(sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &sl) == -1 ||
		    sun.sun_family != AF_UNIX || sl > sizeof(sa_family_t))
			continue;
		found = fd;
	}
	closedir(d);
	return (found);
}

static size_t
varint(uint8_t *p, uint64_t v)
{
	size_t	 n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	return (n);
}

static size_t
varint_len(uint64_t v)
{
	uint8_t	 b[10];

	return (varint(b, v));
}

/* A length-delimited field header at p: tag bytes, then the length. */
static size_t
ld(uint8_t *p, const uint8_t *tag, size_t tl, size_t len)
{
	memcpy(p, tag, tl);
	return (tl + varint(p + tl, len));
}

/* Until the channel has room (poll's POLLOUT), at most 1 s. */
static void
wait_writable(int fd)
{
	struct pollfd	 p = { .fd = fd, .events = POLLOUT };

	while (poll(&p, 1, 1000) == -1 && errno == EINTR)
		;
}

/*
 * Frame the Msg body of n bytes at f + 4 and send it, into a channel
 * with room for it (POLLOUT: 3/4 of its buffer free, more than a frame
 * up to 64 KiB), so that no write of a flood blocks halfway through a
 * frame: the library's reader thread answers a Ping at any moment, and
 * its Pong must not land inside ours (a garbled stream, a violation no
 * flood test means to provoke).
 */
static int
send_frame(int fd, uint8_t *f, size_t n)
{
	wait_writable(fd);
	f[0] = (uint8_t)(n >> 24);
	f[1] = (uint8_t)(n >> 16);
	f[2] = (uint8_t)(n >> 8);
	f[3] = (uint8_t)n;
	return (fd_write_all(fd, f, n + 4));
}

/* Msg.publish (7) { pools (1) { slices (4) { devices (1) {} x n } } } */
static void
raw_amp(size_t ndev, char *out, size_t size)
{
	static const uint8_t	 t_msg[] = { 0x3a }, t_pools[] = { 0x0a },
				    t_slices[] = { 0x22 };
	size_t			 slice = 2 * ndev, pool, pub, n = 4, i;
	uint8_t			*f;
	int			 fd;

	pool = 1 + varint_len(slice) + slice;
	pub = 1 + varint_len(pool) + pool;
	if ((f = malloc(pub + 32)) == NULL || (fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-amp: no memory or no channel");
		free(f);
		return;
	}
	n += ld(f + n, t_msg, 1, pub);
	n += ld(f + n, t_pools, 1, pool);
	n += ld(f + n, t_slices, 1, slice);
	for (i = 0; i < ndev; i++) {
		f[n++] = 0x0a;
		f[n++] = 0x00;
	}
	snprintf(out, size, "raw-amp: frame of %zu bytes %s", n - 4,
	    send_frame(fd, f, n - 4) == 0 ? "sent" : strerror(errno));
	free(f);
}

/* Msg.health_stale (31) { message (1) } x count */
static void
raw_stale(long count, size_t len, char *out, size_t size)
{
	static const uint8_t	 t_msg[] = { 0xfa, 0x01 }, t_text[] = { 0x0a };
	uint8_t			 f[2048];
	size_t			 n = 4, inner;
	long			 i, sent = 0;
	int			 fd;

	if (len > 1000)
		len = 1000;
	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-stale: no channel");
		return;
	}
	inner = 1 + varint_len(len) + len;
	n += ld(f + n, t_msg, 2, inner);
	n += ld(f + n, t_text, 1, len);
	memset(f + n, 'S', len);
	memcpy(f + n, "FORGED-STALE ", len > 13 ? 13 : len);
	n += len;
	for (i = 0; i < count; i++)
		if (send_frame(fd, f, n - 4) == 0)
			sent++;
	snprintf(out, size, "raw-stale: sent %ld of %ld", sent, count);
}

/* Msg.event_ask (60) { kind (1), syscall (2) } */
static void
raw_event(long kind, const char *hex, char *out, size_t size)
{
	static const uint8_t	 t_msg[] = { 0xe2, 0x03 }, t_sys[] = { 0x12 };
	uint8_t			 f[2048], text[900];
	size_t			 n = 4, len = 0, inner;
	unsigned		 b;
	int			 fd;

	while (len < sizeof(text) && sscanf(hex + 2 * len, "%2x", &b) == 1)
		text[len++] = (uint8_t)b;
	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-event: no channel");
		return;
	}
	inner = 1 + varint_len((uint64_t)kind) + 1 + varint_len(len) + len;
	n += ld(f + n, t_msg, 2, inner);
	f[n++] = 0x08;
	n += varint(f + n, (uint64_t)kind);
	n += ld(f + n, t_sys, 1, len);
	memcpy(f + n, text, len);
	n += len;
	snprintf(out, size, "raw-event: %s", send_frame(fd, f, n - 4) == 0 ?
	    "sent" : strerror(errno));
}

/* Pack m into one frame (4-byte length, then the Msg) and send it. */
static int
send_msg(int fd, const Kpipc__Msg *m)
{
	uint8_t	 f[4096];
	size_t	 n = kpipc__msg__get_packed_size(m);

	if (n > sizeof(f) - 4) {
		errno = EMSGSIZE;
		return (-1);
	}
	kpipc__msg__pack(m, f + 4);
	return (send_frame(fd, f, n));
}

static double
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6);
}

/*
 * count ClaimGet or EventAsk frames written back to back, as a hostile
 * nodeserver floods the supervisor; ids and names of its own choosing.
 */
static void
raw_flood(int claims, long count, const char *name, char *out, size_t size)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__ClaimGet	 g = KPIPC__CLAIM_GET__INIT;
	Kpipc__EventAsk	 a = KPIPC__EVENT_ASK__INIT;
	char		 cname[64], uid[48], sys[40];
	double		 t0;
	long		 i, sent = 0;
	int		 fd;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-flood: no channel");
		return;
	}
	if (claims) {
		m.m_case = KPIPC__MSG__M_CLAIM_GET;
		m.claim_get = &g;
		g.namespace_ = "default";
		g.name = cname;
		g.uid = uid;
	} else {
		m.m_case = KPIPC__MSG__M_EVENT_ASK;
		m.event_ask = &a;
		a.kind = KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED;
		a.syscall = sys;
	}
	t0 = mono_ms();
	for (i = 0; i < count; i++) {
		g.id = (uint64_t)(900000 + i);
		snprintf(cname, sizeof(cname), "%s-%ld", name, i);
		snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012ld",
		    i % 1000000);
		snprintf(sys, sizeof(sys), "%s%ld", name, i);
		if (send_msg(fd, &m) == 0)
			sent++;
	}
	snprintf(out, size, "raw-%s: sent %ld of %ld at %.3f", claims ?
	    "claims" : "events", sent, count, t0);
}

/*
 * count ClaimGets (ids 800000 + i, names name-i), then ClaimCancels as a
 * hostile nodeserver may write them: an id nobody asked for, the first
 * id 64 times over, every id in reverse order (64 a frame), all of them
 * again (withdrawn or answered by now), then, with over set, one frame
 * of 65 ids (past the field rule: the nodeserver's own violation).
 */
static void
raw_cancel(long count, const char *name, int over, char *out, size_t size)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimGet		 g = KPIPC__CLAIM_GET__INIT;
	Kpipc__ClaimCancel	 c = KPIPC__CLAIM_CANCEL__INIT;
	uint64_t		 ids[65];
	char			 cname[64], uid[48];
	long			 i, k, sent = 0, frames = 0;
	int			 fd, pass;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-cancel: no channel");
		return;
	}
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = &g;
	g.namespace_ = "default";
	g.name = cname;
	g.uid = uid;
	for (i = 0; i < count; i++) {
		g.id = (uint64_t)(800000 + i);
		snprintf(cname, sizeof(cname), "%s-%ld", name, i);
		snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012ld",
		    i % 1000000);
		if (send_msg(fd, &m) == 0)
			sent++;
	}
	m.m_case = KPIPC__MSG__M_CLAIM_CANCEL;
	m.claim_cancel = &c;
	c.ids = ids;
	c.n_ids = 1;
	ids[0] = UINT64_MAX;
	frames += send_msg(fd, &m) == 0;
	for (k = 0; k < 64; k++)
		ids[k] = 800000;
	c.n_ids = 64;
	frames += send_msg(fd, &m) == 0;
	for (pass = 0; pass < 2; pass++)
		for (i = count; i > 0; ) {
			for (c.n_ids = 0; c.n_ids < 64 && i > 0; )
				ids[c.n_ids++] = (uint64_t)(800000 + --i);
			frames += send_msg(fd, &m) == 0;
		}
	if (over) {
		for (k = 0; k < 65; k++)
			ids[k] = (uint64_t)(800000 + k);
		c.n_ids = 65;
		frames += send_msg(fd, &m) == 0;
	}
	snprintf(out, size, "raw-cancel: sent %ld of %ld, %ld cancels", sent,
	    count, frames);
}

/*
 * n ClaimCancel frames of 64 ids back to back (ids nobody asked for):
 * each one a scan of the supervisor's look-ups, so its budget
 * (KP_CANCEL_QPS) drops most of them.
 */
static void
raw_cancel_flood(long n, char *out, size_t size)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimCancel	 c = KPIPC__CLAIM_CANCEL__INIT;
	uint64_t		 ids[64];
	long			 i, frames = 0;
	int			 fd;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-cancel-flood: no channel");
		return;
	}
	for (i = 0; i < 64; i++)
		ids[i] = (uint64_t)(900000 + i);
	m.m_case = KPIPC__MSG__M_CLAIM_CANCEL;
	m.claim_cancel = &c;
	c.ids = ids;
	c.n_ids = 64;
	for (i = 0; i < n; i++)
		frames += send_msg(fd, &m) == 0;
	snprintf(out, size, "raw-cancel-flood: sent %ld of %ld", frames, n);
}

/* Hex "2f2e2e" to bytes, NUL-terminated (a %00 ends the string early:
 * protobuf strings carry no NUL through protobuf-c's unpack anyway). */
static void
unhex(const char *hex, char *out, size_t size)
{
	size_t		 len = 0;
	unsigned	 b;

	while (len + 1 < size && sscanf(hex + 2 * len, "%2x", &b) == 1)
		out[len++] = (char)b;
	out[len] = '\0';
}

/* One ClaimGet with names of our choosing. */
static void
raw_claim(const char *nshex, const char *namehex, char *out, size_t size)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__ClaimGet	 g = KPIPC__CLAIM_GET__INIT;
	char		 ns[400], name[400];
	int		 fd;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-claim: no channel");
		return;
	}
	unhex(nshex, ns, sizeof(ns));
	unhex(namehex, name, sizeof(name));
	m.m_case = KPIPC__MSG__M_CLAIM_GET;
	m.claim_get = &g;
	g.id = 777;
	g.namespace_ = ns;
	g.name = name;
	g.uid = "00000000-0000-4000-8000-000000000777";
	snprintf(out, size, "raw-claim: %s", send_msg(fd, &m) == 0 ?
	    "sent" : strerror(errno));
}

/* The log channel: the SOCK_SEQPACKET socket. -1 if not found. */
static int
log_fd(void)
{
	struct dirent	*de;
	socklen_t	 sl;
	DIR		*d;
	int		 fd, type, found = -1;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		sl = sizeof(type);
		if (fd >= 3 && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
		    &sl) == 0 && type == SOCK_SEQPACKET)
			found = fd;
	}
	closedir(d);
	return (found);
}

/* What a hook can put on the log channel besides a Log frame. */
static void
log_channel(const char *op, const char *arg, char *out, size_t size)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Ready		 r = KPIPC__READY__INIT;
	Kpipc__Log		 l = KPIPC__LOG__INIT;
	struct sockaddr_un	 sun;
	uint8_t			 b[512];
	size_t			 n;
	ssize_t			 w;
	int			 fd;

	if ((fd = log_fd()) == -1) {
		snprintf(out, size, "%s: no log channel", op);
		return;
	}
	if (strcmp(op, "log-frame") == 0) {
		m.m_case = KPIPC__MSG__M_READY;
		m.ready = &r;
		n = kpipc__msg__pack(&m, b);
		w = send(fd, b, n, 0);
	} else {
		l.level = KP_LOG_WARNING;
		l.text = "SENDTO-PROBE";
		m.m_case = KPIPC__MSG__M_LOG;
		m.log = &l;
		n = kpipc__msg__pack(&m, b);
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", arg);
		w = sendto(fd, b, n, 0, (struct sockaddr *)&sun, sizeof(sun));
	}
	snprintf(out, size, "%s %.200s: %s", op, arg, w == (ssize_t)n ? "sent" :
	    strerror(errno));
}

/* A READY naming a path to hide, as only the publisher may. */
static void
raw_ready(const char *path, char *out, size_t size)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Ready	 r = KPIPC__READY__INIT;
	char		*paths[1] = { (char *)path };
	int		 fd;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "raw-ready: no channel");
		return;
	}
	r.pid = getpid();
	r.hide_paths = paths;
	r.n_hide_paths = 1;
	m.m_case = KPIPC__MSG__M_READY;
	m.ready = &r;
	snprintf(out, size, "raw-ready %.200s: %s", path, send_msg(fd, &m) == 0 ?
	    "sent" : strerror(errno));
}

static void
cdi_file(const char *name, const char *path, char *out, size_t size)
{
	char	 buf[65536], err[KP_ERROR_SIZE] = "";
	ssize_t	 n;
	int	 fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(out, size, "cdi-file: open %s: %s", path,
		    strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		n = 0;
	r = kp_cdi_spec_write(name, buf, (size_t)n, err, sizeof(err));
	snprintf(out, size, "cdi-file %s: %s %s", name, r == 0 ? "ok" :
	    kp_err_name(r), err);
}

/* The builder's numbers (kp_cdi_device_node type, major, minor), as a
 * driver sets them; "t:major:minor:path" in spec. */
static void
cdi_node(const char *name, const char *spec, char *out, size_t size)
{
	struct kp_cdi_device_node	 n = { KP_CDI_DEVICE_NODE_INIT };
	struct kp_cdi_builder		*b = NULL;
	char				 kind[300], path[PATH_MAX];
	char				 err[KP_ERROR_SIZE] = "", t;
	int				 r;

	if (sscanf(spec, "%c:%u:%u:%4095s", &t, &n.major, &n.minor,
	    path) != 4) {
		snprintf(out, size, "cdi-node: bad spec");
		return;
	}
	n.type = t == '-' ? 0 : t;
	n.path = path;
	snprintf(kind, sizeof(kind), "%s/loop", drv_name);
	if ((r = kp_cdi_builder_new(kind, &b)) == 0 &&
	    (r = kp_cdi_add_device(b, "d")) == 0 &&
	    (r = kp_cdi_add_device_node(b, "d", &n)) == 0)
		r = kp_cdi_builder_write(b, name, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "builder: %s",
		    kp_cdi_builder_last_error(b));
	kp_cdi_builder_free(b);
	snprintf(out, size, "cdi-node %s: %s %s", name, r == 0 ? "ok" :
	    kp_err_name(r), err);
}

static void
cdi_flood(long count, size_t len, char *out, size_t size)
{
	char	 name[300], err[KP_ERROR_SIZE] = "", head[512], *c;
	size_t	 hl;
	long	 i, ok = 0, busy = 0;
	int	 r;

	/* A spec the broker accepts, padded in an annotation: the quota,
	 * not the content rules, must stop the flood. */
	snprintf(head, sizeof(head), "{\"cdiVersion\":\"0.6.0\",\"kind\":"
	    "\"%s/test\",\"devices\":[{\"name\":\"d\",\"containerEdits\":"
	    "{\"env\":[\"X=1\"]}}],\"annotations\":{\"pad\":\"", drv_name);
	hl = strlen(head);
	if (len < hl + 3)
		len = hl + 3;
	if ((c = malloc(len)) == NULL)
		return;
	memcpy(c, head, hl);
	memset(c + hl, 'a', len - hl - 3);
	memcpy(c + len - 3, "\"}}", 3);
	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%s_flood-%ld.json", drv_name, i);
		while ((r = kp_cdi_spec_write(name, c, len, err,
		    sizeof(err))) == KP_EBUSY) {
			busy++;
			usleep(20000);
		}
		if (r == 0)
			ok++;
		else
			break;
	}
	free(c);
	snprintf(out, size, "cdi-flood: wrote %ld of %ld (%ld EBUSY)%s%s",
	    ok, count, busy, ok < count ? ": " : "", ok < count ? err : "");
}

/* CdiWrite frames as fast as the socket takes them (the wrapper would
 * send one at a time): what a queue of waiting requests must bound. */
static void
cdi_raw(long count, size_t len, int refused, char *out, size_t size)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__CdiWrite	 w = KPIPC__CDI_WRITE__INIT;
	char		 name[300], head[512], *c;
	uint8_t		*f = NULL;
	size_t		 hl, n;
	double		 t0;
	long		 i, sent = 0;
	int		 fd;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "cdi-raw: no channel");
		return;
	}
	snprintf(head, sizeof(head), "{\"cdiVersion\":\"0.6.0\",\"kind\":"
	    "\"%s/test\",\"devices\":[{\"name\":\"d\",\"containerEdits\":"
	    "{\"env\":[\"X=1\"]}}],\"annotations\":{\"pad\":\"", refused ?
	    "other.example.com" : drv_name);
	hl = strlen(head);
	if (len < hl + 3)
		len = hl + 3;
	if ((c = malloc(len)) == NULL)
		return;
	memcpy(c, head, hl);
	memset(c + hl, 'a', len - hl - 3);
	memcpy(c + len - 3, "\"}}", 3);
	m.m_case = KPIPC__MSG__M_CDI_WRITE;
	m.cdi_write = &w;
	w.name = name;
	w.content.data = (uint8_t *)c;
	w.content.len = len;
	snprintf(name, sizeof(name), "%s_raw-%ld.json", drv_name, count);
	w.id = 900000000;
	if ((f = malloc(kpipc__msg__get_packed_size(&m) + 4)) == NULL) {
		free(c);
		return;
	}
	t0 = mono_ms();
	for (i = 0; i < count; i++) {
		w.id = (uint64_t)(800000 + i);
		snprintf(name, sizeof(name), "%s_raw-%ld.json", drv_name, i);
		n = kpipc__msg__pack(&m, f + 4);
		if (send_frame(fd, f, n) == 0)
			sent++;
	}
	free(f);
	free(c);
	snprintf(out, size, "cdi-%s: sent %ld of %ld at %.3f", refused ?
	    "refuse" : "raw", sent, count, t0);
}

/*
 * count MetadataWrite frames (claims default/<name> with uid, or with
 * name NULL default/md-<i>), not waiting for answers, as a compromised
 * nodeserver writes them; then a request the supervisor answers only
 * after every frame before it (requests are handled in order), so that
 * the files on disk are final when the hook returns.
 */
static void
md_raw(long count, size_t len, const char *name, const char *uid,
    char *out, size_t size)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataWrite	 w = KPIPC__METADATA_WRITE__INIT;
	char			 cname[64], cuid[48], err[KP_ERROR_SIZE] = "";
	char			 barrier[300];
	uint8_t			*c, *f;
	long			 i, sent = 0;
	int			 fd, r;

	if ((fd = ctl_fd()) == -1) {
		snprintf(out, size, "md-raw: no channel");
		return;
	}
	if ((c = malloc(len + 1)) == NULL ||
	    (f = malloc(len + 1024)) == NULL) {
		free(c);
		snprintf(out, size, "md-raw: no memory");
		return;
	}
	memset(c, 'a', len);
	m.m_case = KPIPC__MSG__M_METADATA_WRITE;
	m.metadata_write = &w;
	w.namespace_ = "default";
	w.name = cname;
	w.uid = cuid;
	w.request = "req-0";
	w.content.data = c;
	w.content.len = len;
	for (i = 0; i < count; i++) {
		w.id = (uint64_t)(700000 + i);
		if (name != NULL)
			snprintf(cname, sizeof(cname), "%s", name);
		else
			snprintf(cname, sizeof(cname), "md-%ld", i);
		if (uid != NULL)
			snprintf(cuid, sizeof(cuid), "%s", uid);
		else
			snprintf(cuid, sizeof(cuid),
			    "00000000-0000-4000-8000-%012ld", i);
		if (send_frame(fd, f, kpipc__msg__pack(&m, f + 4)) == 0)
			sent++;
	}
	free(f);
	free(c);
	snprintf(barrier, sizeof(barrier), "%s_barrier.json", drv_name);
	while ((r = kp_cdi_spec_remove(barrier, err, sizeof(err))) ==
	    KP_EBUSY)
		usleep(20000);
	snprintf(out, size, "md-raw: sent %ld of %ld, barrier %s %s", sent,
	    count, kp_err_name(r), err);
}

/* The broker's rate limit: KP_EBUSY is counted, not waited out. */
static void
cdi_rate(long count, char *out, size_t size)
{
	char	 name[300], spec[512], err[KP_ERROR_SIZE] = "", why[128] = "";
	double	 t0 = mono_ms();
	long	 i, ok = 0, busy = 0;
	int	 r;

	snprintf(spec, sizeof(spec), "{\"cdiVersion\":\"0.6.0\",\"kind\":"
	    "\"%s/test\",\"devices\":[{\"name\":\"d\",\"containerEdits\":"
	    "{\"env\":[\"X=1\"]}}]}", drv_name);
	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%s_rate-%ld.json", drv_name, i);
		r = kp_cdi_spec_write(name, spec, strlen(spec), err,
		    sizeof(err));
		if (r == 0)
			ok++;
		else if (r == KP_EBUSY)
			busy++;
		else if (why[0] == '\0')
			snprintf(why, sizeof(why), ": %s %.100s",
			    kp_strerror(r), err);
	}
	snprintf(out, size, "cdi-rate: ok %ld busy %ld in %.1f ms%s", ok, busy,
	    mono_ms() - t0, why);
}

static void
probe(const char *spec, char *out, size_t size)
{
	char	 op[32], a[PATH_MAX] = "", b[PATH_MAX] = "";
	int	 r;

	if (spec == NULL || sscanf(spec, "%31[^:]:%4095[^:]:%4095s", op, a,
	    b) < 1) {
		snprintf(out, size, "probe: no spec");
		return;
	}
	errno = 0;
	if (strcmp(op, "cdi-file") == 0) {
		cdi_file(a, b, out, size);
		return;
	} else if (strcmp(op, "cdi-node") == 0) {
		cdi_node(a, b, out, size);
		return;
	} else if (strcmp(op, "cdi-flood") == 0) {
		cdi_flood(strtol(a, NULL, 10), strtoul(b, NULL, 10), out, size);
		return;
	} else if (strcmp(op, "cdi-rate") == 0) {
		cdi_rate(strtol(a, NULL, 10), out, size);
		return;
	} else if (strcmp(op, "cdi-raw") == 0 ||
	    strcmp(op, "cdi-refuse") == 0) {
		cdi_raw(strtol(a, NULL, 10), strtoul(b, NULL, 10),
		    op[5] == 'e', out, size);
		return;
	} else if (strcmp(op, "md-raw") == 0) {
		md_raw(strtol(a, NULL, 10), strtoul(b, NULL, 10), NULL, NULL,
		    out, size);
		return;
	} else if (strcmp(op, "md-one") == 0) {
		md_raw(1, 2, a, b, out, size);
		return;
	} else if (strcmp(op, "raw-amp") == 0) {
		raw_amp(strtoul(a, NULL, 10), out, size);
		return;
	} else if (strcmp(op, "raw-stale") == 0) {
		raw_stale(strtol(a, NULL, 10), strtoul(b, NULL, 10), out,
		    size);
		return;
	} else if (strcmp(op, "raw-event") == 0) {
		raw_event(strtol(a, NULL, 10), b, out, size);
		return;
	} else if (strcmp(op, "stderr-flood") == 0) {
		long	 k, count = strtol(a, NULL, 10), ok = 0;
		size_t	 pad = strtoul(b, NULL, 10);
		char	 l[600], xs[501];

		if (pad > 500)
			pad = 500;
		memset(xs, 'x', pad);
		xs[pad] = '\0';
		for (k = 0; k < count; k++)
			if (write(2, l, (size_t)snprintf(l, sizeof(l),
			    "FLOOD %ld%s%s\n", k, pad ? " " : "", xs)) > 0)
				ok++;
		snprintf(out, size, "stderr-flood: wrote %ld", ok);
		return;
	} else if (strcmp(op, "log-shut") == 0) {
		int	 fd = log_fd();

		r = fd == -1 ? -1 : shutdown(fd, strcmp(a, "wr") == 0 ?
		    SHUT_WR : SHUT_RDWR);
	} else if (strcmp(op, "log-burst") == 0) {
		long	 k, count = strtol(a, NULL, 10);
		size_t	 len = strtoul(b, NULL, 10);
		char	 ys[4096];

		if (len >= sizeof(ys))
			len = sizeof(ys) - 1;
		memset(ys, 'y', len);
		ys[len] = '\0';
		for (k = 0; k < count; k++)
			kp_log(KP_LOG_WARNING, 0, "BURST %ld %s", k, ys);
		snprintf(out, size, "log-burst: sent %ld", count);
		return;
	} else if (strcmp(op, "log-long") == 0) {
		long	 k, lo = strtol(a, NULL, 10), hi = strtol(b, NULL, 10);
		char	 ys[4096];

		memset(ys, 'y', sizeof(ys));
		for (k = lo; k <= hi && k < (long)sizeof(ys); k++)
			kp_log(KP_LOG_WARNING, 0, "%.*sE1201 00:00:00.000000"
			    "       1 broker] FORGED-LONG %ld", (int)k, ys, k);
		snprintf(out, size, "log-long: sent %ld", hi - lo + 1);
		return;
	} else if (strcmp(op, "die") == 0) {
		long			 k, count = strtol(a, NULL, 10);
		size_t			 pad = strtoul(b, NULL, 10);
		struct timespec		 ts = { 0, 700000 };
		char			 zs[501];

		if (pad > 500)
			pad = 500;
		memset(zs, 'z', pad);
		zs[pad] = '\0';
		/* One line each 0.7 ms: the broker reads them as they come,
		 * so its fds rest (2 ms) when the last ones are written. */
		for (k = 0; k < count; k++) {
			dprintf(2, "DYING-E %ld%s%s\n", k, pad ? " " : "", zs);
			if (pad)
				continue;	/* at once, stderr only */
			kp_log(KP_LOG_WARNING, 0, "DYING-L %ld", k);
			if (k + 1 < count)
				nanosleep(&ts, NULL);
		}
		_exit(7);
	} else if (strcmp(op, "log-frame") == 0 ||
	    strcmp(op, "log-sendto") == 0) {
		log_channel(op, a, out, size);
		return;
	} else if (strcmp(op, "raw-claim") == 0) {
		raw_claim(a, b, out, size);
		return;
	} else if (strcmp(op, "raw-cancel-flood") == 0) {
		raw_cancel_flood(strtol(a, NULL, 10), out, size);
		return;
	} else if (strcmp(op, "raw-cancel") == 0 ||
	    strcmp(op, "raw-cancel65") == 0) {
		raw_cancel(strtol(a, NULL, 10), b, op[10] == '6', out, size);
		return;
	} else if (strcmp(op, "raw-claims") == 0 ||
	    strcmp(op, "raw-events") == 0) {
		raw_flood(op[4] == 'c', strtol(a, NULL, 10), b, out, size);
		return;
	} else if (strcmp(op, "stderr") == 0) {
		/* Forged klog lines: a newline, a CR, ANSI erase, one cut at
		 * the relay's 511-byte line buffer. */
		char	 big[1400];
		size_t	 k;

		dprintf(2, "x\nE1201 00:00:00.000000       1 supervisor] "
		    "FORGED-1\rE1201 00:00:00.000000 1 supervisor] FORGED-2"
		    "\x1b[2K\x1b[1GE1201 supervisor] FORGED-3\n");
		for (k = 0; k < 511; k++)
			big[k] = 'A';
		snprintf(big + 511, sizeof(big) - 511, "E1201 00:00:00.000000"
		    "       1 supervisor] FORGED-4\xe2\x80\xa8" "E1201 "
		    "supervisor] FORGED-5\xc2\x85" "FORGED-6\n");
		(void)!write(2, big, strlen(big));
		snprintf(out, size, "stderr: written");
		return;
	} else if (strcmp(op, "shutdown-listen") == 0) {
		shutdown_listen(a, out, size);
		return;
	} else if (strcmp(op, "symlink") == 0)
		r = symlink(a, b);
	else if (strcmp(op, "rename") == 0)
		r = rename(a, b);
	else if (strcmp(op, "mkdir") == 0)
		r = mkdir(a, 0755);
	else if (strcmp(op, "write") == 0) {
		int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		r = fd == -1 ? -1 : (int)write(fd, "x", 1);
		if (fd != -1)
			close(fd);
	} else {
		snprintf(out, size, "probe: unknown op %s", op);
		return;
	}
	snprintf(out, size, "%s %s: %s", op, a, r == -1 ? strerror(errno) :
	    "ok");
}

/* shutdown(2) of each listening socket among fds 3-1023. */
static void
shutdown_listen(const char *how, char *out, size_t size)
{
	socklen_t	 sl;
	size_t		 n;
	int		 fd, acc, found = 0;

	n = (size_t)snprintf(out, size, "shutdown-listen:");
	for (fd = 3; fd < 1024 && n < size; fd++) {
		sl = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &sl) ==
		    -1 || !acc)
			continue;
		found++;
		n += (size_t)snprintf(out + n, size - n, " fd %d %s", fd,
		    shutdown(fd, strcmp(how, "rd") == 0 ? SHUT_RD :
		    SHUT_RDWR) == -1 ? strerror(errno) : "ok");
	}
	if (!found && n < size)
		snprintf(out + n, size - n, " no listening socket");
}

/* The spec in $KP_ATTACK_DIR/<n>, its outcome in msg (and on stderr). */
static void
run_spec(const char *n, char *msg, size_t size)
{
	const char	*dir = getenv("KP_ATTACK_DIR");
	char		 path[PATH_MAX], line[8192];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : ".", n);
	line[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	probe(line[0] ? line : NULL, msg, size);
	fprintf(stderr, "attack: %s\n", msg);
}

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 dev;
	const char			*reqs[1] = { "req-0" };
	char				 cdi[300], msg[1000];
	const char			*ids[1] = { cdi };
	size_t				 i;

	for (i = 0; i < n; i++) {
		if (strncmp(c[i].name, "probe-", 6) == 0) {
			run_spec(c[i].name + 6, msg, sizeof(msg));
			kp_prepare_claim_error(res, i, msg);
			continue;
		}
		snprintf(cdi, sizeof(cdi), "%s/test=%s", drv_name, c[i].name);
		memset(&dev, 0, sizeof(dev));
		dev.struct_size = sizeof(dev);
		dev.request_names = reqs;
		dev.n_request_names = 1;
		dev.pool_name = "pool-a";
		dev.device_name = c[i].name;
		dev.cdi_device_ids = ids;
		dev.n_cdi_device_ids = 1;
		if (kp_prepare_add_device(res, i, &dev) != 0)
			return (-1);
	}
	return (0);
}

/*
 * Init op "dangerous": calls that root with the supervisor's capabilities
 * could make (add_key and keyctl need none, bpf and perf_event_open
 * CAP_SYS_ADMIN, which the supervisor keeps for the children's
 * namespaces) or that no capability gates here; each one's errno.
 * Arguments are harmless or invalid: only the filter's answer (EPERM
 * before the kernel looks at them) is of interest.
 */
static void
dangerous(char *msg, size_t size)
{
	static const struct {
		const char	*name;
		long		 nr;
		int		 fd;	/* returns an fd */
	} calls[] = {
		{ "add_key", SYS_add_key, 0 }, { "keyctl", SYS_keyctl, 0 },
		{ "bpf", SYS_bpf, 1 },
		{ "perf_event_open", SYS_perf_event_open, 1 },
		{ "init_module", SYS_init_module, 0 },
		{ "finit_module", SYS_finit_module, 0 },
		{ "kexec_load", SYS_kexec_load, 0 },
		{ "open_by_handle_at", SYS_open_by_handle_at, 1 },
		{ "process_vm_readv", SYS_process_vm_readv, 0 },
		{ "userfaultfd", SYS_userfaultfd, 1 },
		{ "ptrace", SYS_ptrace, 0 }, { "iopl", SYS_iopl, 0 },
		{ "swapoff", SYS_swapoff, 0 }
	};
	union bpf_attr_min {
		uint32_t	 w[8];
	} attr;
	size_t		 i, o = 0;
	long		 r;

	msg[0] = '\0';
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]) && o < size; i++) {
		memset(&attr, 0, sizeof(attr));
		errno = 0;
		if (calls[i].nr == SYS_add_key)
			r = syscall(SYS_add_key, "user", "kp-attack", "x", 1,
			    -2 /* KEY_SPEC_PROCESS_KEYRING */);
		else if (calls[i].nr == SYS_bpf) {
			attr.w[0] = 2;	/* BPF_MAP_TYPE_ARRAY */
			attr.w[1] = 4;	/* key size */
			attr.w[2] = 4;	/* value size */
			attr.w[3] = 1;	/* entries */
			r = syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr,
			    sizeof(attr));
		} else if (calls[i].nr == SYS_ptrace)
			r = syscall(SYS_ptrace, -1L, 0, 0, 0);	/* no request */
		else
			r = syscall(calls[i].nr, 0, 0, 0, 0, 0);
		if (r >= 0 || errno == EPERM)
			o += (size_t)snprintf(msg + o, size - o, "%s%s=%s",
			    i ? " " : "", calls[i].name, r >= 0 ? "ok" :
			    "EPERM");
		else
			o += (size_t)snprintf(msg + o, size - o, "%s%s=errno%d",
			    i ? " " : "", calls[i].name, errno);
		if (r >= 0 && calls[i].fd)
			close((int)r);
	}
}

static void *
sleeper(void *arg)
{
	for (;;)
		pause();
	return (arg);
}

/* The init hook: $KP_ATTACK_DIR/init once, before the library's READY. */
static int
init_hook(void *user, char *errbuf, size_t errsize)
{
	const char	*dir = getenv("KP_ATTACK_DIR");
	char		 path[PATH_MAX], done[PATH_MAX], line[PATH_MAX + 32];
	char		 msg[1000], op[32], a[PATH_MAX];
	FILE		*f;

	if (dir == NULL)
		return (0);
	snprintf(path, sizeof(path), "%s/init", dir);
	snprintf(done, sizeof(done), "%s/init.done", dir);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	if (rename(path, done) == -1)
		return (0);
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%31[^:]:%4095s", op, a) == 2 &&
	    strcmp(op, "raw-ready") == 0)
		raw_ready(a, msg, sizeof(msg));
	else if (strcmp(line, "dangerous") == 0)
		dangerous(msg, sizeof(msg));
	else if (strcmp(line, "thread") == 0) {
		pthread_t	 th;

		snprintf(msg, sizeof(msg), "thread: %s", pthread_create(&th,
		    NULL, sleeper, NULL) == 0 ? "running" : "not started");
	}
	else
		snprintf(msg, sizeof(msg), "unknown init spec %s", line);
	fprintf(stderr, "attack-init: %s\n", msg);
	return (0);
}

/* Claim "probe-<n>" runs the spec here too: unprepare looks up no
 * claim, so the publisher need not answer before the hook runs. */
static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	char	 msg[1000];
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strncmp(c[i].name, "probe-", 6) == 0) {
			run_spec(c[i].name + 6, msg, sizeof(msg));
			kp_unprepare_claim_error(res, i, msg);
		}
	return (0);
}

static void
error_cb(void *user, int code, const char *msg, int recoverable)
{
	printf("errcb %s rec=%d %s\n", kp_err_name(code), recoverable, msg);
	fflush(stdout);
}

static const char	*reg_spec;	/* --registrar-attack */
static volatile int	*reg_done;	/* shared by every process */

/* In the registrar: the first GetInfo of any registrar runs reg_spec. */
static int
reg_icpt(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	char	 out[1000];

	if (phase != KP_CALL_BEFORE || strcmp(call->server, "registrar") != 0 ||
	    strstr(call->method, "GetInfo") == NULL ||
	    !__sync_bool_compare_and_swap(reg_done, 0, 1))
		return (0);
	probe(reg_spec, out, sizeof(out));
	fprintf(stderr, "attack-registrar: %s\n", out);
	return (0);
}

static int
registrar_attack(struct kp_options *o, const char *spec)
{
	void	*page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return (-1);
	reg_done = page;
	reg_spec = spec;
	return (kp_grpc_interceptor(o, reg_icpt, NULL));
}

static int
sandbox_user(struct kp_options *o, const char *a)
{
	static const char	*names[] = { "nodeserver", "registrar",
				    "publisher" };
	unsigned		 uid, gid;
	char			 role[32];
	int			 i;

	if (sscanf(a, "%31[a-z]:%u:%u", role, &uid, &gid) != 3)
		return (-1);
	for (i = 0; i < 3; i++)
		if (strcmp(role, names[i]) == 0)
			return (kp_sandbox_user(o, (enum kp_process)i, uid,
			    gid));
	return (-1);
}

/* --cdi-device-number <type>:<major>:<first>:<last>:<pattern> */
static int
device_number(struct kp_options *o, const char *arg)
{
	unsigned int	 maj, first, last;
	char		 type;
	int		 n = -1;

	if (sscanf(arg, "%c:%u:%u:%u:%n", &type, &maj, &first, &last,
	    &n) != 4 || n < 0)
		return (-1);
	return (kp_cdi_allow_device_number(o, arg + n, type, maj, first,
	    last));
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "driver-name", 1, 0, 'd' },
		{ "registrar-socket", 1, 0, 'r' },
		{ "plugin-socket", 1, 0, 'p' },
		{ "allow-uid", 1, 0, 'u' },
		{ "sandbox-syscall", 1, 0, 302 },
		{ "sandbox-user", 1, 0, 304 },
		{ "state-dir", 1, 0, 330 }, { "read-path", 1, 0, 331 },
		{ "cdi-dir", 1, 0, 332 },
		{ "cdi-device-prefix", 1, 0, 333 },
		{ "cdi-mount-prefix", 1, 0, 334 },
		{ "cdi-hook", 1, 0, 335 },
		{ "device-metadata", 1, 0, 336 },
		{ "error-cb", 0, 0, 337 },
		{ "kubeconfig", 1, 0, 'c' }, { "node-name", 1, 0, 'n' },
		{ "http-endpoint", 1, 0, 338 },
		{ "registrar-attack", 1, 0, 339 },
		{ "fork-hooks", 0, 0, 340 },
		{ "cdi-device", 1, 0, 341 },
		{ "cdi-device-number", 1, 0, 342 },
		{ "hung-ms", 1, 0, 343 },
		{ "kube-qps", 1, 0, 344 },
		{ "shutdown-grace-ms", 1, 0, 345 },
		{ 0, 0, 0, 0 }
	};
	struct kp_options	*o;
	struct kp_plugin	*p;
	struct kp_hooks		 h = { NULL, prepare, unprepare, init_hook };
	char			 line[256];
	int			 ch, r = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (kp_options_new(&o) != 0)
		return (2);
	while ((ch = getopt_long(argc, argv, "v:", lo, NULL)) != -1) {
		switch (ch) {
		case 'd':
			snprintf(drv_name, sizeof(drv_name), "%s", optarg);
			r = kp_driver_name(o, optarg);
			break;
		case 'r': r = kp_registrar_socket_path(o, optarg); break;
		case 'p': r = kp_plugin_socket_path(o, optarg); break;
		case 'u': r = kp_allowed_peer_uid(o,
		    (uid_t)strtoul(optarg, 0, 10)); break;
		case 'v': r = kp_log_verbosity(o, (int)strtol(optarg, 0, 10));
			break;
		case 302: r = kp_sandbox_syscall(o, optarg); break;
		case 304: r = sandbox_user(o, optarg); break;
		case 330: r = kp_sandbox_state_dir(o, optarg); break;
		case 331: r = kp_sandbox_read_path(o, optarg); break;
		case 332: r = kp_cdi_directory(o, optarg); break;
		case 333: r = kp_cdi_allow_device_prefix(o, optarg); break;
		case 334: r = kp_cdi_allow_mount_prefix(o, optarg); break;
		case 335: r = kp_cdi_allow_hook(o, optarg); break;
		case 336: {
			const char *v[1] = { optarg };

			r = kp_device_metadata(o, 1, v, 1);
			break;
		}
		case 337: r = kp_error_callback(o, error_cb, NULL); break;
		case 338: r = kp_http_endpoint(o, optarg); break;
		case 339: r = registrar_attack(o, optarg); break;
		case 340: r = kp_sandbox_exec(o, 0); break;
		case 341: r = kp_cdi_allow_device(o, optarg); break;
		case 342: r = device_number(o, optarg); break;
		case 343: r = kp_hung_child_timeout(o,
		    (int)strtol(optarg, 0, 10)); break;
		case 344: r = kp_kube_api_qps(o, strtod(optarg, NULL),
		    strchr(optarg, ':') ? (int)strtol(strchr(optarg, ':') + 1,
		    0, 10) : 10); break;
		case 345: r = kp_shutdown_grace(o, (int)strtol(optarg, 0, 10));
			break;
		case 'c': r = kp_kube_client_kubeconfig(o, optarg, NULL); break;
		case 'n': r = kp_node_name(o, optarg); break;
		default: r = -1;
		}
		if (r != 0) {
			printf("error KP_EINVAL %s\n", kp_options_last_error(o));
			return (2);
		}
	}
	if ((r = kp_start(o, &h, &p)) != 0) {
		printf("error %s %s\n", kp_err_name(r),
		    kp_options_last_error(o));
		kp_options_free(o);
		return (1);
	}
	kp_options_free(o);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin) != NULL)
		if (strncmp(line, "stop", 4) == 0)
			break;
	r = kp_stop(p);
	printf("stopped %d fds 0 0\n", r);
	return (0);
}
