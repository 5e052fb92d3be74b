/*
 * landlock.c - Landlock for each child (Linux 5.13+): what it may read,
 * write and signal, enforced by the kernel for uid 0 as for any uid, so
 * it holds where file permissions do not (a uid-0 child without
 * capabilities still owns every root-owned file).
 *
 *   nodeserver  write (create, write, truncate, rename, remove) only
 *               beneath the state directories; read beneath a default set
 *               the runtime needs and the driver's kp_sandbox_read_path()
 *               paths; device ioctls beneath /dev; no TCP bind/connect
 *   registrar   nothing at all (it serves an inherited socket)
 *   publisher   read its credential files' directories (known only after
 *               it parsed the kubeconfig: policy_allow_read()), name
 *               resolution and CA files, the libraries
 *   every child (ABI 6+) no signal and no abstract unix socket outside its
 *               own domain
 *
 * Best effort, as the kernel documentation recommends: the ABI is probed
 * and only the rights the kernel knows are handled; no Landlock at all is
 * a warning. Debian 12's headers know ABI 1 and 2: the newer constants and
 * the ruleset attribute's later fields are defined here, and the syscalls
 * are made with syscall(2).
 *
 * Runs in: each child, from policy_apply(), after the ids and capabilities
 * changed and before the seccomp filter is loaded (so the landlock_*
 * syscalls need no place in any allowlist).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/landlock.h>

#include "base/log.h"
#include "policy/policy.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset	444
#define __NR_landlock_add_rule		445
#define __NR_landlock_restrict_self	446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)	/* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#define LL_NET_BIND_TCP			(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP		(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL			(1ULL << 1)

#define LL_FS_READ	(LANDLOCK_ACCESS_FS_EXECUTE | \
			LANDLOCK_ACCESS_FS_READ_FILE | \
			LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FS_WRITE	(LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_REMOVE_DIR | \
			LANDLOCK_ACCESS_FS_REMOVE_FILE | \
			LANDLOCK_ACCESS_FS_MAKE_CHAR | \
			LANDLOCK_ACCESS_FS_MAKE_DIR | \
			LANDLOCK_ACCESS_FS_MAKE_REG | \
			LANDLOCK_ACCESS_FS_MAKE_SOCK | \
			LANDLOCK_ACCESS_FS_MAKE_FIFO | \
			LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
			LANDLOCK_ACCESS_FS_MAKE_SYM | \
			LANDLOCK_ACCESS_FS_REFER | \
			LANDLOCK_ACCESS_FS_TRUNCATE)
/* The rights a rule on a file (not a directory) may carry. */
#define LL_FS_FILE	(LANDLOCK_ACCESS_FS_EXECUTE | \
			LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_READ_FILE | \
			LANDLOCK_ACCESS_FS_TRUNCATE | \
			LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define LL_MAX_EXTRA	8		/* policy_allow_read() paths */

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a prefix. */
struct ll_ruleset_attr {
	uint64_t	 handled_access_fs;
	uint64_t	 handled_access_net;	/* ABI 4 */
	uint64_t	 scoped;		/* ABI 6 */
};

/*
 * What the runtime reads after the sandbox, measured with strace -f -e
 * trace=%file over the e2e suite (docs/security.md): time zone data,
 * libraries a lazy dlopen may load (NSS), and sysfs, procfs and devices
 * for the driver's hooks (the example reads sysfs; device ioctls too,
 * beneath NS_DEV).
 */
#define NS_DEV	"/dev"
static const char *const ns_reads[] = {
	"/sys", "/proc", "/etc/localtime", "/usr/share/zoneinfo",
	"/usr/lib", "/usr/lib64", "/lib", "/lib64", NS_DEV,
};

/*
 * Name resolution, TLS trust, time zones, NSS modules; its own /proc
 * files; what the strace measurement showed OpenSSL and glibc's malloc
 * open (/dev/urandom, /proc/sys/vm/overcommit_memory).
 */
