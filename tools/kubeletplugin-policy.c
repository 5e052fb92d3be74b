/*
 * kubeletplugin-policy - print the seccomp profile of a plugin built with
 * libkubeletplugin for its pod: kp_policy_export_oci() (the union of the
 * processes' allowlists) plus the container runtime's own syscalls, as an
 * OCI profile file for the pod's Localhost seccompProfile
 * (/var/lib/kubelet/seccomp/<file>) or as a Security Profiles Operator
 * SeccompProfile object that distributes it to every node.
 *
 *   kubeletplugin-policy [-m syscall]... [-I request]... [-s syscall]...
 *       [--from file] [-f oci|spo] [-n name] [--no-runtime] [-o file] | -h
 *
 * The runtime loads the profile before the entrypoint, so it binds every
 * process of the pod: the driver's own main() (before and after
 * kp_start()) and the monitor as well as the children, whose own filters
 * are the boundary of the hooks. So the flags say whose need a name is:
 * -m (--main-syscall) a syscall the driver's main() makes
 * (kp_policy_main_syscall), -I (--main-ioctl) an ioctl command it issues
 * (kp_policy_main_ioctl), both in this profile only; -s (--syscall) a
 * syscall the driver allows its hooks (kp_sandbox_syscall: the
 * nodeserver's filter too). --from reads the profile a driver printed
 * from its own options (kp_policy_export_oci(), the example's
 * --print-seccomp-profile) instead, '-' for stdin, and refuses one that
 * is not of that shape (a default that does not deny, other fields, a
 * malformed rule). -f (--format) picks the output, -n (--name) the
 * SeccompProfile's name (kubeletplugin), --no-runtime leaves the
 * runtime's syscalls out, -o (--output) writes to a file instead of
 * stdout, -h (--help) prints the usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kubeletplugin.h"

/*
 * What the OCI runtime itself calls after it loaded the profile and before
 * it executes the entrypoint. Without no_new_privs (Kubernetes refuses
 * allowPrivilegeEscalation: false next to CAP_SYS_ADMIN) runc loads the
 * filter before it switches to the container's user: setgid and setuid
 * (not setresgid/setresuid); either way runc 1.1 checks that /proc/self/fd
 * is a procfs (fstatfs) before closing inherited descriptors. Seen under
 * runc 1.1.5 (Debian 12); the container test proves the list. The
 * library's own processes narrow the profile again, so these widen only
 * the driver process.
 */
static const char *const runtime_syscalls[] = {
	"fstatfs", "setgid", "setuid"
};

#define SPO_API_VERSION	"security-profiles-operator.x-k8s.io/v1beta1"

static void
usage(FILE *f)
{
	fprintf(f, "usage: kubeletplugin-policy [-m syscall]... [-I request]... "
	    "[-s syscall]...\n"
	    "           [--from file] [-f oci|spo] [-n name] [--no-runtime] "
	    "[-o file]\n"
	    "The pod's seccomp profile. The container runtime loads it before "
	    "the driver\n"
	    "starts, so it binds the driver's own main() (before and after "
	    "kp_start())\n"
	    "and the library's monitor; the children's own filters bind the "
	    "hooks.\n"
	    "What the driver's main() needs (the pod profile only):\n"
	    "  -m, --main-syscall NAME  a syscall main() makes "
	    "(kp_policy_main_syscall)\n"
	    "  -I, --main-ioctl REQ     an ioctl command main() issues, e.g. "
	    "0x4C82\n"
	    "                           (LOOP_CTL_GET_FREE; "
	    "kp_policy_main_ioctl)\n"
	    "What the driver's hooks need (the nodeserver's filter and the "
	    "pod profile):\n"
	    "  -s, --syscall NAME       a syscall the hooks make "
	    "(kp_sandbox_syscall)\n"
	    "All three repeatable. Or, instead of them:\n"
	    "      --from FILE          the profile a driver printed from its "
	    "own options\n"
	    "                           (kp_policy_export_oci(); - for stdin)\n"
	    "Output:\n"
	    "  -f, --format FMT         oci: a profile file (default); spo: a\n"
	    "                           SeccompProfile object (" SPO_API_VERSION
	    ")\n"
	    "  -n, --name NAME          the SeccompProfile's name "
	    "(kubeletplugin)\n"
	    "      --no-runtime         leave out the container runtime's own "
	    "syscalls\n"
	    "  -o, --output FILE        write the profile to FILE (stdout)\n"
	    "  -h, --help               print this help\n");
}

