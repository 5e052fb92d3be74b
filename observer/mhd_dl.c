/*
 * mhd_dl.c - load libmicrohttpd in the observer (mhd_dl.h says why).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "kubeletplugin.h"
#include "observer/mhd_dl.h"
#include "observer/observer.h"

#define MHD_SONAME	"libmicrohttpd.so.12"

struct mhd_dl	kp_mhd;

int
mhd_dl_load(char *err, size_t errsize)
{
	static const struct {
		const char	*name;
		size_t		 off;
	} fn[] = {
#define F(m)	{ "MHD_" #m, offsetof(struct mhd_dl, m) }
		F(start_daemon), F(stop_daemon), F(add_connection), F(run),
		F(get_timeout), F(get_daemon_info), F(get_connection_info),
		F(create_response_from_buffer), F(add_response_header),
		F(queue_response), F(destroy_response),
#undef F
	};
	struct mhd_dl	 t;
	void		*h, *p;
	size_t		 i;

	if (kp_mhd.start_daemon != NULL)
		return (0);
	if ((h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errsize, "%s cannot be loaded (the observer "
		    "of kp_http_endpoint needs it, Debian package "
		    "libmicrohttpd12): %s", MHD_SONAME, dlerror());
		return (KP_ENOTSUP);
	}
	for (i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
		if ((p = dlsym(h, fn[i].name)) == NULL) {
			snprintf(err, errsize, "%s: no symbol %s", MHD_SONAME,
			    fn[i].name);
			(void)dlclose(h);
			return (KP_ENOTSUP);
		}
		*(void **)((char *)&t + fn[i].off) = p;
	}
	/* Never closed: the observer uses it until it exits. */
	kp_mhd = t;
	return (0);
}
