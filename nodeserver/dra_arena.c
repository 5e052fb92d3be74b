/*
 * dra_arena.c - memory of one DRA call that is freed all at once: the
 * decoded request (protobuf-c's unpack allocates the message, each claim
 * and each of its strings) and the devices the hook adds. A large call
 * made hundreds of malloc and free calls; here they come from a few
 * chunks, each at least twice the one before.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "nodeserver/dra.h"

struct dra_arena_chunk {
	struct dra_arena_chunk	*next;
	size_t			 size;		/* bytes in data */
	size_t			 used;
	max_align_t		 data[];
};

/* A new chunk of at least size bytes at the head. */
int
dra_arena_grow(struct dra_arena_chunk **head, size_t size)
{
	struct dra_arena_chunk	*c = *head;

	if (c != NULL && c->size < SIZE_MAX / 4 && size < 2 * c->size)
		size = 2 * c->size;
	if (size > SIZE_MAX - sizeof(*c) ||
	    (c = malloc(sizeof(*c) + size)) == NULL)
		return (KP_ENOMEM);
	c->next = *head;
	c->size = size;
	c->used = 0;
	*head = c;
	return (0);
}

/* n bytes, aligned for any type; head_p is a struct dra_arena_chunk **
 * (the shape of protobuf-c's ProtobufCAllocator.alloc). */
void *
dra_arena_alloc(void *head_p, size_t n)
{
	struct dra_arena_chunk	**head = head_p;
	size_t			  a = (n + 15) & ~(size_t)15;
	void			 *p;

	if (a < n)
		return (NULL);
	if ((*head == NULL || (*head)->size - (*head)->used < a) &&
	    dra_arena_grow(head, a < 1024 ? 1024 : a) != 0)
		return (NULL);
	p = (char *)(*head)->data + (*head)->used;
	(*head)->used += a;
	return (p);
}

void
dra_arena_free(struct dra_arena_chunk *c)
{
	struct dra_arena_chunk	*next;

	for (; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
}
