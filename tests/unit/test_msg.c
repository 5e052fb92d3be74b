/*
 * test_msg.c - base/msg.c: a text that does not fit its buffer is cut
 * where a word or a path component ends, never inside a character, and
 * says so with "..."; one that fits is copied as it is.
 */
#include <string.h>

#include "base/msg.h"
#include "test.h"


int
main(void)
{
	char	 b[40], big[3000];

	CHECK_EQ(msg_fit(b, sizeof(b), "short"), 0);
	CHECK_STREQ(b, "short");
	/* 39 bytes fit exactly. */
	CHECK_EQ(msg_fit(b, sizeof(b), "123456789012345678901234567890123456789"),
	    0);
	/* A path is cut after a separator, not inside a name. */
	CHECK_EQ(msg_fit(b, sizeof(b), "spec /var/run/cdi/gpu.example.com-"
	    "claim.json: exists"), 1);
	CHECK_STREQ(b, "spec /var/run/cdi/...");
	/* Words: after the last space. */
	CHECK_EQ(msg_fit(b, sizeof(b), "the quick brown fox jumps over the "
	    "lazy dog again"), 1);
	CHECK_STREQ(b, "the quick brown fox jumps over the...");
	/* No boundary in the second half: cut at the limit. */
	CHECK_EQ(msg_fit(b, sizeof(b), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaa"), 1);
	CHECK_EQ(strlen(b), 39);
	CHECK(strcmp(b + 36, "...") == 0);
	/* Never inside a UTF-8 character (é is 2 bytes). */
	CHECK_EQ(msg_fit(b, sizeof(b), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9"), 1);
	CHECK(strcmp(b, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9...") == 0);
	CHECK_EQ(msg_fit(b, 4, "abcdef"), 1);
	CHECK_STREQ(b, "");
	/* Formatted, also beyond the 1 KiB stack buffer. */
	CHECK_EQ(msg_fmt(b, sizeof(b), "%s=%d", "n", 5), 0);
	CHECK_STREQ(b, "n=5");
	memset(big, 'p', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[20] = '/';
	CHECK_EQ(msg_fmt(b, sizeof(b), "x %s", big), 1);
	CHECK_STREQ(b, "x pppppppppppppppppppp/...");
	return (test_done("test_msg"));
}
