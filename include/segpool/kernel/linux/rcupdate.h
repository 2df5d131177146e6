/* SPDX-License-Identifier: MIT */
/*
 * <linux/rcupdate.h> - segpool's kernel overlay: RCU readers, grace
 * periods and kfree_rcu(), on segpool's RCU (liburcu's urcu-memb flavour,
 * segpool/rcu.h).
 *
 * Unlike the kernel, a thread must be registered before its first
 * rcu_read_lock(): rcu_register_thread() (liburcu's name; segpool
 * registers on demand only the threads it uses itself).  A program that
 * calls these links liburcu-memb (pkg-config segpool-kernel does).
 */
#ifndef SEGPOOL_KERNEL_LINUX_RCUPDATE_H
#define SEGPOOL_KERNEL_LINUX_RCUPDATE_H

#include <stddef.h>

#include <linux/compiler.h>
#include <linux/types.h>

#include <segpool/rcu.h>
#include <segpool/slab.h>

#ifndef rcu_register_thread
/* rcu_register_thread() - make the calling thread an RCU reader. */
static inline void rcu_register_thread(void)
{
	(void)segpool_rcu_register_thread();
}
#endif
#ifndef rcu_unregister_thread
static inline void rcu_unregister_thread(void)
{
	(void)segpool_rcu_unregister_thread();
}
#endif

#ifndef rcu_read_lock
static __always_inline void rcu_read_lock(void)
{
	segpool_rcu_read_lock();
}
#endif
#ifndef rcu_read_unlock
static __always_inline void rcu_read_unlock(void)
{
	segpool_rcu_read_unlock();
}
#endif
#ifndef synchronize_rcu
static inline void synchronize_rcu(void)
{
	segpool_synchronize_rcu();
}
#endif
#ifndef rcu_barrier
/* rcu_barrier() - every kfree_rcu() queued before it has been freed. */
static inline void rcu_barrier(void)
{
	(void)segpool_rcu_barrier();
}
#endif

/* Pointers published to readers: release on store, acquire on load. */
#ifndef rcu_dereference
#define rcu_dereference(p)		__atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#endif
#define rcu_dereference_check(p, c)	rcu_dereference(p)
#define rcu_dereference_protected(p, c)	((void)(c), (p))
#define rcu_dereference_raw(p)		rcu_dereference(p)
#define rcu_access_pointer(p)		__atomic_load_n(&(p), __ATOMIC_RELAXED)
#ifndef rcu_assign_pointer
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#endif
#define RCU_INIT_POINTER(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define rcu_replace_pointer(rcu_ptr, ptr, c) ({				\
	__typeof__(ptr) __rcu_old = rcu_dereference_protected(rcu_ptr, c); \
	rcu_assign_pointer(rcu_ptr, ptr);				\
	__rcu_old; })

_Static_assert(sizeof(struct rcu_head) == sizeof(struct segpool_rcu_head),
	       "struct rcu_head is segpool's two-word head");

/*
 * kvfree_rcu(ptr, rhf) - free @ptr (any segpool memory: kmalloc'ed or a
 * cache object) after a grace period; never fails, never sleeps.  @rhf
 * names the object's rcu_head, which must lie in its first 4096 bytes as
 * in the kernel; segpool writes it only when no memory is left for its
 * batches.  NULL is a no-op.
 */
#define kvfree_rcu(ptr, rhf) do {					\
	__typeof__(ptr) ___p = (ptr);					\
	_Static_assert(offsetof(__typeof__(*(ptr)), rhf) < 4096,	\
		       "kvfree_rcu(): the rcu_head is too far in");	\
	if (___p)							\
		segpool_free_rcu_head((void *)___p,			\
			(struct segpool_rcu_head *)(void *)&___p->rhf);	\
} while (0)
#define kfree_rcu(ptr, rhf)		kvfree_rcu(ptr, rhf)

/*
 * kvfree_rcu_mightsleep(ptr) - the head-less form: when no memory is left
 * for a batch it waits for the grace period in place (outside a read-side
 * section).
 */
#define kvfree_rcu_mightsleep(ptr)	((void)segpool_free_rcu((void *)(ptr)))
#define kfree_rcu_mightsleep(ptr)	kvfree_rcu_mightsleep(ptr)

#endif /* SEGPOOL_KERNEL_LINUX_RCUPDATE_H */
