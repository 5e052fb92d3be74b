/*
 * test_kubeconfig.c - publisher/kubeconfig.c: kubeconfig files as kubectl
 * and people write them (block and flow YAML, quoted scalars, anchors),
 * client-go's validation rules with their messages, in-cluster
 * configuration from a directory of our own, and token re-reads.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "publisher/publisher.h"

/* base64 of a PEM certificate / key (content is not parsed here) */
#define CERT_PEM "-----BEGIN CERTIFICATE-----\n" \
	"MIIBkTCB+wIJAKHBfpegPjMCMA0GCSqGSIb3DQEBCwUAMBExDzANBgNVBAMMBnRl\n" \
	"-----END CERTIFICATE-----\n"
#define CERT_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCK3dJSkFLS" \
	"EJmcGVnUGpNQ01BMEdDU3FHU0liM0RRRUJDd1VBTUJFeER6QU5CZ05WQkFNTUJuUm" \
	"wKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define KEY_PEM "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIK\n" \
	"-----END PRIVATE KEY-----\n"
#define KEY_B64_1 "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1DNENBUUF3QlFZREs"
#define KEY_B64_2 "yVndCQ0lFSUsKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo="
#define KEY_B64 KEY_B64_1 KEY_B64_2

static char	 dir[] = "/tmp/kp-kcfg-XXXXXX";
static char	 path[512];	/* the kubeconfig being tested */
static char	 err[KP_ERROR_SIZE];
static char	 want[1024];

static const char *
fpath(const char *name)
{
	static char	 p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return (p);
}

