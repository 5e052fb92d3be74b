/*
 * curl_dl.h - libcurl, loaded by the publisher alone (issue 17).
 *
 * libcurl is not linked: its NEEDED chain (librtmp and libldap pull GnuTLS,
 * p11-kit, nettle, GMP; Kerberos, SASL, libssh2, nghttp2, ...) would be
 * mapped and relocated in the driver's process and every child, and
 * GnuTLS's library constructor would initialise itself and p11-kit in the
 * driver's process at start (about 3 MiB of a plugin's memory, none of it
 * used: Debian's libcurl4 does TLS with OpenSSL). The publisher loads
 * "libcurl.so.4" by soname, before its sandbox (curl_dl_load()), and the
 * calls below go through a table of libcurl's own prototypes.
 *
 * Include this instead of <curl/curl.h> (tools/check-style.sh). libcurl's
 * gcc type checks of curl_easy_setopt are macros that call the function by
 * name, so they are off here.
 */
#ifndef KP_PUBLISHER_CURL_DL_H
#define KP_PUBLISHER_CURL_DL_H

#include <stddef.h>

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

struct curl_dl {
	__typeof__(curl_global_init)		*global_init;
	__typeof__(curl_global_init_mem)	*global_init_mem;
	__typeof__(curl_global_cleanup)		*global_cleanup;
	__typeof__(curl_version_info)		*version_info;
	__typeof__(curl_easy_init)		*easy_init;
	__typeof__(curl_easy_setopt)		*easy_setopt;
	__typeof__(curl_easy_perform)		*easy_perform;
	__typeof__(curl_easy_getinfo)		*easy_getinfo;
	__typeof__(curl_easy_reset)		*easy_reset;
	__typeof__(curl_easy_cleanup)		*easy_cleanup;
	__typeof__(curl_easy_strerror)		*easy_strerror;
	__typeof__(curl_easy_escape)		*easy_escape;
	__typeof__(curl_free)			*free;
	__typeof__(curl_slist_append)		*slist_append;
	__typeof__(curl_slist_free_all)		*slist_free_all;
	__typeof__(curl_share_init)		*share_init;
	__typeof__(curl_share_setopt)		*share_setopt;
	__typeof__(curl_share_cleanup)		*share_cleanup;
};

extern struct curl_dl	kp_curl;

/*
 * curl_dl_load() (declared in publisher.h, for publisher.c): dlopen
 * libcurl.so.4 once, by soname (found by the dynamic loader as a linked
 * library would be), and fill kp_curl. Called before the sandbox: Landlock
 * and seccomp no longer allow mapping a new library after it. GnuTLS, which
 * the chain pulls in, is told not to initialise itself
 * (GNUTLS_NO_IMPLICIT_INIT, read by its constructor; libcurl4 does TLS
 * with OpenSSL and never calls it). 0, or KP_ENOTSUP with the loader's
 * reason in err.
 */

#define curl_global_init	kp_curl.global_init
#define curl_global_init_mem	kp_curl.global_init_mem
#define curl_global_cleanup	kp_curl.global_cleanup
#define curl_version_info	kp_curl.version_info
#define curl_easy_init		kp_curl.easy_init
/* curl.h's own three-argument guard macros, redirected. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_setopt(h, o, v)	kp_curl.easy_setopt(h, o, v)
#define curl_easy_perform	kp_curl.easy_perform
#define curl_easy_getinfo(h, i, a)	kp_curl.easy_getinfo(h, i, a)
#define curl_easy_reset		kp_curl.easy_reset
#define curl_easy_cleanup	kp_curl.easy_cleanup
#define curl_easy_strerror	kp_curl.easy_strerror
#define curl_easy_escape	kp_curl.easy_escape
#define curl_free		kp_curl.free
#define curl_slist_append	kp_curl.slist_append
#define curl_slist_free_all	kp_curl.slist_free_all
#define curl_share_init		kp_curl.share_init
#undef curl_share_setopt
#define curl_share_setopt(s, o, v)	kp_curl.share_setopt(s, o, v)
#define curl_share_cleanup	kp_curl.share_cleanup

#endif
