/*
 * test_redteam_138_rules.c - red team of api/publish_rules.c and the
 * note queue of api/events.c (84480d0), driven directly on a plugin
 * struct (no processes): publish_rules() as kp_publish_resources() calls
 * it, publish_rules_sent() for what "was sent".
 *
 * Held: a pool left out keeps the state last sent, also after a call
 * that itself left it out (the shell is what is remembered), after a call
 * without the pool at all it is not resurrected, and the other pools are
 * sent as given.
 *
 * FINDINGS (fail on 84480d0):
 *  - the note text is cut by vsnprintf() at KP_ERROR_SIZE anywhere: with a
 *    long pool name (253 bytes is valid) the field path, the name and the
 *    rule ("ValidateQualifiedNames") are all lost, mid-character, without
 *    "..." and without the full text being logged (msg_vfmt exists for
 *    this since e8de162);
 *  - the queue has no bound: 100000 calls leave 100000 notes queued.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "api/api.h"
#include "test.h"

#define DRV	"gpu.example.com"

static void
errfn(void *u, int code, const char *m, int rec)
{
	(void)u; (void)code; (void)m; (void)rec;
}

static struct kp_plugin *
plugin(void)
{
	struct kp_plugin *p = calloc(1, sizeof(*p));

	snprintf(p->driver, sizeof(p->driver), "%s", DRV);
	p->qnames = 1;
	p->error_fn = errfn;
	p->note_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&p->note_lock, NULL);
	p->notes = NULL;
	p->notes_tail = &p->notes;
	return (p);
}

static size_t
notes(struct kp_plugin *p, char *last, size_t size)
{
	struct api_note	*n;
	size_t		 c = 0;

	for (n = p->notes; n != NULL; n = n->next, c++)
		if (last != NULL)
			snprintf(last, size, "%s", n->text);
	return (c);
}

static void
notes_drop(struct kp_plugin *p)
{
	struct api_note	*n;

	while ((n = p->notes) != NULL) {
		p->notes = n->next;
		free(n);
	}
	p->notes_tail = &p->notes;
}

/* Pools name0 (tag t0) and name1 (tag t1; qualified: bad1). */
static Kpipc__Publish *
build(const char *name0, const char *t0, const char *name1, const char *t1,
    int bad1)
{
	static struct kp_attribute	 a[2][2];
	static struct kp_device		 d[2];
	static struct kp_slice		 s[2];
	static struct kp_pool		 pl[2];
	struct kp_resources		 res = { KP_RESOURCES_INIT };
	const char			*names[2] = { name0, name1 };
	const char			*tags[2] = { t0, t1 };
	Kpipc__Publish			*pub = NULL;
	char				 err[KP_ERROR_SIZE];
	size_t				 n = 0;
	int				 i;

	for (i = 0; i < 2; i++) {
		if (names[i] == NULL)
			continue;
		a[n][0] = (struct kp_attribute)KP_ATTR_STRING("tag", tags[i]);
		a[n][1] = (struct kp_attribute)KP_ATTR_INT(
		    i == 1 && bad1 ? DRV "/model" : "model", 1);
		d[n] = (struct kp_device){ KP_DEVICE_INIT, .name = "dev-0",
		    .attributes = a[n], .n_attributes = 2 };
		s[n] = (struct kp_slice){ KP_SLICE_INIT, .devices = &d[n],
		    .n_devices = 1 };
		pl[n] = (struct kp_pool){ KP_POOL_INIT, .name = names[i],
		    .slices = &s[n], .n_slices = 1 };
		n++;
	}
	res.pools = pl;
	res.n_pools = n;
	if (pack_resources(&res, &pub, err, sizeof(err)) != 0) {
		fprintf(stderr, "pack: %s\n", err);
		exit(2);
	}
	return (pub);
}

/* The tag of pool name in what would be sent; NULL if absent. */
static const char *
tag_of(const Kpipc__Publish *sent, const char *name)
{
	size_t	 i;

	for (i = 0; i < sent->n_pools; i++)
		if (strcmp(sent->pools[i]->name, name) == 0)
			return (sent->pools[i]->slices[0]->devices[0]->
			    attributes[0]->string_value);
	return (NULL);
}