static void
wfile(const char *name, const char *text)
{
	FILE	*f;

	if ((f = fopen(fpath(name), "w")) == NULL) {
		perror(name);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* Write the kubeconfig and load it; returns kcfg_kubeconfig's code. */
static int
load(struct kube_config *cfg, const char *context, const char *yaml)
{
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	wfile("kubeconfig", yaml);
	err[0] = '\0';
	return (kcfg_kubeconfig(cfg, path, context, err, sizeof(err)));
}

/* The expected message: "kubeconfig <path>: " + fmt. */
static const char	*msg(const char *, ...) KP_PRINTF(1, 2);

static const char *
msg(const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(want, sizeof(want), "kubeconfig %s: ", path);
	va_start(ap, fmt);
	vsnprintf(want + n, sizeof(want) - n, fmt, ap);
	va_end(ap);
	return (want);
}

static const char *
bearer(struct kube_config *cfg)
{
	static char	 tok[256];

	if (kcfg_bearer(cfg, tok, sizeof(tok)) != 0)
		return ("(error)");
	return (tok);
}

static void
test_block_style(void)
{
	struct kube_config	 cfg;

	wfile("ca.crt", CERT_PEM);
	CHECK_EQ(load(&cfg, NULL,
	    "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: one\n"
	    "  cluster:\n"
	    "    server: https://one.example:6443/\n"
	    "    certificate-authority: ca.crt\n"
	    "- name: two\n"
	    "  cluster:\n"
	    "    server: two.example:443\n"
	    "    insecure-skip-tls-verify: true\n"
	    "    tls-server-name: kubernetes.default\n"
	    "users:\n"
	    "- name: alice\n"
	    "  user:\n"
	    "    token: abc.def-ghi\n"
	    "- name: bob\n"
	    "  user: {}\n"
	    "contexts:\n"
	    "- name: c-one\n"
	    "  context:\n"
	    "    cluster: one\n"
	    "    user: alice\n"
	    "    namespace: x\n"
	    "- context:\n"
	    "    cluster: two\n"
	    "    user: bob\n"
	    "  name: c-two\n"
	    "current-context: c-one\n"
	    "preferences: {}\n"), 0);
	CHECK_STREQ(err, "");
	CHECK_STREQ(cfg.server, "https://one.example:6443");
	CHECK_STREQ(cfg.ca_file, fpath("ca.crt"));
	CHECK(cfg.ca_data == NULL);
	CHECK_EQ(cfg.insecure, 0);
	CHECK_STREQ(cfg.token, "abc.def-ghi");
	CHECK(cfg.token_file == NULL);
	CHECK(cfg.tls_server_name == NULL);
	CHECK_STREQ(bearer(&cfg), "abc.def-ghi");
	kcfg_free(&cfg);
	CHECK(cfg.server == NULL && cfg.token == NULL);

	/* The same file, another context: no scheme gets https://. */
	CHECK_EQ(kcfg_kubeconfig(&cfg, path, "c-two", err, sizeof(err)), 0);
	CHECK_STREQ(cfg.server, "https://two.example:443");
	CHECK_EQ(cfg.insecure, 1);
	CHECK_STREQ(cfg.tls_server_name, "kubernetes.default");
	CHECK(cfg.token == NULL && cfg.ca_file == NULL);
	CHECK_STREQ(bearer(&cfg), "");
	kcfg_free(&cfg);
}

static void
test_flow_and_quotes(void)
{
	struct kube_config	 cfg;

	/* kubectl never writes this, people (and tools) do. */
	CHECK_EQ(load(&cfg, NULL,
	    "{\"apiVersion\": \"v1\", kind: Config,\n"
	    " clusters: [{name: 'c 1', cluster: {server: "
	    "\"https://h\\x3a1\", certificate-authority-data: " CERT_B64
	    "}}],\n"
	    " users: [{name: \"u\", user: {token: 'a''s b'}}],\n"
	    " contexts: [{name: ctx, context: {cluster: 'c 1', user: u}}],\n"
	    " 'current-context': \"ctx\"}\n"), KP_EINVAL);
	/* 'a''s b' is a's b: a space cannot go into a header. */
	CHECK_STREQ(err, msg("user \"u\": token: invalid character at byte 3"));

	CHECK_EQ(load(&cfg, NULL,
	    "{\"apiVersion\": \"v1\", kind: Config,\n"
	    " clusters: [{name: 'c 1', cluster: {server: "
	    "\"https://h\\x3a1\", certificate-authority-data: " CERT_B64
	    "}}],\n"
	    " users: [{name: \"u\", user: {token: \"t\\x41k\"}}],\n"
	    " contexts: [{name: ctx, context: {cluster: 'c 1', user: u}}],\n"
	    " 'current-context': \"ctx\"}\n"), 0);
	CHECK_STREQ(err, "");
	CHECK_STREQ(cfg.server, "https://h:1");
	CHECK_STREQ(cfg.ca_data, CERT_PEM);
	CHECK(cfg.ca_file == NULL);
	CHECK_STREQ(cfg.token, "tAk");
	kcfg_free(&cfg);

	/* Anchors and aliases, a literal block scalar, comments. */
	CHECK_EQ(load(&cfg, "b",
	    "# written by hand\n"
	    "clusters:\n"
	    "- name: a\n"
	    "  cluster: &common\n"
	    "    server: \"https://shared:6443\"   # quoted\n"
	    "    insecure-skip-tls-verify: yes\n"
	    "- name: a2\n"
	    "  cluster: *common\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    token: |-\n"
	    "      block-token\n"
	    "contexts:\n"
	    "- {name: b, context: {cluster: a2, user: u}}\n"
	    "current-context: ~\n"), 0);
	CHECK_STREQ(err, "");
	CHECK_STREQ(cfg.server, "https://shared:6443");
	CHECK_EQ(cfg.insecure, 1);
	CHECK_STREQ(cfg.token, "block-token");
	kcfg_free(&cfg);
}

static void
test_paths_and_data(void)
{
	struct kube_config	 cfg;
	char			 yaml[2048];

	mkdir(fpath("pki"), 0700);
	wfile("pki/client.crt", CERT_PEM);
	wfile("pki/client.key", KEY_PEM);
	wfile("pki/token", "  file-token\n\n");
	CHECK_EQ(load(&cfg, NULL,
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster:\n"
	    "    server: https://10.0.0.1\n"
	    "    certificate-authority-data: " CERT_B64 "\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate: pki/client.crt\n"
	    "    client-key: ./pki/client.key\n"
	    "    tokenFile: pki/token\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c, user: u}\n"
	    "current-context: x\n"), 0);
	CHECK_STREQ(err, "");
	CHECK_STREQ(cfg.cert_file, fpath("pki/client.crt"));
	CHECK_STREQ(cfg.key_file, fpath("./pki/client.key"));
	CHECK_STREQ(cfg.token_file, fpath("pki/token"));
	CHECK_STREQ(cfg.token, "file-token");
	CHECK_STREQ(cfg.ca_data, CERT_PEM);
	kcfg_free(&cfg);

	/* Inline data; base64 may be split over lines (Go skips CR, LF). */
	CHECK_EQ(load(&cfg, NULL,
	    "clusters: [{name: c, cluster: {server: https://s}}]\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate-data: " CERT_B64 "\n"
	    "    client-key-data: |\n      " KEY_B64_1 "\n      " KEY_B64_2
	    "\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
	    "current-context: x\n"), 0);
	CHECK_STREQ(cfg.cert_data, CERT_PEM);
	CHECK_STREQ(cfg.key_data, KEY_PEM);
	CHECK(cfg.cert_file == NULL && cfg.key_file == NULL);
	kcfg_free(&cfg);

	/* An absolute path stays; a missing file is named. */
	snprintf(yaml, sizeof(yaml),
	    "clusters: [{name: c, cluster: {server: https://s, "
	    "certificate-authority: %s}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n"
	    "current-context: x\n", fpath("pki/client.crt"));
	CHECK_EQ(load(&cfg, NULL, yaml), 0);
	CHECK_STREQ(cfg.ca_file, fpath("pki/client.crt"));
	kcfg_free(&cfg);
	CHECK_EQ(load(&cfg, NULL,
	    "clusters: [{name: c, cluster: {server: https://s, "
	    "certificate-authority: nope/ca.crt}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n"
	    "current-context: x\n"), KP_ENOENT);
	CHECK_STREQ(err, msg("cluster \"c\": certificate-authority %s: "
	    "No such file or directory", fpath("nope/ca.crt")));
}

/* A one-cluster, one-user kubeconfig with the given entries. */
static int
load2(struct kube_config *cfg, const char *cluster, const char *user)
{
	char	 yaml[4096];

	snprintf(yaml, sizeof(yaml),
	    "clusters:\n- name: c\n  cluster:\n%s"
	    "users:\n- name: u\n  user:\n%s"
	    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	    "current-context: x\n", cluster, user);
	return (load(cfg, NULL, yaml));
}

#define SERVER	"    server: https://s\n"

static void
test_errors(void)
{
	struct kube_config	 cfg;

	CHECK_EQ(load2(&cfg, SERVER "    certificate-authority-data: "
	    "LS0t*LS0t\n", "    token: t\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": certificate-authority-data: "
	    "illegal base64 data at input byte 4"));
	CHECK(cfg.server == NULL);	/* nothing left to free */
	CHECK_EQ(load2(&cfg, SERVER "    certificate-authority-data: LS0\n",
	    ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": certificate-authority-data: "
	    "illegal base64 data at input byte 3"));
	CHECK_EQ(load2(&cfg, SERVER, "    client-key-data: AB=A\n"),
	    KP_EINVAL);
	CHECK_STREQ(err, msg("user \"u\": client-key-data: illegal base64 "
	    "data at input byte 3"));
	CHECK_EQ(load2(&cfg, SERVER "    certificate-authority-data: "
	    "aGVsbG8=\n", ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": certificate-authority-data: "
	    "not PEM data"));

	wfile("ca.crt", CERT_PEM);
	CHECK_EQ(load2(&cfg, SERVER "    certificate-authority: ca.crt\n"
	    "    insecure-skip-tls-verify: true\n", ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": specifying a root certificates "
	    "file with the insecure flag is not allowed"));
	CHECK_EQ(load2(&cfg, SERVER "    certificate-authority: ca.crt\n"
	    "    certificate-authority-data: " CERT_B64 "\n", ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": certificate-authority-data and "
	    "certificate-authority are both specified"));
	CHECK_EQ(load2(&cfg, SERVER "    insecure-skip-tls-verify: maybe\n",
	    ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": insecure-skip-tls-verify: not "
	    "a boolean"));
	CHECK_EQ(load2(&cfg, "    server: ftp://s\n", ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": server ftp://s: not an http or "
	    "https URL"));

	CHECK_EQ(load2(&cfg, "    certificate-authority: ca.crt\n", ""),
	    KP_EINVAL);
	CHECK_STREQ(err, msg("no server for context x"));
	CHECK_EQ(load2(&cfg, "    server: [a, b]\n", ""), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\": server: not a string"));

	CHECK_EQ(load2(&cfg, SERVER, "    client-certificate-data: "
	    CERT_B64 "\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("user \"u\": client-key-data or client-key must "
	    "be specified to use the clientCert authentication method"));
	CHECK_EQ(load2(&cfg, SERVER, "    client-key-data: " KEY_B64 "\n"),
	    KP_EINVAL);
	CHECK_STREQ(err, msg("user \"u\": client-certificate-data or "
	    "client-certificate must be specified to use the clientCert "
	    "authentication method"));

	CHECK_EQ(load2(&cfg, SERVER, "    exec:\n      apiVersion: "
	    "client.authentication.k8s.io/v1\n      command: aws\n"),
	    KP_ENOTSUP);
	CHECK_STREQ(err, msg("user \"u\": exec credential plugins are not "
	    "supported"));
	CHECK_EQ(load2(&cfg, SERVER, "    auth-provider: {name: gcp}\n"),
	    KP_ENOTSUP);
	CHECK_STREQ(err, msg("user \"u\": auth-provider plugins are not "
	    "supported"));
	CHECK_EQ(load2(&cfg, SERVER, "    username: a\n    password: b\n"),
	    KP_ENOTSUP);
	CHECK_STREQ(err, msg("user \"u\": basic authentication "
	    "(username/password) are not supported"));

	CHECK_EQ(load(&cfg, "nope", "contexts: [{name: x, context: {}}]\n"),
	    KP_EINVAL);
	CHECK_STREQ(err, msg("context \"nope\" not found"));
	CHECK_EQ(load(&cfg, NULL, "contexts: [{name: x, context: {}}]\n"),
	    KP_EINVAL);
	CHECK_STREQ(err, msg("no context chosen (current-context is empty)"));
	CHECK_EQ(load(&cfg, NULL, ""), KP_EINVAL);
	CHECK_STREQ(err, msg("no context chosen (current-context is empty)"));
	CHECK_EQ(load(&cfg, NULL, "current-context: x\ncontexts:\n"
	    "- name: x\n  context: {cluster: c}\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("cluster \"c\" of context \"x\" not found"));
	CHECK_EQ(load(&cfg, NULL, "current-context: x\ncontexts:\n"
	    "- name: x\n  context: {user: u}\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("no server for context x"));
	CHECK_EQ(load(&cfg, NULL, "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: s}}]\ncontexts:\n"
	    "- name: x\n  context: {cluster: c, user: ghost}\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("user \"ghost\" of context \"x\" not found"));
	CHECK_EQ(load(&cfg, NULL, "- a\n- b\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("not a kubeconfig (the top level is not a "
	    "mapping)"));
	CHECK_EQ(load(&cfg, NULL, "clusters: [\ncurrent-context: x\n"),
	    KP_EINVAL);
	CHECK_CONTAINS(err, msg("line "));

	snprintf(path, sizeof(path), "%s/missing", dir);
	CHECK_EQ(kcfg_kubeconfig(&cfg, path, NULL, err, sizeof(err)),
	    KP_ENOENT);
	CHECK_STREQ(err, msg("No such file or directory"));
	kcfg_free(&cfg);	/* a failed load left nothing: still fine */
}

static void
test_token_precedence(void)
{
	struct kube_config	 cfg;

	wfile("tok", "from-file\n");
	/* token and tokenFile: the readable file wins. */
	CHECK_EQ(load2(&cfg, SERVER, "    token: inline\n"
	    "    tokenFile: tok\n"), 0);
	CHECK_STREQ(cfg.token, "from-file");
	CHECK_STREQ(cfg.token_file, fpath("tok"));
	kcfg_free(&cfg);
	/* ... and the inline token stays when the file is missing. */
	CHECK_EQ(load2(&cfg, SERVER, "    token: inline\n"
	    "    tokenFile: gone\n"), 0);
	CHECK_STREQ(cfg.token, "inline");
	CHECK_STREQ(bearer(&cfg), "inline");
	kcfg_free(&cfg);
	/* A tokenFile alone must be readable (and not empty) at load. */
	CHECK_EQ(load2(&cfg, SERVER, "    tokenFile: gone\n"), KP_ENOENT);
	CHECK_STREQ(err, msg("user \"u\": token file %s: No such file or "
	    "directory", fpath("gone")));
	wfile("empty", " \n");
	CHECK_EQ(load2(&cfg, SERVER, "    tokenFile: empty\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("user \"u\": token file %s: empty",
	    fpath("empty")));
	wfile("bad", "a b\n");
	CHECK_EQ(load2(&cfg, SERVER, "    tokenFile: bad\n"), KP_EINVAL);
	CHECK_STREQ(err, msg("user \"u\": token file %s: invalid character "
	    "at byte 1", fpath("bad")));
}

static void
test_in_cluster(void)
{
	struct kube_config	 cfg;
	char			 sa[600];

	snprintf(sa, sizeof(sa), "%s/sa", dir);
	mkdir(sa, 0700);
	wfile("sa/token", "sa-token\n");
	wfile("sa/ca.crt", CERT_PEM);

	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)),
	    KP_ENOCLIENT);
	CHECK_STREQ(err, "in-cluster: KUBERNETES_SERVICE_HOST and "
	    "KUBERNETES_SERVICE_PORT must be set");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "", 1);
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)),
	    KP_ENOCLIENT);
	CHECK_STREQ(err, "in-cluster: KUBERNETES_SERVICE_HOST and "
	    "KUBERNETES_SERVICE_PORT must be set");

	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)), 0);
	CHECK_STREQ(cfg.server, "https://10.96.0.1:443");
	CHECK_STREQ(cfg.token, "sa-token");
	CHECK_STREQ(cfg.token_file, fpath("sa/token"));
	CHECK_STREQ(cfg.ca_file, fpath("sa/ca.crt"));
	kcfg_free(&cfg);

	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)), 0);
	CHECK_STREQ(cfg.server, "https://[fd00:10:96::1]:6443");
	kcfg_free(&cfg);

	/* No CA: logged, the system roots remain (as client-go). */
	unlink(fpath("sa/ca.crt"));
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)), 0);
	CHECK(cfg.ca_file == NULL);
	kcfg_free(&cfg);

	/* No token: fatal at start. */
	unlink(fpath("sa/token"));
	CHECK_EQ(kcfg_in_cluster_dir(&cfg, sa, err, sizeof(err)), KP_ENOENT);
	snprintf(want, sizeof(want), "in-cluster: token file %s: No such "
	    "file or directory", fpath("sa/token"));
	CHECK_STREQ(err, want);
	CHECK(cfg.server == NULL);
}

