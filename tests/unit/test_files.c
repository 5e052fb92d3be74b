/*
 * test_files.c - the nodeserver's files: the state directory, read path
 * and CDI directory setters and kp_start()'s cross-checks of them, the
 * CDI spec name rule (base/names.c), the CDI frames' field rules and state
 * table rows, the public CDI functions outside the nodeserver, the
 * Landlock ABI probe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "api/api.h"
#include "base/names.h"
#include "ipc/ipc.h"
#include "nodeserver/ns_wrap.h"
#include "policy/policy.h"

#define FAILS(o, call, code, opt, rule) do {				\
	CHECK_EQ((call), (code));					\
	CHECK_CONTAINS(kp_options_last_error(o), (opt));		\
	CHECK_CONTAINS(kp_options_last_error(o), (rule));		\
} while (0)

static const char *
rep(char c, size_t n)
{
	static char	 bufs[2][1024];
	static int	 next;
	char		*b = bufs[next++ % 2];

	memset(b, c, n);
	b[n] = '\0';
	return (b);
}

/* The three path setters share one rule. */
static void
test_path_rules(void)
{
	static const struct {
		int		(*set)(struct kp_options *, const char *);
		const char	*name;
	} setters[] = {
		{ kp_sandbox_state_dir, "kp_sandbox_state_dir" },
		{ kp_sandbox_read_path, "kp_sandbox_read_path" },
		{ kp_cdi_directory, "kp_cdi_directory (CDIDirectory)" },
	};
	struct kp_options	*o;
	char			 longp[300];
	size_t			 i;

	if (kp_options_new(&o) != 0)
		return;
	snprintf(longp, sizeof(longp), "/%s", rep('p', 280));
	for (i = 0; i < 3; i++) {
		CHECK_EQ(setters[i].set(NULL, "/x"), KP_EINVAL);
		FAILS(o, setters[i].set(o, NULL), KP_EINVAL, setters[i].name,
		    "not an absolute path");
		FAILS(o, setters[i].set(o, "var/lib"), KP_EINVAL,
		    setters[i].name, "not an absolute path");
		FAILS(o, setters[i].set(o, "/"), KP_EINVAL, setters[i].name,
		    "the root directory");
		FAILS(o, setters[i].set(o, "/var/../etc"), KP_EINVAL,
		    setters[i].name, "'.' or '..' component");
		FAILS(o, setters[i].set(o, "/var/./lib"), KP_EINVAL,
		    setters[i].name, "'.' or '..' component");
		FAILS(o, setters[i].set(o, "/var//lib"), KP_EINVAL,
		    setters[i].name, "empty component");
		FAILS(o, setters[i].set(o, "/var/lib/"), KP_EINVAL,
		    setters[i].name, "trailing '/'");
		FAILS(o, setters[i].set(o, "/var/\nlib"), KP_EINVAL,
		    setters[i].name, "control character");
		FAILS(o, setters[i].set(o, longp), KP_ENAMETOOLONG,
		    setters[i].name, "longer than 255 bytes");
		CHECK_EQ(setters[i].set(o, "/var/lib/x.y-z"), 0);
		CHECK_EQ(setters[i].set(o, "/var/lib/..x"), 0);
	}
	CHECK_STREQ(o->policy.cdi_dir, "/var/lib/..x");
	CHECK_EQ(o->policy.n_state_dirs, 2);
	CHECK_EQ(o->policy.n_read_paths, 2);
	/* Repeats are ignored; the caps. */
	CHECK_EQ(kp_sandbox_state_dir(o, "/var/lib/x.y-z"), 0);
	CHECK_EQ(o->policy.n_state_dirs, 2);
	CHECK_EQ(kp_sandbox_state_dir(o, "/s3"), 0);
	CHECK_EQ(kp_sandbox_state_dir(o, "/s4"), 0);
	FAILS(o, kp_sandbox_state_dir(o, "/s5"), KP_ENOMEM,
	    "kp_sandbox_state_dir", "at most 4 paths");
	CHECK_EQ(o->policy.n_state_dirs, 4);
	for (i = 2; i < POL_MAX_PATHS; i++) {
		char	 p[32];

		snprintf(p, sizeof(p), "/r%zu", i);
		CHECK_EQ(kp_sandbox_read_path(o, p), 0);
	}
	FAILS(o, kp_sandbox_read_path(o, "/one-more"), KP_ENOMEM,
	    "kp_sandbox_read_path", "at most 16 paths");
	kp_options_free(o);
}

