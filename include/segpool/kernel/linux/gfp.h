/* SPDX-License-Identifier: MIT */
/*
 * <linux/gfp.h> - segpool's kernel overlay: GFP flags and their tests.
 * The flags themselves are in <linux/gfp_types.h>.
 */
#ifndef SEGPOOL_KERNEL_LINUX_GFP_H
#define SEGPOOL_KERNEL_LINUX_GFP_H

#include <linux/gfp_types.h>
#include <linux/numa.h>

/* gfpflags_allow_blocking() - may an allocation with @gfp sleep? */
static inline bool gfpflags_allow_blocking(const gfp_t gfp_flags)
{
	return !!(gfp_flags & __GFP_DIRECT_RECLAIM);
}

/* gfp_has_io_fs() - may it start I/O and file-system work (no meaning here)? */
static inline bool gfp_has_io_fs(gfp_t gfp)
{
	return (gfp & (__GFP_IO | __GFP_FS)) == (__GFP_IO | __GFP_FS);
}

#endif /* SEGPOOL_KERNEL_LINUX_GFP_H */
