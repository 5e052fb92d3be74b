/*
 * kp_slicectl - runs the ResourceSlice controller (publisher/slices*.c)
 * against an API server, for tests/e2e/slices.test.js.
 *
 *   kp_slicectl --kubeconfig F --driver D --node N [--node-uid U]
 *       [--version v1|v1beta2|v1beta1] [--sync-delay-ms MS] [--qps Q]
 *       [--burst B] [--reconcile-pool P] [-v N]
 *
 * Without --version the version comes from discovery. Prints "version V"
 * and "started", then reads commands from stdin, one per line:
 *   publish FILE   desired resources as JSON (below): "published" or
 *                  "error <msg>"
 *   stats          "stats creates=C updates=U deletes=D pending=P
 *                  synced=0|1 last_error=<text>"
 *   stop           stops the controller: "stopped", exit 0
 * End of input is "stop".
 *
 * FILE: {"pools": [{"name": "p", "generation": 0, "nodeSelector":
 * {"matchExpressions": [{"key", "operator", "values"}], "matchFields": []},
 * "slices": [{"devices": [{"name": "d", "attributes": {"a": {"int": 1} |
 * {"bool": true} | {"string": "s"} | {"version": "1.0.0"}},
 * "capacity": {"c": "80Gi"}}]}]}]}
 * plus, in the v1 JSON shape: device "taints" [{"key", "value",
 * "effect", "timeAdded" (Unix seconds)}], "consumesCounters" [{"counterSet",
 * "counters": {"n": "q"}}], "bindsToNode", "bindingConditions",
 * "bindingFailureConditions", "allowMultipleAllocations", capacity
 * {"c": {"value": "q", "requestPolicy": {...}}} (v1 shape), attributes
 * {"ints": [..]} / {"strings": [..]}; slice "sharedCounters" [{"name",
 * "counters": {"n": "q"}}], "perDeviceNodeSelection"; pool "allNodes".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "publisher/publisher.h"

static void
usage(void)
{
	fprintf(stderr, "usage: kp_slicectl --kubeconfig F --driver D "
	    "--node N [--node-uid U] [--version V] [--sync-delay-ms MS] "
	    "[--qps Q] [--burst B] [--reconcile-pool P] [-v N]\n");
	exit(2);
}

static char *
str(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return (strdup(s != NULL ? s : ""));
}

static void *
xcalloc(size_t n, size_t size)
{
	void	*p = calloc(n > 0 ? n : 1, size);

	if (p == NULL) {
		fprintf(stderr, "kp_slicectl: out of memory\n");
		exit(1);
	}
	return (p);
}

static Kpipc__SelectorRequirement **
requirements(const json_t *a, size_t *n)
{
	Kpipc__SelectorRequirement	**v, *r;
	json_t				 *x, *s;
	size_t				  i, j;

	*n = json_array_size(a);
	v = xcalloc(*n, sizeof(*v));
	json_array_foreach(a, i, x) {
		r = xcalloc(1, sizeof(*r));
		kpipc__selector_requirement__init(r);
		r->key = str(x, "key");
		r->op = str(x, "operator");
		r->n_values = json_array_size(json_object_get(x, "values"));
		r->values = xcalloc(r->n_values, sizeof(char *));
		json_array_foreach(json_object_get(x, "values"), j, s)
			r->values[j] = strdup(json_string_value(s) ?
			    json_string_value(s) : "");
		v[i] = r;
	}
	return (v);
}

static char **
strings(const json_t *a, size_t *n)
{
	char	**v;
	json_t	 *x;
	size_t	  i;

	*n = json_array_size(a);
	v = xcalloc(*n, sizeof(*v));
	json_array_foreach(a, i, x)
		v[i] = strdup(json_string_value(x) ? json_string_value(x) :
		    "");
	return (v);
}

static Kpipc__Counter **
counters(const json_t *m, size_t *n)
{
	Kpipc__Counter	**v;
	json_t		 *x;
	const char	 *k;

	*n = 0;
	v = xcalloc(json_object_size(m), sizeof(*v));
	json_object_foreach((json_t *)m, k, x) {
		v[*n] = xcalloc(1, sizeof(**v));
		kpipc__counter__init(v[*n]);
		v[*n]->name = strdup(k);
		v[*n]->quantity = strdup(json_is_string(x) ?
		    json_string_value(x) : "0");
		(*n)++;
	}
	return (v);
}

static int32_t
effect(const char *e)
{
	if (strcmp(e, "None") == 0)
		return (KP_TAINT_NONE);
	if (strcmp(e, "NoSchedule") == 0)
		return (KP_TAINT_NO_SCHEDULE);
	return (KP_TAINT_NO_EXECUTE);
}

/* The fields of 1.33+ (see the header comment). */
static void
device_more(Kpipc__Device *dev, const json_t *d)
{
	json_t	*x, *a;
	size_t	 i;

	a = json_object_get(d, "taints");
	dev->n_taints = json_array_size(a);
	dev->taints = xcalloc(dev->n_taints, sizeof(*dev->taints));
	json_array_foreach(a, i, x) {
		Kpipc__Taint *t = xcalloc(1, sizeof(*t));

		kpipc__taint__init(t);
		t->key = str(x, "key");
		t->value = str(x, "value");
		t->effect = effect(json_string_value(json_object_get(x,
		    "effect")) ? json_string_value(json_object_get(x,
		    "effect")) : "");
		t->time_added = json_integer_value(json_object_get(x,
		    "timeAdded"));
		dev->taints[i] = t;
	}
	a = json_object_get(d, "consumesCounters");
	dev->n_consumes_counters = json_array_size(a);
	dev->consumes_counters = xcalloc(dev->n_consumes_counters,
	    sizeof(*dev->consumes_counters));
	json_array_foreach(a, i, x) {
		Kpipc__CounterConsumption *c = xcalloc(1, sizeof(*c));

		kpipc__counter_consumption__init(c);
		c->counter_set = str(x, "counterSet");
		c->counters = counters(json_object_get(x, "counters"),
		    &c->n_counters);
		dev->consumes_counters[i] = c;
	}
	dev->binds_to_node = json_is_true(json_object_get(d, "bindsToNode"));
	dev->binding_conditions = strings(json_object_get(d,
	    "bindingConditions"), &dev->n_binding_conditions);
	dev->binding_failure_conditions = strings(json_object_get(d,
	    "bindingFailureConditions"), &dev->n_binding_failure_conditions);
	dev->allow_multiple_allocations = json_is_true(json_object_get(d,
	    "allowMultipleAllocations"));
}

