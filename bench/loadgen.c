/*
 * loadgen - the benchmarks' load generator, on gRPC C core like the
 * servers it measures: a grpc-js client saturates its own core first and
 * hides the server's cost (issue 17), this one costs a few microseconds a
 * call.
 *
 *   loadgen -t <unix:path> -m <method> -r <requests-file> [-c conns]
 *           [-T threads] [-n calls | -s secs] [-w warmup] [-d deadline-ms]
 *           [-i interval-us] [-R answers-file]
 *
 * A closed loop: conns connections (one channel each, with a local
 * subchannel pool so that channels never share a connection), one call in
 * flight on each; when a call ends the next starts on the same channel.
 * threads completion queues, each with its share of the connections.
 * The requests file holds the serialized request messages, each as a
 * 4-byte big-endian length and the bytes; the calls cycle through them.
 * The first warmup calls of each connection are not counted. -i paces
 * each connection: a call starts no sooner than interval-us after the
 * previous one on it started (the thread sleeps; meant for one
 * connection, for servers that limit a rate, such as CDI spec writes).
 * -R: the answers each request must get, in the requests file's format
 * and order (request i, answer i modulo their count); an answer that
 * differs in any byte is "wrong": counted apart, left out of the
 * latencies (a server that answers a claim error inside a successful
 * gRPC status, such as "rate-limited; retry", must not look fast).
 *
 * Prints one JSON object: calls, errors (with the first error's status
 * and text), wall seconds, calls per second, latency percentiles in
 * microseconds (p50, p90, p99, p99.9, max), the load generator's own
 * CPU seconds (so a reader sees whether it, not the server, was the
 * bottleneck), and with -R the wrong answers (with the first one's bytes
 * in hex). Exit status: 0, 1 when any call failed, 2 on bad usage.
 *
 * Benchmark code: it includes <grpc/grpc.h> directly (the library's
 * one-adapter rule covers the library's directories only).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>

struct req {
	unsigned char	*data;
	size_t		 len;
};

/* One connection's loop state; its address is the CQ tag. */
struct conn {
	struct worker		*w;
	grpc_channel		*ch;
	grpc_call		*call;
	grpc_metadata_array	 md_init, md_trail;
	grpc_byte_buffer	*send, *recv;
	grpc_status_code	 status;
	grpc_slice		 details;
	uint64_t		 t0;
	size_t			 req;		/* index of the call's request */
	size_t			 done;		/* calls ended, warm-up included */
	size_t			 next_req;
	int			 stopped;
};

struct worker {
	pthread_t		 thread;
	grpc_completion_queue	*cq;
	struct conn		*conns;
	size_t			 n_conns;
	uint64_t		*lat;		/* ns, counted calls only */
	size_t			 n_lat, cap_lat;
	size_t			 errors;
	int			 first_status;
	char			 first_error[256];
	size_t			 wrong;		/* -R: answers not as expected */
	char			 first_wrong[1025];	/* hex, truncated */
};

static const char	*target, *method;
static struct req	*reqs, *answers;
static size_t		 n_reqs, n_answers;
static size_t		 limit_calls;	/* per connection; 0: by time */
static double		 limit_secs = 2;
static size_t		 warmup = 50;
static int		 deadline_ms = 30000;
static uint64_t		 interval_ns;	/* -i: pacing; 0: none */
static uint64_t		 t_end;		/* ns, CLOCK_MONOTONIC */
static grpc_slice	 method_slice;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
usage(const char *why)
{
	if (why != NULL)
		fprintf(stderr, "loadgen: %s\n", why);
	fprintf(stderr, "usage: loadgen -t unix:PATH -m METHOD -r REQUESTS "
	    "[-c conns] [-T threads] [-n calls | -s secs] [-w warmup] "
	    "[-d deadline-ms] [-i interval-us] [-R answers]\n");
	exit(2);
}

/* path's messages (4-byte big-endian length, then the bytes, each) into
 * *out and *n. */
