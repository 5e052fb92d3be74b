/*
 * kp_nosys - run a program with some syscalls failing ENOSYS, as on a
 * kernel or under a container profile without them, for this process
 * tree only (lifecycle.test.js: the supervisor without inotify):
 *
 *	kp_nosys <syscall>[,<syscall>...] <program> [arg...]
 *
 * A seccomp filter of libseccomp (allow the rest), loaded without
 * NO_NEW_PRIVS (root holds CAP_SYS_ADMIN; the children set it
 * themselves), then execvp. Nothing global changes. Exits 2 when it
 * cannot set up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int
main(int argc, char **argv)
{
	scmp_filter_ctx	 ctx;
	char		*list, *name, *save = NULL;
	int		 nr;

	if (argc < 3) {
		fprintf(stderr, "usage: kp_nosys <syscall>[,...] <program> "
		    "[arg...]\n");
		return (2);
	}
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0 ||
	    (list = strdup(argv[1])) == NULL)
		return (2);
	for (name = strtok_r(list, ",", &save); name != NULL;
	    name = strtok_r(NULL, ",", &save)) {
		if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) != 0) {
			fprintf(stderr, "kp_nosys: %s: unknown syscall\n", name);
			return (2);
		}
	}
	if (seccomp_load(ctx) != 0) {
		fprintf(stderr, "kp_nosys: seccomp_load failed\n");
		return (2);
	}
	seccomp_release(ctx);
	free(list);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "kp_nosys: %s: %s\n", argv[2], strerror(errno));
	return (2);
}
