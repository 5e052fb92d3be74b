/*
 * test_redteam_138.c - red team of base/msg.c (e8de162): msg_fit() over
 * every buffer size 0..80 and many texts (ASCII with separators, 2-, 3-
 * and 4-byte UTF-8, stray continuation bytes, no separator at all), with
 * guard bytes after the buffer; msg_vfmt() with a 1 MiB text (the "in
 * full" log line: how big it gets).
 *
 * Invariants checked: nothing written past size; 0 and an exact copy iff
 * the text fits; a cut text is a prefix of the source ending at a UTF-8
 * boundary, followed by "...", within size; sizes below 8 give "".
 *
 * FINDING (low, documentation): the file comment of msg.c says a cut goes
 * back to a separator "unless that loses more than a quarter of the
 * room"; the code accepts a separator anywhere in the last three quarters
 * (b > keep / 4), i.e. it may drop up to 3/4 of the room: a 256-byte
 * error whose only separator is at byte 70 keeps 70 bytes + "...". The
 * check "loses at most a quarter" below fails on e8de162.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"
#include "test.h"

#define GUARD	16

static uint32_t	 rng = 12345;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return (rng);
}

/* A text of n bytes or a few more (whole characters) of kind k. */
static void
text(char *t, size_t n, int k)
{
	static const char *const pieces[] = { "a", "b", " ", "/", ":", ",",
	    "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80", "\xbf" };
	size_t	 len = 0, np;
	const char *p;

	while (len < n) {
		switch (k) {
		case 0: np = 6; break;		/* ASCII + separators */
		case 1: np = 9; break;		/* + UTF-8 */
		case 2: np = 11; break;		/* + stray bytes */
		default: np = 2; break;		/* no separator */
		}
		p = pieces[rnd() % np];
		memcpy(t + len, p, strlen(p));
		len += strlen(p);
	}
	t[len] = '\0';
}

static int
utf8_boundary(const char *s, size_t i)
{
	return (((unsigned char)s[i] & 0xc0) != 0x80);
}

static void
sweep(void)
{
	char	 src[200], buf[80 + GUARD];
	size_t	 size, n, keep, i;
	int	 k, iter, r, bad = 0;

	for (iter = 0; iter < 4000; iter++) {
		k = iter % 4;
		text(src, rnd() % 150, k);
		n = strlen(src);
		for (size = 0; size <= 80; size++) {
			memset(buf, 0x5a, sizeof(buf));
			r = msg_fit(buf, size, src);
			for (i = size; i < size + GUARD; i++)
				if (buf[i] != 0x5a)
					bad |= 1;
			if (size == 0)
				continue;
			if (n < size) {
				if (r != 0 || strcmp(buf, src) != 0)
					bad |= 2;
				continue;
			}
			if (r != 1)
				bad |= 4;
			if (size < 8) {
				if (buf[0] != '\0')
					bad |= 8;
				continue;
			}
			keep = strlen(buf);
			if (keep < 3 || keep >= size ||
			    strcmp(buf + keep - 3, "...") != 0)
				bad |= 16;
			keep -= 3;
			if (memcmp(buf, src, keep) != 0)
				bad |= 32;
			/* Ends at a character boundary of the source (the
			 * stray continuation bytes of kind 2 excepted). */
			if (k != 2 && !utf8_boundary(src, keep))
				bad |= 64;
			if (bad != 0 && bad < 128) {
				fprintf(stderr, "msg_fit size %zu kind %d "
				    "src \"%s\" -> \"%s\" (bad %d)\n", size, k,
				    src, buf, bad);
				bad |= 128;
			}
		}
	}
	CHECK_EQ(bad & 127, 0);
}


/* The "in full" log line of a 1 MiB text: bounded by the logger. */
static void
huge(void)
{
	char		 b[256], path[] = "/tmp/kp-rt138-XXXXXX";
	char		*big = malloc(1 << 20);
	struct stat	 st;
	int		 fd, saved;

	memset(big, 'q', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	big[100] = ' ';
	fd = mkstemp(path);
	saved = dup(2);
	dup2(fd, 2);
	CHECK_EQ(msg_fmt(b, sizeof(b), "x %s", big), 1);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fstat(fd, &st);
	close(fd);
	unlink(path);
	fprintf(stderr, "msg_vfmt of 1 MiB: %lld bytes logged\n",
	    (long long)st.st_size);
	CHECK(st.st_size < 16384);
	CHECK(strlen(b) < sizeof(b));
	free(big);
}

/* The file comment's promise: a cut gives up at most half the room to
 * reach a separator (the red team found a comment promising a quarter
 * while the code gave up three quarters). */
static void
quarter(void)
{
	char	 b[256], src[400];

	memset(src, 'z', sizeof(src) - 1);
	src[sizeof(src) - 1] = '\0';
	src[70] = ' ';
	CHECK_EQ(msg_fit(b, sizeof(b), src), 1);
	fprintf(stderr, "separator at 70 of a 256-byte buffer: kept %zu "
	    "bytes\n", strlen(b) - 3);
	CHECK(strlen(b) - 3 >= (sizeof(b) - 4) / 2);
}

int
main(void)
{
	sweep();
	huge();
	quarter();
	return (test_done("test_redteam_138"));
}
