/*
 * test.h - tiny assertion helpers for unit tests. Each test file is its own
 * process (ctest runs it with a timeout); a failed check prints both sides
 * and the location, and the process exits non-zero at the end.
 */
#ifndef KP_TEST_H
#define KP_TEST_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int test_failures;
static int test_checks;

#define CHECK(cond) do {						\
	test_checks++;							\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n",		\
		    __FILE__, __LINE__, #cond);				\
		test_failures++;					\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	test_checks++;							\
	if (_a != _b) {							\
		fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
		    __FILE__, __LINE__, #a, #b, _a, _b);		\
		test_failures++;					\
	}								\
} while (0)

#define CHECK_STREQ(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	test_checks++;							\
	if (_a == NULL || _b == NULL || strcmp(_a, _b) != 0) {		\
		fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
		    __FILE__, __LINE__, #a, #b, _a ? _a : "(null)",	\
		    _b ? _b : "(null)");				\
		test_failures++;					\
	}								\
} while (0)

#define CHECK_CONTAINS(hay, needle) do {				\
	const char *_h = (hay), *_n = (needle);				\
	test_checks++;							\
	if (_h == NULL || strstr(_h, _n) == NULL) {			\
		fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
		    __FILE__, __LINE__, _h ? _h : "(null)", _n);	\
		test_failures++;					\
	}								\
} while (0)

static inline int
test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_checks,
	    test_failures);
	return (test_failures == 0 ? 0 : 1);
}

/* Removes every entry of dir (files, empty directories); dir stays. */
static inline void
test_empty_dir(const char *dir)
{
	struct dirent	*de;
	DIR		*d = opendir(dir);
	char		 p[512];

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (unlink(p) == -1)
			rmdir(p);
	}
	if (d != NULL)
		closedir(d);
}

#endif /* KP_TEST_H */
