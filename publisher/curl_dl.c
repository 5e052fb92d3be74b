/*
 * curl_dl.c - load libcurl in the publisher (curl_dl.h says why).
 */
#include <stddef.h>
#include <stdlib.h>

#include "kubeletplugin.h"
#include "base/dl.h"
#include "publisher/curl_dl.h"
#include "publisher/publisher.h"

#define CURL_SONAME	"libcurl.so.4"

struct curl_dl	kp_curl;

int
curl_dl_load(char *err, size_t errsize)
{
	static const struct dl_sym fn[] = {
#define F(m)	{ "curl_" #m, offsetof(struct curl_dl, m) }
		F(global_init), F(global_init_mem), F(global_cleanup),
		F(version_info),
		F(easy_init), F(easy_setopt), F(easy_perform),
		F(easy_getinfo), F(easy_reset), F(easy_cleanup),
		F(easy_strerror), F(easy_escape), F(free),
		F(slist_append), F(slist_free_all),
		F(share_init), F(share_setopt), F(share_cleanup),
#undef F
	};

	if (kp_curl.global_init != NULL)
		return (0);
	/* Read by GnuTLS's constructor (3.7: lib/global.c, lib_init). The
	 * publisher is single-threaded here. */
	(void)setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 1);
	return (dl_load(CURL_SONAME, "the publisher needs libcurl 7.77 or "
	    "later, Debian package libcurl4", fn, sizeof(fn) / sizeof(fn[0]),
	    &kp_curl, sizeof(kp_curl), err, errsize));
}
