/*
 * kp_redteam - a driver whose prepare hook plays an attacker that has fully
 * compromised the nodeserver (tests/e2e/redteam.test.js). Each claim's name
 * is a probe command "<probe>-<arg>" (the probe name has no '-'); the hook
 * runs the probe and fails that claim with
 *   PROBE <probe>: DENIED: <what happened>
 *   PROBE <probe>: SUCCEEDED: <evidence>
 *   PROBE <probe>: ERROR: <the probe could not run: a harness problem>
 * A name that is no probe prepares one device, as kp_testdriver does.
 *
 * Claim names are Kubernetes names, so paths come from a table: with
 * --redteam-targets FILE (lines "key path"), read before kp_start(); the
 * nodeserver inherits it in memory. Probes name targets by key.
 *
 * The options are kp_testdriver's kp_* setters plus --in-cluster,
 * --main-confine (kp_policy_main_confine) and --redteam-targets, so tests/e2e/lib/plugin.js's TestDriver runs it with
 * `binary: REDTEAM`. After kp_start it prints "ready <pid>" and reads
 * "status" and "stop" on stdin, as kp_testdriver does.
 *
 * Every probe must work whether the sandbox lets a syscall run, fails it
 * with an errno, or kills the process (then the call fails and the test
 * reads the supervisor's log instead).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <netinet/in.h>

#include "kubeletplugin.h"

#define SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_TARGETS	64
#define SCAN_LIMIT	(64UL << 20)	/* bytes of another process read */
#define CHUNK		(64UL << 10)

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif
#ifndef FAN_CLASS_NOTIF
#define FAN_CLASS_NOTIF		0x00000000
#define FAN_CLOEXEC		0x00000001
#define FAN_REPORT_FID		0x00000200
#endif

struct target {
	char	 key[32];
	char	 path[PATH_MAX];
};

/* What one probe found: the text of the claim error. */
struct res {
	char	 text[900];
	size_t	 len;
	int	 won;		/* some step of the attack worked */
	int	 error;		/* the probe could not run */
};

struct probe {
	const char	*name;
	void		(*fn)(const char *, struct res *);
};

static struct target	 targets[MAX_TARGETS];
static size_t		 n_targets;
static char		 drv_name[64];
/* In the data segment at the same address in every process of the tree
 * (they are forks of this one): process_vm_readv reads it elsewhere. */
static char		 marker[32] = "kp-redteam-data-marker";

static void	note(struct res *, int, const char *, ...) KP_PRINTF(3, 4);

