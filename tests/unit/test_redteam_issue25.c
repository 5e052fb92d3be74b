/*
 * test_redteam_issue25.c - red-team reproducers for kp_claim_info()
 * (nodeserver/claim_info.c, issue 25): what one claim of at most
 * KP_IPC_MAX_CLAIM_JSON bytes (the bound the publisher and the supervisor
 * enforce) costs the nodeserver in memory and in time under ci_lock, and
 * what a claim whose JSON does not build costs when the hook asks again.
 *
 * Each shape is a claim the publisher passes on (an object with a
 * metadata object; see publisher/claims.c claims_parse), padded to just
 * under 1 MiB of compact JSON. The heap is measured with mallinfo2()
 * around the first kp_claim_info() of a call and printed (make the
 * findings reproducible: ./build/tests/test_redteam_issue25).
 *
 * Checks that FAILED on ce82e05 (the findings), fixed since:
 *   - repeated kp_claim_info() on a claim whose JSON does not build
 *     re-parsed it every time and leaked the previous parse (a failure
 *     is now cached);
 *   - the nodeserver's heap for one 1 MiB claim is bounded by a small
 *     multiple of its size (AMP_MAX): these shapes hold more than
 *     KP_CLAIM_MAX_VALUES values and are refused before jansson builds
 *     anything (kp_claim_info() is NULL);
 *   - a build held the process-wide lock (now outside it).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "test.h"

#define DRV	"gpu.example.com"
#define BOUND	(KP_IPC_MAX_CLAIM_JSON - 4096)	/* bytes of a shape */
/* What a nodeserver may fairly spend on one claim: the JSON, its parse
 * and the structs, a few times the text. */
#define AMP_MAX	16

/* No UID: the shapes carry no metadata.uid, and a JSON naming another
 * claim is refused (nodeserver/claim_info.c ci_same_claim). */
static const struct kp_claim claim = { "ns", "c1", "", NULL, 0, NULL,
    NULL, 0 };

static size_t
heap_now(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (mi.uordblks + mi.hblkhd);
}

static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/* head, then elem (with %zu for a counter, or not) repeated with commas
 * while under BOUND, then tail. */
static char *
shape(const char *head, const char *elem, const char *tail)
{
	char	*s = malloc(KP_IPC_MAX_CLAIM_JSON + 64), e[128];
	size_t	 n, i, el;

	if (s == NULL)
		abort();
	n = (size_t)snprintf(s, 256, "%s", head);
	for (i = 0;; i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		el = (size_t)snprintf(e, sizeof(e), elem, i);
#pragma GCC diagnostic pop
		if (n + el + 1 + strlen(tail) >= BOUND)
			break;
		if (i > 0)
			s[n++] = ',';
		memcpy(s + n, e, el);
		n += el;
	}
	memcpy(s + n, tail, strlen(tail) + 1);
	return (s);
}

struct amp {
	const char	*what;
	const char	*head, *elem, *tail;
};

static const struct amp amps[] = {
	{ "unknown field of empty objects",
	  "{\"metadata\":{},\"x\":[", "{}", "]}" },
	{ "unknown field of empty arrays",
	  "{\"metadata\":{},\"x\":[", "[]", "]}" },
	{ "tolerations of non-objects (one result of this driver)",
	  "{\"metadata\":{},\"status\":{\"allocation\":{\"devices\":"
	  "{\"results\":[{\"request\":\"r\",\"driver\":\"" DRV "\","
	  "\"pool\":\"p\",\"device\":\"d\",\"tolerations\":[", "0",
	  "]}]}}}}" },
	{ "bindingConditions of non-strings",
	  "{\"metadata\":{},\"status\":{\"allocation\":{\"devices\":"
	  "{\"results\":[{\"request\":\"r\",\"driver\":\"" DRV "\","
	  "\"pool\":\"p\",\"device\":\"d\",\"bindingConditions\":[", "0",
	  "]}]}}}}" },
	{ "reservedFor of non-objects",
	  "{\"metadata\":{},\"status\":{\"reservedFor\":[", "0", "]}}" },
	{ "labels with short keys",
	  "{\"metadata\":{\"labels\":{", "\"%zx\":\"\"", "}}}" },
	{ "consumedCapacity entries",
	  "{\"metadata\":{},\"status\":{\"allocation\":{\"devices\":"
	  "{\"results\":[{\"request\":\"r\",\"driver\":\"" DRV "\","
	  "\"pool\":\"p\",\"device\":\"d\",\"consumedCapacity\":{",
	  "\"%zx\":\"1\"", "}}]}}}}" },
	{ "results of other drivers",
	  "{\"metadata\":{},\"status\":{\"allocation\":{\"devices\":"
	  "{\"results\":[", "{\"driver\":\"\"}", "]}}}}" },
};