/* A requestPolicy in v1 JSON ({"default", "validValues", "validRange":
 * {"min", "max", "step"}}); NULL when absent. */
static Kpipc__RequestPolicy *
policy(const json_t *j)
{
	Kpipc__RequestPolicy	*p;
	const json_t		*r;

	if (!json_is_object(j))
		return (NULL);
	p = xcalloc(1, sizeof(*p));
	kpipc__request_policy__init(p);
	p->default_value = str(j, "default");
	p->valid_values = strings(json_object_get(j, "validValues"),
	    &p->n_valid_values);
	if ((r = json_object_get(j, "validRange")) != NULL) {
		p->has_range = 1;
		p->range_min = str(r, "min");
		p->range_max = str(r, "max");
		p->range_step = str(r, "step");
	}
	return (p);
}

static Kpipc__Device *
device(const json_t *d)
{
	Kpipc__Device	*dev;
	Kpipc__Attribute *a;
	Kpipc__Capacity	*c;
	json_t		*x, *attrs, *caps;
	const char	*k;
	size_t		 i = 0;

	dev = xcalloc(1, sizeof(*dev));
	kpipc__device__init(dev);
	dev->name = str(d, "name");
	attrs = json_object_get(d, "attributes");
	dev->attributes = xcalloc(json_object_size(attrs), sizeof(a));
	json_object_foreach(attrs, k, x) {
		a = xcalloc(1, sizeof(*a));
		kpipc__attribute__init(a);
		a->name = strdup(k);
		if (json_object_get(x, "int") != NULL) {
			a->value_case = KPIPC__ATTRIBUTE__VALUE_INT_VALUE;
			a->int_value = json_integer_value(json_object_get(x,
			    "int"));
		} else if (json_object_get(x, "bool") != NULL) {
			a->value_case = KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE;
			a->bool_value = json_is_true(json_object_get(x,
			    "bool"));
		} else if (json_object_get(x, "version") != NULL) {
			a->value_case = KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE;
			a->version_value = str(x, "version");
		} else if (json_object_get(x, "ints") != NULL) {
			json_t	*v;
			size_t	 j;

			a->value_case = KPIPC__ATTRIBUTE__VALUE_INTS;
			a->ints = xcalloc(1, sizeof(*a->ints));
			kpipc__int_list__init(a->ints);
			a->ints->n_values = json_array_size(json_object_get(x,
			    "ints"));
			a->ints->values = xcalloc(a->ints->n_values,
			    sizeof(int64_t));
			json_array_foreach(json_object_get(x, "ints"), j, v)
				a->ints->values[j] = json_integer_value(v);
		} else if (json_object_get(x, "strings") != NULL) {
			a->value_case = KPIPC__ATTRIBUTE__VALUE_STRINGS;
			a->strings = xcalloc(1, sizeof(*a->strings));
			kpipc__string_list__init(a->strings);
			a->strings->values = strings(json_object_get(x,
			    "strings"), &a->strings->n_values);
		} else {
			a->value_case = KPIPC__ATTRIBUTE__VALUE_STRING_VALUE;
			a->string_value = str(x, "string");
		}
		dev->attributes[dev->n_attributes++] = a;
	}
	caps = json_object_get(d, "capacity");
	dev->capacities = xcalloc(json_object_size(caps), sizeof(c));
	json_object_foreach(caps, k, x) {
		c = xcalloc(1, sizeof(*c));
		kpipc__capacity__init(c);
		c->name = strdup(k);
		if (json_is_object(x)) {	/* {"value", "requestPolicy"} */
			c->quantity = str(x, "value");
			c->request_policy = policy(json_object_get(x,
			    "requestPolicy"));
		} else
			c->quantity = strdup(json_is_string(x) ?
			    json_string_value(x) : "0");
		dev->capacities[dev->n_capacities++] = c;
	}
	(void)i;
	device_more(dev, d);
	return (dev);
}