static void
note(struct res *r, int won, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (won)
		r->won = 1;
	if (r->len > 0 && r->len + 2 < sizeof(r->text)) {
		memcpy(r->text + r->len, "; ", 3);
		r->len += 2;
	}
	if (r->len >= sizeof(r->text) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(r->text + r->len, sizeof(r->text) - r->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->len += (size_t)n;
	if (r->len > sizeof(r->text) - 1)
		r->len = sizeof(r->text) - 1;
}

/* "EPERM (Operation not permitted)"; one static buffer (hooks are
 * serialized). */
static const char *
errtext(int e)
{
	static char	 buf[128];
	const char	*name = strerrorname_np(e);

	snprintf(buf, sizeof(buf), "%s (%s)", name ? name : "?", strerror(e));
	return (buf);
}

/* An errno that means the sandbox or the kernel said no. */
static int
refused(int e)
{
	return (e == EPERM || e == EACCES || e == ENOSYS);
}

static const char *
target(const char *key)
{
	size_t	 i;

	for (i = 0; i < n_targets; i++)
		if (strcmp(targets[i].key, key) == 0)
			return (targets[i].path);
	return (NULL);
}

static int
load_targets(const char *file)
{
	FILE	*f;
	char	 line[PATH_MAX + 64];
	size_t	 len;
	char	*sp;

	if ((f = fopen(file, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), f) != NULL &&
	    n_targets < MAX_TARGETS) {
		len = strcspn(line, "\n");
		line[len] = '\0';
		if ((sp = strchr(line, ' ')) == NULL)
			continue;
		*sp++ = '\0';
		snprintf(targets[n_targets].key,
		    sizeof(targets[n_targets].key), "%.31s", line);
		snprintf(targets[n_targets].path,
		    sizeof(targets[n_targets].path), "%s", sp);
		n_targets++;
	}
	fclose(f);
	return (0);
}

/* A number at *s, up to '-' or the end; *s moves past the '-'. */
static int
arg_num(const char **s, long *v)
{
	char	*end;

	errno = 0;
	*v = strtol(*s, &end, 10);
	if (errno != 0 || end == *s || (*end != '\0' && *end != '-'))
		return (-1);
	*s = *end == '-' ? end + 1 : end;
	return (0);
}

/*
 * A pid argument naming another process. In a pid namespace of its own
 * the host's pid may name this very process: no foreign process is
 * reached then, and the probe stops there (DENIED).
 */
static int
arg_pid(const char **s, long *pid, struct res *r)
{
	if (arg_num(s, pid) != 0 || *pid <= 0) {
		r->error = 1;
		note(r, 0, "bad pid argument \"%s\"", *s);
		return (-1);
	}
	if (*pid == (long)getpid()) {
		note(r, 0, "pid %ld is this process itself (a pid namespace):"
		    " no foreign process to reach", *pid);
		return (-1);
	}
	return (0);
}

static const char *
need(const char *key, struct res *r)
{
	const char	*p = target(key);

	if (p == NULL) {
		r->error = 1;
		note(r, 0, "no target \"%s\" in --redteam-targets", key);
	}
	return (p);
}

/* Reads at most size - 1 bytes of path into buf (NUL-terminated). */
static ssize_t
read_path(const char *path, char *buf, size_t size)
{
	ssize_t	 n, got = 0;
	int	 fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((size_t)got < size - 1 &&
	    (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	e = errno;
	if (n == -1 && got == 0) {
		close(fd);
		errno = e;
		return (-1);
	}
	close(fd);
	buf[got] = '\0';
	return (got);
}

/* Reads path and notes what came of it: the attack reading a file. An
 * empty read is no theft (a hidden file is /dev/null). */
static void
steal_file(struct res *r, const char *what, const char *path)
{
	static char	 buf[64 << 10];
	ssize_t		 n;

	if ((n = read_path(path, buf, sizeof(buf))) == -1)
		note(r, 0, "%s %s: %s", what, path, errtext(errno));
	else if (n == 0)
		note(r, 0, "%s %s: read 0 bytes (empty or hidden)", what, path);
	else
		note(r, 1, "read %zd bytes of %s %s (starts \"%.6s\")", n,
		    what, path, buf);
}

/* Simple syscall outcome: >= 0 worked, an EPERM/EACCES/ENOSYS (or also)
 * was a refusal, any other errno means the call reached the kernel. */
static void
sys_outcome(struct res *r, const char *call, long rc, int e, int also)
{
	if (rc >= 0)
		note(r, 1, "%s returned %ld", call, rc);
	else if (refused(e) || (also != 0 && e == also))
		note(r, 0, "%s: %s", call, errtext(e));
	else
		note(r, 1, "%s reached the kernel: %s", call, errtext(e));
}

/* ---- another process's memory, root, environment and fds ---------- */

static size_t
scan_mapping(int fd, unsigned long lo, unsigned long hi, const char *tag,
    unsigned long *found, size_t budget)
{
	static char	 buf[CHUNK + 256];
	size_t		 tl = strlen(tag), done = 0, want;
	unsigned long	 off;
	ssize_t		 n;
	char		*hit;

	for (off = lo; off < hi && done < budget; off += CHUNK) {
		want = hi - off < CHUNK ? hi - off : CHUNK;
		if (tl > 0 && off + want + tl - 1 <= hi)
			want += tl - 1;
		if ((n = pread(fd, buf, want, (off_t)off)) <= 0)
			break;
		done += (size_t)n;
		if (tl > 0 && *found == 0 &&
		    (hit = memmem(buf, (size_t)n, tag, tl)) != NULL)
			*found = off + (unsigned long)(hit - buf);
	}
	return (done);
}

/* procmem-<pid>[-<tag>]: /proc/<pid>/mem read, scanned for tag, written. */
static void
p_procmem(const char *arg, struct res *r)
{
	static char	 maps[256 << 10];
	char		 path[64], perms[8], *line, *save = NULL, b;
	unsigned long	 lo, hi, first = 0, found = 0, at;
	const char	*tag;
	size_t		 scanned = 0;
	long		 pid;
	int		 fd, rw = 1;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	tag = arg;
	snprintf(path, sizeof(path), "/proc/%ld/mem", pid);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s O_RDWR: %s", path, errtext(errno));
		rw = 0;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			note(r, 0, "O_RDONLY: %s", errtext(errno));
			return;
		}
		note(r, 1, "opened %s O_RDONLY", path);
	} else
		note(r, 1, "opened %s O_RDWR", path);
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	if (read_path(path, maps, sizeof(maps)) == -1) {
		note(r, 0, "read %s: %s", path, errtext(errno));
		close(fd);
		return;
	}
	for (line = strtok_r(maps, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || perms[1] != 'w')
			continue;
		if (first == 0)
			first = lo;
		scanned += scan_mapping(fd, lo, hi, tag, &found,
		    SCAN_LIMIT - scanned);
		if (scanned >= SCAN_LIMIT || (found != 0 && scanned > 0))
			break;
	}
	if (scanned > 0)
		note(r, 1, "read %zu bytes of its rw mappings", scanned);
	else
		note(r, 0, "no rw mapping could be read");
	if (tag[0] != '\0' && found != 0)
		note(r, 1, "found the token (tag %s) at 0x%lx", tag, found);
	else if (tag[0] != '\0')
		note(r, 0, "tag %s not found", tag);
	at = found != 0 ? found : first;
	if (rw && at != 0) {
		if (pread(fd, &b, 1, (off_t)at) == 1 &&
		    pwrite(fd, &b, 1, (off_t)at) == 1)
			note(r, 1, "wrote 1 byte back at 0x%lx", at);
		else
			note(r, 0, "pwrite at 0x%lx: %s", at, errtext(errno));
	}
	close(fd);
}

/* procroot-<pid>-<key>: the target file through /proc/<pid>/root. */
static void
p_procroot(const char *arg, struct res *r)
{
	char		 path[PATH_MAX + 64], link[PATH_MAX];
	const char	*file;
	ssize_t		 n;
	long		 pid;

	if (arg_pid(&arg, &pid, r) != 0 || (file = need(arg, r)) == NULL)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/root", pid);
	if ((n = readlink(path, link, sizeof(link) - 1)) >= 0) {
		link[n] = '\0';
		note(r, 0, "%s -> %s", path, link);
	}
	snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, file);
	steal_file(r, "file", path);
}

/* procenv-<pid>: /proc/<pid>/environ. */
static void
p_procenv(const char *arg, struct res *r)
{
	static char	 buf[64 << 10];
	char		 path[64];
	ssize_t		 n, i, vars = 0;
	long		 pid;
	int		 kube = 0;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	if ((n = read_path(path, buf, sizeof(buf))) == -1) {
		note(r, 0, "read %s: %s", path, errtext(errno));
		return;
	}
	for (i = 0; i < n; i++)
		if (buf[i] == '\0') {
			vars++;
			buf[i] = '\n';
		}
	kube = strstr(buf, "KUBERNETES_SERVICE_HOST=") != NULL;
	note(r, 1, "read %s: %zd bytes, %zd variables%s", path, n, vars,
	    kube ? ", KUBERNETES_SERVICE_HOST among them" : "");
}

/* procfd-<pid>: list /proc/<pid>/fd, open what can be opened there. */
static void
p_procfd(const char *arg, struct res *r)
{
	char		 dir[64], path[80 + NAME_MAX], link[256], list[400];
	struct dirent	*de;
	DIR		*d;
	size_t		 len = 0;
	ssize_t		 n;
	long		 pid;
	int		 fd, count = 0, opened = 0;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
	if ((d = opendir(dir)) == NULL) {
		note(r, 0, "opendir %s: %s", dir, errtext(errno));
		return;
	}
	list[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		count++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
			continue;
		link[n] = '\0';
		if (len < sizeof(list) - 1)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
			    " %s=%s", de->d_name, link);
		if (len > sizeof(list) - 1)
			len = sizeof(list) - 1;
		/* sockets cannot be opened so; pipes and files can */
		if (strncmp(link, "socket:", 7) == 0 ||
		    strncmp(link, "anon_inode:", 11) == 0)
			continue;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd != -1) {
			opened++;
			close(fd);
		}
	}
	closedir(d);
	note(r, 1, "listed %s: %d fds:%s", dir, count, list);
	if (opened > 0)
		note(r, 1, "reopened %d of its fds through /proc", opened);
}

