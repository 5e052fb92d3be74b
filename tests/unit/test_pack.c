/*
 * test_pack.c - pack_resources(): struct kp_resources -> Kpipc__Publish ->
 * a real IPC frame (ipc_send, ipc_recv with its checks) -> every field
 * compared with the source; the tree owns its memory, so changing the
 * caller's data after packing changes nothing in it.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "ipc/ipc.h"
#include "api/api.h"
#include "publisher/publisher.h"

static char	 model[16] = "A100";
static char	 version[16] = "1.2.3-rc.1";
static char	 dev0[16] = "gpu-0";
static char	 qty[16] = "80Gi";
static char	 rack[16] = "rack-1";
static char	 pool0[16] = "gpu";

static const char *rack_values[] = { rack, "rack-2" };
static const char *node_values[] = { "node-1" };

static struct kp_attribute attrs[] = {
	{ "example.com/model", KP_ATTR_STRING, 0, 0, model },
	{ "driverVersion", KP_ATTR_VERSION, 0, 0, version },
	{ "count", KP_ATTR_INT, INT64_MIN, 0, NULL },
	{ "zero", KP_ATTR_INT, 0, 0, NULL },
	{ "ecc", KP_ATTR_BOOL, 0, 7, NULL },
	{ "off", KP_ATTR_BOOL, 0, 0, NULL },
	{ "empty", KP_ATTR_STRING, 0, 0, "" },
};
static struct kp_capacity caps[] = {
	{ "memory", qty },
	{ "example.com/cores", "108" },
};
static struct kp_device devs[] = {
	{ dev0, attrs, 7, caps, 2 },
	{ "gpu-1", NULL, 0, caps + 1, 1 },
	{ "gpu-2", attrs + 2, 1, NULL, 0 },
};
static struct kp_slice slices[] = {
	{ devs, 2 },
	{ devs + 2, 1 },
	{ NULL, 0 },
};
static struct kp_node_selector_requirement exprs[] = {
	{ "example.com/rack", "In", rack_values, 2 },
	{ "example.com/gpu", "Exists", NULL, 0 },
};
static struct kp_node_selector_requirement fields[] = {
	{ "metadata.name", "NotIn", node_values, 1 },
};
static struct kp_node_selector sel = { exprs, 2, fields, 1 };
static struct kp_node_selector empty_sel = { NULL, 0, NULL, 0 };
static struct kp_pool pools[] = {
	{ pool0, 1, NULL, slices, 3 },
	{ "shared/a", INT64_MAX, &sel, slices + 1, 1 },
	{ "none", 0, &empty_sel, NULL, 0 },
};
static struct kp_resources res = { pools, 3 };

static int
str_eq(const char *a, const char *b)
{
	return (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void
cmp_requirements(Kpipc__SelectorRequirement **o, size_t n,
    const struct kp_node_selector_requirement *in, size_t n_in)
{
	size_t	 i, j;

	CHECK_EQ(n, n_in);
	for (i = 0; i < n && i < n_in; i++) {
		CHECK_STREQ(o[i]->key, in[i].key);
		CHECK_STREQ(o[i]->op, in[i].op);
		CHECK_EQ(o[i]->n_values, in[i].n_values);
		for (j = 0; j < o[i]->n_values && j < in[i].n_values; j++)
			CHECK_STREQ(o[i]->values[j], in[i].values[j]);
	}
}

static void
cmp_attribute(const Kpipc__Attribute *o, const struct kp_attribute *in)
{
	CHECK_STREQ(o->name, in->name);
	switch (in->type) {
	case KP_ATTR_INT:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_INT_VALUE);
		CHECK_EQ(o->int_value, in->int_value);
		break;
	case KP_ATTR_BOOL:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE);
		CHECK_EQ(o->bool_value, in->bool_value != 0);
		break;
	case KP_ATTR_STRING:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_STRING_VALUE);
		CHECK_STREQ(o->string_value, in->string_value);
		break;
	case KP_ATTR_VERSION:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE);
		CHECK_STREQ(o->version_value, in->string_value);
		break;
	}
}

static void
cmp_device(const Kpipc__Device *o, const struct kp_device *in)
{
	size_t	 i;

	CHECK_STREQ(o->name, in->name);
	CHECK_EQ(o->n_attributes, in->n_attributes);
	for (i = 0; i < o->n_attributes && i < in->n_attributes; i++)
		cmp_attribute(o->attributes[i], &in->attributes[i]);
	CHECK_EQ(o->n_capacities, in->n_capacities);
	for (i = 0; i < o->n_capacities && i < in->n_capacities; i++) {
		CHECK_STREQ(o->capacities[i]->name, in->capacities[i].name);
		CHECK_STREQ(o->capacities[i]->quantity,
		    in->capacities[i].quantity);
	}
}

/* Every field of the tree against the source. */
static void
cmp_tree(const Kpipc__Publish *p, const struct kp_resources *r)
{
	const Kpipc__Pool	*o;
	const struct kp_pool	*in;
	size_t			 i, j, k;

	CHECK_EQ(p->n_pools, r->n_pools);
	for (i = 0; i < p->n_pools && i < r->n_pools; i++) {
		o = p->pools[i];
		in = &r->pools[i];
		CHECK_STREQ(o->name, in->name);
		CHECK_EQ(o->generation, in->generation);
		CHECK_EQ(o->node_selector != NULL, in->node_selector != NULL);
		if (o->node_selector != NULL && in->node_selector != NULL) {
			cmp_requirements(o->node_selector->match_expressions,
			    o->node_selector->n_match_expressions,
			    in->node_selector->match_expressions,
			    in->node_selector->n_match_expressions);
			cmp_requirements(o->node_selector->match_fields,
			    o->node_selector->n_match_fields,
			    in->node_selector->match_fields,
			    in->node_selector->n_match_fields);
		}
		CHECK_EQ(o->n_slices, in->n_slices);
		for (j = 0; j < o->n_slices && j < in->n_slices; j++) {
			CHECK_EQ(o->slices[j]->n_devices,
			    in->slices[j].n_devices);
			for (k = 0; k < o->slices[j]->n_devices &&
			    k < in->slices[j].n_devices; k++)
				cmp_device(o->slices[j]->devices[k],
				    &in->slices[j].devices[k]);
		}
	}
}

