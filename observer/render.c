/*
 * render.c - what each request gets, from the latest snapshot: the
 * routing of the request line libmicrohttpd parsed (the untrusted part,
 * fuzzed by tests/fuzz/fuzz_http.c) and the Prometheus text format of the
 * metrics (text exposition format 0.0.4: HELP and TYPE lines, label
 * values with \\, \" and \n escaped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observer/observer.h"

/* A metric or label name: [a-zA-Z_:][a-zA-Z0-9_:]*, else skipped. */
static int
name_ok(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || strlen(s) > 128 || (s[0] >= '0' && s[0] <= '9'))
		return (0);
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == ':'))
			return (0);
	return (1);
}

/* HELP text escapes \ and newline; label values also ". */
static void
put_escaped(FILE *b, const char *s, int quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			fputs("\\\\", b);
		else if (*s == '\n')
			fputs("\\n", b);
		else if (quote && *s == '"')
			fputs("\\\"", b);
		else
			fputc(*s, b);
	}
}

static void
put_value(FILE *b, double v)
{
	char	 num[64];

	if (isnan(v))
		snprintf(num, sizeof(num), "NaN");
	else if (isinf(v))
		snprintf(num, sizeof(num), v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(num, sizeof(num), "%.0f", v);
	else
		snprintf(num, sizeof(num), "%.9g", v);
	fputs(num, b);
}

static int
type_ok(const char *t)
{
	return (strcmp(t, "counter") == 0 || strcmp(t, "gauge") == 0 ||
	    strcmp(t, "histogram") == 0);
}

static void
put_sample(FILE *b, const Kpipc__Family *f, const Kpipc__Sample *s)
{
	size_t	 i;
	int	 first = 1;

	if (strcmp(s->suffix, "") != 0 && strcmp(s->suffix, "_bucket") != 0 &&
	    strcmp(s->suffix, "_sum") != 0 && strcmp(s->suffix, "_count") != 0)
		return;
	if (s->n_labels % 2 != 0)
		return;
	for (i = 0; i < s->n_labels; i += 2)
		if (!name_ok(s->labels[i]))
			return;
	fputs(f->name, b);
	fputs(s->suffix, b);
	for (i = 0; i < s->n_labels; i += 2) {
		fputs(first ? "{" : ",", b);
		first = 0;
		fputs(s->labels[i], b);
		fputs("=\"", b);
		put_escaped(b, s->labels[i + 1], 1);
		fputs("\"", b);
	}
	if (!first)
		fputs("}", b);
	fputs(" ", b);
	put_value(b, s->value);
	fputs("\n", b);
}

/* The text page of st; *out is allocated (free it). KP_ENOMEM when it
 * would exceed OBS_MAX_BODY or memory ran out. */
int
obs_render_metrics(const Kpipc__Status *st, char **out, size_t *len)
{
	FILE	*b;
	char	*p = NULL;
	size_t	 n = 0, i, j;
	int	 bad;

	if ((b = open_memstream(&p, &n)) == NULL)
		return (KP_ENOMEM);
	for (i = 0; i < st->n_families; i++) {
		const Kpipc__Family *f = st->families[i];

		if (!name_ok(f->name) || !type_ok(f->type))
			continue;
		fprintf(b, "# HELP %s ", f->name);
		put_escaped(b, f->help, 0);
		fprintf(b, "\n# TYPE %s %s\n", f->name, f->type);
		for (j = 0; j < f->n_samples; j++)
			put_sample(b, f, f->samples[j]);
	}
	bad = ferror(b);
	if (fclose(b) != 0 || bad || n > OBS_MAX_BODY) {
		free(p);
		return (KP_ENOMEM);
	}
	*out = p;
	*len = n;
	return (0);
}

/* One line of at most size bytes, without control characters. */
static void
one_line(char *dst, size_t size, const char *src)
{
	size_t	 i;

	snprintf(dst, size, "%s", src);
	for (i = 0; dst[i] != '\0'; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = ' ';
}

/* Take the snapshot st, received at now_ms. */
int
obs_state_update(struct obs_state *s, const Kpipc__Status *st,
    int64_t now_ms)
{
	char	*page = NULL;
	size_t	 len = 0;
	int	 r;

	if ((r = obs_render_metrics(st, &page, &len)) != 0)
		return (r);
	free(s->metrics);
	s->metrics = page;
	s->metrics_len = len;
	s->have = 1;
	s->at_ms = now_ms;
	s->live = st->live;
	s->ready = st->ready;
	one_line(s->live_reason, sizeof(s->live_reason), st->live_reason);
	one_line(s->ready_reason, sizeof(s->ready_reason), st->ready_reason);
	return (0);
}

void
obs_state_free(struct obs_state *s)
{
	free(s->metrics);
	s->metrics = NULL;
}

/* A one-line answer: text and a newline. */
static void
reply_line(struct obs_reply *r, unsigned status, const char *text)
{
	r->status = status;
	r->type = "text/plain; charset=utf-8";
	snprintf(r->line, sizeof(r->line), "%s\n", text);
	r->body = r->line;
	r->len = strlen(r->line);
}

/* A health answer: 200 "ok", or 503 and the reason. */
static void
health(const struct obs_state *s, int ok, const char *reason, int64_t now_ms,
    struct obs_reply *r)
{
	char	 why[128];

	if (!s->have) {
		reply_line(r, 503, "no status from the supervisor "
		    "yet");
		return;
	}
	if (now_ms - s->at_ms > OBS_STALE_MS) {
		snprintf(why, sizeof(why), "the supervisor has not reported "
		    "for %lld s", (long long)((now_ms - s->at_ms) / 1000));
		reply_line(r, 503, why);
		return;
	}
	if (ok)
		reply_line(r, 200, "ok");
	else
		reply_line(r, 503, reason[0] ? reason : "not healthy");
}

/*
 * What method on url (as libmicrohttpd parsed them: any bytes, NUL-
 * terminated) gets at now_ms. Only GET and HEAD of the three paths; HEAD
 * gets the headers of GET (libmicrohttpd drops the body).
 */
void
obs_route(const struct obs_state *s, const char *method, const char *url,
    int64_t now_ms, struct obs_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (method == NULL || url == NULL) {
		reply_line(r, 400, "bad request");
		return;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		reply_line(r, 405, "only GET and HEAD");
		return;
	}
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0)
		health(s, s->live, s->live_reason, now_ms, r);
	else if (strcmp(url, "/readyz") == 0)
		health(s, s->live && s->ready, !s->live ? s->live_reason :
		    s->ready_reason, now_ms, r);
	else if (strcmp(url, "/metrics") == 0) {
		if (s->metrics == NULL) {
			reply_line(r, 503, "no status from the "
			    "supervisor yet");
			return;
		}
		r->status = 200;
		r->type = "text/plain; version=0.0.4; charset=utf-8";
		r->body = s->metrics;
		r->len = s->metrics_len;
	} else
		reply_line(r, 404, "not found: try /healthz, /readyz "
		    "or /metrics");
}