/* procstatus-<pid>: /proc/<pid>/status. */
static void
p_procstatus(const char *arg, struct res *r)
{
	static char	 buf[8192];
	char		 path[64], *name, *uid;
	long		 pid;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (read_path(path, buf, sizeof(buf)) == -1) {
		note(r, 0, "read %s: %s", path, errtext(errno));
		return;
	}
	name = strstr(buf, "Name:");
	uid = strstr(buf, "Uid:");
	if (name != NULL)
		name[strcspn(name, "\n")] = '\0';
	if (uid != NULL)
		uid[strcspn(uid, "\n")] = '\0';
	note(r, 1, "read %s: %s, %s", path, name ? name : "?",
	    uid ? uid : "?");
}

/* oomadj-<pid>: rewrite /proc/<pid>/oom_score_adj with its own value. */
static void
p_oomadj(const char *arg, struct res *r)
{
	char	 path[64], val[32];
	ssize_t	 n;
	long	 pid;
	int	 fd;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/oom_score_adj", pid);
	if ((n = read_path(path, val, sizeof(val))) <= 0) {
		note(r, 0, "read %s: %s", path, errtext(errno));
		return;
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s O_WRONLY: %s", path, errtext(errno));
		return;
	}
	if (write(fd, val, (size_t)n) == n)
		note(r, 1, "wrote %s (its value) back", path);
	else
		note(r, 0, "write %s: %s", path, errtext(errno));
	close(fd);
}

/* tokendir: the service-account directory, straight. */
static void
p_tokendir(const char *arg, struct res *r)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir(SA_DIR)) == NULL)
		note(r, 0, "opendir %s: %s", SA_DIR, errtext(errno));
	else {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				n++;
		closedir(d);
		note(r, n > 0, "%s lists %d entries", SA_DIR, n);
	}
	steal_file(r, "token", SA_DIR "/token");
}

/* ---- files ----------------------------------------------------------- */

/* kubeconfig: the kubeconfig, the files it names, and the targets
 * kctoken, kcca, kccert, kckey (in case the kubeconfig is hidden). */
static void
p_kubeconfig(const char *arg, struct res *r)
{
	static const char	*fields[] = { "tokenFile:",
				    "certificate-authority:",
				    "client-certificate:", "client-key:" };
	static const char	*keys[] = { "kctoken", "kcca", "kccert",
				    "kckey" };
	static char		 kc[64 << 10];
	char			 dir[PATH_MAX], file[PATH_MAX * 2], *p, *v;
	const char		*path;
	size_t			 i, l;
	ssize_t			 n;

	if ((path = need("kubeconfig", r)) == NULL)
		return;
	if ((n = read_path(path, kc, sizeof(kc))) == -1)
		note(r, 0, "read kubeconfig %s: %s", path, errtext(errno));
	else if (n == 0)
		note(r, 0, "kubeconfig %s: read 0 bytes (empty or hidden)",
		    path);
	else {
		note(r, 1, "read kubeconfig %s (%zd bytes)", path, n);
		snprintf(dir, sizeof(dir), "%s", path);
		if ((p = strrchr(dir, '/')) != NULL)
			*p = '\0';
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if ((p = strstr(kc, fields[i])) == NULL)
				continue;
			v = p + strlen(fields[i]);
			v += strspn(v, " \t\"");
			l = strcspn(v, "\"\r\n");
			if (v[0] == '/')
				snprintf(file, sizeof(file), "%.*s", (int)l, v);
			else
				snprintf(file, sizeof(file), "%s/%.*s", dir,
				    (int)l, v);
			steal_file(r, fields[i], file);
		}
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if ((path = target(keys[i])) != NULL)
			steal_file(r, keys[i], path);
}