/* The JSON description -> a Publish message (free_unpacked frees it). */
static Kpipc__Publish *
publish_from(const json_t *root)
{
	Kpipc__Publish	*m;
	Kpipc__Pool	*p;
	Kpipc__Slice	*s;
	json_t		*pj, *sj, *dj, *sel, *slices, *devs;
	size_t		 i, j, k;

	m = xcalloc(1, sizeof(*m));
	kpipc__publish__init(m);
	m->n_pools = json_array_size(json_object_get(root, "pools"));
	m->pools = xcalloc(m->n_pools, sizeof(*m->pools));
	json_array_foreach(json_object_get(root, "pools"), i, pj) {
		p = xcalloc(1, sizeof(*p));
		kpipc__pool__init(p);
		p->name = str(pj, "name");
		p->generation = json_integer_value(json_object_get(pj,
		    "generation"));
		p->all_nodes = json_is_true(json_object_get(pj, "allNodes"));
		if ((sel = json_object_get(pj, "nodeSelector")) != NULL) {
			p->node_selector = xcalloc(1,
			    sizeof(*p->node_selector));
			kpipc__node_selector__init(p->node_selector);
			p->node_selector->match_expressions = requirements(
			    json_object_get(sel, "matchExpressions"),
			    &p->node_selector->n_match_expressions);
			p->node_selector->match_fields = requirements(
			    json_object_get(sel, "matchFields"),
			    &p->node_selector->n_match_fields);
		}
		slices = json_object_get(pj, "slices");
		p->n_slices = json_array_size(slices);
		p->slices = xcalloc(p->n_slices, sizeof(*p->slices));
		json_array_foreach(slices, j, sj) {
			s = xcalloc(1, sizeof(*s));
			kpipc__slice__init(s);
			devs = json_object_get(sj, "devices");
			s->n_devices = json_array_size(devs);
			s->devices = xcalloc(s->n_devices, sizeof(*s->devices));
			json_array_foreach(devs, k, dj)
				s->devices[k] = device(dj);
			s->per_device_node_selection = json_is_true(
			    json_object_get(sj, "perDeviceNodeSelection"));
			devs = json_object_get(sj, "sharedCounters");
			s->n_shared_counters = json_array_size(devs);
			s->shared_counters = xcalloc(s->n_shared_counters,
			    sizeof(*s->shared_counters));
			json_array_foreach(devs, k, dj) {
				Kpipc__CounterSet *cs = xcalloc(1,
				    sizeof(*cs));

				kpipc__counter_set__init(cs);
				cs->name = str(dj, "name");
				cs->counters = counters(json_object_get(dj,
				    "counters"), &cs->n_counters);
				s->shared_counters[k] = cs;
			}
			p->slices[j] = s;
		}
		m->pools[i] = p;
	}
	return (m);
}