/* Through a real frame: ipc_send, then ipc_recv (unpack and checks). */
static Kpipc__Msg *
round_trip(Kpipc__Publish *pub)
{
	struct ipc_chan	 tx, rx;
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Msg	*out = NULL;
	char		 err[KP_ERROR_SIZE] = "";
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		CHECK(0);
		return (NULL);
	}
	ipc_chan_init(&tx, sv[0], KP_IPC_MAX_FRAME);
	ipc_chan_init(&rx, sv[1], KP_IPC_MAX_FRAME);
	m.m_case = KPIPC__MSG__M_PUBLISH;
	m.publish = pub;
	CHECK_EQ(ipc_send(&tx, &m), 0);
	CHECK_EQ(ipc_recv(&rx, &out, 5000, err, sizeof(err)), 0);
	if (err[0] != '\0')
		fprintf(stderr, "ipc_recv: %s\n", err);
	ipc_chan_close(&tx);
	ipc_chan_close(&rx);
	CHECK(out != NULL && out->m_case == KPIPC__MSG__M_PUBLISH);
	return (out);
}

static void
test_round_trip(void)
{
	Kpipc__Publish	*pub = NULL;
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];

	CHECK_EQ(validate_resources(&res, err, sizeof(err)), 0);
	CHECK_EQ(pack_resources(&res, &pub), 0);
	if (pub == NULL)
		return;
	cmp_tree(pub, &res);
	CHECK(pub->pools[0]->node_selector == NULL);
	CHECK(pub->pools[2]->node_selector != NULL);
	if ((m = round_trip(pub)) != NULL) {
		cmp_tree(m->publish, &res);
		CHECK(m->publish->pools[0]->node_selector == NULL);
		CHECK(m->publish->pools[2]->node_selector != NULL);
		ipc_free(m);
	}

	/* The caller's data changes; the packed tree does not. */
	strcpy(model, "H100");
	strcpy(version, "2.0.0");
	strcpy(dev0, "gpu-9");
	strcpy(qty, "1Ki");
	strcpy(rack, "rack-9");
	strcpy(pool0, "other");
	attrs[2].int_value = 5;
	attrs[4].type = KP_ATTR_STRING;
	attrs[4].string_value = "x";
	devs[0].n_attributes = 1;
	pools[1].generation = 2;
	res.n_pools = 1;
	CHECK_EQ(pub->n_pools, 3);
	CHECK_STREQ(pub->pools[0]->name, "gpu");
	CHECK_EQ(pub->pools[1]->generation, INT64_MAX);
	CHECK_STREQ(pub->pools[1]->node_selector->match_expressions[0]->
	    values[0], "rack-1");
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->n_attributes, 7);
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->name, "gpu-0");
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->attributes[0]->
	    string_value, "A100");
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->attributes[1]->
	    version_value, "1.2.3-rc.1");
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[2]->
	    int_value, INT64_MIN);
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[4]->
	    value_case, KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE);
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[4]->
	    bool_value, 1);
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->capacities[0]->
	    quantity, "80Gi");
	CHECK(str_eq(pub->pools[1]->slices[0]->devices[0]->name, "gpu-2"));
	pack_free(pub);
}