/* statpath-<key>: stat the target (what is visible; /dev/null over it
 * is hidden). */
static void
p_statpath(const char *arg, struct res *r)
{
	const char	*path;
	struct stat	 st, null;

	if ((path = need(arg, r)) == NULL)
		return;
	if (fstatat(AT_FDCWD, path, &st, 0) == -1)
		note(r, 0, "stat %s: %s", path, errtext(errno));
	else if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	    st.st_rdev == null.st_rdev)
		note(r, 0, "stat %s: /dev/null is over it (hidden)", path);
	else
		note(r, 1, "stat %s: mode %o uid %u size %lld", path,
		    (unsigned)st.st_mode, (unsigned)st.st_uid,
		    (long long)st.st_size);
}

/* devopen-<key>: open the host device node the target names, for
 * reading and then for writing, and read a byte (a device driver's pod is
 * privileged: the container may open every device; the nodeserver must
 * not). */
static void
p_devopen(const char *arg, struct res *r)
{
	const char	*path;
	char		 b;
	int		 fd;

	if ((path = need(arg, r)) == NULL)
		return;
	if ((fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) != -1) {
		note(r, 1, "open %s O_RDWR", path);
		close(fd);
	} else
		note(r, 0, "open %s O_RDWR: %s", path, errtext(errno));
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s O_RDONLY: %s", path, errtext(errno));
		return;
	}
	note(r, 1, "open %s O_RDONLY", path);
	if (read(fd, &b, 1) == 1)
		note(r, 1, "read a byte");
	close(fd);
}

/* rootwrite: open the root-owned target rootfile for writing and
 * rewrite its first byte with itself. */
static void
p_rootwrite(const char *arg, struct res *r)
{
	const char	*path;
	char		 b;
	int		 fd;

	if ((path = need("rootfile", r)) == NULL)
		return;
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s O_RDWR: %s", path, errtext(errno));
		return;
	}
	note(r, 1, "opened root-owned %s O_RDWR", path);
	if (pread(fd, &b, 1, 0) == 1 && pwrite(fd, &b, 1, 0) == 1)
		note(r, 1, "rewrote its first byte");
	else
		note(r, 0, "rewrite: %s", errtext(errno));
	close(fd);
}

/* rootcreate: a new file in the root-owned directory rootdir. */
static void
p_rootcreate(const char *arg, struct res *r)
{
	char		 path[PATH_MAX + 16];
	const char	*dir;
	int		 fd;

	if ((dir = need("rootdir", r)) == NULL)
		return;
	snprintf(path, sizeof(path), "%s/rt-created", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) == -1) {
		note(r, 0, "create %s: %s", path, errtext(errno));
		return;
	}
	note(r, 1, "created %s", path);
	if (write(fd, "redteam\n", 8) == 8)
		note(r, 1, "wrote into it");
	close(fd);
}

/* sockunlink / sockrename: every target whose key starts so. */
static void
sock_targets(struct res *r, const char *prefix, int rename_it)
{
	char	 to[PATH_MAX + 8];
	size_t	 i;
	int	 n = 0;

	for (i = 0; i < n_targets; i++) {
		if (strncmp(targets[i].key, prefix, strlen(prefix)) != 0)
			continue;
		n++;
		snprintf(to, sizeof(to), "%s.rt", targets[i].path);
		if ((rename_it ? rename(targets[i].path, to) :
		    unlink(targets[i].path)) == 0)
			note(r, 1, "%s %s", rename_it ? "renamed" : "unlinked",
			    targets[i].path);
		else
			note(r, 0, "%s %s: %s", rename_it ? "rename" :
			    "unlink", targets[i].path, errtext(errno));
	}
	if (n == 0) {
		r->error = 1;
		note(r, 0, "no %s* targets", prefix);
	}
}

static void
p_sockunlink(const char *arg, struct res *r)
{
	sock_targets(r, "sockunlink", 0);
}

static void
p_sockrename(const char *arg, struct res *r)
{
	sock_targets(r, "sockrename", 1);
}

/* unixconnect-<key>: connect to the unix socket at the target. */
static void
p_unixconnect(const char *arg, struct res *r)
{
	struct sockaddr_un	 sun;
	const char		*path;
	int			 s;

	if ((path = need(arg, r)) == NULL)
		return;
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		note(r, 0, "socket(AF_UNIX): %s", errtext(errno));
		return;
	}
	note(r, 1, "socket(AF_UNIX) worked");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		note(r, 0, "connect %s: %s", path, errtext(errno));
	else
		note(r, 1, "connected to %s", path);
	close(s);
}

/* inetsocket-<port>: a TCP connection to 127.0.0.1:<port> (the API
 * server emulator). */
static void
p_inetsocket(const char *arg, struct res *r)
{
	struct sockaddr_in	 sin;
	long			 port = 0;
	int			 s;

	if (arg[0] != '\0' && (arg_num(&arg, &port) != 0 || port <= 0 ||
	    port > 65535)) {
		r->error = 1;
		note(r, 0, "bad port");
		return;
	}
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		note(r, 0, "socket(AF_INET): %s", errtext(errno));
		return;
	}
	note(r, 1, "socket(AF_INET) worked");
	if (port != 0) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			note(r, 0, "connect 127.0.0.1:%ld: %s", port,
			    errtext(errno));
		else
			note(r, 1, "connected to 127.0.0.1:%ld", port);
	}
	close(s);
}

