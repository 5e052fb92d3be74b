/*
 * test_errors.c - walk KP_ERRNO_MAP: distinct values, a message and a name
 * for each code, and the fallbacks for unknown codes (curl's test1538).
 */
#include <string.h>

#include "kubeletplugin.h"
#include "test.h"

struct code {
	const char	*name;
	int		 value;
	const char	*msg;
};

static const struct code codes[] = {
#define XX(name, value, msg) { "KP_" #name, (value), (msg) },
	KP_ERRNO_MAP(XX)
#undef XX
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

int
main(void)
{
	size_t	i, j;

	CHECK(NCODES > 0);
	for (i = 0; i < NCODES; i++) {
		/* 0 or negative, and never the sentinel's range. */
		CHECK(codes[i].value < 0);
		CHECK(codes[i].value > KP_ERRNO_MAX);
		for (j = i + 1; j < NCODES; j++) {
			CHECK(codes[i].value != codes[j].value);
			CHECK(strcmp(codes[i].name, codes[j].name) != 0);
		}
		CHECK(kp_strerror(codes[i].value) != NULL);
		CHECK(strlen(kp_strerror(codes[i].value)) > 0);
		CHECK_STREQ(kp_strerror(codes[i].value), codes[i].msg);
		CHECK(strcmp(kp_strerror(codes[i].value),
		    "unknown error") != 0);
		CHECK_STREQ(kp_err_name(codes[i].value), codes[i].name);
	}

	/* Spot checks that the X-macro generated the enum as documented. */
	CHECK_EQ(KP_EINVAL, -EINVAL);
	CHECK_EQ(KP_ENOMEM, -ENOMEM);
	CHECK_EQ(KP_ECHILD, -4000);
	CHECK_STREQ(kp_err_name(KP_EINVAL), "KP_EINVAL");
	CHECK_STREQ(kp_err_name(KP_EHOOK), "KP_EHOOK");
	CHECK_STREQ(kp_strerror(KP_EPIPE), "supervisor is gone");

	/* Unknown codes. */
	CHECK_STREQ(kp_strerror(1), "unknown error");
	CHECK_STREQ(kp_strerror(-3999), "unknown error");
	CHECK_STREQ(kp_strerror(KP_ERRNO_MAX), "unknown error");
	CHECK_STREQ(kp_strerror(-2147483647 - 1), "unknown error");
	CHECK_STREQ(kp_err_name(1), "KP_UNKNOWN");
	CHECK_STREQ(kp_err_name(-3999), "KP_UNKNOWN");
	CHECK_STREQ(kp_err_name(KP_ERRNO_MAX), "KP_UNKNOWN");
	CHECK_STREQ(kp_err_name(2147483647), "KP_UNKNOWN");

	/* Success is not an error but still has text. */
	CHECK(kp_strerror(0) != NULL && kp_strerror(0)[0] != '\0');
	CHECK(kp_err_name(0) != NULL && kp_err_name(0)[0] != '\0');
	/* The run-time version is the header's. */
	{
		char	 want[32];

		snprintf(want, sizeof(want), "%d.%d.%d", KP_VERSION_MAJOR,
		    KP_VERSION_MINOR, KP_VERSION_PATCH);
		CHECK_STREQ(kp_version(), want);
	}
	return (test_done("test_errors"));
}
