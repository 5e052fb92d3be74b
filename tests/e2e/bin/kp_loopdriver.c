/*
 * kp_loopdriver - the main() of a loop-device driver, as
 * docs/driver-guide.md ("main()'s own calls: the pod's profile") shows
 * it: it declares LOOP_CTL_GET_FREE with kp_policy_main_ioctl(), prints
 * its pod profile with --print-seccomp-profile, and otherwise asks
 * /dev/loop-control for a free loop device, as a driver's main() would
 * before publishing it. pod-profile.test.js runs it in a container under
 * the profile it printed.
 *
 *   kp_loopdriver [--undeclared] [--print-seccomp-profile]
 *
 * --undeclared leaves the declaration out. Exit status: 0 the ioctl
 * returned a loop index ("LOOP_CTL_GET_FREE: loopN"), 1 EPERM, 2 another
 * error, 3 no /dev/loop-control, 4 bad usage or options.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kubeletplugin.h"

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	char			*json;
	int			 i, declare = 1, print = 0, fd, n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--undeclared") == 0)
			declare = 0;
		else if (strcmp(argv[i], "--print-seccomp-profile") == 0)
			print = 1;
		else {
			fprintf(stderr, "usage: kp_loopdriver [--undeclared] "
			    "[--print-seccomp-profile]\n");
			return (4);
		}
	}
	if (kp_options_new(&o) != 0)
		return (4);
	if (declare && kp_policy_main_ioctl(o, LOOP_CTL_GET_FREE) != 0) {
		fprintf(stderr, "kp_loopdriver: %s\n",
		    kp_options_last_error(o));
		return (4);
	}
	if (print) {
		if (kp_policy_export_oci(o, &json) != 0)
			return (4);
		fputs(json, stdout);
		free(json);
		kp_options_free(o);
		return (0);
	}
	kp_options_free(o);
	if ((fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1) {
		printf("open /dev/loop-control: %s\n", strerror(errno));
		return (3);
	}
	if ((n = ioctl(fd, LOOP_CTL_GET_FREE)) < 0) {
		printf("LOOP_CTL_GET_FREE: %s\n", strerror(errno));
		return (errno == EPERM ? 1 : 2);
	}
	printf("LOOP_CTL_GET_FREE: loop%d\n", n);
	close(fd);
	return (0);
}