/* One kp_publish_resources() as api.c does it; the sent tags of pool-0
 * and pool-1 into t0, t1 ("-" when absent). */
static void
call(struct kp_plugin *p, Kpipc__Publish *pub, char *t0, char *t1)
{
	Kpipc__Publish	 shell, *prev = NULL;
	const Kpipc__Publish *sent;
	char		 err[KP_ERROR_SIZE];
	const char	*x;
	int		 r;

	r = publish_rules(p, pub, &shell, &prev, err, sizeof(err));
	CHECK(r == 0 || r == 1);
	sent = r == 1 ? &shell : pub;
	x = tag_of(sent, "pool-0");
	snprintf(t0, 16, "%s", x ? x : "-");
	x = tag_of(sent, "pool-1");
	snprintf(t1, 16, "%s", x ? x : "-");
	publish_rules_sent(p, sent);
	if (r == 1) {
		free(shell.pools);
		free(shell.keep_pools);
	}
	if (prev != NULL)
		kpipc__publish__free_unpacked(prev, NULL);
	pack_free(pub);
}

static void
last_state(void)
{
	struct kp_plugin	*p = plugin();
	char			 t0[16], t1[16];

	call(p, build("pool-0", "A", "pool-1", "A", 0), t0, t1);
	CHECK_STREQ(t0, "A"); CHECK_STREQ(t1, "A");
	call(p, build("pool-0", "B", "pool-1", "B", 1), t0, t1);
	CHECK_STREQ(t0, "B"); CHECK_STREQ(t1, "A");
	/* Left out again, after a call that left it out. */
	call(p, build("pool-0", "C", "pool-1", "C", 1), t0, t1);
	CHECK_STREQ(t0, "C"); CHECK_STREQ(t1, "A");
	/* pool-0 gone, pool-1 still bad: pool-1 keeps A. */
	call(p, build(NULL, NULL, "pool-1", "D", 1), t0, t1);
	CHECK_STREQ(t0, "-"); CHECK_STREQ(t1, "A");
	/* pool-1 dropped by the driver: gone; bad again later: not back. */
	call(p, build("pool-0", "E", NULL, NULL, 0), t0, t1);
	CHECK_STREQ(t1, "-");
	call(p, build("pool-0", "F", "pool-1", "F", 1), t0, t1);
	CHECK_STREQ(t0, "F"); CHECK_STREQ(t1, "-");
	CHECK_EQ(notes(p, NULL, 0), 4);
	notes_drop(p);
	free(p->last_pub);
	free(p);
}

static void
long_name(void)
{
	struct kp_plugin	*p = plugin();
	char			 name[254], last[KP_ERROR_SIZE], t0[16], t1[16];
	size_t			 i;

	/* 253 bytes: DNS labels of 63, dot-separated (a valid pool name). */
	for (i = 0; i < 253; i++)
		name[i] = (i % 64 == 63) ? '.' : 'p';
	name[253] = '\0';
	call(p, build("pool-0", "A", name, "A", 1), t0, t1);
	CHECK_EQ(notes(p, last, sizeof(last)), 1);
	fprintf(stderr, "note for a 253-byte pool name (%zu bytes): %s\n",
	    strlen(last), last);
	CHECK_CONTAINS(last, "ValidateQualifiedNames");
	notes_drop(p);
	free(p->last_pub);
	free(p);
}

static void
unbounded(void)
{
	struct kp_plugin	*p = plugin();
	char			 t0[16], t1[16];
	int			 i;

	for (i = 0; i < 100000; i++)
		call(p, build("pool-0", "A", "pool-1", "A", 1), t0, t1);
	fprintf(stderr, "notes queued after 100000 calls: %zu\n",
	    notes(p, NULL, 0));
	CHECK(notes(p, NULL, 0) <= 1024);
	notes_drop(p);
	free(p->last_pub);
	free(p);
}

int
main(void)
{
	last_state();
	long_name();
	unbounded();
	return (test_done("test_redteam_138_rules"));
}