/* Heap and time of the first kp_claim_info() of a call on json. */
static void
measure(const char *what, const char *json, size_t *heap, double *ms)
{
	struct kp_claim			 c[1] = { claim };
	struct dra_claim_alloc		 al[1];
	struct ci_call			 call;
	const struct kp_claim_info	*ci;
	size_t				 h0;
	double				 t0;

	memset(al, 0, sizeof(al));
	al[0].claim_json = (char *)json;
	al[0].claim_json_len = strlen(json);
	al[0].api_version = "resource.k8s.io/v1";
	malloc_trim(0);
	h0 = heap_now();
	ci_call_begin(&call, c, 1, al, DRV);
	t0 = now_ms();
	ci = kp_claim_info(&c[0]);
	*ms = now_ms() - t0;
	*heap = heap_now() - h0;
	CHECK(ci == NULL);	/* over KP_CLAIM_MAX_VALUES: refused */
	ci_call_end(&call);
	printf("  %-56s json %7zu B  heap %9zu B (%5.1fx)  %6.1f ms\n",
	    what, strlen(json), *heap, (double)*heap / (double)strlen(json),
	    *ms);
}

/* One claim of at most 1 MiB: bounded heap. */
static void
test_amplification(void)
{
	size_t	i, heap, worst = 0;
	double	ms, worst_ms = 0;
	char	*s;

	printf("kp_claim_info() on one claim of ~1 MiB (compact JSON):\n");
	for (i = 0; i < sizeof(amps) / sizeof(amps[0]); i++) {
		s = shape(amps[i].head, amps[i].elem, amps[i].tail);
		/* The publisher would pass it on: an object, at most
		 * 1 MiB compact, no key twice. */
		CHECK(strlen(s) <= KP_IPC_MAX_CLAIM_JSON);
		measure(amps[i].what, s, &heap, &ms);
		if (heap > worst)
			worst = heap;
		if (ms > worst_ms)
			worst_ms = ms;
		CHECK(heap <= (size_t)AMP_MAX * strlen(s));
		free(s);
	}
	printf("  worst: %zu B heap, %.1f ms under ci_lock\n", worst,
	    worst_ms);
}

/*
 * A claim whose JSON does not build (valid JSON, not an object: what a
 * compromised publisher sends; or out of memory half-way): each
 * kp_claim_info() parses it again and the earlier parse is never freed.
 */
static void
test_reparse_leak(void)
{
	struct kp_claim			 c[1] = { claim };
	struct dra_claim_alloc		 al[1];
	struct ci_call			 call;
	char				*s = shape("[", "{}", "]");
	size_t				 h[4];
	double				 t[4], t0;
	int				 k;

	memset(al, 0, sizeof(al));
	al[0].claim_json = s;
	al[0].claim_json_len = strlen(s);
	al[0].api_version = "resource.k8s.io/v1";
	malloc_trim(0);
	ci_call_begin(&call, c, 1, al, DRV);
	for (k = 0; k < 4; k++) {
		t0 = now_ms();
		CHECK(kp_claim_info(&c[0]) == NULL);
		t[k] = now_ms() - t0;
		h[k] = heap_now();
	}
	printf("non-object claim_json of %zu B, kp_claim_info() x4: heap "
	    "%zu -> %zu -> %zu -> %zu B; %.1f %.1f %.1f %.1f ms\n", strlen(s),
	    h[0], h[1], h[2], h[3], t[0], t[1], t[2], t[3]);
	/* Asked again, nothing more is kept (nor parsed: the doc says
	 * "parses its JSON (once)"). */
	CHECK(h[3] <= h[1] + 65536);
	CHECK(t[3] < t[0] / 10);
	ci_call_end(&call);
	free(s);
}

/*
 * The lazy build runs under the process-wide ci_lock: a hook of another
 * call (a driver that does not serialize hooks, or a thread of the same
 * hook) asking for an info already built waits for the whole parse.
 */
struct stall {
	struct kp_claim		*c;
	volatile int		 stop;
	double			 worst;
};

static void *
stall_reader(void *arg)
{
	struct stall	*st = arg;
	double		 t0, d;

	while (!st->stop) {
		t0 = now_ms();
		if (kp_claim_info(st->c) == NULL)
			break;
		d = now_ms() - t0;
		if (d > st->worst)
			st->worst = d;
	}
	return (NULL);
}

static void
test_lock_stall(void)
{
	static const char small[] = "{\"metadata\":{}}";
	struct kp_claim		 a[1] = { claim }, b[1] = { claim };
	struct dra_claim_alloc	 ala[1], alb[1];
	struct ci_call		 ca, cb;
	struct stall		 st = { b, 0, 0 };
	pthread_t		 th;
	char			*s = shape(amps[0].head, amps[0].elem,
				     amps[0].tail);
	double			 t0, built;

	memset(ala, 0, sizeof(ala));
	memset(alb, 0, sizeof(alb));
	ala[0].claim_json = s;
	ala[0].claim_json_len = strlen(s);
	ala[0].api_version = "resource.k8s.io/v1";
	alb[0].claim_json = (char *)small;
	alb[0].claim_json_len = strlen(small);
	alb[0].api_version = "resource.k8s.io/v1";
	ci_call_begin(&cb, b, 1, alb, DRV);
	CHECK(kp_claim_info(&b[0]) != NULL);
	ci_call_begin(&ca, a, 1, ala, DRV);
	pthread_create(&th, NULL, stall_reader, &st);
	t0 = now_ms();
	while (now_ms() - t0 < 20)
		;
	t0 = now_ms();
	CHECK(kp_claim_info(&a[0]) == NULL);	/* refused, as above */
	built = now_ms() - t0;
	st.stop = 1;
	pthread_join(th, NULL);
	printf("another call's built info waited %.1f ms while a 1 MiB "
	    "claim was built (%.1f ms)\n", st.worst, built);
	ci_call_end(&ca);
	ci_call_end(&cb);
	free(s);
}

