/*
 * curl_dl.c - load libcurl in the publisher (curl_dl.h says why).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "kubeletplugin.h"
#include "publisher/curl_dl.h"
#include "publisher/publisher.h"

#define CURL_SONAME	"libcurl.so.4"

struct curl_dl	kp_curl;

int
curl_dl_load(char *err, size_t errsize)
{
	static const struct {
		const char	*name;
		size_t		 off;
	} fn[] = {
#define F(m)	{ "curl_" #m, offsetof(struct curl_dl, m) }
		F(global_init), F(global_cleanup), F(version_info),
		F(easy_init), F(easy_setopt), F(easy_perform),
		F(easy_getinfo), F(easy_reset), F(easy_cleanup),
		F(easy_strerror), F(easy_escape), F(free),
		F(slist_append), F(slist_free_all),
		F(share_init), F(share_setopt), F(share_cleanup),
#undef F
	};
	struct curl_dl	 t;
	void		*h, *p;
	size_t		 i;

	if (kp_curl.global_init != NULL)
		return (0);
	/* Read by GnuTLS's constructor (3.7: lib/global.c, lib_init). The
	 * publisher is single-threaded here. */
	(void)setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 1);
	if ((h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errsize, "%s cannot be loaded (the publisher "
		    "needs libcurl 7.77 or later, Debian package libcurl4): "
		    "%s", CURL_SONAME, dlerror());
		return (KP_ENOTSUP);
	}
	for (i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
		if ((p = dlsym(h, fn[i].name)) == NULL) {
			snprintf(err, errsize, "%s: no symbol %s", CURL_SONAME,
			    fn[i].name);
			(void)dlclose(h);
			return (KP_ENOTSUP);
		}
		*(void **)((char *)&t + fn[i].off) = p;
	}
	/* Never closed: libcurl stays for the process's lifetime. */
	kp_curl = t;
	return (0);
}