/*
 * A library setter's refusal as the flag's: the message names the C
 * setter ("what: rule"); here the flag is what was given.
 */
static int
refused(struct kp_options *o, const char *flag)
{
	const char	*m = kp_options_last_error(o);
	const char	*why = strstr(m, ": ");

	fprintf(stderr, "kubeletplugin-policy: %s: %s\n", flag,
	    why != NULL ? why + 2 : m);
	return (2);
}

/* -I's value: a number in C's notation (0x4C82, 19586), else -1. */
static int
ioctl_request(const char *s, unsigned long *out)
{
	char	*end;

	errno = 0;
	if (s[0] == '-' || s[0] == '+' || s[0] == ' ' || s[0] == '\0')
		return (-1);
	*out = strtoul(s, &end, 0);
	return (errno != 0 || *end != '\0' ? -1 : 0);
}

/*
 * What --from's file may hold: the shape kp_policy_export_oci() prints.
 * The file is the driver's output, but the admin installs the result for
 * the whole pod: a default that allows, logs or notifies, a listener
 * (listenerPath: an agent decides) or filter flags would each make the
 * profile broader than the driver's declarations, and a name that is
 * not a string crashed allowed() (red team, issue 26).
 */
static const char *
from_problem(json_t *profile)
{
	static const char *const keys[] = { "defaultAction",
	    "defaultErrnoRet", "architectures", "syscalls", NULL };
	static const char *const denying[] = { "SCMP_ACT_ERRNO",
	    "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
	    "SCMP_ACT_TRAP", NULL };
	const char	*key, *const *k;
	json_t		*v, *rule, *name;
	size_t		 i, j;

	json_object_foreach(profile, key, v) {
		for (k = keys; *k != NULL && strcmp(*k, key) != 0; k++)
			;
		if (*k == NULL)
			return ("a field kp_policy_export_oci() does not "
			    "print (defaultAction, defaultErrnoRet, "
			    "architectures, syscalls only)");
	}
	for (k = denying; *k != NULL && strcmp(*k, json_string_value(
	    json_object_get(profile, "defaultAction"))) != 0; k++)
		;
	if (*k == NULL)
		return ("defaultAction does not deny (SCMP_ACT_ERRNO, _KILL, "
		    "_KILL_PROCESS, _KILL_THREAD or _TRAP)");
	json_array_foreach(json_object_get(profile, "syscalls"), i, rule) {
		if (!json_is_object(rule) ||
		    !json_is_string(json_object_get(rule, "action")) ||
		    !json_is_array(json_object_get(rule, "names")))
			return ("a syscalls[] rule without an action string "
			    "and a names array");
		json_array_foreach(json_object_get(rule, "names"), j, name)
			if (!json_is_string(name))
				return ("a syscalls[].names entry is not a "
				    "string");
	}
	return (NULL);
}

/* The profile: from --from's file, else the library's for o. */
static json_t *
load_profile(struct kp_options *o, const char *from)
{
	json_error_t	 jerr;
	json_t		*profile;
	const char	*why;
	char		*json;
	int		 r;

	if (from != NULL) {
		profile = strcmp(from, "-") == 0 ? json_loadf(stdin, 0, &jerr) :
		    json_load_file(from, 0, &jerr);
		if (profile == NULL)
			fprintf(stderr, "kubeletplugin-policy: --from %s: "
			    "%s (line %d)\n", from, jerr.text, jerr.line);
	} else {
		if ((r = kp_policy_export_oci(o, &json)) != 0) {
			fprintf(stderr, "kubeletplugin-policy: %s\n",
			    kp_strerror(r));
			return (NULL);
		}
		profile = json_loads(json, 0, &jerr);
		free(json);
		if (profile == NULL)
			fprintf(stderr, "kubeletplugin-policy: the exported "
			    "profile does not parse: %s\n", jerr.text);
	}
	if (profile != NULL && (!json_is_object(profile) ||
	    !json_is_string(json_object_get(profile, "defaultAction")) ||
	    !json_is_array(json_object_get(profile, "syscalls")))) {
		fprintf(stderr, "kubeletplugin-policy: %s%s: not an OCI "
		    "seccomp profile (no defaultAction or syscalls array)\n",
		    from != NULL ? "--from " : "the exported profile",
		    from != NULL ? from : "");
		json_decref(profile);
		profile = NULL;
	}
	if (profile != NULL && from != NULL &&
	    (why = from_problem(profile)) != NULL) {
		fprintf(stderr, "kubeletplugin-policy: --from %s: %s\n", from,
		    why);
		json_decref(profile);
		profile = NULL;
	}
	return (profile);
}