/* ---- signals through fcntl ---------------------------------------- */

/* setown-<pid> / setownex-<pid>: a pipe whose reader is owned by pid,
 * SIGKILL as its signal, O_ASYNC, then a write: the kernel sends the
 * signal with this process's credentials. The attack worked when every
 * step did (the test also checks that the target died). */
static void
fcntl_owner(const char *arg, struct res *r, int ex)
{
	struct f_owner_ex	 own;
	long			 pid;
	int			 p[2], fl, ok = 1;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1) {
		note(r, 0, "pipe2: %s", errtext(errno));
		return;
	}
	own.type = F_OWNER_PID;
	own.pid = (pid_t)pid;
	if ((ex ? fcntl(p[0], F_SETOWN_EX, &own) :
	    fcntl(p[0], F_SETOWN, (int)pid)) == -1) {
		note(r, 0, "%s %ld: %s", ex ? "F_SETOWN_EX" : "F_SETOWN", pid,
		    errtext(errno));
		ok = 0;
	} else
		note(r, 0, "%s %ld worked", ex ? "F_SETOWN_EX" : "F_SETOWN",
		    pid);
	if (fcntl(p[0], F_SETSIG, SIGKILL) == -1) {
		note(r, 0, "F_SETSIG SIGKILL: %s", errtext(errno));
		ok = 0;
	} else
		note(r, 0, "F_SETSIG SIGKILL worked");
	if ((fl = fcntl(p[0], F_GETFL)) == -1 ||
	    fcntl(p[0], F_SETFL, fl | O_ASYNC) == -1) {
		note(r, 0, "F_SETFL O_ASYNC: %s", errtext(errno));
		ok = 0;
	} else
		note(r, 0, "F_SETFL O_ASYNC worked");
	if (ok) {
		if (write(p[1], "x", 1) == 1)
			note(r, 1, "wrote: SIGKILL sent to %ld", pid);
		else
			note(r, 0, "write: %s", errtext(errno));
	}
	close(p[0]);
	close(p[1]);
}

static void
p_setown(const char *arg, struct res *r)
{
	fcntl_owner(arg, r, 0);
}

static void
p_setownex(const char *arg, struct res *r)
{
	fcntl_owner(arg, r, 1);
}

/* setlease: a read lease on the target leasefile (a lease break then
 * signals the F_SETOWN owner). */
static void
p_setlease(const char *arg, struct res *r)
{
	const char	*path;
	int		 fd;

	if ((path = need("leasefile", r)) == NULL)
		return;
	/* The target may be out of reach already (a uid of its own,
	 * Landlock): then try the call on an fd the nodeserver has, so the
	 * fcntl rule itself is probed. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s: %s; on fd 0 instead", path,
		    errtext(errno));
		fd = dup(0);
	}
	if (fd == -1)
		note(r, 0, "no fd to try F_SETLEASE on");
	else if (fcntl(fd, F_SETLEASE, F_RDLCK) == -1)
		note(r, 0, "F_SETLEASE F_RDLCK: %s", errtext(errno));
	else {
		note(r, 1, "F_SETLEASE F_RDLCK worked");
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
	}
	if (fd != -1)
		close(fd);
}

/* fnotify: dnotify on the target notifydir. */
static void
p_fnotify(const char *arg, struct res *r)
{
	const char	*path;
	int		 fd;

	if ((path = need("notifydir", r)) == NULL)
		return;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s: %s; on /sys instead", path,
		    errtext(errno));
		fd = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd == -1)
		note(r, 0, "no directory to try F_NOTIFY on");
	else if (fcntl(fd, F_NOTIFY, DN_MODIFY | DN_CREATE |
	    DN_MULTISHOT) == -1)
		note(r, 0, "F_NOTIFY: %s", errtext(errno));
	else {
		note(r, 1, "F_NOTIFY worked");
		(void)fcntl(fd, F_NOTIFY, 0);
	}
	if (fd != -1)
		close(fd);
}

/* ---- signals and processes ---------------------------------------- */

/* kill-<pid>-<sig> */
static void
p_kill(const char *arg, struct res *r)
{
	char	 call[64];
	long	 pid, sig;
	long	 rc;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	if (arg_num(&arg, &sig) != 0 || sig < 0 || sig >= NSIG) {
		r->error = 1;
		note(r, 0, "bad signal");
		return;
	}
	snprintf(call, sizeof(call), "kill(%ld, %ld)", pid, sig);
	errno = 0;
	rc = syscall(SYS_kill, pid, sig);
	sys_outcome(r, call, rc, errno, ESRCH);
}

/* tgkill-<pid>: signal 0 to the thread group leader of another process. */
static void
p_tgkill(const char *arg, struct res *r)
{
	char	 call[64];
	long	 pid, rc;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(call, sizeof(call), "tgkill(%ld, %ld, 0)", pid, pid);
	rc = syscall(SYS_tgkill, pid, pid, 0);
	sys_outcome(r, call, rc, errno, ESRCH);
}

