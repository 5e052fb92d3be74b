/*
 * fuzz_quantity.c - libFuzzer target for the grammars of validate.c: the
 * input, as a C string, goes to validate_quantity() and validate_semver()
 * and, inside a one-device ResourceSlice, to validate_resources() as a
 * quantity, a version, a string value, an attribute and a device name.
 * Invariants checked (abort on a breach):
 *  - a sign in front of a quantity that starts with a digit or '.' does
 *    not change the verdict (parseQuantityString handles one sign);
 *  - an accepted version stays accepted with "+b" appended when it has no
 *    build part;
 *  - validate_resources() agrees with validate_quantity() on a capacity,
 *    and its message is NUL-terminated and shorter than KP_ERROR_SIZE;
 *  - qty_cmp(), qty_sum_cmp() and qty_value() agree with each other on a
 *    valid quantity (check_arith()).
 * Run: ./tests/fuzz/fuzz_quantity -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/quantity.h"
#include "publisher/publisher.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_signs(const char *s, size_t n)
{
	char	*p;
	int	 r = validate_quantity(s);

	if (n == 0 || !((s[0] >= '0' && s[0] <= '9') || s[0] == '.'))
		return;
	if ((p = malloc(n + 2)) == NULL)
		return;
	memcpy(p + 1, s, n + 1);
	p[0] = '-';
	if (validate_quantity(p) != r)
		abort();
	p[0] = '+';
	if (validate_quantity(p) != r)
		abort();
	free(p);
}

static void
check_semver(const char *s, size_t n)
{
	char	*p;

	if (validate_semver(s) != 0 || strchr(s, '+') != NULL)
		return;
	if ((p = malloc(n + 3)) == NULL)
		return;
	memcpy(p, s, n);
	memcpy(p + n, "+b", 3);
	if (validate_semver(p) != 0)
		abort();
	free(p);
}

static void
check_resources(const char *s)
{
	struct kp_attribute	 a[2] = {
		KP_ATTR_VERSION("v", s),
		KP_ATTR_STRING(s, s) };
	struct kp_capacity	 c = KP_CAPACITY("q", s);
	struct kp_device	 d = { KP_DEVICE_INIT, .name = "dev",
	    .attributes = a, .capacities = &c, .n_capacities = 1 };
	struct kp_slice		 sl = { KP_SLICE_INIT, .devices = &d,
	    .n_devices = 1 };
	struct kp_pool		 p = { KP_POOL_INIT, .name = "pool",
	    .slices = &sl, .n_slices = 1 };
	struct kp_resources	 r = { KP_RESOURCES_INIT, .pools = &p,
	    .n_pools = 1 };
	char			 err[KP_ERROR_SIZE];
	int			 v;

	memset(err, 'x', sizeof(err));
	v = validate_resources(&r, err, sizeof(err));
	if ((v == 0) != (validate_quantity(s) == 0) ||
	    memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	d.n_attributes = 2;
	validate_resources(&r, err, sizeof(err));
	d.name = s;
	p.name = s;
	validate_resources(&r, err, sizeof(err));
}

/*
 * The arithmetic of requestPolicy checks (base/quantity.c) on a valid
 * quantity q: q == q; q + 0 == q; q + q compares with q as q's sign;
 * Value() has q's sign (it rounds away from zero).
 */
static void
check_arith(const char *q)
{
	int64_t	 v;
	int	 c, z, r;

	if (qty_cmp(q, q, &c) != 0)
		return;		/* not a quantity */
	if (c != 0 || qty_cmp(q, "0", &z) != 0)
		__builtin_trap();
	if ((r = qty_sum_cmp(q, "0", q, &c)) != 0 || c != 0)
		__builtin_trap();
	if ((r = qty_sum_cmp(q, q, q, &c)) == 0 && c != z)
		__builtin_trap();
	if (r != 0 && r != KP_ENOTSUP)
		__builtin_trap();
	if (qty_value(q, &v) == 0 && (v > 0) - (v < 0) != z)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s;
	size_t	 n;

	if ((s = malloc(size + 1)) == NULL)
		return (0);
	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);
	check_signs(s, n);
	check_semver(s, n);
	check_resources(s);
	check_arith(s);
	free(s);
	return (0);
}
