/*
 * kubeletplugin-policy - print the seccomp profile of a plugin built with
 * libkubeletplugin for its pod: kp_policy_export_oci() (the union of the
 * processes' allowlists) plus the container runtime's own syscalls, as an
 * OCI profile file for the pod's Localhost seccompProfile
 * (/var/lib/kubelet/seccomp/<file>) or as a Security Profiles Operator
 * SeccompProfile object that distributes it to every node.
 *
 *   kubeletplugin-policy [-s syscall]... [-f oci|spo] [-n name]
 *       [--no-runtime] [-o file] | -h
 *
 * -s (--syscall) adds a syscall the driver allows its nodeserver
 * (kp_sandbox_syscall), -f (--format) picks the output, -n (--name) the
 * SeccompProfile's name (kubeletplugin), --no-runtime leaves the runtime's
 * syscalls out, -o (--output) writes to a file instead of stdout, -h
 * (--help) prints the usage.
 */
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
	fprintf(f, "usage: kubeletplugin-policy [-s syscall]... [-f oci|spo] "
	    "[-n name] [--no-runtime] [-o file]\n"
	    "  -s, --syscall NAME  a syscall the driver's hooks need "
	    "(repeatable)\n"
	    "  -f, --format FMT    oci: a profile file (default); spo: a\n"
	    "                      SeccompProfile object (" SPO_API_VERSION
	    ")\n"
	    "  -n, --name NAME     the SeccompProfile's name (kubeletplugin)\n"
	    "      --no-runtime    leave out the container runtime's own "
	    "syscalls\n"
	    "  -o, --output FILE   write the profile to FILE (stdout)\n"
	    "  -h, --help          print this help\n");
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
	const char		*name = "kubeletplugin";
	json_t			*profile;
	json_error_t		 jerr;
	char			*json;
	FILE			*f = stdout;
	int			 ch, r, runtime = 1;
	enum { O_NORUNTIME = 256 };
	static const struct option longopts[] = {
		{ "syscall", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "no-runtime", no_argument, NULL, O_NORUNTIME },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	if (kp_options_new(&o) != 0)
		return (1);
	while ((ch = getopt_long(argc, argv, "s:f:n:o:h", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 's':
			if (kp_sandbox_syscall(o, optarg) != 0) {
				/* The message names the C setter ("what:
				 * rule"); here the flag is what was given. */
				const char *m = kp_options_last_error(o);
				const char *why = strstr(m, ": ");

				fprintf(stderr, "kubeletplugin-policy: -s "
				    "(--syscall): %s\n",
				    why != NULL ? why + 2 : m);
				kp_options_free(o);
				return (2);
			}
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
			kp_options_free(o);
			return (0);
		default:
			usage(stderr);
			kp_options_free(o);
			return (2);
		}
	}
	if (optind != argc || (strcmp(format, "oci") != 0 &&
	    strcmp(format, "spo") != 0)) {
		usage(stderr);
		kp_options_free(o);
		return (2);
	}
	if ((r = kp_policy_export_oci(o, &json)) != 0) {
		fprintf(stderr, "kubeletplugin-policy: %s\n", kp_strerror(r));
		kp_options_free(o);
		return (1);
	}
	kp_options_free(o);
	profile = json_loads(json, 0, &jerr);
	free(json);
	if (profile == NULL ||
	    !json_is_array(json_object_get(profile, "syscalls"))) {
		fprintf(stderr, "kubeletplugin-policy: the exported profile "
		    "does not parse: %s\n", profile == NULL ? jerr.text :
		    "no syscalls array");
		json_decref(profile);
		return (1);
	}
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
