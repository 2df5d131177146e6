/* SPDX-License-Identifier: MIT */
/*
 * <linux/gfp_types.h> - segpool's kernel overlay: the GFP flag names.
 *
 * The flags that mean something in userspace have segpool's own values,
 * so a kernel gfp mask reaches segpool's calls as it is:
 *
 *   __GFP_ZERO            zeroed memory                (SEGPOOL_ZERO)
 *   __GFP_THISNODE        no fallback to another node  (SEGPOOL_THISNODE)
 *   __GFP_NOFAIL          retry, then abort; never NULL (SEGPOOL_NOFAIL)
 *   __GFP_DIRECT_RECLAIM  the caller may sleep: mempool_alloc() waits,
 *                         __GFP_NOFAIL retries sleep   (SEGPOOL_WAIT)
 *   __GFP_NOWARN          no warning line on failure   (SEGPOOL_NOWARN)
 *
 * Every other flag is accepted and does nothing (bits 8 and up, dropped
 * before segpool's calls); Documentation/guide/kernel-api.md says why for each.
 */
#ifndef SEGPOOL_KERNEL_LINUX_GFP_TYPES_H
#define SEGPOOL_KERNEL_LINUX_GFP_TYPES_H

#include <linux/types.h>
#include <segpool/slab.h>

/* the flags with a meaning here */
#define __GFP_ZERO		((__force gfp_t)SEGPOOL_ZERO)
#define __GFP_THISNODE		((__force gfp_t)SEGPOOL_THISNODE)
#define __GFP_NOFAIL		((__force gfp_t)SEGPOOL_NOFAIL)
#define __GFP_DIRECT_RECLAIM	((__force gfp_t)SEGPOOL_WAIT)
#define __GFP_NOWARN		((__force gfp_t)SEGPOOL_NOWARN)

/* accepted, no effect */
#define __GFP_DMA		((__force gfp_t)(1U << 8))
#define __GFP_HIGHMEM		((__force gfp_t)(1U << 9))
#define __GFP_DMA32		((__force gfp_t)(1U << 10))
#define __GFP_MOVABLE		((__force gfp_t)(1U << 11))
#define __GFP_RECLAIMABLE	((__force gfp_t)(1U << 12))
#define __GFP_HIGH		((__force gfp_t)(1U << 13))
#define __GFP_IO		((__force gfp_t)(1U << 14))
#define __GFP_FS		((__force gfp_t)(1U << 15))
#define __GFP_KSWAPD_RECLAIM	((__force gfp_t)(1U << 16))
#define __GFP_WRITE		((__force gfp_t)(1U << 17))
#define __GFP_HARDWALL		((__force gfp_t)(1U << 18))
#define __GFP_ACCOUNT		((__force gfp_t)(1U << 19))
#define __GFP_MEMALLOC		((__force gfp_t)(1U << 20))
#define __GFP_NOMEMALLOC	((__force gfp_t)(1U << 21))
#define __GFP_NORETRY		((__force gfp_t)(1U << 22))
#define __GFP_RETRY_MAYFAIL	((__force gfp_t)(1U << 23))
#define __GFP_COMP		((__force gfp_t)(1U << 24))
#define __GFP_NOLOCKDEP		((__force gfp_t)(1U << 25))
#define __GFP_NO_OBJ_EXT	((__force gfp_t)(1U << 26))
#define __GFP_ZEROTAGS		((__force gfp_t)(1U << 27))
#define __GFP_SKIP_ZERO		((__force gfp_t)(1U << 28))
#define __GFP_SKIP_KASAN	((__force gfp_t)(1U << 29))

#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)

/* the usual masks, as the kernel composes them */
#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN)
#define GFP_NOIO		(__GFP_RECLAIM)
#define GFP_NOFS		(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER		(__GFP_RECLAIM | __GFP_IO | __GFP_FS | \
				 __GFP_HARDWALL)
#define GFP_DMA			__GFP_DMA
#define GFP_DMA32		__GFP_DMA32
#define GFP_HIGHUSER		(GFP_USER | __GFP_HIGHMEM)
#define GFP_HIGHUSER_MOVABLE	(GFP_HIGHUSER | __GFP_MOVABLE | \
				 __GFP_SKIP_KASAN)
#define GFP_TRANSHUGE_LIGHT	((GFP_HIGHUSER_MOVABLE | __GFP_COMP | \
				  __GFP_NOMEMALLOC | __GFP_NOWARN) & \
				 ~__GFP_RECLAIM)
#define GFP_TRANSHUGE		(GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM)

/* The bits segpool's size-class and cache calls take (the rest drop). */
#define __SEGPOOL_GFP_KMALLOC(flags) \
	((unsigned int)(flags) & SEGPOOL_KMALLOC_GFP_VALID)
#define __SEGPOOL_GFP_CACHE(flags) \
	((unsigned int)(flags) & SEGPOOL_GFP_VALID)

_Static_assert((SEGPOOL_KMALLOC_GFP_VALID & 0xffffff00U) == 0,
	       "segpool's gfp bits stay below the no-op flags");

#endif /* SEGPOOL_KERNEL_LINUX_GFP_TYPES_H */