/* kp_start()'s checks (opt_check): what a state directory may not hold. */
static void
test_state_dir_check(void)
{
	struct kp_options	*o;

	if (kp_options_new(&o) != 0)
		return;
	CHECK_EQ(kp_driver_name(o, "drv.example.com"), 0);
	CHECK_EQ(kp_plugin_socket_path(o, "/k/plugins/drv/dra.sock"), 0);
	CHECK_EQ(kp_registrar_socket_path(o, "/k/reg/drv-reg.sock"), 0);
	CHECK_EQ(opt_check(o), 0);
	CHECK_EQ(kp_sandbox_state_dir(o, "/k/plugins/drv"), 0);
	FAILS(o, opt_check(o), KP_EINVAL, "kp_sandbox_state_dir",
	    "must not contain the plugin or registrar socket");
	o->policy.n_state_dirs = 0;
	CHECK_EQ(kp_sandbox_state_dir(o, "/k"), 0);
	FAILS(o, opt_check(o), KP_EINVAL, "kp_sandbox_state_dir",
	    "must not contain the plugin or registrar socket");
	o->policy.n_state_dirs = 0;
	/* The CDI directory (the default one too), either way round. */
	CHECK_EQ(kp_sandbox_state_dir(o, "/var/run"), 0);
	FAILS(o, opt_check(o), KP_EINVAL, "kp_sandbox_state_dir",
	    "and the CDI directory /var/run/cdi must not contain one another");
	o->policy.n_state_dirs = 0;
	CHECK_EQ(kp_sandbox_state_dir(o, "/var/run/cdi/mine"), 0);
	FAILS(o, opt_check(o), KP_EINVAL, "kp_sandbox_state_dir",
	    "must not contain one another");
	CHECK_EQ(kp_cdi_directory(o, "/etc/cdi"), 0);
	CHECK_EQ(opt_check(o), 0);
	/* A prefix that is not a parent is fine. */
	o->policy.n_state_dirs = 0;
	CHECK_EQ(kp_sandbox_state_dir(o, "/etc/cdi2"), 0);
	CHECK_EQ(kp_sandbox_state_dir(o, "/k/plugins/drv2"), 0);
	CHECK_EQ(opt_check(o), 0);
	CHECK_EQ(kp_kube_client_kubeconfig(o, "/etc/cdi2/kubeconfig", NULL),
	    0);
	FAILS(o, opt_check(o), KP_EINVAL, "kp_sandbox_state_dir",
	    "must not contain the kubeconfig");
	kp_options_free(o);
}

static int
spec(const char *s)
{
	return (name_is_cdi_spec("pci.example.com", s, strlen(s)));
}

static void
test_cdi_name(void)
{
	char	 b[512];

	CHECK(spec("pci.example.com_0f7c-11ee.json"));
	CHECK(!spec("pci.example.com_a.yaml"));
	CHECK(spec("pci.example.com_claim_1.2-x.json"));
	CHECK(spec("pci.example.com_a..b.json"));
	/* Another driver's prefix, or a prefix of ours. */
	CHECK(!spec("other.example.com_a.json"));
	CHECK(!spec("pci.example.co_a.json"));
	CHECK(!spec("pci.example.com.evil_a.json"));
	CHECK(!spec("pci.example.coma.json"));
	CHECK(!spec("pci.example.com-a.json"));
	/* The part after the prefix. */
	CHECK(!spec("pci.example.com_.json"));
	CHECK(!spec("pci.example.com_..json"));
	CHECK(!spec("pci.example.com_.a.json"));
	CHECK(!spec("pci.example.com_-a.json"));
	CHECK(!spec("pci.example.com_a/b.json"));
	CHECK(!spec("pci.example.com_a/../../x.json"));
	CHECK(!spec("pci.example.com_a b.json"));
	CHECK(!spec("pci.example.com_a\n.json"));
	CHECK(!spec("pci.example.com_a.json\n"));
	CHECK(!spec("pci.example.com_a.txt"));
	CHECK(!spec("pci.example.com_a.JSON"));
	CHECK(!spec("pci.example.com_a.json.tmp"));
	CHECK(!spec("pci.example.com_a"));
	CHECK(!spec("pci.example.com_"));
	CHECK(!spec(".pci.example.com_a.json"));
	CHECK(!spec("..") && !spec(".") && !spec(""));
	CHECK(!spec("../pci.example.com_a.json"));
	CHECK(!name_is_cdi_spec("pci.example.com", "pci.example.com_a\0.json",
	    22));
	/* 200 characters in the middle, not 201; 243 bytes in all. */
	snprintf(b, sizeof(b), "pci.example.com_%s.json", rep('a', 200));
	CHECK(spec(b));
	snprintf(b, sizeof(b), "pci.example.com_%s.json", rep('a', 201));
	CHECK(!spec(b));
	snprintf(b, sizeof(b), "%s_%s.json", rep('d', 37), rep('a', 200));
	CHECK_EQ(strlen(b), 243);
	CHECK(name_is_cdi_spec(rep('d', 37), b, strlen(b)));
	snprintf(b, sizeof(b), "%s_%s.json", rep('d', 38), rep('a', 200));
	CHECK(!name_is_cdi_spec(rep('d', 38), b, strlen(b)));
}

