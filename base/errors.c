/*
 * errors.c - names and messages of the KP_E* codes, generated from
 * KP_ERRNO_MAP so that the enum, the names and the text cannot drift.
 */
#include "kubeletplugin.h"

const char *
kp_strerror(int err)
{
	if (err == 0)
		return ("success");
	switch (err) {
#define KP_XX_STRERROR(name, value, msg) case (value): return (msg);
	KP_ERRNO_MAP(KP_XX_STRERROR)
#undef KP_XX_STRERROR
	default:
		return ("unknown error");
	}
}

const char *
kp_err_name(int err)
{
	if (err == 0)
		return ("KP_OK");
	switch (err) {
#define KP_XX_NAME(name, value, msg) case (value): return ("KP_" #name);
	KP_ERRNO_MAP(KP_XX_NAME)
#undef KP_XX_NAME
	default:
		return ("KP_UNKNOWN");
	}
}