/* ptrace-<pid>: PTRACE_ATTACH, detached again at once when it worked. */
static void
p_ptrace(const char *arg, struct res *r)
{
	struct timespec	 ms = { 0, 1000000 };
	long		 pid, rc;
	int		 i;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	rc = syscall(SYS_ptrace, (long)PTRACE_ATTACH, pid, 0, 0);
	sys_outcome(r, "ptrace(PTRACE_ATTACH)", rc, errno, ESRCH);
	if (rc != 0)
		return;
	for (i = 0; i < 1000; i++) {
		if (syscall(SYS_ptrace, (long)PTRACE_DETACH, pid, 0, 0) == 0)
			break;
		nanosleep(&ms, NULL);
	}
}

/* vmreadv-<pid>: process_vm_readv of our data marker in the other
 * process (same address there: it is a fork of this binary). */
static void
p_vmreadv(const char *arg, struct res *r)
{
	struct iovec	 local, remote;
	char		 buf[sizeof(marker)];
	long		 pid, rc;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	memset(buf, 0, sizeof(buf));
	local.iov_base = buf;
	local.iov_len = sizeof(buf) - 1;
	remote.iov_base = marker;
	remote.iov_len = sizeof(buf) - 1;
	rc = syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL,
	    0UL);
	sys_outcome(r, "process_vm_readv", rc, errno, ESRCH);
	if (rc > 0)
		note(r, 1, "read \"%s\" from pid %ld", buf, pid);
}

/* pidfdopen-<pid> */
static void
p_pidfdopen(const char *arg, struct res *r)
{
	long	 pid, rc;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	rc = syscall(SYS_pidfd_open, pid, 0);
	sys_outcome(r, "pidfd_open", rc, errno, ESRCH);
	if (rc >= 0)
		close((int)rc);
}

/* fork: the child leaves the target forkmarker and exits. */
static void
p_fork(const char *arg, struct res *r)
{
	const char	*m = target("forkmarker");
	pid_t		 pid;
	int		 fd;

	pid = fork();
	if (pid == 0) {
		if (m != NULL && (fd = open(m, O_WRONLY | O_CREAT, 0644)) >= 0)
			close(fd);
		_exit(0);
	}
	if (pid == -1)
		note(r, 0, "fork: %s", errtext(errno));
	else
		note(r, 1, "fork created child %d", (int)pid);
}

/* execve: /usr/bin/touch <execmarker>; returns only when refused. */
static void
p_execve(const char *arg, struct res *r)
{
	const char	*m;
	char		*argv[3], *envp[1] = { NULL };

	if ((m = need("execmarker", r)) == NULL)
		return;
	argv[0] = (char *)"touch";
	argv[1] = (char *)m;
	argv[2] = NULL;
	syscall(SYS_execve, "/usr/bin/touch", argv, envp);
	sys_outcome(r, "execve /usr/bin/touch", -1, errno, 0);
}

/* ---- syscalls that must stay out of reach ------------------------- */