/* Size rules of the CDI frames are violations; the name rule is not. */
static void
test_cdi_frames(void)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__CdiWrite	 w = KPIPC__CDI_WRITE__INIT;
	Kpipc__CdiRemove rm = KPIPC__CDI_REMOVE__INIT;
	char		 err[KP_ERROR_SIZE], *big;

	m.m_case = KPIPC__MSG__M_CDI_WRITE;
	m.cdi_write = &w;
	w.name = "../anything at all";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	w.name = "";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "cdi_write.name: empty or longer than 243");
	w.name = (char *)rep('a', 244);
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	w.name = "x";
	if ((big = calloc(1, KP_IPC_MAX_CDI_CONTENT + 1)) == NULL)
		return;
	w.content.data = (uint8_t *)big;
	w.content.len = KP_IPC_MAX_CDI_CONTENT;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	w.content.len++;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "cdi_write.content: longer than 262144 bytes");
	free(big);
	m.m_case = KPIPC__MSG__M_CDI_REMOVE;
	m.cdi_remove = &rm;
	rm.name = (char *)rep('a', 300);
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "cdi_remove.name");
	/* The state table: the nodeserver only, starting or ready. */
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_CDI_WRITE, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_STARTING,
	    KPIPC__MSG__M_CDI_LIST, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_STOPPING,
	    KPIPC__MSG__M_CDI_REMOVE, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_PUBLISHER, CS_READY,
	    KPIPC__MSG__M_CDI_WRITE, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "unpermitted frame cdi_write from the publisher");
	CHECK_EQ(ipc_rule_check(ROLE_REGISTRAR, CS_READY,
	    KPIPC__MSG__M_CDI_REMOVE, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY,
	    KPIPC__MSG__M_CDI_LIST, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_CDI_REPLY, err, sizeof(err)), KP_EPROTO);
}

/* CdiChanged: supervisor -> nodeserver only; names and count bounded. */
static void
test_cdi_changed_frame(void)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__CdiChanged	 c = KPIPC__CDI_CHANGED__INIT;
	Kpipc__CdiChange	 ch[KP_IPC_MAX_CDI_CHANGES + 1], *p[KP_IPC_MAX_CDI_CHANGES + 1];
	char			 err[KP_ERROR_SIZE];
	size_t			 i;

	for (i = 0; i <= KP_IPC_MAX_CDI_CHANGES; i++) {
		kpipc__cdi_change__init(&ch[i]);
		ch[i].name = "d_a.json";
		p[i] = &ch[i];
	}
	m.m_case = KPIPC__MSG__M_CDI_CHANGED;
	m.cdi_changed = &c;
	c.changes = p;
	c.n_changes = KP_IPC_MAX_CDI_CHANGES;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	c.n_changes++;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "cdi_changed.changes: more than 256");
	c.n_changes = 2;
	ch[1].name = "";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "cdi_changed.changes[].name: empty or longer");
	ch[1].name = (char *)rep('a', 244);
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	/* No child may send it. */
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_CDI_CHANGED, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "unpermitted frame cdi_changed from the nodeserver");
	CHECK_EQ(ipc_rule_check(ROLE_PUBLISHER, CS_READY,
	    KPIPC__MSG__M_CDI_CHANGED, err, sizeof(err)), KP_EPROTO);
}

