/*
 * quantity.h - Kubernetes quantities by value (quantity.c): the publisher
 * compares stored slices with them, the driver process checks
 * requestPolicy ranges. Exact decimals, the API server's grammar.
 */
#ifndef KP_QUANTITY_H
#define KP_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "kubeletplugin.h"

#define QTY_CANON_MAX	128	/* canonical quantity, NUL included */

int	qty_canon(const char *, char *, size_t);
int	qty_equal(const char *, const char *);
int	qty_cmp(const char *, const char *, int *);
int	qty_sum_cmp(const char *, const char *, const char *, int *);
int	qty_value(const char *, int64_t *);
int	qty_value_scaled(const char *, int, int64_t *);

#endif /* KP_QUANTITY_H */
