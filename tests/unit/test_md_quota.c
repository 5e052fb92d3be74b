/*
 * test_md_quota.c - device metadata within the CDI quota (issue 24,
 * finding 3: supervisor/metadata.c, files.c, md_claims.c) on real
 * directories: what an earlier run left is counted at start, a
 * MetadataWrite is checked for everything it adds before it writes
 * (directories too), a refused one leaves nothing, a spec that cannot
 * be written takes its metadata file and directories with it,
 * MetadataRemove gives back what it removed; and the table of claims the
 * publisher answered, which a MetadataWrite must name with Kubernetes
 * access.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "ipc/ipc.h"
#include "supervisor/supervisor.h"

#define DRV	"test.example.com"
#define UID0	"00000000-0000-4000-8000-000000000000"
#define UID1	"00000000-0000-4000-8000-000000000001"
#define MIB16	(16u * 1024 * 1024)

static struct kp_options	 opts;
static char			 root[64], cdi[128], md[128];

static struct sup *
sup_new(void)
{
	struct sup	*sup;
	struct child	*c;
	char		 err[KP_ERROR_SIZE] = "";

	if ((sup = calloc(1, sizeof(*sup))) == NULL)
		abort();
	opts.driver_name = DRV;
	opts.metadata = 1;
	snprintf(opts.metadata_dir, sizeof(opts.metadata_dir), "%s", md);
	snprintf(opts.policy.cdi_dir, sizeof(opts.policy.cdi_dir), "%s", cdi);
	sup->cfg = &opts;
	sup->mon = sup->mon_files = -1;
	c = &sup->children[ROLE_NODESERVER];
	c->name = "nodeserver";
	c->pid = 4242;
	ipc_chan_init(&c->ctl, open("/dev/null", O_WRONLY | O_CLOEXEC),
	    KP_IPC_MAX_FRAME);
	CHECK_EQ(files_prepare(sup, err, sizeof(err)), 0);
	CHECK_EQ(err[0], '\0');
	return (sup);
}

static void
sup_free(struct sup *sup)
{
	files_close(sup);
	ipc_chan_close(&sup->children[ROLE_NODESERVER].ctl);
	free(sup);
}

/* The code of the one reply queued; err gets its message. */
static int
reply(struct sup *sup, char *err, size_t errsize)
{
	struct ipc_chan	*ch = &sup->children[ROLE_NODESERVER].ctl;
	Kpipc__Msg	*m;
	size_t		 len;
	int		 r = 1;

	CHECK(ch->wlen > 4);
	len = (size_t)ch->wbuf[0] << 24 | (size_t)ch->wbuf[1] << 16 |
	    (size_t)ch->wbuf[2] << 8 | ch->wbuf[3];
	CHECK_EQ(4 + len, ch->wlen);
	if ((m = kpipc__msg__unpack(NULL, len, ch->wbuf + 4)) != NULL) {
		r = m->cdi_reply->result->code;
		snprintf(err, errsize, "%s", m->cdi_reply->result->message);
		kpipc__msg__free_unpacked(m, NULL);
	}
	ch->wlen = 0;
	return (r);
}

/* A MetadataWrite of claim default/<name> (uid), len bytes: its code. */
static int
md_write(struct sup *sup, const char *name, const char *uid,
    const char *pod, size_t len, char *err, size_t errsize)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataWrite	 w = KPIPC__METADATA_WRITE__INIT;
	uint8_t			*c;
	int			 r;

	if ((c = malloc(len + 1)) == NULL)
		abort();
	memset(c, 'a', len);
	w.id = 1;
	w.namespace_ = "default";
	w.name = (char *)name;
	w.uid = (char *)uid;
	w.request = "req-0";
	w.pod_claim_name = (char *)pod;
	w.content.data = c;
	w.content.len = len;
	m.m_case = KPIPC__MSG__M_METADATA_WRITE;
	m.metadata_write = &w;
	CHECK_EQ(ipc_check(&m, err, errsize), 0);
	metadata_request(sup, &sup->children[ROLE_NODESERVER], &m);
	free(c);
	r = reply(sup, err, errsize);
	return (r);
}