static void
test_reread(void)
{
	struct kube_config	 cfg;
	char			 small[4];

	wfile("rot", "t1\n");
	CHECK_EQ(load2(&cfg, SERVER, "    tokenFile: rot\n"), 0);
	CHECK_STREQ(bearer(&cfg), "t1");

	/* Within the interval the file is not read again... */
	wfile("rot", "t2\n");
	CHECK_STREQ(bearer(&cfg), "t1");
	/* ... a 401 asks for it, */
	kcfg_token_stale(&cfg);
	CHECK_STREQ(bearer(&cfg), "t2");
	CHECK_EQ(cfg.token_stale, 0);
	/* ... and so does age. */
	wfile("rot", "t3");
	CHECK_STREQ(bearer(&cfg), "t2");
	cfg.token_read = time(NULL) - (KP_TOKEN_REREAD_S - 5);
	CHECK_STREQ(bearer(&cfg), "t2");
	cfg.token_read = time(NULL) - KP_TOKEN_REREAD_S;
	CHECK_STREQ(bearer(&cfg), "t3");

	/* Empty, missing or bad files keep the last good token. */
	wfile("rot", "\n");
	kcfg_token_stale(&cfg);
	CHECK_STREQ(bearer(&cfg), "t3");
	unlink(fpath("rot"));
	cfg.token_read -= KP_TOKEN_REREAD_S;
	CHECK_STREQ(bearer(&cfg), "t3");
	wfile("rot", "x\001y");
	kcfg_token_stale(&cfg);
	CHECK_STREQ(bearer(&cfg), "t3");
	wfile("rot", " \tt4\r\n");
	kcfg_token_stale(&cfg);
	CHECK_STREQ(bearer(&cfg), "t4");

	/* A buffer too small gets nothing (wiped), not a prefix. */
	memset(small, 'z', sizeof(small));
	wfile("rot", "longer-token");
	kcfg_token_stale(&cfg);
	CHECK_EQ(kcfg_bearer(&cfg, small, sizeof(small)), KP_ENAMETOOLONG);
	CHECK_EQ(small[0], '\0');
	CHECK_STREQ(bearer(&cfg), "longer-token");
	kcfg_free(&cfg);

	/* A static token never changes. */
	CHECK_EQ(load2(&cfg, SERVER, "    token: fixed\n"), 0);
	kcfg_token_stale(&cfg);
	cfg.token_read -= 1000;
	CHECK_STREQ(bearer(&cfg), "fixed");
	kcfg_free(&cfg);
}

static int
rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	remove(p);
	return (0);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	test_block_style();
	test_flow_and_quotes();
	test_paths_and_data();
	test_errors();
	test_token_precedence();
	test_in_cluster();
	test_reread();
	if (test_failures == 0)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return (test_done("test_kubeconfig"));
}
