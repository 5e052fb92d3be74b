/*
 * kubeletplugin-policy - print the OCI seccomp profile of a plugin built
 * with libkubeletplugin (kp_policy_export_oci()): the union of the
 * processes' allowlists, for the pod's Localhost seccompProfile
 * (/var/lib/kubelet/seccomp/<file>).
 *
 *   kubeletplugin-policy [-s syscall]... [-o file] | -h
 *
 * -s (--syscall) adds a syscall the driver allows its nodeserver
 * (kp_sandbox_syscall), -o (--output) writes to a file instead of stdout,
 * -h (--help) prints the usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeletplugin.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: kubeletplugin-policy [-s syscall]... [-o file]\n"
	    "  -s, --syscall NAME  a syscall the driver's hooks need "
	    "(repeatable)\n"
	    "  -o, --output FILE   write the profile to FILE (stdout)\n"
	    "  -h, --help          print this help\n");
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	const char		*outpath = NULL;
	char			*json;
	FILE			*f = stdout;
	int			 ch, r;
	static const struct option longopts[] = {
		{ "syscall", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	if (kp_options_new(&o) != 0)
		return (1);
	while ((ch = getopt_long(argc, argv, "s:o:h", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 's':
			if (kp_sandbox_syscall(o, optarg) != 0) {
				fprintf(stderr, "kubeletplugin-policy: %s\n",
				    kp_options_last_error(o));
				kp_options_free(o);
				return (2);
			}
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
	if (optind != argc) {
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
	if (outpath != NULL && (f = fopen(outpath, "w")) == NULL) {
		perror(outpath);
		return (1);
	}
	fputs(json, f);
	free(json);
	if (f != stdout && fclose(f) != 0) {
		perror(outpath);
		return (1);
	}
	return (0);
}
