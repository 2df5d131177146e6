/* SPDX-License-Identifier: MIT */
/*
 * internal/rculist.h - list operations safe against concurrent readers, as
 * the kernel's rculist.h, for struct sp_list_head.
 *
 * Writers still serialise among themselves with a lock; readers walk the
 * list with no lock while the writers add and remove entries.  Only the
 * memory ordering lives here: which RCU flavour protects the readers (and
 * when an entry removed with sp_list_del_rcu() may be freed) is the
 * caller's business, so any layer may include this without knowing liburcu.
 */
#ifndef SP_INTERNAL_RCULIST_H
#define SP_INTERNAL_RCULIST_H

#include "internal/list.h"

/*
 * sp_list_add_tail_rcu() - add @n before @h.  @n is fully linked before it
 * is published: the store that makes it reachable is a release, so a reader
 * that loads the pointer (acquire) sees its links and everything the writer
 * wrote into the entry before.
 */
static inline void sp_list_add_tail_rcu(struct sp_list_head *n,
					struct sp_list_head *h)
{
	struct sp_list_head *prev = h->prev;

	n->next = h;
	n->prev = prev;
	__atomic_store_n(&prev->next, n, __ATOMIC_RELEASE);
	h->prev = n;
}

/*
 * sp_list_del_rcu() - unlink @e.  Its own next pointer is left as it was, so
 * a reader standing on @e walks on to the rest of the list; @e may be freed
 * only after every reader that could have seen it is done (a grace period).
 */
static inline void sp_list_del_rcu(struct sp_list_head *e)
{
	e->next->prev = e->prev;
	__atomic_store_n(&e->prev->next, e->next, __ATOMIC_RELEASE);
	e->prev = NULL;
}

/* Walk the entries of @h under a read-side critical section. */
#define sp_list_for_each_entry_rcu(pos, h, member)			\
	for (struct sp_list_head *pos##_it_ =				\
		     __atomic_load_n(&(h)->next, __ATOMIC_ACQUIRE);	\
	     pos##_it_ != (h) &&					\
	     ((pos = sp_list_entry(pos##_it_, __typeof__(*pos), member)), 1); \
	     pos##_it_ = __atomic_load_n(&pos##_it_->next, __ATOMIC_ACQUIRE))

#endif /* SP_INTERNAL_RCULIST_H */