/*
 * consumedCapacity edges: one overflow flag for two values. "1E" is
 * 10^18: Value() fits, MilliValue() does not; the header says "beyond
 * int64 both are INT64_MAX and overflow is 1", so a driver that checks
 * overflow throws away a good value. A quantity that does not parse
 * ("1.2.3", "-junk") is reported as an overflow, INT64_MAX / INT64_MIN.
 */
static void
test_capacity_edges(void)
{
	static const char j[] = "{\"metadata\":{},\"status\":{\"allocation\""
	    ":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\""
	    DRV "\",\"pool\":\"p\",\"device\":\"d\",\"consumedCapacity\":"
	    "{\"e\":\"1E\",\"bad\":\"1.2.3\",\"neg\":\"-junk\"}}]}}}}";
	struct kp_claim			 c[1] = { claim };
	struct dra_claim_alloc		 al[1];
	struct ci_call			 call;
	const struct kp_claim_info	*ci;
	const struct kp_capacity_quantity *q;

	memset(al, 0, sizeof(al));
	al[0].claim_json = (char *)j;
	al[0].claim_json_len = strlen(j);
	al[0].api_version = "resource.k8s.io/v1";
	ci_call_begin(&call, c, 1, al, DRV);
	ci = kp_claim_info(&c[0]);
	CHECK(ci != NULL && ci->n_results == 1);
	if (ci != NULL && ci->n_results == 1) {
		q = kp_claim_capacity(ci->results[0], "e");
		CHECK(q != NULL);
		if (q != NULL) {
			printf("1E: value %lld milli %lld overflow %d\n",
			    (long long)q->value, (long long)q->milli_value,
			    q->overflow);
			CHECK_EQ(q->value, 1000000000000000000LL);
			/* "both are INT64_MAX" when overflow is 1: */
			CHECK(!q->overflow || q->value == INT64_MAX);
		}
		q = kp_claim_capacity(ci->results[0], "neg");
		if (q != NULL)
			printf("-junk: value %lld overflow %d (not a quantity "
			    "reported as an overflow)\n", (long long)q->value,
			    q->overflow);
	}
	ci_call_end(&call);
}

/*
 * "Returns NULL when claim is ... a claim kept after the hook returned":
 * only as long as no later call's claims array sits at the same address.
 * A kept pointer then finds another call's claim (another claim's info).
 */
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
static void
test_stale_alias(void)
{
	static const char j1[] = "{\"metadata\":{\"labels\":{\"who\":\"first\"}}}";
	static const char j2[] = "{\"metadata\":{\"labels\":{\"who\":\"second\"}}}";
	struct kp_claim			*arr = malloc(sizeof(*arr));
	const struct kp_claim		*kept;
	uintptr_t			 kept_addr;
	struct dra_claim_alloc		 al[1];
	struct ci_call			 call;
	const struct kp_claim_info	*ci;

	memset(al, 0, sizeof(al));
	arr[0] = claim;
	al[0].claim_json = (char *)j1;
	al[0].claim_json_len = strlen(j1);
	al[0].api_version = "resource.k8s.io/v1";
	ci_call_begin(&call, arr, 1, al, DRV);
	kept = &arr[0];
	kept_addr = (uintptr_t)kept;
	CHECK(kp_claim_info(kept) != NULL);
	ci_call_end(&call);
	free(arr);
	/* The next call's array, very likely at the same address. */
	arr = malloc(sizeof(*arr));
	arr[0] = claim;
	arr[0].name = "other";
	al[0].claim_json = (char *)j2;
	al[0].claim_json_len = strlen(j2);
	ci_call_begin(&call, arr, 1, al, DRV);
	if ((uintptr_t)arr == kept_addr) {
		ci = kp_claim_info((const struct kp_claim *)kept_addr);
		printf("kept claim pointer after its call: %s\n", ci == NULL ?
		    "NULL" : ci->labels[0]->value);
		/* A dangling pointer (documented): it may find the new
		 * call's claim; nothing to check but that it is safe. */
		(void)ci;
	}
	ci_call_end(&call);
	free(arr);
}

#pragma GCC diagnostic pop

int
main(void)
{
	test_amplification();
	test_reparse_leak();
	test_lock_stall();
	test_capacity_edges();
	test_stale_alias();
	return (test_done("test_redteam_issue25"));
}
