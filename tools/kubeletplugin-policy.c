/*
 * kubeletplugin-policy - print the OCI seccomp profile of a plugin built
 * with libkubeletplugin (kp_policy_export_oci()): the union of the
 * processes' allowlists, for the pod's Localhost seccompProfile
 * (/var/lib/kubelet/seccomp/<file>).
 *
 *   kubeletplugin-policy [-s syscall]... [-o file]
 *
 * -s adds a syscall the driver allows its nodeserver (kp_sandbox_syscall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeletplugin.h"

static void
usage(void)
{
	fprintf(stderr, "usage: kubeletplugin-policy [-s syscall]... "
	    "[-o file]\n");
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	const char		*outpath = NULL;
	char			*json;
	FILE			*f = stdout;
	int			 ch, r;

	if (kp_options_new(&o) != 0)
		return (1);
	while ((ch = getopt(argc, argv, "s:o:h")) != -1) {
		switch (ch) {
		case 's':
			if (kp_sandbox_syscall(o, optarg) != 0) {
				fprintf(stderr, "kubeletplugin-policy: %s\n",
				    kp_options_last_error(o));
				return (2);
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		default:
			usage();
			return (2);
		}
	}
	if (optind != argc) {
		usage();
		return (2);
	}
	if ((r = kp_policy_export_oci(o, &json)) != 0) {
		fprintf(stderr, "kubeletplugin-policy: %s\n", kp_strerror(r));
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
