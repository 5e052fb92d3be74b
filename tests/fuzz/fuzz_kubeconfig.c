/*
 * fuzz_kubeconfig.c - libFuzzer target for the publisher's kubeconfig
 * decoder (kubeconfig.c: libyaml document, contexts, clusters, users,
 * *-data through kcfg_base64.c, token files) and for kcfg_b64_decode()
 * alone. kcfg_kubeconfig() reads a file, so the input is written to
 * <dir>/config in a directory made once per run with mkdtemp under /tmp,
 * next to the files a kubeconfig may name (ca.crt, client.crt, client.key,
 * token: relative paths resolve there); the directory is removed at exit.
 * It loads with its current-context and with the context "dev".
 * The binary is linked with -Wl,--wrap=open: while the library runs, an
 * open() of anything but a plain file name in that directory fails with
 * ENOENT, so an input naming /dev/stdin or a FIFO cannot block the run.
 * Invariants checked (trap on a breach):
 *  - a failed load leaves the config zeroed and a NUL-terminated message
 *    that names the file; a successful one has an http(s) server without
 *    a trailing '/', PEM in every *-data, a certificate only with a key,
 *    no CA with insecure-skip-tls-verify;
 *  - base64: the output fits the caller's strlen / 4 * 3 + 4 bytes,
 *    NUL-terminated; re-encoding it decodes to the same bytes; a bad
 *    offset lies within the input.
 * Run: ./tests/fuzz/fuzz_kubeconfig -max_total_time=60 corpus/
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "publisher/publisher.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int __real_open(const char *, int, ...);
int __wrap_open(const char *, int, ...);

static const char *const fixtures[][2] = {
	{ "ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n"
	    "-----END CERTIFICATE-----\n" },
	{ "client.crt", "-----BEGIN CERTIFICATE-----\nMIIC\n"
	    "-----END CERTIFICATE-----\n" },
	{ "client.key", "-----BEGIN EC PRIVATE KEY-----\nMHc\n"
	    "-----END EC PRIVATE KEY-----\n" },
	{ "token", "  eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n" },
	{ "empty", "" },
};

static char	 dir[64];
static int	 confined;

/* See the top: only plain names in dir while the library runs. */
int
__wrap_open(const char *path, int flags, ...)
{
	size_t	 n = strlen(dir);
	mode_t	 mode = 0;
	va_list	 ap;

	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (confined && (strncmp(path, dir, n) != 0 || path[n] != '/' ||
	    path[n + 1] == '\0' || strchr(path + n + 1, '/') != NULL ||
	    strcmp(path + n + 1, "..") == 0 ||
	    strcmp(path + n + 1, ".") == 0)) {
		errno = ENOENT;
		return (-1);
	}
	return (__real_open(path, flags, mode));
}

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
}

static int
put_file(const char *name, const void *data, size_t size)
{
	char	 path[128];
	int	 fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = __real_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return (-1);
	ok = size == 0 || write(fd, data, size) == (ssize_t)size;
	close(fd);
	return (ok ? 0 : -1);
}

static void
cleanup(void)
{
	char	 path[128];
	size_t	 i;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fixtures[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/config", dir);
	unlink(path);
	rmdir(dir);
}

static int
setup(void)
{
	size_t	 i;

	snprintf(dir, sizeof(dir), "/tmp/kp-fuzz-kubeconfig.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return (-1);
	atexit(cleanup);
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		if (put_file(fixtures[i][0], fixtures[i][1],
		    strlen(fixtures[i][1])) != 0)
			return (-1);
	log_init(100, silent, NULL);
	return (0);
}

static void
check_config(int r, const struct kube_config *c, const char *err,
    size_t errsize, const char *path)
{
	size_t	 i, n;

	if (r != 0) {
		if (memchr(err, '\0', errsize) == NULL)
			__builtin_trap();
		for (i = 0; i < sizeof(*c); i++)
			if (((const unsigned char *)c)[i] != 0)
				__builtin_trap();
		if (strncmp(err, "kubeconfig ", 11) != 0 ||
		    strncmp(err + 11, path, strlen(path)) != 0)
			__builtin_trap();
		return;
	}
	if (c->server == NULL || (strncmp(c->server, "https://", 8) != 0 &&
	    strncmp(c->server, "http://", 7) != 0))
		__builtin_trap();
	n = strlen(c->server);
	if (n > 8 && c->server[n - 1] == '/')
		__builtin_trap();
	if ((c->ca_data && !strstr(c->ca_data, "-----BEGIN ")) ||
	    (c->cert_data && !strstr(c->cert_data, "-----BEGIN ")) ||
	    (c->key_data && !strstr(c->key_data, "-----BEGIN ")))
		__builtin_trap();
	if ((c->ca_file && c->ca_data) || (c->cert_file && c->cert_data) ||
	    (c->key_file && c->key_data))
		__builtin_trap();
	if (!(c->cert_file || c->cert_data) != !(c->key_file || c->key_data))
		__builtin_trap();
	if (c->insecure && (c->ca_file || c->ca_data))
		__builtin_trap();
}

static void
load(const char *context)
{
	struct kube_config	 cfg;
	char			 path[128], err[KP_ERROR_SIZE];
	int			 r;

	snprintf(path, sizeof(path), "%s/config", dir);
	memset(err, 'x', sizeof(err));
	confined = 1;
	r = kcfg_kubeconfig(&cfg, path, context, err, sizeof(err));
	confined = 0;
	check_config(r, &cfg, err, sizeof(err), path);
	if (r == 0)
		kcfg_free(&cfg);
}

static void
b64_encode(const unsigned char *in, size_t len, char *out)
{
	static const char	 abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t		 v;
	size_t			 i, o = 0;

	for (i = 0; i < len; i += 3) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? abc[v & 63] : '=';
	}
	out[o] = '\0';
}

static void
b64(const char *s)
{
	unsigned char	*out, *again;
	char		*enc;
	size_t		 n = strlen(s), cap = n / 4 * 3 + 4, len = 0, len2;
	size_t		 bad;

	if ((out = malloc(cap)) == NULL)
		return;
	if ((bad = kcfg_b64_decode(s, out, &len)) != 0) {
		if (bad > n + 1)
			__builtin_trap();
		free(out);
		return;
	}
	if (len >= cap || out[len] != '\0')
		__builtin_trap();
	enc = malloc((len + 2) / 3 * 4 + 1);
	again = malloc(len + 4);
	if (enc != NULL && again != NULL) {
		b64_encode(out, len, enc);
		if (kcfg_b64_decode(enc, again, &len2) != 0 || len2 != len ||
		    memcmp(again, out, len) != 0)
			__builtin_trap();
	}
	free(enc);
	free(again);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	char		*s;

	if (!ready) {
		if (setup() != 0)
			return (0);
		ready = 1;
	}
	if ((s = malloc(size + 1)) == NULL)
		return (0);
	memcpy(s, data, size);
	s[size] = '\0';
	b64(s);
	free(s);
	if (put_file("config", data, size) != 0)
		return (0);
	load(NULL);
	load("dev");
	return (0);
}