static void
cmd_publish(struct slice_ctl *ctl, const char *file)
{
	Kpipc__Publish	*m;
	json_error_t	 je;
	json_t		*root;
	int		 rc;

	if ((root = json_load_file(file, 0, &je)) == NULL) {
		printf("error %s: %s\n", file, je.text);
		return;
	}
	m = publish_from(root);
	json_decref(root);
	rc = slice_ctl_update(ctl, m);
	kpipc__publish__free_unpacked(m, NULL);
	if (rc != 0)
		printf("error %s\n", kp_strerror(rc));
	else
		printf("published\n");
}

static void
cmd_stats(struct slice_ctl *ctl)
{
	struct slice_stats	st;

	slice_ctl_stats(ctl, &st);
	printf("stats creates=%llu updates=%llu deletes=%llu pending=%d "
	    "synced=%d last_error=%s\n", (unsigned long long)st.creates,
	    (unsigned long long)st.updates, (unsigned long long)st.deletes,
	    st.pending_pools, st.last_sync != 0, st.last_error);
}

static int
parse_version(const char *s, enum kube_version *v)
{
	if (strcmp(s, "v1") == 0)
		*v = KUBE_V1;
	else if (strcmp(s, "v1beta2") == 0)
		*v = KUBE_V1BETA2;
	else if (strcmp(s, "v1beta1") == 0)
		*v = KUBE_V1BETA1;
	else
		return (-1);
	return (0);
}

int
main(int argc, char **argv)
{
	struct kube_config	 kc;
	struct http_client	*http = NULL;
	struct slice_ctl_config	 sc;
	struct slice_ctl	*ctl = NULL;
	enum kube_version	 ver = KUBE_V1;
	const char		*kubeconfig = NULL, *version = NULL;
	char			 err[KP_ERROR_SIZE], line[4096];
	double			 qps = 0;
	int			 burst = 0, verbosity = 0, i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sc, 0, sizeof(sc));
	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--kubeconfig") == 0)
			kubeconfig = argv[i + 1];
		else if (strcmp(argv[i], "--driver") == 0)
			sc.driver = argv[i + 1];
		else if (strcmp(argv[i], "--node") == 0)
			sc.node = argv[i + 1];
		else if (strcmp(argv[i], "--node-uid") == 0)
			sc.node_uid = argv[i + 1];
		else if (strcmp(argv[i], "--version") == 0)
			version = argv[i + 1];
		else if (strcmp(argv[i], "--sync-delay-ms") == 0)
			sc.sync_delay_ms = (int)strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--reconcile-pool") == 0)
			sc.reconcile_pool = argv[i + 1];
		else if (strcmp(argv[i], "--qps") == 0)
			qps = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--burst") == 0)
			burst = (int)strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-v") == 0)
			verbosity = (int)strtol(argv[i + 1], NULL, 10);
		else
			usage();
	}
	if (kubeconfig == NULL || (version != NULL &&
	    parse_version(version, &ver) != 0))
		usage();
	log_init(verbosity, NULL, NULL);
	log_procinit("slicectl");
	if (kcfg_kubeconfig(&kc, kubeconfig, NULL, err, sizeof(err)) != 0) {
		printf("load-error %s\n", err);
		return (1);
	}
	if (http_global_init() != 0 ||
	    http_client_new(&kc, qps, burst, &http) != 0) {
		printf("load-error http client\n");
		kcfg_free(&kc);
		return (1);
	}
	rc = 1;
	if (version == NULL && disc_resource_version(http, &ver, err,
	    sizeof(err)) != 0) {
		printf("load-error discovery: %s\n", err);
		goto out;
	}
	printf("version %s\n", ver == KUBE_V1 ? "v1" :
	    ver == KUBE_V1BETA2 ? "v1beta2" : "v1beta1");
	sc.http = http;
	sc.version = ver;
	if ((rc = slice_ctl_start(&sc, &ctl)) != 0) {
		printf("load-error start: %s\n", kp_strerror(rc));
		rc = 1;
		goto out;
	}
	printf("started\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, "publish ", 8) == 0)
			cmd_publish(ctl, line + 8);
		else if (strcmp(line, "stats") == 0)
			cmd_stats(ctl);
		else if (strcmp(line, "stop") == 0)
			break;
		else if (line[0] != '\0')
			printf("error unknown command\n");
	}
	slice_ctl_stop(ctl);
	printf("stopped\n");
	rc = 0;
out:
	http_client_free(http);
	http_global_cleanup();
	kcfg_free(&kc);
	return (rc);
}
