/*
 * rolling_name.c - the registration socket's file name of one instance
 * during a rolling update, exactly as the Go helper v0.37 derives it
 * (RollingUpdateRegistrarSocketFile, PR #139623 with the bound of
 * PR #141815): the first of
 *   <driver>-<pod UID>-reg.sock
 *   <driver>-<base64url(SHA-256(pod UID)[:8])>-reg.sock
 *   dra-<base64url(SHA-256(driver NUL pod UID)[:16])>-reg.sock
 * whose path in the registry directory is shorter than 108 bytes (a
 * sun_path with its NUL), else the last one. Base64 is the URL alphabet
 * without padding (Go's base64.RawURLEncoding). The only user of
 * libcrypto (OpenSSL), for SHA-256.
 *
 * And the DRA socket's name of an instance (rolling_plugin_socket_file):
 * upstream's dra-<pod UID>.sock whenever its path fits, which no release
 * of the Go helper shortens (kubernetes#142002; PR #142003, open, hashes
 * the UID too): with the default directory any driver name over 36 bytes
 * would not fit. Then, the same way as the registration socket's, the
 * first that fits of dra-<base64url(SHA-256(pod UID)[:8])>.sock and
 * <the same 11 characters>.sock (a 63-byte driver name under
 * /var/lib/kubelet: 105 bytes). Only this instance and kubelet (told by
 * GetInfo) use the name, so it need not match another implementation's.
 *
 * Runs in: the driver process (kp_start(), and the public function).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "api/api.h"

/* Go's path.Join(dir, name) for a clean dir: one '/' between. */
static size_t
joined_len(const char *dir, const char *name)
{
	size_t	 n = strlen(dir);

	return (n + (dir[n - 1] == '/' ? 0 : 1) + strlen(name));
}

/*
 * Absolute and clean (what path.Join would leave unchanged): no "//",
 * "." or ".." components, no trailing '/' but for "/" itself.
 */
static int
is_clean(const char *dir)
{
	const char	*p;
	size_t		 n = strlen(dir);

	if (dir[0] != '/' || (n > 1 && dir[n - 1] == '/'))
		return (0);
	for (p = dir; (p = strchr(p, '/')) != NULL; p++)
		if (strncmp(p, "//", 2) == 0 || strncmp(p, "/./", 3) == 0 ||
		    strcmp(p, "/.") == 0 || strncmp(p, "/../", 4) == 0 ||
		    strcmp(p, "/..") == 0)
			return (0);
	return (1);
}

/* base64url of in[0..n-1] without padding into out (4n/3 + 4 bytes). */
static void
b64url(const unsigned char *in, size_t n, char *out)
{
	size_t	 i, len;

	len = (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	for (i = 0; i < len; i++) {
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
	}
	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
}

int
kp_rolling_update_registrar_socket_file(const char *registry_dir,
    const char *driver_name, const char *pod_uid, char *out, size_t size)
{
	unsigned char	 sum[SHA256_DIGEST_LENGTH];
	unsigned char	 both[64 + 1 + KP_MAX_POD_UID];	/* driver NUL uid */
	char		 name[3][KP_MAX_POD_UID + 128], enc[64];
	size_t		 dl, ul, i;
	int		 n;

	if (registry_dir == NULL || driver_name == NULL || pod_uid == NULL ||
	    out == NULL || size == 0 || driver_name[0] == '\0' ||
	    pod_uid[0] == '\0' || strlen(driver_name) > 63 ||
	    strlen(pod_uid) > KP_MAX_POD_UID || !is_clean(registry_dir))
		return (KP_EINVAL);
	dl = strlen(driver_name);
	ul = strlen(pod_uid);
	snprintf(name[0], sizeof(name[0]), "%s-%s-reg.sock", driver_name,
	    pod_uid);
	SHA256((const unsigned char *)pod_uid, ul, sum);
	b64url(sum, 8, enc);
	snprintf(name[1], sizeof(name[1]), "%s-%s-reg.sock", driver_name, enc);
	memcpy(both, driver_name, dl);
	both[dl] = '\0';
	memcpy(both + dl + 1, pod_uid, ul);
	SHA256(both, dl + 1 + ul, sum);
	b64url(sum, 16, enc);
	snprintf(name[2], sizeof(name[2]), "dra-%s-reg.sock", enc);
	for (i = 0; i < 2; i++)
		if (joined_len(registry_dir, name[i]) < KP_SUN_PATH_MAX + 1)
			break;
	n = snprintf(out, size, "%s", name[i]);
	return (n < 0 || (size_t)n >= size ? KP_ENAMETOOLONG : 0);
}

/*
 * The DRA socket's file name of a rolling instance in dir (the plugin
 * data directory), into out (size bytes, 64 are enough): the first
 * that fits, else the shortest (the caller's path check then names the
 * directory); KP_EINVAL for a bad argument, KP_ENAMETOOLONG when out is
 * too small.
 */
int
rolling_plugin_socket_file(const char *dir, const char *pod_uid, char *out,
    size_t size)
{
	unsigned char	 sum[SHA256_DIGEST_LENGTH];
	char		 name[3][KP_MAX_POD_UID + 16], enc[32];
	size_t		 i;
	int		 n;

	if (dir == NULL || dir[0] == '\0' || pod_uid == NULL ||
	    pod_uid[0] == '\0' || strlen(pod_uid) > KP_MAX_POD_UID)
		return (KP_EINVAL);
	snprintf(name[0], sizeof(name[0]), "dra-%s.sock", pod_uid);
	SHA256((const unsigned char *)pod_uid, strlen(pod_uid), sum);
	b64url(sum, 8, enc);
	snprintf(name[1], sizeof(name[1]), "dra-%s.sock", enc);
	snprintf(name[2], sizeof(name[2]), "%s.sock", enc);
	for (i = 0; i < 2; i++)
		if (joined_len(dir, name[i]) < KP_SUN_PATH_MAX + 1)
			break;
	n = snprintf(out, size, "%s", name[i]);
	return (n < 0 || (size_t)n >= size ? KP_ENAMETOOLONG : 0);
}
