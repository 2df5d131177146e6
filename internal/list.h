/* SPDX-License-Identifier: MIT */
/*
 * internal/list.h - circular doubly linked lists, as the kernel's list.h.
 */
#ifndef SP_INTERNAL_LIST_H
#define SP_INTERNAL_LIST_H

#include <stdbool.h>
#include "internal/compiler.h"

struct sp_list_head {
	struct sp_list_head *next, *prev;
};

#define SP_LIST_HEAD_INIT(name)	{ &(name), &(name) }

static inline void sp_list_init(struct sp_list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool sp_list_empty(const struct sp_list_head *h)
{
	return h->next == h;
}

static inline void __sp_list_add(struct sp_list_head *n,
				 struct sp_list_head *prev,
				 struct sp_list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Add at the head: the next sp_list_first() returns @n. */
static inline void sp_list_add(struct sp_list_head *n, struct sp_list_head *h)
{
	__sp_list_add(n, h, h->next);
}

static inline void sp_list_add_tail(struct sp_list_head *n,
				    struct sp_list_head *h)
{
	__sp_list_add(n, h->prev, h);
}

static inline void sp_list_del(struct sp_list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = e;
	e->prev = e;
}

static inline void sp_list_move(struct sp_list_head *e, struct sp_list_head *h)
{
	sp_list_del(e);
	sp_list_add(e, h);
}

#define sp_list_entry(ptr, type, member) sp_container_of(ptr, type, member)
#define sp_list_first_entry(h, type, member) sp_list_entry((h)->next, type, member)

#define sp_list_for_each_entry(pos, h, member)				\
	for (pos = sp_list_entry((h)->next, __typeof__(*pos), member);	\
	     &pos->member != (h);					\
	     pos = sp_list_entry(pos->member.next, __typeof__(*pos), member))

#define sp_list_for_each_entry_safe(pos, n, h, member)			\
	for (pos = sp_list_entry((h)->next, __typeof__(*pos), member),	\
	     n = sp_list_entry(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (h);					\
	     pos = n, n = sp_list_entry(n->member.next, __typeof__(*n), member))

#endif /* SP_INTERNAL_LIST_H */