static const char *const pub_reads[] = {
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf",
	"/etc/host.conf", "/etc/gai.conf", "/etc/ssl", "/etc/pki",
	"/usr/share/ca-certificates", "/usr/lib/ssl", "/etc/localtime",
	"/usr/share/zoneinfo", "/usr/lib", "/usr/lib64", "/lib", "/lib64",
	"/dev/urandom", "/proc/self", "/proc/sys/vm/overcommit_memory",
};

static char	extra[LL_MAX_EXTRA][POL_PATH_MAX];
static size_t	n_extra;
static char	broker_write[POL_PATH_MAX];	/* its metadata directory */

/* The one directory the broker writes; 0 or KP_ENAMETOOLONG. */
int
pol_landlock_write(const char *path)
{
	if (strlen(path) >= POL_PATH_MAX)
		return (KP_ENAMETOOLONG);
	snprintf(broker_write, sizeof(broker_write), "%s", path);
	return (0);
}

/*
 * A path this process must still read after the sandbox (the publisher's
 * credential directories). Before policy_apply(); 0 or KP_ENOMEM /
 * KP_ENAMETOOLONG.
 */
int
policy_allow_read(const char *path)
{
	size_t	 i;

	for (i = 0; i < n_extra; i++)
		if (strcmp(extra[i], path) == 0)
			return (0);
	if (n_extra == LL_MAX_EXTRA)
		return (KP_ENOMEM);
	if (strlen(path) >= POL_PATH_MAX)
		return (KP_ENAMETOOLONG);
	snprintf(extra[n_extra++], POL_PATH_MAX, "%s", path);
	return (0);
}

/*
 * The nodeserver's default read set: policy/fs.c keeps it visible beneath
 * a hidden directory, publisher/kcfg_hide.c asks whether it holds a
 * credential file.
 */
const char *const *
pol_landlock_ns_reads(size_t *n)
{
	*n = sizeof(ns_reads) / sizeof(ns_reads[0]);
	return (ns_reads);
}

/* The Landlock ABI of this kernel; 0 without Landlock. */
int
pol_landlock_abi(void)
{
	long	 abi;

	abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return (abi < 0 ? 0 : (int)abi);
}

static uint64_t
fs_handled(int abi)
{
	uint64_t	 fs = LL_FS_READ | LL_FS_WRITE;

	fs &= ~(LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE);
	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return (fs);
}

/*
 * Allow access beneath path. A path that does not exist (or that this
 * uid cannot reach) is skipped unless required: then the start fails.
 */