/* Whether an unconditional allow rule of the profile names sc. */
static int
allowed(json_t *syscalls, const char *sc)
{
	json_t	*rule, *name;
	size_t	 i, j;

	json_array_foreach(syscalls, i, rule) {
		if (json_object_get(rule, "args") != NULL ||
		    !json_is_string(json_object_get(rule, "action")) ||
		    strcmp(json_string_value(json_object_get(rule, "action")),
		    "SCMP_ACT_ALLOW") != 0)
			continue;
		json_array_foreach(json_object_get(rule, "names"), j, name)
			if (strcmp(json_string_value(name), sc) == 0)
				return (1);
	}
	return (0);
}

/* One more allow rule with the runtime's syscalls the profile lacks. */
static int
add_runtime(json_t *syscalls)
{
	json_t	*names, *rule;
	size_t	 i;

	if ((names = json_array()) == NULL)
		return (-1);
	for (i = 0; i < sizeof(runtime_syscalls) / sizeof(*runtime_syscalls);
	    i++)
		if (!allowed(syscalls, runtime_syscalls[i]) &&
		    json_array_append_new(names,
		    json_string(runtime_syscalls[i])) != 0) {
			json_decref(names);
			return (-1);
		}
	if (json_array_size(names) == 0) {
		json_decref(names);
		return (0);
	}
	if ((rule = json_pack("{s:o,s:s}", "names", names, "action",
	    "SCMP_ACT_ALLOW")) == NULL)
		return (-1);
	return (json_array_append_new(syscalls, rule));
}

/*
 * The SPO schema differs from the OCI one: errnoRet is a string there, and
 * it has no defaultErrnoRet (its profiles deny with EPERM, the runtimes'
 * default, which is what the library asks for).
 */
static int
to_spo(json_t *profile)
{
	json_t	*rule, *e;
	char	 buf[32];
	size_t	 i;

	if ((e = json_object_get(profile, "defaultErrnoRet")) != NULL &&
	    json_integer_value(e) != 1)
		return (-1);
	json_object_del(profile, "defaultErrnoRet");
	json_array_foreach(json_object_get(profile, "syscalls"), i, rule) {
		if ((e = json_object_get(rule, "errnoRet")) == NULL)
			continue;
		snprintf(buf, sizeof(buf), "%lld",
		    (long long)json_integer_value(e));
		if (json_object_set_new(rule, "errnoRet",
		    json_string(buf)) != 0)
			return (-1);
	}
	return (0);
}

/*
 * The profile with one syscall rule a line (diffs of a regenerated profile
 * stay readable), indented by ind. JSON is YAML too: the SPO object needs
 * no YAML writer.
 */
static int
print_profile(FILE *f, json_t *profile, const char *ind)
{
	const char	*key;
	json_t		*v, *rule;
	char		*s;
	size_t		 i, n = 0;

	fprintf(f, "{\n");
	json_object_foreach(profile, key, v) {
		fprintf(f, "%s%s  \"%s\": ", n++ ? ",\n" : "", ind, key);
		if (strcmp(key, "syscalls") != 0 || !json_is_array(v)) {
			if ((s = json_dumps(v, JSON_ENCODE_ANY |
			    JSON_PRESERVE_ORDER)) == NULL)
				return (-1);
			fputs(s, f);
			free(s);
			continue;
		}
		fprintf(f, "[\n");
		json_array_foreach(v, i, rule) {
			if ((s = json_dumps(rule, JSON_PRESERVE_ORDER)) ==
			    NULL)
				return (-1);
			fprintf(f, "%s    %s%s\n", ind, s,
			    i + 1 < json_array_size(v) ? "," : "");
			free(s);
		}
		fprintf(f, "%s  ]", ind);
	}
	fprintf(f, "\n%s}", ind);
	return (0);
}