static void
p_openbyhandle(const char *arg, struct res *r)
{
	struct {
		unsigned int	 bytes;
		int		 type;
		unsigned char	 h[8];
	} fh;
	long	 rc;
	int	 mfd, e;

	/* the "shocker" handle: inode 2 (the root of ext4), generation 0 */
	memset(&fh, 0, sizeof(fh));
	fh.bytes = 8;
	fh.type = 1;	/* FILEID_INO32_GEN */
	fh.h[0] = 2;
	if ((mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		note(r, 0, "open /: %s", errtext(errno));
		return;
	}
	rc = syscall(SYS_open_by_handle_at, mfd, &fh, O_RDONLY | O_CLOEXEC);
	e = errno;
	close(mfd);
	sys_outcome(r, "open_by_handle_at", rc, e, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_mount(const char *arg, struct res *r)
{
	const char	*dir = target("mountdir");
	long		 rc;

	rc = syscall(SYS_mount, "kp-redteam", dir ? dir : "/tmp", "tmpfs",
	    (unsigned long)MS_NOSUID, "size=1m");
	sys_outcome(r, "mount tmpfs", rc, errno, 0);
}

static void
p_unshare(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_unshare, CLONE_NEWUSER);

	sys_outcome(r, "unshare(CLONE_NEWUSER)", rc, errno, 0);
}

/* setns-<pid>: into the other process's mount namespace (our own when
 * its ns file cannot be opened: is setns reachable at all?). */
static void
p_setns(const char *arg, struct res *r)
{
	char	 path[64];
	long	 pid, rc;
	int	 fd, e;

	if (arg_pid(&arg, &pid, r) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		note(r, 0, "open %s: %s", path, errtext(errno));
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			note(r, 0, "open %s: %s", path, errtext(errno));
			return;
		}
	} else
		note(r, 0, "opened %s", path);
	rc = syscall(SYS_setns, fd, CLONE_NEWNS);
	e = errno;
	close(fd);
	sys_outcome(r, "setns", rc, e, 0);
}

static void
p_bpf(const char *arg, struct res *r)
{
	union bpf_attr	 a;
	long		 rc;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	rc = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	sys_outcome(r, "bpf(BPF_MAP_CREATE)", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_iouring(const char *arg, struct res *r)
{
	unsigned long	 params[32];	/* struct io_uring_params, zeroed */
	long		 rc;

	memset(params, 0, sizeof(params));
	rc = syscall(SYS_io_uring_setup, 1, params);
	sys_outcome(r, "io_uring_setup", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_keyctl(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID,
		    KEY_SPEC_SESSION_KEYRING, 0);

	sys_outcome(r, "keyctl(KEYCTL_GET_KEYRING_ID)", rc, errno, 0);
}

static void
p_userfaultfd(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	sys_outcome(r, "userfaultfd", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_perfevent(const char *arg, struct res *r)
{
	struct perf_event_attr	 a;
	long			 rc;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	rc = syscall(SYS_perf_event_open, &a, 0, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	sys_outcome(r, "perf_event_open", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_memfd(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_memfd_create, "kp-redteam", 1U);

	sys_outcome(r, "memfd_create", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_fanotify(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_fanotify_init, FAN_CLASS_NOTIF |
		    FAN_CLOEXEC | FAN_REPORT_FID, O_RDONLY);

	sys_outcome(r, "fanotify_init", rc, errno, 0);
	if (rc >= 0)
		close((int)rc);
}

static void
p_chroot(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_chroot, "/tmp");

	sys_outcome(r, "chroot(/tmp)", rc, errno, 0);
}

static void
p_setuid(const char *arg, struct res *r)
{
	long	 rc = syscall(SYS_setuid, 0);

	sys_outcome(r, "setuid(0)", rc, errno, 0);
}

static void
p_initmodule(const char *arg, struct res *r)
{
	static char	 image[64];
	long		 rc = syscall(SYS_init_module, image, sizeof(image),
			    "");

	sys_outcome(r, "init_module", rc, errno, 0);
}

/* stdio: do the children keep the driver's fds 0-2? A forged klog line
 * on fd 2 would bypass the supervisor's log sanitizing; fd 1 would be the
 * driver's stdout (here: the test's command channel). The writes
 * themselves may succeed (into /dev/null, a pipe): the test decides by
 * what reached the driver's stdout and stderr verbatim. */
static void
p_stdio(const char *arg, struct res *r)
{
	static const char	 line[] = "E0101 00:00:00.000000       1 "
				    "supervisor] REDTEAM-FORGED-LOG-LINE\n";
	static const char	 out[] = "REDTEAM-FORGED-STDOUT\n";
	struct stat		 st;
	int			 fd;

	for (fd = 0; fd < 3; fd++)
		if (fstat(fd, &st) == 0)
			note(r, 0, "fd %d: %s", fd, S_ISFIFO(st.st_mode) ?
			    "pipe" : S_ISCHR(st.st_mode) ? "char device" :
			    S_ISSOCK(st.st_mode) ? "socket" : "file");
	if (write(2, line, sizeof(line) - 1) == (ssize_t)sizeof(line) - 1)
		note(r, 0, "wrote a raw log line to fd 2");
	else
		note(r, 0, "write fd 2: %s", errtext(errno));
	if (write(1, out, sizeof(out) - 1) == (ssize_t)sizeof(out) - 1)
		note(r, 0, "wrote a line to fd 1");
	else
		note(r, 0, "write fd 1: %s", errtext(errno));
}

static const struct probe probes[] = {
	{ "bpf", p_bpf },
	{ "chroot", p_chroot },
	{ "devopen", p_devopen },
	{ "execve", p_execve },
	{ "fanotify", p_fanotify },
	{ "fnotify", p_fnotify },
	{ "fork", p_fork },
	{ "inetsocket", p_inetsocket },
	{ "initmodule", p_initmodule },
	{ "iouring", p_iouring },
	{ "keyctl", p_keyctl },
	{ "kill", p_kill },
	{ "kubeconfig", p_kubeconfig },
	{ "memfd", p_memfd },
	{ "mount", p_mount },
	{ "oomadj", p_oomadj },
	{ "openbyhandle", p_openbyhandle },
	{ "perfevent", p_perfevent },
	{ "pidfdopen", p_pidfdopen },
	{ "procenv", p_procenv },
	{ "procfd", p_procfd },
	{ "procmem", p_procmem },
	{ "procroot", p_procroot },
	{ "procstatus", p_procstatus },
	{ "ptrace", p_ptrace },
	{ "rootcreate", p_rootcreate },
	{ "rootwrite", p_rootwrite },
	{ "setlease", p_setlease },
	{ "setns", p_setns },
	{ "setown", p_setown },
	{ "setownex", p_setownex },
	{ "setuid", p_setuid },
	{ "sockrename", p_sockrename },
	{ "sockunlink", p_sockunlink },
	{ "statpath", p_statpath },
	{ "stdio", p_stdio },
	{ "tgkill", p_tgkill },
	{ "tokendir", p_tokendir },
	{ "unixconnect", p_unixconnect },
	{ "unshare", p_unshare },
	{ "userfaultfd", p_userfaultfd },
	{ "vmreadv", p_vmreadv },
};

/* 1 if claim i named a probe (its error is set), else 0. */
static int
probe_claim(struct kp_prepare_results *res, size_t i, const char *name)
{
	static struct res	 r;
	char			 msg[1000], pname[32];
	const char		*arg;
	size_t			 k, len;

	len = strcspn(name, "-");
	if (len >= sizeof(pname))
		return (0);
	memcpy(pname, name, len);
	pname[len] = '\0';
	arg = name[len] == '-' ? name + len + 1 : name + len;
	for (k = 0; k < sizeof(probes) / sizeof(probes[0]); k++)
		if (strcmp(probes[k].name, pname) == 0)
			break;
	if (k == sizeof(probes) / sizeof(probes[0]))
		return (0);
	memset(&r, 0, sizeof(r));
	probes[k].fn(arg, &r);
	snprintf(msg, sizeof(msg), "PROBE %s: %s: %s", pname, r.error ?
	    "ERROR" : r.won ? "SUCCEEDED" : "DENIED", r.text);
	fprintf(stderr, "redteam: %s\n", msg);
	kp_prepare_claim_error(res, i, msg);
	return (1);
}

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 dev;
	const char			*reqs[1] = { "req-0" };
	char				 cdi[200];
	const char			*ids[1] = { cdi };
	size_t				 i;

	for (i = 0; i < n; i++) {
		if (probe_claim(res, i, c[i].name))
			continue;
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

static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	return (0);
}

/* --sandbox-user role:uid:gid */
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

static int
sandbox_mode(struct kp_options *o, const char *a)
{
	if (strcmp(a, "enforce") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_ENFORCE));
	if (strcmp(a, "complain") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_COMPLAIN));
	if (strcmp(a, "off") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_OFF));
	return (-1);
}

static int
apply(struct kp_options *o, int ch, const char *a)
{
	switch (ch) {
	case 'd':
		snprintf(drv_name, sizeof(drv_name), "%s", a);
		return (kp_driver_name(o, a));
	case 'n': return (kp_node_name(o, a));
	case 'r': return (kp_registrar_socket_path(o, a));
	case 'p': return (kp_plugin_socket_path(o, a));
	case 'k': return (kp_kubelet_plugin_socket_path(o, a));
	case 'c': return (kp_kube_client_kubeconfig(o, a, NULL));
	case 'C': return (kp_kube_client_in_cluster(o));
	case 'U': return (kp_node_uid(o, a));
	case 'u': return (kp_allowed_peer_uid(o, (uid_t)strtoul(a, 0, 10)));
	case 'm': return (kp_socket_mode(o, (unsigned)strtoul(a, 0, 8)));
	case 'g': return (kp_grpc_verbosity(o, (int)strtol(a, 0, 10)));
	case 'v': return (kp_log_verbosity(o, (int)strtol(a, 0, 10)));
	case 'w': return (kp_serialize(o, 0) ||
	    kp_worker_threads(o, (int)strtol(a, 0, 10)));
	case '1': return (kp_node_v1alpha4(o, 1));
	case '2': return (kp_node_v1beta1(o, 0));
	case '3': return (kp_node_v1(o, 0));
	case 'R': return (load_targets(a));
	case 300: return (sandbox_mode(o, a));
	case 301: return (kp_sandbox_capability(o, a));
	case 302: return (kp_sandbox_syscall(o, a));
	case 303: return (kp_sandbox_hide_path(o, a));
	case 304: return (sandbox_user(o, a));
	case 305: return (kp_policy_main_confine(o, 1));
	default: return (-1);
	}
}

static int
parse(int argc, char **argv, struct kp_options *o)
{
	static const struct option lo[] = {
		{ "driver-name", 1, 0, 'd' }, { "node-name", 1, 0, 'n' },
		{ "registrar-socket", 1, 0, 'r' },
		{ "plugin-socket", 1, 0, 'p' },
		{ "kubelet-plugin-socket", 1, 0, 'k' },
		{ "kubeconfig", 1, 0, 'c' }, { "in-cluster", 0, 0, 'C' },
		{ "allow-uid", 1, 0, 'u' }, { "socket-mode", 1, 0, 'm' },
		{ "grpc-verbosity", 1, 0, 'g' }, { "workers", 1, 0, 'w' },
		{ "v1alpha4", 0, 0, '1' }, { "no-v1beta1", 0, 0, '2' },
		{ "no-v1", 0, 0, '3' }, { "redteam-targets", 1, 0, 'R' },
		{ "sandbox-mode", 1, 0, 300 }, { "sandbox-cap", 1, 0, 301 },
		{ "sandbox-syscall", 1, 0, 302 }, { "hide-path", 1, 0, 303 },
		{ "sandbox-user", 1, 0, 304 }, { "node-uid", 1, 0, 'U' },
		{ "main-confine", 0, 0, 305 },
		{ 0, 0, 0, 0 }
	};
	int	 ch;

	while ((ch = getopt_long(argc, argv, "v:", lo, NULL)) != -1) {
		if (apply(o, ch, optarg) != 0) {
			printf("error %s %s\n", "KP_EINVAL", ch == 'R' ?
			    "--redteam-targets: cannot read the file" :
			    kp_options_last_error(o));
			return (-1);
		}
	}
	return (0);
}

static void
commands(struct kp_plugin *p)
{
	enum kp_registration_state	 st;
	char				 line[256], err[KP_ERROR_SIZE];
	int				 r;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "status", 6) == 0) {
			r = kp_registration_status(p, &st, err, sizeof(err));
			if (r != 0)
				printf("status-error %s\n", kp_err_name(r));
			else
				printf("status %d %s\n", (int)st, err);
		} else if (strncmp(line, "stop", 4) == 0)
			break;
		fflush(stdout);
	}
	r = kp_stop(p);
	printf("stopped %d fds 0 0\n", r);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	struct kp_plugin	*p;
	struct kp_hooks		 h = { NULL, prepare, unprepare, NULL };
	int			 r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (kp_options_new(&o) != 0)
		return (2);
	if (parse(argc, argv, o) != 0)
		return (2);
	if ((r = kp_start(o, &h, &p)) != 0) {
		printf("error %s %s\n", kp_err_name(r),
		    kp_options_last_error(o));
		kp_options_free(o);
		return (1);
	}
	kp_options_free(o);
	printf("ready %d\n", (int)getpid());
	commands(p);
	return (0);
}