static int
allow(enum kp_role role, int rs, uint64_t handled, const char *path, uint64_t access,
    int required, char *err, size_t errsize)
{
	struct landlock_path_beneath_attr	 pb;
	struct stat				 st;
	int					 fd, r = 0;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		if (!required) {
			log_info(3, "sandbox: Landlock: %s skipped: %s", path,
			    strerror(errno));
			return (0);
		}
		/* Run as root, this process has dropped to its own uid: a
		 * directory only its owner may search hides the file. */
		if (errno == EACCES)
			snprintf(err, errsize, "Landlock: %s: %s (the %s runs "
			    "as uid %u: every directory above it must be "
			    "searchable by others)", path, strerror(errno),
			    ipc_role_name(role), (unsigned)geteuid());
		else
			snprintf(err, errsize, "Landlock: %s: %s", path,
			    strerror(errno));
		return (KP_ESANDBOX);
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= LL_FS_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (pb.allowed_access != 0 && syscall(__NR_landlock_add_rule, rs,
	    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1) {
		snprintf(err, errsize, "Landlock: rule for %s: %s", path,
		    strerror(errno));
		r = KP_ESANDBOX;
	}
	close(fd);
	return (r);
}

static int
role_rules(enum kp_role role, const struct policy_opts *po, int rs,
    uint64_t fs, char *err, size_t errsize)
{
	size_t	 i;
	int	 r = 0;

	switch (role) {
	case ROLE_NODESERVER:
		for (i = 0; r == 0 && i < po->n_state_dirs; i++)
			r = allow(role, rs, fs, po->state_dirs[i], fs, 1, err,
			    errsize);
		for (i = 0; r == 0 && i < sizeof(ns_reads) /
		    sizeof(ns_reads[0]); i++)
			r = allow(role, rs, fs, ns_reads[i], LL_FS_READ |
			    (strcmp(ns_reads[i], NS_DEV) == 0 ?
			    LANDLOCK_ACCESS_FS_IOCTL_DEV : 0), 0, err,
			    errsize);
		for (i = 0; r == 0 && i < po->n_read_paths; i++)
			r = allow(role, rs, fs, po->read_paths[i], LL_FS_READ, 0,
			    err, errsize);
		break;
	case ROLE_PUBLISHER:
		for (i = 0; r == 0 && i < sizeof(pub_reads) /
		    sizeof(pub_reads[0]); i++)
			r = allow(role, rs, fs, pub_reads[i], LL_FS_READ, 0, err,
			    errsize);
		break;
	case ROLE_BROKER:
		/* The CDI directory read (counted, compared, watched; the
		 * monitor writes it), the metadata directory written. */
		r = allow(role, rs, fs, po->cdi_dir[0] != '\0' ? po->cdi_dir :
		    POL_CDI_DIR, LL_FS_READ, 0, err, errsize);
		if (r == 0 && broker_write[0] != '\0')
			r = allow(role, rs, fs, broker_write, fs, 1, err,
			    errsize);
		return (r);
	default:
		break;	/* the registrar: no file at all */
	}
	for (i = 0; r == 0 && i < n_extra; i++)
		r = allow(role, rs, fs, extra[i], LL_FS_READ, 1, err, errsize);
	return (r);
}

/*
 * Confine this process as role. NO_NEW_PRIVS must be set. 0 also when the
 * kernel has no Landlock (a warning says so); KP_ESANDBOX with the reason
 * in err when it has one and a step failed.
 */
int
pol_landlock(enum kp_role role, const struct policy_opts *po, char *err,
    size_t errsize)
{
	struct ll_ruleset_attr	 ra;
	size_t			 size;
	int			 abi, rs, r;

	if ((abi = pol_landlock_abi()) <= 0) {
		log_warnx("sandbox: no Landlock in this kernel (%s): the %s's "
		    "file access is limited by its uid and seccomp only",
		    strerror(errno), ipc_role_name(role));
		return (0);
	}
	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = fs_handled(abi);
	size = sizeof(ra.handled_access_fs);
	if (abi >= 4) {
		/* The publisher connects to the API server (any port). */
		if (role != ROLE_PUBLISHER)
			ra.handled_access_net = LL_NET_BIND_TCP |
			    LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		ra.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(ra);
	}
	if ((rs = (int)syscall(__NR_landlock_create_ruleset, &ra, size,
	    0)) == -1) {
		snprintf(err, errsize, "Landlock ABI %d: create ruleset: %s",
		    abi, strerror(errno));
		return (KP_ESANDBOX);
	}
	if ((r = role_rules(role, po, rs, ra.handled_access_fs, err,
	    errsize)) == 0 && syscall(__NR_landlock_restrict_self, rs,
	    0) == -1) {
		snprintf(err, errsize, "Landlock: restrict self: %s",
		    strerror(errno));
		r = KP_ESANDBOX;
	}
	close(rs);
	if (r == 0)
		log_info(2, "sandbox: %s: Landlock ABI %d: files%s%s%s",
		    ipc_role_name(role), abi, abi >= 4 &&
		    ra.handled_access_net != 0 ? ", TCP" : "",
		    abi >= 5 ? ", device ioctls" : "",
		    abi >= 6 ? ", signals and abstract sockets scoped" : "");
	return (r);
}
