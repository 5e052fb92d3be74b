/*
 * test_log.c - log_sanitize(): no source of text (kubelet, the API server,
 * a compromised child) can forge or reorder log lines.
 */
#include <string.h>

#include "base/log.h"
#include "test.h"

static const char *
clean(const char *in, size_t size)
{
	static char	 out[256];

	log_sanitize(in, out, size);
	return (out);
}

int
main(void)
{
	CHECK_STREQ(clean("plain text", 256), "plain text");
	CHECK_STREQ(clean("a\nI0101 forged", 256), "a?I0101 forged");
	CHECK_STREQ(clean("tab\there\r\x1b]0;t\x07", 256), "tab?here??]0;t?");
	CHECK_STREQ(clean("del\x7f", 256), "del?");
	/* C1 controls (U+0085 NEL, U+009B CSI) and a raw 0x9b byte */
	CHECK_STREQ(clean("a\xc2\x85" "b\xc2\x9b" "c\x9b" "d", 256),
	    "a?b?c?d");
	/* U+2028, U+2029, U+202E (bidi override), U+2066 (isolate) */
	CHECK_STREQ(clean("x\xe2\x80\xa8y\xe2\x80\xa9z\xe2\x80\xae"
	    "w\xe2\x81\xa6v", 256), "x?y?z?w?v");
	/* valid multi-byte text stays */
	CHECK_STREQ(clean("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80",
	    256), "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80");
	/* overlong, surrogate, truncated sequences */
	CHECK_STREQ(clean("\xc0\xaf" "a\xed\xa0\x80" "b\xe2\x82", 256),
	    "??a???b??");
	/* the output fits: never a partial character at the end */
	CHECK_STREQ(clean("ab\xe2\x82\xac", 5), "ab");
	CHECK_STREQ(clean("abcdef", 4), "abc");
	return (test_done("test_log"));
}
