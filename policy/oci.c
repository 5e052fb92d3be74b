/*
 * oci.c - the union of the tables of syscalls.c (every role's rules and
 * the supervisor's needs), and an OCI seccomp profile (runtime-spec
 * config-linux.md) from it: the pod's profile is the supervisor's own
 * filter (seccomp.c pol_filter_build_union) plus the driver process's
 * start-up. Per syscall the most permissive rule wins: an unconditional
 * allow in any role beats an argument rule, which beats a graceful
 * denial. Argument rules that name the process's own pid cannot be
 * written in a static profile and become unconditional allows.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "policy/policy.h"

/*
 * Add one rule to the union: per syscall the most permissive rule wins
 * (an unconditional allow, then an argument rule, then a graceful
 * denial). Own-pid and fd-only rules cannot be written in a static
 * profile and the supervisor's own table allows those calls anyway: they
 * count as allows.
 */
static void
u_add(struct pol_union *u, const char *name, enum pol_action a,
    enum pol_arg arg)
{
	struct pol_union_entry	*e = NULL;
	int			 rank;
	size_t			 i;

	if (a == POL_TRAP)
		return;
	if (a == POL_ALLOW && (arg == POL_ARG_NONE ||
	    arg == POL_ARG_SELF_TGID || arg == POL_ARG_FD_EMPTY_PATH))
		rank = 3;
	else
		rank = a == POL_ALLOW ? 2 : 1;
	for (i = 0; i < u->n; i++)
		if (strcmp(u->e[i].name, name) == 0)
			e = &u->e[i];
	if (e == NULL) {
		if (u->n == POL_UNION_MAX)
			return;
		e = &u->e[u->n++];
		snprintf(e->name, sizeof(e->name), "%s", name);
	} else if (e->rank >= rank)
		return;
	e->rank = rank;
	e->arg = rank == 3 ? POL_ARG_NONE : arg;
	e->action = rank == 3 ? POL_ALLOW : a;
}

static void
u_table(struct pol_union *u, const struct pol_rule *t, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		u_add(u, t[i].name, t[i].action, t[i].arg);
}

static int
cmp_entry(const void *a, const void *b)
{
	return (strcmp(((const struct pol_union_entry *)a)->name,
	    ((const struct pol_union_entry *)b)->name));
}

/*
 * The union of every table (base, the four roles, the supervisor's) and
 * the driver's extra nodeserver syscalls, sorted by name; with
 * POL_UNION_DRIVER the driver process's start-up and its main()'s
 * declared needs too (the pod's profile),
 * with POL_UNION_SANITIZER the sanitizer build's rules (with both, the
 * driver process's own filter's: LeakSanitizer's). The supervisor's
 * filter is this union without the driver: every child inherits it, so it
 * must allow whatever any child does, before and after its own filter.
 */
int
pol_union_build(const struct policy_opts *po, int flags,
    struct pol_union **out)
{
	static const enum kp_role roles[] = { ROLE_REGISTRAR,
	    ROLE_NODESERVER, ROLE_PUBLISHER, ROLE_OBSERVER, ROLE_SUPERVISOR,
	    ROLE_BROKER };
	struct pol_union	*u;
	const struct pol_rule	*t;
	char			 name[64];
	size_t			 n, i;

