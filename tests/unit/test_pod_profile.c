/*
 * test_pod_profile.c - the pod's seccomp profile (kp_policy_export_oci())
 * loaded for real, as a container runtime loads it: each case forks a
 * child that turns the profile's JSON into a libseccomp filter the way
 * runc does (one rule per entry, its args ANDed unless two name the same
 * index), loads it and makes the driver's main() calls. A loop-device
 * driver's LOOP_CTL_GET_FREE on /dev/loop-control passes with
 * kp_policy_main_ioctl() and fails with EPERM without (the committed
 * deploy/seccomp/kubeletplugin.json included), and the nodeserver's and
 * the supervisor's own filters, built from the same options, still
 * refuse it: main()'s needs widen the pod's profile only.
 * Needs root (/dev/loop-control is root's); skips without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "test.h"
#include "api/api.h"
#include "policy/policy.h"

#define LOOP_CONTROL	"/dev/loop-control"

/* An OCI action by name (the profile's errnoRet for SCMP_ACT_ERRNO). */
static int
action(const char *a, json_t *errno_ret, uint32_t *out)
{
	int	 e = errno_ret != NULL ? (int)json_integer_value(errno_ret) :
		    EPERM;

	if (strcmp(a, "SCMP_ACT_ALLOW") == 0)
		*out = SCMP_ACT_ALLOW;
	else if (strcmp(a, "SCMP_ACT_ERRNO") == 0)
		*out = SCMP_ACT_ERRNO((uint16_t)e);
	else
		return (-1);
	return (0);
}

