/*
 * kp_chanforge - plays a compromised child that runs no driver code (the
 * publisher, the observer), or watches what reaches one (a nodeserver):
 * it takes a copy of that child's channel to the supervisor with
 * pidfd_getfd(2) (root, as the tests run), stops the child (and waits
 * until every thread of it has stopped) so that the
 * frames the supervisor sends it arrive here, and then reads and sends
 * frames as the child could (tests/e2e/hostile.test.js):
 *
 *	kp_chanforge <pid> <step>...
 *
 * steps, in order:
 *   read:<ms>                  print every frame that arrives within ms
 *                              ("frame <mono ms> <case> ...": claim_get
 *                              id ns name uid, event_post kind note)
 *   until:<n>:<ms>             the same, until n ClaimGet or EventPost
 *                              frames arrived or ms passed
 *   reply:<id>:<ns>:<name>:<uid>
 *                              a ClaimReply (code 0, no devices); id 0:
 *                              the last ClaimGet read, with the uid
 *                              given ("=": its own)
 *   wait:<path>                until the file path exists (20 s at most)
 *   ping:<ms>                  read until a Ping arrives (ms at most)
 *   pong:<kind>                a Pong: "ok" answers the last Ping with one
 *                              API-server GET counted (the publisher's
 *                              own kind of counter), "rpc" answers it with
 *                              a gRPC method's counters (the nodeserver's
 *                              kind), "noping" answers no Ping (seq 777777)
 *   cdi:<n>:<list|write>       n CdiList frames, or n CdiWrite frames the
 *                              supervisor refuses (16 KiB specs of a name
 *                              no driver's), ids 1 to n, back to back (a
 *                              nodeserver's); their answers are counted
 *                              by until (cdi_reply id code)
 *   cont                       SIGCONT the child (else it stays stopped
 *                              until the supervisor kills it)
 * Prints "done <step>" or "error <step>"; exits 2 when it cannot set up.
 * The <mono ms> times are CLOCK_MONOTONIC, comparable with the hooks'.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "ipc/ipc.h"

static uint8_t	 buf[4u << 20];
static size_t	 buflen;
static uint64_t	 last_id;
static char	 last_ns[64], last_name[256], last_uid[64];
static int	 seen;		/* ClaimGet and EventPost frames read */
static uint64_t	 ping_seq;	/* the last Ping's */
static int	 pings;

static double
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6);
}

/* The parent of pid, from /proc/<pid>/status; -1 if unknown. */
static pid_t
parent_of(pid_t pid)
{
	char	 path[64], line[256];
	FILE	*f;
	int	 pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "PPid: %d", &pp) == 1)
			break;
	fclose(f);
	return ((pid_t)pp);
}

/*
 * The child's channel: the unnamed, connected AF_UNIX stream socket whose
 * peer the supervisor made (the log channel is SOCK_SEQPACKET, listeners
 * are named, socketpairs of the child's own have the child as peer).
 */
static int
steal_ctl(pid_t pid)
{
	struct sockaddr_un	 sun;
	struct ucred		 cr;
	pid_t			 sup = parent_of(pid);
	struct dirent		*de;
	char			 path[64];
	socklen_t		 sl;
	DIR			*d;
	int			 pfd, fd, type, acc, found = -1;

	if ((pfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1)
		return (-1);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL) {
		close(pfd);
		return (-1);
	}
	while (found == -1 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || atoi(de->d_name) < 3)
			continue;
		if ((fd = (int)syscall(SYS_pidfd_getfd, pfd,
		    atoi(de->d_name), 0)) == -1)
			continue;
		sl = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) == -1 ||
		    type != SOCK_STREAM) {
			close(fd);
			continue;
		}
		sl = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &sl) ||
		    acc) {
			close(fd);
			continue;
		}
		sl = sizeof(sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &sl) == -1 ||
		    sun.sun_family != AF_UNIX || sl > sizeof(sa_family_t)) {
			close(fd);
			continue;
		}
		sl = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) == -1 ||
		    cr.pid != sup) {
			close(fd);
			continue;
		}
		found = fd;
	}
	closedir(d);
	close(pfd);
	return (found);
}

/*
 * Until every thread of pid is stopped (state 't' or 'T' in
 * /proc/<pid>/task/<tid>/stat), 5 s at most. kill(SIGSTOP) returns before
 * the group stop is done: the thread the signal woke stops its siblings
 * only when it runs, and until then the child's reader may still take a
 * frame meant for us (seen under load: the answer to the first CdiList).
 */
static int
wait_stopped(pid_t pid)
{
	char		 path[64], line[512], *p;
	struct dirent	*de;
	double		 end = mono_ms() + 5000;
	DIR		*d;
	FILE		*f;
	int		 running;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		if ((d = opendir(path)) == NULL)
			return (-1);
		running = 0;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(line, sizeof(line), "%s/%s/stat", path,
			    de->d_name);
			if ((f = fopen(line, "r")) == NULL)
				continue;	/* a thread that ended */
			if (fgets(line, sizeof(line), f) != NULL &&
			    (p = strrchr(line, ')')) != NULL && p[1] == ' ' &&
			    p[2] != 't' && p[2] != 'T')
				running++;
			fclose(f);
		}
		closedir(d);
		if (running == 0)
			return (0);
		usleep(1000);
	} while (mono_ms() < end);
	errno = ETIMEDOUT;
	return (-1);
}

