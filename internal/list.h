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
#define sp_list_first_entry(h, type, member) \
	sp_list_entry((h)->next, type, member)

/*
 * Iterators walk list nodes and convert to the entry only for real entries,
 * never for the head (which is not inside an entry and may be less aligned
 * than one: computing an entry from it is undefined behaviour).
 */
#define sp_list_for_each_entry(pos, h, member)				\
	for (struct sp_list_head *pos##_it_ = (h)->next;		\
	     pos##_it_ != (h) &&					\
	     ((pos = sp_list_entry(pos##_it_, __typeof__(*pos), member)), 1); \
	     pos##_it_ = pos##_it_->next)

/* As above; the current entry may be removed from the list in the body. */
#define sp_list_for_each_entry_safe(pos, h, member)			\
	for (struct sp_list_head *pos##_it_ = (h)->next,		\
	     *pos##_nx_ = pos##_it_->next;				\
	     pos##_it_ != (h) &&					\
	     ((pos = sp_list_entry(pos##_it_, __typeof__(*pos), member)), 1); \
	     pos##_it_ = pos##_nx_, pos##_nx_ = pos##_it_->next)

#endif /* SP_INTERNAL_LIST_H */