static int
md_remove(struct sup *sup, const char *name, const char *uid)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataRemove	 rm = KPIPC__METADATA_REMOVE__INIT;
	char			 err[KP_ERROR_SIZE];

	rm.id = 2;
	rm.namespace_ = "default";
	rm.name = (char *)name;
	rm.uid = (char *)uid;
	m.m_case = KPIPC__MSG__M_METADATA_REMOVE;
	m.metadata_remove = &rm;
	metadata_request(sup, &sup->children[ROLE_NODESERVER], &m);
	return (reply(sup, err, sizeof(err)));
}

/* Whether dir/rel exists (not following a link). */
static int
exists(const char *dir, const char *rel)
{
	char		 p[512];
	struct stat	 st;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return (lstat(p, &st) == 0);
}

static void
put_file(const char *path, size_t len)
{
	char	*buf;
	int	 fd;

	if ((buf = calloc(1, len + 1)) == NULL)
		abort();
	memset(buf, ' ', len);
	CHECK((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) != -1);
	CHECK_EQ(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/*
 * The quota: counted at start (specs and the metadata tree), checked for
 * the whole request first, given back on removal; a refusal leaves
 * nothing.
 */
static void
test_quota(void)
{
	static const uint8_t	 spec[2000];
	struct sup		*sup;
	char			 err[KP_ERROR_SIZE], p[512];
	size_t			 files, bytes;

	/* An earlier run's metadata: a claim directory, a request
	 * directory, a file of 1000 bytes; and a spec. */
	snprintf(p, sizeof(p), "%s/default_old", md);
	CHECK_EQ(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/default_old/req-0", md);
	CHECK_EQ(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/default_old/req-0/metadata.json", md);
	put_file(p, 1000);
	snprintf(p, sizeof(p), "%s/" DRV "_big.json", cdi);
	put_file(p, MIB16 - 2 * MD_DIR_BYTES - 1000 - 20000);
	sup = sup_new();
	CHECK_EQ(sup->cdi_files, 4);
	CHECK_EQ(sup->cdi_bytes, MIB16 - 20000);
	files = sup->cdi_files;
	bytes = sup->cdi_bytes;

	/* 20000 bytes left: two directories (8192) and a spec (~700)
	 * leave room for a file of 10000, not of 12000. */
	CHECK_EQ(md_write(sup, "c-1", UID1, "", 12000, err, sizeof(err)),
	    KP_ENOSPC);
	CHECK_CONTAINS(err, "would make this driver's specs and device "
	    "metadata");
	CHECK_CONTAINS(err, "over 16777216");
	CHECK(!exists(md, "default_c-1"));
	CHECK_EQ(sup->cdi_files, files);
	CHECK_EQ(sup->cdi_bytes, bytes);
	CHECK_EQ(md_write(sup, "c-1", UID1, "", 10000, err, sizeof(err)), 0);
	CHECK(exists(md, "default_c-1/req-0/metadata.json"));
	CHECK(exists(cdi, DRV "_metadata_" UID1 "_req-0.json"));
	CHECK_EQ(sup->cdi_files, files + 4);
	CHECK(sup->cdi_bytes > bytes + 2 * MD_DIR_BYTES + 10000);
	/* A spec write is refused now, naming metadata in the rule. */
	CHECK_EQ(files_cdi_put(sup, DRV "_x.json", spec, sizeof(spec), err,
	    sizeof(err)), KP_ENOSPC);
	CHECK_CONTAINS(err, "device metadata");
	/* The same request again replaces: no directory more, the file's
	 * old bytes taken out. */
	CHECK_EQ(md_write(sup, "c-1", UID1, "", 9000, err, sizeof(err)), 0);
	CHECK_EQ(sup->cdi_files, files + 4);
	/* A removal gives all of it back. */
	CHECK_EQ(md_remove(sup, "c-1", UID1), 0);
	CHECK(!exists(md, "default_c-1"));
	CHECK_EQ(sup->cdi_files, files);
	CHECK_EQ(sup->cdi_bytes, bytes);
	sup_free(sup);

	/* The counts after a restart are what was tracked. */
	sup = sup_new();
	CHECK_EQ(sup->cdi_files, files);
	CHECK_EQ(sup->cdi_bytes, bytes);
	sup_free(sup);
	snprintf(p, sizeof(p), "%s/" DRV "_big.json", cdi);
	unlink(p);
}

/*
 * A spec that cannot be written (a directory in its place): the
 * metadata file and the two directories made for it go again, the
 * quota is as before.
 */
static void
test_rollback(void)
{
	struct sup	*sup;
	char		 err[KP_ERROR_SIZE], p[512];
	size_t		 files, bytes;

	snprintf(p, sizeof(p), "%s/" DRV "_metadata_" UID0 "_req-0.json",
	    cdi);
	CHECK_EQ(mkdir(p, 0755), 0);
	sup = sup_new();
	files = sup->cdi_files;
	bytes = sup->cdi_bytes;
	CHECK_EQ(md_write(sup, "c-0", UID0, "", 100, err, sizeof(err)),
	    KP_EIO);
	CHECK_CONTAINS(err, "CDI spec");
	CHECK(!exists(md, "default_c-0"));
	CHECK_EQ(sup->cdi_files, files);
	CHECK_EQ(sup->cdi_bytes, bytes);
	sup_free(sup);
	CHECK_EQ(rmdir(p), 0);
}

/* The claims the publisher answered: only those, for that nodeserver,
 * with that pod claim name, until they expire; the oldest goes. */
static void
test_claims(void)
{
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	Kpipc__Result		 res = KPIPC__RESULT__INIT;
	Kpipc__MetadataWrite	 w = KPIPC__METADATA_WRITE__INIT;
	struct sup		*sup;
	char			 err[KP_ERROR_SIZE], name[64];
	size_t			 i;

	opts.kube_mode = KP_KUBE_KUBECONFIG;
	sup = sup_new();
	CHECK(sup->md_seen != NULL);
	w.namespace_ = "default";
	w.name = "gpu-1";
	w.uid = UID1;
	w.pod_claim_name = "";
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	CHECK_CONTAINS(err, "not a claim of a prepare call in progress");
	/* Through the whole request path too: nothing is written. */
	CHECK_EQ(md_write(sup, "gpu-1", UID1, "", 10, err, sizeof(err)),
	    KP_EACCES);
	CHECK(!exists(md, "default_gpu-1"));

	r.namespace_ = "default";
	r.name = "gpu-1";
	r.uid = UID1;
	r.pod_claim_name = "";
	/* An error answer is no claim. */
	res.code = KP_EKUBE;
	r.result = &res;
	md_claims_answered(sup, 4242, &r);
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	r.result = NULL;
	md_claims_answered(sup, 4242, &r);
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)), 0);
	CHECK_EQ(md_claims_known(sup, 4243, &w, err, sizeof(err)),
	    KP_EACCES);
	w.uid = UID0;
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	w.uid = UID1;
	w.pod_claim_name = "other";
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	CHECK_CONTAINS(err, "pod claim name \"other\"");
	w.pod_claim_name = "";
	CHECK_EQ(md_write(sup, "gpu-1", UID1, "", 10, err, sizeof(err)), 0);
	CHECK_EQ(md_remove(sup, "gpu-1", UID1), 0);

	/* Expired. */
	sup->md_seen[0].until.tv_sec -= MD_SEEN_MS / 1000 + 1;
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	/* MD_SEEN_MAX more answers: the table holds the newest. */
	md_claims_answered(sup, 4242, &r);
	for (i = 0; i < MD_SEEN_MAX; i++) {
		snprintf(name, sizeof(name), "c-%zu", i);
		r.name = name;
		md_claims_answered(sup, 4242, &r);
	}
	w.name = "gpu-1";
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)),
	    KP_EACCES);
	w.name = name;
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)), 0);
	w.name = "c-1";
	CHECK_EQ(md_claims_known(sup, 4242, &w, err, sizeof(err)), 0);
	sup_free(sup);
	opts.kube_mode = KP_KUBE_NONE;
}

int
main(void)
{
	char	 cmd[128];

	if (geteuid() != 0) {
		printf("skip: needs root (the metadata directory's owner)\n");
		return (0);
	}
	snprintf(root, sizeof(root), "/tmp/kp-mdq-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	CHECK_EQ(chmod(root, 0755), 0);
	snprintf(cdi, sizeof(cdi), "%s/cdi", root);
	snprintf(md, sizeof(md), "%s/dra-device-metadata", root);
	CHECK_EQ(mkdir(cdi, 0755), 0);
	CHECK_EQ(mkdir(md, 0755), 0);
	test_quota();
	test_rollback();
	test_claims();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	(void)!system(cmd);
	return (test_done("test_md_quota"));
}