static int
op(const char *s, enum scmp_compare *out)
{
	static const struct {
		const char		*name;
		enum scmp_compare	 op;
	} ops[] = {
		{ "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
		{ "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
		{ "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
		{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ }
	};
	size_t	 i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, s) == 0) {
			*out = ops[i].op;
			return (0);
		}
	return (-1);
}

/* One entry's conditions; -1 on an argument this helper cannot read. */
static int
conds(json_t *args, struct scmp_arg_cmp *c, size_t max, size_t *n)
{
	json_t	*a;
	size_t	 i;

	*n = 0;
	json_array_foreach(args, i, a) {
		if (i == max || op(json_string_value(json_object_get(a,
		    "op")), &c[i].op) != 0)
			return (-1);
		c[i].arg = (unsigned)json_integer_value(json_object_get(a,
		    "index"));
		/* jansson reads numbers as signed 64 bits; the profile's
		 * values are at most 32 bits wide. */
		c[i].datum_a = (scmp_datum_t)json_integer_value(
		    json_object_get(a, "value"));
		c[i].datum_b = (scmp_datum_t)json_integer_value(
		    json_object_get(a, "valueTwo"));
		(*n)++;
	}
	return (0);
}

/*
 * Load an OCI profile (JSON text) into this process as runc does:
 * defaultAction, then each entry's names with its action and args (one
 * rule, args ANDed, when every index differs; a rule per arg, ORed,
 * otherwise). The native architecture only. 0, or -1 with the reason on
 * stderr.
 */
static int
oci_load(const char *text)
{
	json_error_t		 jerr;
	json_t			*p, *rule, *name;
	scmp_filter_ctx		 ctx = NULL;
	struct scmp_arg_cmp	 c[6];
	uint32_t		 def, act;
	size_t			 i, j, n, k;
	int			 nr, same, r = -1;

	if ((p = json_loads(text, 0, &jerr)) == NULL) {
		fprintf(stderr, "oci_load: %s\n", jerr.text);
		return (-1);
	}
	if (action(json_string_value(json_object_get(p, "defaultAction")),
	    json_object_get(p, "defaultErrnoRet"), &def) != 0 ||
	    (ctx = seccomp_init(def)) == NULL)
		goto out;
	json_array_foreach(json_object_get(p, "syscalls"), i, rule) {
		if (action(json_string_value(json_object_get(rule, "action")),
		    json_object_get(rule, "errnoRet"), &act) != 0 ||
		    conds(json_object_get(rule, "args"), c, 6, &n) != 0) {
			fprintf(stderr, "oci_load: rule %zu unreadable\n", i);
			goto out;
		}
		for (j = 0, same = 0; j < n; j++)
			for (k = j + 1; k < n; k++)
				same |= c[j].arg == c[k].arg;
		json_array_foreach(json_object_get(rule, "names"), j, name) {
			if ((nr = seccomp_syscall_resolve_name(
			    json_string_value(name))) == __NR_SCMP_ERROR)
				continue;	/* as runc: not on this arch */
			for (k = 0; same && k < n; k++)
				if (seccomp_rule_add_array(ctx, act, nr, 1,
				    &c[k]) != 0)
					goto bad;
			if (!same && seccomp_rule_add_array(ctx, act, nr,
			    (unsigned)n, c) != 0)
				goto bad;
			continue;
bad:
			fprintf(stderr, "oci_load: rule for %s refused\n",
			    json_string_value(name));
			goto out;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    seccomp_load(ctx) != 0) {
		fprintf(stderr, "oci_load: load: %s\n", strerror(errno));
		goto out;
	}
	r = 0;
out:
	if (ctx != NULL)
		seccomp_release(ctx);
	json_decref(p);
	return (r);
}

/* The export of o (NULL: the defaults), or the file at path. */
static char *
profile(const struct kp_options *o, const char *path)
{
	char	*json = NULL;
	FILE	*f;
	long	 len;

	if (path == NULL) {
		CHECK(kp_policy_export_oci(o, &json) == 0);
		return (json);
	}
	if ((f = fopen(path, "r")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (json = calloc(1, (size_t)len + 1)) == NULL ||
	    fread(json, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: cannot read\n", path);
		CHECK(0);
	}
	if (f != NULL)
		fclose(f);
	return (json);
}

/* Which filters the child loads on top of the pod's profile. */
enum layer { POD_ONLY, POD_NODESERVER, POD_SUPERVISOR };

/*
 * In a child: open /dev/loop-control (before any filter: the ioctl is
 * what is tested), load json as the runtime would, then opts's filter of
 * layer, and ask LOOP_CTL_GET_FREE. The exit status: 0 it returned a
 * loop index, 1 EPERM, 2 another error, 3 the set-up failed; a FIONREAD
 * (the library's own command) must work throughout, else 4.
 */
static int
loop_ctl_get_free(const char *json, const struct kp_options *o,
    enum layer layer)
{
	struct pol_filter	*f = NULL;
	struct rlimit		 core = { 0, 0 };
	char			 err[256];
	pid_t			 pid;
	int			 fd, p[2], avail, st, r;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		(void)setrlimit(RLIMIT_CORE, &core);
		if ((fd = open(LOOP_CONTROL, O_RDWR | O_CLOEXEC)) == -1 ||
		    pipe(p) == -1 || oci_load(json) != 0)
			_exit(3);
		err[0] = '\0';
		if (layer == POD_NODESERVER && (pol_filter_build(
		    ROLE_NODESERVER, &o->policy, -1, &f, err, sizeof(err)) !=
		    0 || pol_filter_load(f, err, sizeof(err)) != 0))
			_exit(3);
		if (layer == POD_SUPERVISOR && (pol_filter_build_union(
		    &o->policy, &f, err, sizeof(err)) != 0 ||
		    pol_filter_load(f, err, sizeof(err)) != 0))
			_exit(3);
		if (ioctl(p[0], FIONREAD, &avail) != 0)
			_exit(4);
		errno = 0;
		r = ioctl(fd, LOOP_CTL_GET_FREE);
		_exit(r >= 0 ? 0 : errno == EPERM ? 1 : 2);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid)
		return (-1);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int
main(void)
{
	struct kp_options	*o, *with;
	char			*def, *loop, *committed;

	if (geteuid() != 0 || access(LOOP_CONTROL, R_OK | W_OK) != 0) {
		printf("test_pod_profile: skipped: needs root and %s\n",
		    LOOP_CONTROL);
		return (0);
	}
	CHECK(kp_options_new(&o) == 0);
	CHECK(kp_options_new(&with) == 0);
	CHECK(kp_policy_main_ioctl(with, LOOP_CTL_GET_FREE) == 0);
	def = profile(NULL, NULL);
	loop = profile(with, NULL);
	committed = profile(NULL, KP_SOURCE_DIR
	    "/deploy/seccomp/kubeletplugin.json");
	if (def == NULL || loop == NULL || committed == NULL)
		return (test_done("test_pod_profile"));

	/* Without a filter the call works here (else the rest proves
	 * nothing); the driver's declaration lets it through the pod's
	 * profile; without it the profile's default answers EPERM. */
	CHECK_EQ(loop_ctl_get_free("{\"defaultAction\": \"SCMP_ACT_ALLOW\", "
	    "\"syscalls\": []}", o, POD_ONLY), 0);
	CHECK_EQ(loop_ctl_get_free(loop, with, POD_ONLY), 0);
	CHECK_EQ(loop_ctl_get_free(def, o, POD_ONLY), 1);
	CHECK_EQ(loop_ctl_get_free(committed, o, POD_ONLY), 1);
	/* The hooks' boundary holds: the nodeserver's filter and the
	 * supervisor's (the init hook's, a re-run main()'s), built from
	 * the same options under the same profile, refuse it. */
	CHECK_EQ(loop_ctl_get_free(loop, with, POD_NODESERVER), 1);
	CHECK_EQ(loop_ctl_get_free(loop, with, POD_SUPERVISOR), 1);
	/* A hook's own kp_sandbox_syscall("ioctl") is what lets the
	 * nodeserver make it (any command), as the header says. */
	CHECK(kp_sandbox_syscall(with, "ioctl") == 0);
	free(loop);
	loop = profile(with, NULL);
	CHECK_EQ(loop_ctl_get_free(loop, with, POD_NODESERVER), 0);

	free(def);
	free(loop);
	free(committed);
	kp_options_free(o);
	kp_options_free(with);
	return (test_done("test_pod_profile"));
}