	if ((u = calloc(1, sizeof(*u))) == NULL)
		return (KP_ENOMEM);
	t = pol_table_base(&n);
	u_table(u, t, n);
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		t = pol_table(roles[i], &n);
		u_table(u, t, n);
	}
	if (flags & POL_UNION_DRIVER) {
		t = pol_table(ROLE_DRIVER, &n);
		u_table(u, t, n);
	}
	if (flags & POL_UNION_SANITIZER) {
		t = pol_table_sanitizer(&n);
		u_table(u, t, n);
	}
	if ((flags & POL_UNION_SANITIZER) && (flags & POL_UNION_DRIVER)) {
		t = pol_table_sanitizer_driver(&n);
		u_table(u, t, n);
	}
	for (i = 0; i < po->n_ns_syscalls; i++)
		if (pol_syscall_name(po->ns_syscalls[i], name,
		    sizeof(name)) == 0)
			u_add(u, name, POL_ALLOW, POL_ARG_NONE);
	/* The driver process's own (kp_policy_main_*): the pod's profile
	 * only, never the supervisor's filter (the init hook and a main()
	 * run again in a child run under that). Its ioctl commands join
	 * the ioctl argument rule (arg_rules()), which this makes sure of. */
	for (i = 0; (flags & POL_UNION_DRIVER) && i < po->n_main_syscalls; i++)
		if (pol_syscall_name(po->main_syscalls[i], name,
		    sizeof(name)) == 0)
			u_add(u, name, POL_ALLOW, POL_ARG_NONE);
	if ((flags & POL_UNION_DRIVER) && po->n_main_ioctls > 0)
		u_add(u, "ioctl", POL_ALLOW, POL_ARG_NOTIF_IOCTL);
	qsort(u->e, u->n, sizeof(u->e[0]), cmp_entry);
	*out = u;
	return (0);
}

#define ONE	",\n    {\"names\": [\"%s\"], \"action\": " \
	    "\"SCMP_ACT_ALLOW\", \"args\": [{\"index\": %d, \"value\": " \
	    "%lu, \"valueTwo\": %lu, \"op\": \"%s\"}]}"
#define TWO	",\n    {\"names\": [\"%s\"], \"action\": " \
	    "\"%s\"%s, \"args\": [{\"index\": %d, \"value\": %lu, " \
	    "\"valueTwo\": %lu, \"op\": \"SCMP_CMP_MASKED_EQ\"}, " \
	    "{\"index\": %d, \"value\": %lu, \"valueTwo\": %lu, " \
	    "\"op\": \"SCMP_CMP_MASKED_EQ\"}]}"
#define LOW32	0xffffffffUL
#define CLONE_NEW_ANY	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | \
	CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* socket: as seccomp.c socket_rules (runc ANDs the args of one entry). */
static void
socket_rules(FILE *f, const char *name)
{
	static const int fam[] = { AF_INET, AF_INET6 };
	static const int type[] = { SOCK_STREAM, SOCK_DGRAM };
	size_t		 i, k;

	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		for (k = 0; k < sizeof(type) / sizeof(type[0]); k++)
			fprintf(f, TWO, name, "SCMP_ACT_ALLOW", "", 0, LOW32,
			    (unsigned long)fam[i], 1, 0xfUL,
			    (unsigned long)type[k]);
	fprintf(f, ",\n    {\"names\": [\"%s\"], \"action\": "
	    "\"SCMP_ACT_ERRNO\", \"errnoRet\": %d, \"args\": [{\"index\": 0, "
	    "\"value\": %lu, \"valueTwo\": %lu, \"op\": "
	    "\"SCMP_CMP_MASKED_EQ\"}]}", name, EACCES, LOW32,
	    (unsigned long)AF_UNIX);
	fprintf(f, TWO, name, "SCMP_ACT_ERRNO", ", \"errnoRet\": 13", 0, LOW32,
	    (unsigned long)AF_NETLINK, 2, LOW32, 0UL);
}