static int
read_messages(const char *path, struct req **out, size_t *n)
{
	FILE		*f = fopen(path, "rb");
	size_t		 cap = 0, cnt = 0;
	struct req	*v = NULL;

	if (f == NULL)
		return -1;
	for (;;) {
		unsigned char	hdr[4];
		size_t		len;

		if (fread(hdr, 1, 4, f) != 4)
			break;
		len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
		    (size_t)hdr[2] << 8 | hdr[3];
		if (len > 64u << 20)
			break;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			v = realloc(v, cap * sizeof(*v));
			if (v == NULL)
				return -1;
		}
		v[cnt].len = len;
		v[cnt].data = malloc(len ? len : 1);
		if (v[cnt].data == NULL ||
		    fread(v[cnt].data, 1, len, f) != len)
			return -1;
		cnt++;
	}
	fclose(f);
	*out = v;
	*n = cnt;
	return cnt > 0 ? 0 : -1;
}

static int
keep_going(const struct conn *c)
{
	if (limit_calls > 0)
		return c->done < warmup + limit_calls;
	return c->done < warmup || now_ns() < t_end;
}

static void
start_call(struct conn *c)
{
	const struct req	*r = &reqs[c->next_req % n_reqs];
	grpc_slice		 s = grpc_slice_from_copied_buffer(
	    (const char *)r->data, r->len);
	gpr_timespec		 dl = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	    gpr_time_from_millis(deadline_ms, GPR_TIMESPAN));
	grpc_op			 ops[6];
	grpc_call_error		 e;

	c->req = c->next_req++ % n_reqs;
	memset(ops, 0, sizeof(ops));
	c->send = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	c->recv = NULL;
	grpc_metadata_array_init(&c->md_init);
	grpc_metadata_array_init(&c->md_trail);
	c->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS,
	    c->w->cq, method_slice, NULL, dl, NULL);
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = c->send;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->md_init;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &c->recv;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &c->md_trail;
	ops[5].data.recv_status_on_client.status = &c->status;
	ops[5].data.recv_status_on_client.status_details = &c->details;
	c->t0 = now_ns();
	e = grpc_call_start_batch(c->call, ops, 6, c, NULL);
	if (e != GRPC_CALL_OK) {
		fprintf(stderr, "loadgen: start_batch: %d\n", (int)e);
		exit(1);
	}
}

/* -R: whether c's answer is the one its request must get; the first
 * wrong one is kept in hex. */
static int
answer_ok(struct conn *c)
{
	const struct req	*want = &answers[c->req % n_answers];
	struct worker		*w = c->w;
	grpc_byte_buffer_reader	 rd;
	grpc_slice		 got;
	int			 ok;

	if (c->recv == NULL || !grpc_byte_buffer_reader_init(&rd, c->recv))
		got = grpc_empty_slice();
	else {
		got = grpc_byte_buffer_reader_readall(&rd);
		grpc_byte_buffer_reader_destroy(&rd);
	}
	ok = GRPC_SLICE_LENGTH(got) == want->len &&
	    memcmp(GRPC_SLICE_START_PTR(got), want->data, want->len) == 0;
	if (!ok && w->wrong++ == 0) {
		size_t n = GRPC_SLICE_LENGTH(got);

		if (n > (sizeof(w->first_wrong) - 1) / 2)
			n = (sizeof(w->first_wrong) - 1) / 2;
		for (size_t i = 0; i < n; i++)
			snprintf(w->first_wrong + 2 * i, 3, "%02x",
			    GRPC_SLICE_START_PTR(got)[i]);
	}
	grpc_slice_unref(got);
	return ok;
}