static void
show(const Kpipc__Msg *m)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field(&kpipc__msg__descriptor,
	    (unsigned)m->m_case);
	printf("frame %.3f %s", mono_ms(), f != NULL ? f->name : "?");
	if (m->m_case == KPIPC__MSG__M_CLAIM_GET) {
		printf(" %llu %s %s %s", (unsigned long long)m->claim_get->id,
		    m->claim_get->namespace_, m->claim_get->name,
		    m->claim_get->uid);
		last_id = m->claim_get->id;
		snprintf(last_ns, sizeof(last_ns), "%s",
		    m->claim_get->namespace_);
		snprintf(last_name, sizeof(last_name), "%s",
		    m->claim_get->name);
		snprintf(last_uid, sizeof(last_uid), "%s", m->claim_get->uid);
		seen++;
	} else if (m->m_case == KPIPC__MSG__M_PING) {
		ping_seq = m->ping->seq;
		pings++;
	} else if (m->m_case == KPIPC__MSG__M_CDI_REPLY) {
		printf(" %llu %d", (unsigned long long)m->cdi_reply->id,
		    m->cdi_reply->result != NULL ?
		    (int)m->cdi_reply->result->code : 0);
		seen++;
	} else if (m->m_case == KPIPC__MSG__M_EVENT_POST) {
		printf(" %d %s", (int)m->event_post->kind,
		    m->event_post->note);
		seen++;
	}
	printf("\n");
	fflush(stdout);
}

/* Read and print frames for ms, or until n counted frames (n > 0), or
 * until the np-th Ping arrived (np > 0). */
static int
read_frames(int fd, long ms, int n, int np)
{
	struct pollfd	 p = { fd, POLLIN, 0 };
	Kpipc__Msg	*m;
	double		 end = mono_ms() + ms;
	size_t		 len;
	ssize_t		 r;

	while ((n <= 0 || seen < n) && (np <= 0 || pings < np) &&
	    mono_ms() < end) {
		if (poll(&p, 1, (int)(end - mono_ms()) + 1) <= 0)
			continue;
		if ((r = read(fd, buf + buflen, sizeof(buf) - buflen)) <= 0) {
			printf("error read: %s\n", r == 0 ? "closed" :
			    strerror(errno));
			return (-1);
		}
		buflen += (size_t)r;
		while (buflen >= 4) {
			len = (size_t)buf[0] << 24 | (size_t)buf[1] << 16 |
			    (size_t)buf[2] << 8 | buf[3];
			if (len > sizeof(buf) - 4) {
				printf("error frame of %zu bytes\n", len);
				return (-1);
			}
			if (buflen < len + 4)
				break;
			if ((m = kpipc__msg__unpack(NULL, len, buf + 4)) !=
			    NULL) {
				show(m);
				kpipc__msg__free_unpacked(m, NULL);
			} else
				printf("frame %.3f undecodable\n", mono_ms());
			memmove(buf, buf + 4 + len, buflen - 4 - len);
			buflen -= 4 + len;
		}
	}
	return (0);
}

static int
send_msg(int fd, const Kpipc__Msg *m)
{
	uint8_t	 f[8192];
	size_t	 n = kpipc__msg__get_packed_size(m);

	if (n > sizeof(f) - 4)
		return (-1);
	kpipc__msg__pack(m, f + 4);
	f[0] = (uint8_t)(n >> 24);
	f[1] = (uint8_t)(n >> 16);
	f[2] = (uint8_t)(n >> 8);
	f[3] = (uint8_t)n;
	return (write(fd, f, n + 4) == (ssize_t)(n + 4) ? 0 : -1);
}

/* All n bytes, waiting for room: the stolen description may be the
 * child's non-blocking one. */
static int
write_all(int fd, const uint8_t *p, size_t n)
{
	struct pollfd	 pfd = { fd, POLLOUT, 0 };
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno != EAGAIN && errno != EINTR)
				return (-1);
			(void)poll(&pfd, 1, 1000);
			continue;
		}
		p += w;
		n -= (size_t)w;
	}
	return (0);
}

/* n CdiList or refused CdiWrite frames, as fast as the channel takes
 * them. */
