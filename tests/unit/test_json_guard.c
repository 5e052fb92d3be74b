/*
 * test_json_guard.c - publisher/json_guard.c: the count of values and
 * the depth a response may have before jansson parses it (docs/security.md
 * "What the API server sends the publisher"), and that brackets and
 * commas inside strings, escaped quotes included, are not counted.
 */
#include <stdlib.h>
#include <string.h>

#include "publisher/publisher.h"
#include "test.h"

static int
guard(const char *s, char *err, size_t size)
{
	err[0] = '\0';
	return (json_guard(s, strlen(s), "GET", "/apis/x", err, size));
}

/* n '[' then n ']' (n < 4096). */
static const char *
nest(size_t n)
{
	static char	 b[8192];
	size_t		 i;

	for (i = 0; i < n; i++) {
		b[i] = '[';
		b[n + i] = ']';
	}
	b[2 * n] = '\0';
	return (b);
}

int
main(void)
{
	char	 err[KP_ERROR_SIZE], *big;
	size_t	 i, n;

	CHECK_EQ(guard(nest(JSON_GUARD_DEPTH), err, sizeof(err)), 0);
	CHECK_EQ(guard(nest(JSON_GUARD_DEPTH + 1), err, sizeof(err)), KP_EIO);
	CHECK_STREQ(err, "GET /apis/x: response nests deeper than 64: refused");
	/* Closing brackets first buy no depth. */
	{
		char	 b[8400];

		memset(b, ']', 100);
		snprintf(b + 100, sizeof(b) - 100, "%s",
		    nest(JSON_GUARD_DEPTH + 1));
		CHECK_EQ(guard(b, err, sizeof(err)), KP_EIO);
	}
	/* Inside a string nothing counts: brackets, commas, an escaped
	 * quote; after it they count again. */
	{
		char	 b[8400];

		snprintf(b, sizeof(b), "{\"k\":\"\\\"%s,,,\\\\\"}", nest(200));
		CHECK_EQ(guard(b, err, sizeof(err)), 0);
		snprintf(b, sizeof(b), "{\"k\":\"\\\\\"%s}", nest(65));
		CHECK_EQ(guard(b, err, sizeof(err)), KP_EIO);
	}
	/* JSON_GUARD_VALUES values pass, one more is refused. */
	n = JSON_GUARD_VALUES;
	if ((big = malloc(n + 3)) != NULL) {
		big[0] = '[';
		for (i = 1; i < n; i++)
			big[i] = ',';
		big[n] = ']';
		big[n + 1] = '\0';
		CHECK_EQ(guard(big, err, sizeof(err)), 0);
		big[n] = ',';
		big[n + 1] = ']';
		big[n + 2] = '\0';
		CHECK_EQ(guard(big, err, sizeof(err)), KP_EIO);
		CHECK_STREQ(err, "GET /apis/x: response has more than 1000000 "
		    "JSON values: refused");
		free(big);
	}
	/* A watch line names the method alone. */
	CHECK_EQ(json_guard(nest(65), 130, "watch", NULL, err, sizeof(err)),
	    KP_EIO);
	CHECK_STREQ(err, "watch: response nests deeper than 64: refused");
	return (test_done("test_json_guard"));
}