static int
print_spo(FILE *f, json_t *profile, const char *name)
{
	char	*s;

	if ((s = json_dumps(json_string(name), JSON_ENCODE_ANY)) == NULL)
		return (-1);
	fprintf(f, "# Generated by kubeletplugin-policy --format spo; do not "
	    "edit (regenerate).\n{\n  \"apiVersion\": \"" SPO_API_VERSION
	    "\",\n  \"kind\": \"SeccompProfile\",\n  \"metadata\": "
	    "{\"name\": %s},\n  \"spec\": ", s);
	free(s);
	if (print_profile(f, profile, "  ") != 0)
		return (-1);
	fprintf(f, "\n}\n");
	return (0);
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	const char		*outpath = NULL, *format = "oci";
	const char		*name = "kubeletplugin", *from = NULL;
	json_t			*profile;
	unsigned long		 req;
	FILE			*f = stdout;
	int			 ch, r, runtime = 1, declared = 0;
	enum { O_NORUNTIME = 256, O_FROM };
	static const struct option longopts[] = {
		{ "main-syscall", required_argument, NULL, 'm' },
		{ "main-ioctl", required_argument, NULL, 'I' },
		{ "syscall", required_argument, NULL, 's' },
		{ "from", required_argument, NULL, O_FROM },
		{ "format", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "no-runtime", no_argument, NULL, O_NORUNTIME },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	if (kp_options_new(&o) != 0)
		return (1);
	r = -1;
	while (r == -1 && (ch = getopt_long(argc, argv, "m:I:s:f:n:o:h",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			declared = 1;
			if (kp_policy_main_syscall(o, optarg) != 0)
				r = refused(o, "-m (--main-syscall)");
			break;
		case 'I':
			declared = 1;
			if (ioctl_request(optarg, &req) != 0) {
				fprintf(stderr, "kubeletplugin-policy: -I "
				    "(--main-ioctl): \"%s\" is not a number "
				    "(an ioctl command, e.g. 0x4C82)\n",
				    optarg);
				r = 2;
			} else if (kp_policy_main_ioctl(o, req) != 0)
				r = refused(o, "-I (--main-ioctl)");
			break;
		case 's':
			declared = 1;
			if (kp_sandbox_syscall(o, optarg) != 0)
				r = refused(o, "-s (--syscall)");
			break;
		case O_FROM:
			from = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case O_NORUNTIME:
			runtime = 0;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			usage(stdout);
			r = 0;
			break;
		default:
			usage(stderr);
			r = 2;
			break;
		}
	}
	if (r == -1 && (optind != argc || (strcmp(format, "oci") != 0 &&
	    strcmp(format, "spo") != 0))) {
		usage(stderr);
		r = 2;
	}
	/* The file holds the driver's declarations: flags beside it would
	 * be silently lost. */
	if (r == -1 && from != NULL && declared) {
		fprintf(stderr, "kubeletplugin-policy: --from takes the "
		    "driver's declarations from the file: declare -m, -I and "
		    "-s in the driver (kp_policy_main_syscall, "
		    "kp_policy_main_ioctl, kp_sandbox_syscall) instead\n");
		r = 2;
	}
	if (r != -1) {
		kp_options_free(o);
		return (r);
	}
	profile = load_profile(o, from);
	kp_options_free(o);
	if (profile == NULL)
		return (1);
	if ((runtime && add_runtime(json_object_get(profile, "syscalls")) !=
	    0) || (strcmp(format, "spo") == 0 && to_spo(profile) != 0)) {
		fprintf(stderr, "kubeletplugin-policy: cannot convert the "
		    "profile\n");
		json_decref(profile);
		return (1);
	}
	if (outpath != NULL && (f = fopen(outpath, "w")) == NULL) {
		perror(outpath);
		json_decref(profile);
		return (1);
	}
	r = strcmp(format, "spo") == 0 ? print_spo(f, profile, name) :
	    print_profile(f, profile, "");
	if (r == 0 && strcmp(format, "oci") == 0)
		fputc('\n', f);
	json_decref(profile);
	if (r != 0 || (f != stdout && fclose(f) != 0) ||
	    (f == stdout && fflush(f) != 0)) {
		perror(outpath != NULL ? outpath : "stdout");
		return (1);
	}
	return (0);
}