static void
test_edges(void)
{
	struct kp_resources	 none = { NULL, 0 }, bad = { NULL, 1 };
	struct kp_capacity	 nullq[] = { { "memory", NULL } };
	struct kp_device	 d[] = { { "d", NULL, 0, nullq, 1 } };
	struct kp_device	 dl[] = { { "d", NULL, 2, NULL, 0 } };
	struct kp_slice		 s[] = { { d, 1 } };
	struct kp_pool		 p[] = { { "p", 0, NULL, s, 1 } };
	struct kp_resources	 r = { p, 1 };
	struct kp_attribute	 a[] = { { "a", (enum kp_attribute_type)9, 0,
	    0, NULL } };
	Kpipc__Publish		*pub = (Kpipc__Publish *)1;
	Kpipc__Msg		*m;

	CHECK_EQ(pack_resources(&none, &pub), 0);
	CHECK(pub != NULL && pub->n_pools == 0);
	if (pub != NULL && (m = round_trip(pub)) != NULL) {
		CHECK_EQ(m->publish->n_pools, 0);
		ipc_free(m);
	}
	pack_free(pub);
	pack_free(NULL);

	pub = (Kpipc__Publish *)1;
	CHECK_EQ(pack_resources(NULL, &pub), KP_EINVAL);
	CHECK(pub == NULL);
	CHECK_EQ(pack_resources(&none, NULL), KP_EINVAL);
	CHECK_EQ(pack_resources(&bad, &pub), KP_EINVAL);
	/* Failures deep in the tree free what was built (LSan checks). */
	CHECK_EQ(pack_resources(&r, &pub), KP_EINVAL);
	CHECK(pub == NULL);
	s[0].devices = dl;
	CHECK_EQ(pack_resources(&r, &pub), KP_EINVAL);
	dl[0].n_attributes = 1;
	dl[0].attributes = a;
	CHECK_EQ(pack_resources(&r, &pub), KP_EINVAL);
	a[0].type = KP_ATTR_VERSION;
	CHECK_EQ(pack_resources(&r, &pub), KP_EINVAL);
	a[0].type = KP_ATTR_INT;
	CHECK_EQ(pack_resources(&r, &pub), 0);
	pack_free(pub);
}

/* Many devices: more than one arena chunk, and a large frame. */
static void
test_large(void)
{
	static struct kp_device		 d[128];
	static struct kp_attribute	 a[128][32];
	static char			 names[128][32][16], dn[128][16];
	static struct kp_slice		 s[8];
	struct kp_pool			 p = { "big", 0, NULL, s, 8 };
	struct kp_resources		 r = { &p, 1 };
	Kpipc__Publish			*pub = NULL;
	char				 err[KP_ERROR_SIZE];
	size_t				 i, j;

	for (i = 0; i < 128; i++) {
		snprintf(dn[i], sizeof(dn[i]), "d%zu", i);
		d[i].name = dn[i];
		d[i].attributes = a[i];
		d[i].n_attributes = 32;
		for (j = 0; j < 32; j++) {
			snprintf(names[i][j], sizeof(names[i][j]), "a%zu", j);
			a[i][j] = (struct kp_attribute){ names[i][j],
			    KP_ATTR_STRING, 0, 0, "0123456789abcdef0123456789"
			    "abcdef0123456789abcdef0123456789abcdef" };
		}
	}
	for (i = 0; i < 8; i++)
		s[i] = (struct kp_slice){ d + i * 16, 16 };
	CHECK_EQ(validate_resources(&r, err, sizeof(err)), 0);
	CHECK_EQ(pack_resources(&r, &pub), 0);
	if (pub != NULL)
		cmp_tree(pub, &r);
	pack_free(pub);
}

int
main(void)
{
	test_round_trip();
	test_edges();
	test_large();
	return (test_done("test_pack"));
}