/* The nodeserver's copy of the list (nodeserver/ns_mirror.c). */
static void
test_mirror(void)
{
	struct ns_mirror	 mi;
	Kpipc__CdiChanged	 c = KPIPC__CDI_CHANGED__INIT;
	Kpipc__CdiChange	 ch[2], *p[2] = { &ch[0], &ch[1] };
	char			*list[3] = { "d_c.json", "d_a.json", "d_b.json" };
	char			**names, nm[32];
	size_t			 n, i;

	memset(&mi, 0, sizeof(mi));
	CHECK_EQ(ns_mirror_has(&mi, "d_a.json"), -1);
	ns_mirror_change(&mi, "d_a.json", 1);	/* no copy: nothing kept */
	CHECK_EQ(ns_mirror_has(&mi, "d_a.json"), -1);
	CHECK_EQ(ns_mirror_names(&mi, &names, &n), -1);
	ns_mirror_set(&mi, list, 3);
	CHECK_EQ(ns_mirror_has(&mi, "d_a.json"), 1);
	CHECK_EQ(ns_mirror_has(&mi, "d_c.json"), 1);
	CHECK_EQ(ns_mirror_has(&mi, "d_d.json"), 0);
	/* In order: created, then removed, within one frame. */
	kpipc__cdi_change__init(&ch[0]);
	kpipc__cdi_change__init(&ch[1]);
	ch[0].name = "d_d.json";
	ch[0].present = 1;
	ch[1].name = "d_a.json";
	c.changes = p;
	c.n_changes = 2;
	ns_mirror_changed(&mi, &c);
	CHECK_EQ(ns_mirror_has(&mi, "d_d.json"), 1);
	CHECK_EQ(ns_mirror_has(&mi, "d_a.json"), 0);
	ch[0].present = 0;
	ch[1].name = "d_d.json";
	ch[1].present = 1;
	ns_mirror_changed(&mi, &c);
	CHECK_EQ(ns_mirror_has(&mi, "d_d.json"), 1);
	CHECK_EQ(ns_mirror_names(&mi, &names, &n), 0);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK_STREQ(names[0], "d_b.json");	/* sorted */
		CHECK_STREQ(names[2], "d_d.json");
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* Twice the same name is one; a removal of an unknown one is none. */
	ns_mirror_change(&mi, "d_b.json", 1);
	ns_mirror_change(&mi, "d_x.json", 0);
	CHECK_EQ(mi.n, 3);
	c.reset = 1;
	ns_mirror_changed(&mi, &c);
	CHECK_EQ(ns_mirror_has(&mi, "d_b.json"), -1);
	/* More than a list can hold: no copy. */
	ns_mirror_set(&mi, NULL, 0);
	for (i = 0; i < KP_IPC_MAX_CDI_NAMES && mi.valid; i++) {
		snprintf(nm, sizeof(nm), "d_%05zu.json", i);
		ns_mirror_change(&mi, nm, 1);
	}
	CHECK_EQ(i, KP_IPC_MAX_CDI_NAMES);
	CHECK_EQ(ns_mirror_has(&mi, "d_00000.json"), -1);
	ns_mirror_drop(&mi);
}

static int
count(void *user, const char *name)
{
	(*(int *)user)++;
	return (0);
}

/* Outside the nodeserver (here: the driver's process) they refuse. */
static void
test_outside_nodeserver(void)
{
	char	 err[KP_ERROR_SIZE];
	int	 n = 0;

	CHECK_EQ(kp_cdi_spec_write("d_a.json", "{}", 2, err, sizeof(err)),
	    KP_ENOTSUP);
	CHECK_CONTAINS(err, "kp_cdi_spec_write: only the driver's hooks, in "
	    "the nodeserver process");
	CHECK_EQ(kp_cdi_spec_remove("d_a.json", err, sizeof(err)), KP_ENOTSUP);
	CHECK_CONTAINS(err, "kp_cdi_spec_remove");
	CHECK_EQ(kp_cdi_spec_list(count, &n, err, sizeof(err)), KP_ENOTSUP);
	CHECK_EQ(n, 0);
	CHECK_EQ(kp_cdi_spec_write("d_a.json", "{}", 2, NULL, 0), KP_ENOTSUP);
	CHECK_EQ(kp_cdi_spec_write(NULL, "{}", 2, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_EQ(kp_cdi_spec_write("d_a.json", NULL, 2, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_EQ(kp_cdi_spec_list(NULL, NULL, err, sizeof(err)), KP_EINVAL);
}

static void
test_landlock_probe(void)
{
	int	 abi = pol_landlock_abi();

	CHECK(abi >= 0);
	printf("test_files: this kernel's Landlock ABI: %d\n", abi);
	/* The publisher's extra read paths. */
	CHECK_EQ(policy_allow_read(rep('/', 300)), KP_ENAMETOOLONG);
}

int
main(void)
{
	test_path_rules();
	test_state_dir_check();
	test_cdi_name();
	test_cdi_frames();
	test_cdi_changed_frame();
	test_mirror();
	test_outside_nodeserver();
	test_landlock_probe();
	return (test_done("test_files"));
}
