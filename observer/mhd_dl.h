/*
 * mhd_dl.h - libmicrohttpd, loaded by the observer alone (issue 17).
 *
 * Debian's libmicrohttpd12 links GnuTLS (with p11-kit, nettle, GMP,
 * libtasn1, libunistring, libidn2 behind it) and initialises it from its
 * library constructor. Linked, that would be mapped, relocated and
 * initialised in the driver's process and every child; the observer runs
 * only with kp_http_endpoint() set. So it loads "libmicrohttpd.so.12" by
 * soname, before its sandbox (mhd_dl_load()), and the calls below go
 * through a table of libmicrohttpd's own prototypes.
 *
 * Include this instead of <microhttpd.h> (tools/check-style.sh).
 */
#ifndef KP_OBSERVER_MHD_DL_H
#define KP_OBSERVER_MHD_DL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <microhttpd.h>

struct mhd_dl {
	__typeof__(MHD_start_daemon)		*start_daemon;
	__typeof__(MHD_stop_daemon)		*stop_daemon;
	__typeof__(MHD_add_connection)		*add_connection;
	__typeof__(MHD_run)			*run;
	__typeof__(MHD_get_timeout)		*get_timeout;
	__typeof__(MHD_get_daemon_info)		*get_daemon_info;
	__typeof__(MHD_get_connection_info)	*get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header)	*add_response_header;
	__typeof__(MHD_queue_response)		*queue_response;
	__typeof__(MHD_destroy_response)	*destroy_response;
};

extern struct mhd_dl	kp_mhd;

/*
 * mhd_dl_load() (declared in observer.h, for observer.c): dlopen
 * libmicrohttpd.so.12 once, by soname, and fill kp_mhd. Called before the
 * sandbox, which no longer allows mapping a new library. 0, or KP_ENOTSUP
 * with the loader's reason in err.
 */

#define MHD_start_daemon		kp_mhd.start_daemon
#define MHD_stop_daemon			kp_mhd.stop_daemon
#define MHD_add_connection		kp_mhd.add_connection
#define MHD_run				kp_mhd.run
#define MHD_get_timeout			kp_mhd.get_timeout
#define MHD_get_daemon_info		kp_mhd.get_daemon_info
#define MHD_get_connection_info		kp_mhd.get_connection_info
#define MHD_create_response_from_buffer	kp_mhd.create_response_from_buffer
#define MHD_add_response_header		kp_mhd.add_response_header
#define MHD_queue_response		kp_mhd.queue_response
#define MHD_destroy_response		kp_mhd.destroy_response

#endif