static int
cdi(int fd, long n, const char *what)
{
	static char		 content[16384];
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__CdiList		 l = KPIPC__CDI_LIST__INIT;
	Kpipc__CdiWrite		 w = KPIPC__CDI_WRITE__INIT;
	uint8_t			*f;
	size_t			 len;
	long			 i;
	int			 r = 0;

	if (strcmp(what, "list") == 0) {
		m.m_case = KPIPC__MSG__M_CDI_LIST;
		m.cdi_list = &l;
	} else if (strcmp(what, "write") == 0) {
		memset(content, 'x', sizeof(content));
		m.m_case = KPIPC__MSG__M_CDI_WRITE;
		m.cdi_write = &w;
		w.name = "refused.example.com_forged.json";
		w.content.data = (uint8_t *)content;
		w.content.len = sizeof(content);
	} else
		return (-1);
	if ((f = malloc(kpipc__msg__get_packed_size(&m) + 64)) == NULL)
		return (-1);
	for (i = 1; i <= n && r == 0; i++) {
		l.id = w.id = (uint64_t)i;
		len = kpipc__msg__pack(&m, f + 4);
		f[0] = (uint8_t)(len >> 24);
		f[1] = (uint8_t)(len >> 16);
		f[2] = (uint8_t)(len >> 8);
		f[3] = (uint8_t)len;
		r = write_all(fd, f, len + 4);
	}
	free(f);
	return (r);
}

static int
reply(int fd, char *spec)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	Kpipc__Result		 res = KPIPC__RESULT__INIT;
	char			 ns[64], name[256], uid[64];
	unsigned long long	 id;

	if (sscanf(spec, "%llu:%63[^:]:%255[^:]:%63s", &id, ns, name,
	    uid) != 4)
		return (-1);
	if (id == 0) {
		if (last_id == 0)
			return (-1);
		id = last_id;
		snprintf(ns, sizeof(ns), "%s", last_ns);
		snprintf(name, sizeof(name), "%s", last_name);
		if (strcmp(uid, "=") == 0)
			snprintf(uid, sizeof(uid), "%s", last_uid);
	}
	res.message = "";
	r.id = id;
	r.result = &res;
	r.namespace_ = ns;
	r.name = name;
	r.uid = uid;
	m.m_case = KPIPC__MSG__M_CLAIM_REPLY;
	m.claim_reply = &r;
	return (send_msg(fd, &m));
}

static int
pong(int fd, const char *kind)
{
	static uint64_t		 buckets[KP_STATS_LAT_BOUNDS + 1];
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Pong		 p = KPIPC__PONG__INIT;
	Kpipc__RpcStat		 rs = KPIPC__RPC_STAT__INIT, *rsp = &rs;
	Kpipc__ApiStat		 as = KPIPC__API_STAT__INIT, *asp = &as;

	p.seq = ping_seq;
	if (strcmp(kind, "ok") == 0) {
		as.verb = "GET";
		as.code = 200;
		as.count = 1;
		p.api = &asp;
		p.n_api = 1;
	} else if (strcmp(kind, "rpc") == 0) {
		rs.method = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
		    "NodePrepareResources";
		rs.count = 1;
		rs.n_buckets = KP_STATS_LAT_BOUNDS + 1;
		rs.buckets = buckets;
		buckets[0] = 1;
		p.rpc = &rsp;
		p.n_rpc = 1;
	} else if (strcmp(kind, "noping") == 0)
		p.seq = 777777;
	else
		return (-1);
	m.m_case = KPIPC__MSG__M_PONG;
	m.pong = &p;
	return (send_msg(fd, &m));
}

int
main(int argc, char **argv)
{
	pid_t	 pid;
	long	 a, b;
	int	 fd, i, r;

	if (argc < 3 || (pid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: kp_chanforge <pid> <step>...\n");
		return (2);
	}
	if (kill(pid, SIGSTOP) == -1 || wait_stopped(pid) == -1 ||
	    (fd = steal_ctl(pid)) == -1) {
		printf("error set-up: %s\n", strerror(errno));
		return (2);
	}
	printf("stolen %.3f\n", mono_ms());
	fflush(stdout);
	for (i = 2; i < argc; i++) {
		r = 0;
		if (sscanf(argv[i], "read:%ld", &a) == 1)
			r = read_frames(fd, a, 0, 0);
		else if (sscanf(argv[i], "until:%ld:%ld", &a, &b) == 2)
			r = read_frames(fd, b, (int)a, 0);
		else if (sscanf(argv[i], "ping:%ld", &a) == 1)
			r = read_frames(fd, a, 0, pings + 1) == 0 &&
			    ping_seq != 0 ? 0 : -1;
		else if (strncmp(argv[i], "pong:", 5) == 0)
			r = pong(fd, argv[i] + 5);
		else if (sscanf(argv[i], "cdi:%ld:", &a) == 1)
			r = cdi(fd, a, strchr(argv[i] + 4, ':') + 1);
		else if (strncmp(argv[i], "reply:", 6) == 0)
			r = reply(fd, argv[i] + 6);
		else if (strncmp(argv[i], "wait:", 5) == 0) {
			double end = mono_ms() + 20000;

			while (access(argv[i] + 5, F_OK) == -1 &&
			    mono_ms() < end)
				usleep(20000);
			r = access(argv[i] + 5, F_OK);
		} else if (strcmp(argv[i], "cont") == 0)
			r = kill(pid, SIGCONT);
		else
			r = -1;
		printf("%s %s\n", r == 0 ? "done" : "error", argv[i]);
		fflush(stdout);
	}
	return (0);
}