static void
arg_rules(FILE *f, const struct pol_union_entry *e,
    const struct policy_opts *po)
{
	static const unsigned long notif[] = { SECCOMP_IOCTL_NOTIF_RECV,
	    SECCOMP_IOCTL_NOTIF_SEND, SECCOMP_IOCTL_NOTIF_ID_VALID, FIONREAD };
	static const int pr[] = { PR_SET_NAME, PR_GET_NAME };
	size_t		 i, k;

	switch (e->arg) {
	case POL_ARG_CLONE_THREAD:
		fprintf(f, ONE, e->name, 0, (unsigned long)(CLONE_THREAD |
		    CLONE_NEW_ANY), (unsigned long)CLONE_THREAD,
		    "SCMP_CMP_MASKED_EQ");
		break;
	case POL_ARG_NOTIF_IOCTL:
		for (i = 0; i < sizeof(notif) / sizeof(notif[0]); i++)
			fprintf(f, ONE, e->name, 1, LOW32, notif[i] & LOW32,
			    "SCMP_CMP_MASKED_EQ");
		/* The driver process's commands (kp_policy_main_ioctl),
		 * in the order declared; one of ours is not repeated. */
		for (i = 0; i < po->n_main_ioctls; i++) {
			for (k = 0; k < sizeof(notif) / sizeof(notif[0]); k++)
				if ((notif[k] & LOW32) == po->main_ioctls[i])
					break;
			if (k == sizeof(notif) / sizeof(notif[0]))
				fprintf(f, ONE, e->name, 1, LOW32,
				    (unsigned long)po->main_ioctls[i],
				    "SCMP_CMP_MASKED_EQ");
		}
		break;
	case POL_ARG_SOCKET_INET:
		socket_rules(f, e->name);
		break;
	case POL_ARG_SOCKETPAIR_STREAM:
		fprintf(f, TWO, e->name, "SCMP_ACT_ALLOW", "", 0, LOW32,
		    (unsigned long)AF_UNIX, 1, 0xfUL,
		    (unsigned long)SOCK_STREAM);
		break;
	case POL_ARG_PRCTL_NAME:
		for (i = 0; i < sizeof(pr) / sizeof(pr[0]); i++)
			fprintf(f, ONE, e->name, 0, LOW32, (unsigned long)pr[i],
			    "SCMP_CMP_MASKED_EQ");
		break;
	case POL_ARG_FCNTL:
		for (i = 0; i < pol_n_fcntl_allowed; i++)
			fprintf(f, ONE, e->name, 1, LOW32,
			    (unsigned long)pol_fcntl_allowed[i],
			    "SCMP_CMP_MASKED_EQ");
		break;
	default:
		break;
	}
}

int
pol_oci_json(const struct policy_opts *po, char **out)
{
	struct pol_union *u;
	char		*buf = NULL;
	size_t		 i, len = 0;
	FILE		*f;
	int		 first, r;

	if ((r = pol_union_build(po, POL_UNION_DRIVER, &u)) != 0)
		return (r);
	if ((f = open_memstream(&buf, &len)) == NULL) {
		free(u);
		return (KP_ENOMEM);
	}
	fprintf(f, "{\n  \"defaultAction\": \"SCMP_ACT_ERRNO\",\n"
	    "  \"defaultErrnoRet\": %d,\n"
	    "  \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\", "
	    "\"SCMP_ARCH_X32\", \"SCMP_ARCH_AARCH64\", \"SCMP_ARCH_ARM\"],\n"
	    "  \"syscalls\": [\n    {\"names\": [", EPERM);
	for (i = 0, first = 1; i < u->n; i++) {
		if (u->e[i].rank != 3)
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ", ", u->e[i].name);
		first = 0;
	}
	fprintf(f, "], \"action\": \"SCMP_ACT_ALLOW\"}");
	for (i = 0; i < u->n; i++)
		if (u->e[i].rank == 2)
			arg_rules(f, &u->e[i], po);
	for (i = 0; i < u->n; i++)
		if (u->e[i].rank == 1)
			fprintf(f, ",\n    {\"names\": [\"%s\"], \"action\": "
			    "\"SCMP_ACT_ERRNO\", \"errnoRet\": %d}",
			    u->e[i].name, u->e[i].action == POL_EACCES ? EACCES :
			    u->e[i].action == POL_ENOSYS ? ENOSYS : EPERM);
	fprintf(f, "\n  ]\n}\n");
	free(u);
	if (fclose(f) != 0 || buf == NULL) {
		free(buf);
		return (KP_ENOMEM);
	}
	*out = buf;
	return (0);
}