static void
end_call(struct conn *c)
{
	struct worker	*w = c->w;
	uint64_t	 lat = now_ns() - c->t0;

	if (c->status != GRPC_STATUS_OK) {
		if (w->errors++ == 0) {
			char *d = grpc_slice_to_c_string(c->details);

			w->first_status = (int)c->status;
			snprintf(w->first_error, sizeof(w->first_error), "%s",
			    d);
			gpr_free(d);
		}
	} else if (answers != NULL && !answer_ok(c)) {
		/* counted in w->wrong, not in the latencies */
	} else if (c->done >= warmup) {
		if (w->n_lat == w->cap_lat) {
			w->cap_lat = w->cap_lat ? w->cap_lat * 2 : 4096;
			w->lat = realloc(w->lat, w->cap_lat * sizeof(*w->lat));
			if (w->lat == NULL)
				exit(1);
		}
		w->lat[w->n_lat++] = lat;
	}
	c->done++;
	grpc_byte_buffer_destroy(c->send);
	if (c->recv != NULL)
		grpc_byte_buffer_destroy(c->recv);
	grpc_metadata_array_destroy(&c->md_init);
	grpc_metadata_array_destroy(&c->md_trail);
	grpc_slice_unref(c->details);
	grpc_call_unref(c->call);
	c->call = NULL;
}

