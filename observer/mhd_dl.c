/*
 * mhd_dl.c - load libmicrohttpd in the observer (mhd_dl.h says why).
 */
#include <stddef.h>

#include "kubeletplugin.h"
#include "base/dl.h"
#include "observer/mhd_dl.h"
#include "observer/observer.h"

#define MHD_SONAME	"libmicrohttpd.so.12"

struct mhd_dl	kp_mhd;

int
mhd_dl_load(char *err, size_t errsize)
{
	static const struct dl_sym fn[] = {
#define F(m)	{ "MHD_" #m, offsetof(struct mhd_dl, m) }
		F(start_daemon), F(stop_daemon), F(add_connection), F(run),
		F(get_timeout), F(get_daemon_info), F(get_connection_info),
		F(create_response_from_buffer), F(add_response_header),
		F(queue_response), F(destroy_response),
#undef F
	};

	if (kp_mhd.start_daemon != NULL)
		return (0);
	return (dl_load(MHD_SONAME, "the observer of kp_http_endpoint needs "
	    "it, Debian package libmicrohttpd12", fn, sizeof(fn) / sizeof(fn[0]),
	    &kp_mhd, sizeof(kp_mhd), err, errsize));
}