/* -i: wait until interval_ns after c's last call started. */
static void
pace(const struct conn *c)
{
	uint64_t	 due = c->t0 + interval_ns, now = now_ns();
	struct timespec	 ts;

	if (interval_ns == 0 || now >= due)
		return;
	ts.tv_sec = (time_t)((due - now) / 1000000000u);
	ts.tv_nsec = (long)((due - now) % 1000000000u);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void *
run_worker(void *arg)
{
	struct worker	*w = arg;
	size_t		 active = w->n_conns;

	for (size_t i = 0; i < w->n_conns; i++)
		start_call(&w->conns[i]);
	while (active > 0) {
		grpc_event	 ev = grpc_completion_queue_next(w->cq,
		    gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
		struct conn	*c = ev.tag;

		if (ev.type != GRPC_OP_COMPLETE)
			break;
		end_call(c);
		if (keep_going(c)) {
			pace(c);
			start_call(c);
		}
		else
			active--;
	}
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct_us(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p / 100.0 * (double)n + 0.999999);
	i = i == 0 ? 0 : i - 1;
	if (i >= n)
		i = n - 1;
	return (double)v[i] / 1000.0;
}

static void
json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

int
main(int argc, char **argv)
{
	const char		*reqfile = NULL, *ansfile = NULL;
	size_t			 n_conns = 1, n_threads = 0;
	struct worker		*ws;
	grpc_channel_credentials *cr;
	grpc_arg		 arg;
	grpc_channel_args	 args;
	struct rusage		 ru0, ru1;
	uint64_t		 t0, t1, *all;
	size_t			 n_all = 0, errors = 0, wrong = 0;
	int			 opt;

	while ((opt = getopt(argc, argv, "t:m:r:c:T:n:s:w:d:i:R:h")) != -1) {
		switch (opt) {
		case 't': target = optarg; break;
		case 'm': method = optarg; break;
		case 'r': reqfile = optarg; break;
		case 'c': n_conns = strtoul(optarg, NULL, 10); break;
		case 'T': n_threads = strtoul(optarg, NULL, 10); break;
		case 'n': limit_calls = strtoul(optarg, NULL, 10); break;
		case 's': limit_secs = strtod(optarg, NULL); break;
		case 'w': warmup = strtoul(optarg, NULL, 10); break;
		case 'd': deadline_ms = atoi(optarg); break;
		case 'i': interval_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'R': ansfile = optarg; break;
		default: usage(NULL);
		}
	}
	if (target == NULL || method == NULL || reqfile == NULL)
		usage("-t, -m and -r are required");
	if (n_conns < 1 || n_conns > 1024 || !(limit_secs > 0) ||
	    deadline_ms < 1)
		usage("-c 1..1024, -s > 0, -d >= 1");
	if (n_threads == 0)
		n_threads = n_conns < 8 ? 1 : 2;
	if (n_threads > n_conns)
		n_threads = n_conns;
	if (read_messages(reqfile, &reqs, &n_reqs) != 0) {
		fprintf(stderr, "loadgen: %s: cannot read requests: %s\n",
		    reqfile, strerror(errno));
		return 2;
	}
	if (ansfile != NULL &&
	    read_messages(ansfile, &answers, &n_answers) != 0) {
		fprintf(stderr, "loadgen: %s: cannot read answers: %s\n",
		    ansfile, strerror(errno));
		return 2;
	}

	grpc_init();
	method_slice = grpc_slice_from_static_string(method);
	cr = grpc_insecure_credentials_create();
	/* Without a local subchannel pool, channels to one target share one
	 * connection: "8 connections" would be 8 streams on one. */
	arg.type = GRPC_ARG_INTEGER;
	arg.key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
	arg.value.integer = 1;
	args.num_args = 1;
	args.args = &arg;

	ws = calloc(n_threads, sizeof(*ws));
	if (ws == NULL)
		return 1;
	for (size_t t = 0; t < n_threads; t++) {
		struct worker *w = &ws[t];

		w->cq = grpc_completion_queue_create_for_next(NULL);
		w->n_conns = n_conns / n_threads + (t < n_conns % n_threads);
		w->conns = calloc(w->n_conns, sizeof(*w->conns));
		if (w->conns == NULL)
			return 1;
		for (size_t i = 0; i < w->n_conns; i++) {
			struct conn *c = &w->conns[i];

			c->w = w;
			c->next_req = t * 7919 + i * 104729;
			c->ch = grpc_channel_create(target, cr, &args);
			/* Connects on its first call: the warm-up
			 * calls (-w) pay for it, not the figures. */
		}
	}

	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	t_end = t0 + (uint64_t)(limit_secs * 1e9);
	for (size_t t = 0; t < n_threads; t++)
		pthread_create(&ws[t].thread, NULL, run_worker, &ws[t]);
	for (size_t t = 0; t < n_threads; t++)
		pthread_join(ws[t].thread, NULL);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru1);

	for (size_t t = 0; t < n_threads; t++)
		n_all += ws[t].n_lat;
	all = malloc((n_all ? n_all : 1) * sizeof(*all));
	if (all == NULL)
		return 1;
	n_all = 0;
	for (size_t t = 0; t < n_threads; t++) {
		memcpy(all + n_all, ws[t].lat, ws[t].n_lat * sizeof(*all));
		n_all += ws[t].n_lat;
		errors += ws[t].errors;
		wrong += ws[t].wrong;
	}
	qsort(all, n_all, sizeof(*all), cmp_u64);

	{
		double wall = (double)(t1 - t0) / 1e9;
		double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
		    ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		    (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
		    ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
		size_t all_calls = 0;

		for (size_t t = 0; t < n_threads; t++)
			for (size_t i = 0; i < ws[t].n_conns; i++)
				all_calls += ws[t].conns[i].done;
		printf("{\"conns\":%zu,\"threads\":%zu,\"calls\":%zu,"
		    "\"counted\":%zu,\"errors\":%zu,\"wall_s\":%.6f,"
		    "\"calls_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
		    "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
		    "\"client_cpu_s\":%.6f",
		    n_conns, n_threads, all_calls, n_all, errors, wall,
		    wall > 0 ? (double)all_calls / wall : 0,
		    pct_us(all, n_all, 50), pct_us(all, n_all, 90),
		    pct_us(all, n_all, 99), pct_us(all, n_all, 99.9),
		    n_all ? (double)all[n_all - 1] / 1000.0 : 0, cpu);
		for (size_t t = 0; t < n_threads; t++) {
			if (ws[t].errors == 0)
				continue;
			printf(",\"first_status\":%d,\"first_error\":",
			    ws[t].first_status);
			json_string(ws[t].first_error);
			break;
		}
		if (answers != NULL)
			printf(",\"wrong\":%zu", wrong);
		for (size_t t = 0; t < n_threads && wrong > 0; t++) {
			if (ws[t].wrong == 0)
				continue;
			printf(",\"first_wrong_hex\":\"%s\"",
			    ws[t].first_wrong);
			break;
		}
		printf("}\n");
	}
	fflush(stdout);
	/* Channels and queues are not torn down: the process ends here, and
	 * gRPC's shutdown of 64 channels only adds to the wall time. */
	_exit(errors ? 1 : 0);
}
