// SPDX-License-Identifier: MIT
/*
 * core/inline_abi.c - the layout a program built with SEGPOOL_INLINE bakes
 * in (segpool/inline.h): asserted here against the library's own structs,
 * and published at the end of start-up.
 *
 * segpool_inline_abi (exported as segpool_inline_abi_v<N>) is defined in
 * percpu/rseq.c beside the words the per-CPU layer owns (nr, id_delta);
 * the rest is set once here and never changes: the space's words as soon
 * as it is reserved (sp_inline_abi_space(), before any cache exists: the
 * library's own free paths take the page tag from this line, see
 * core/hotpath.h), the free-mark secret and the size-class table once
 * every size class exists, before the hit paths open.  The version word goes
 * last (release): an inline caller that reads it sees every other word set.  It
 * stays 0, and every inline call stays a call, in builds whose hit path does
 * more than the inline one: AddressSanitizer builds (poisoning), and under
 * valgrind (whose hooks run on every allocation).
 */
#include <segpool/inline.h>
#include <segpool/segpool.h>

#include "core/core.h"
#include "internal/sanitize.h"
#include "numa/region.h"
#include "slab/freemark.h"

#define SP_ABI_AT(f, g)							\
	_Static_assert(offsetof(struct segpool_inline_cache, f) ==	\
		       offsetof(struct segpool_cache, g), "inline ABI: " #f)
SP_ABI_AT(magic, magic);
SP_ABI_AT(object_size, object_size);
SP_ABI_AT(slots, slots);
SP_ABI_AT(objs_per_slab, objs_per_slab);
SP_ABI_AT(stride_inv, stride_inv);
SP_ABI_AT(slab_mask, slab_mask);
SP_ABI_AT(key_off, key_off);
SP_ABI_AT(stride_shift, stride_shift);
_Static_assert(sizeof(((struct segpool_cache *)0)->stride_shift) == 1 &&
	       sizeof(((struct segpool_cache *)0)->slab_mask) == 4,
	       "inline ABI: field widths");
_Static_assert(offsetof(struct segpool_inline_layout, version) == 0,
	       "inline ABI: the version word leads, in every version");
_Static_assert(sizeof(struct segpool_inline_layout) == 64,
	       "inline ABI: the layout is one line (rseq_off, the library's "
	       "own word, in its last bytes)");
_Static_assert(SEGPOOL_ABI_CACHE_MAGIC == SP_CACHE_MAGIC, "inline ABI: magic");
#ifdef SEGPOOL_INLINE_ARCH	/* where the inline hit path reads the tags */
_Static_assert(SEGPOOL_ABI_PAGE_SHIFT == SP_PAGE_SHIFT,
	       "inline ABI: tag per page (make PAGE_SHIFT= is for the "
	       "architectures without the inline hit path)");
#endif
_Static_assert(SEGPOOL_ABI_TAG_NODE_MASK == SP_CACHE_LINE - 1,
	       "inline ABI: a tag's node bits (slab/slab.h sp_tag_cache())");
_Static_assert(SEGPOOL_ABI_BY8_MAX == SP_KMALLOC_BY8_MAX,
	       "inline ABI: by8 table");
_Static_assert(SEGPOOL_INLINE_ABI_VERSION == 1,
	       "a new layout version renames segpool_inline_abi_v1 "
	       "(segpool/inline.h)");

/*
 * Under the start-up lock, right after the space is reserved and before
 * any object exists, so that no free can meet a zero copy.  The space is
 * reserved once (a retried start-up finds it and copies the same words).
 */
void sp_inline_abi_space(void)
{
	sp_pcpu_fast.space_base = sp_space.base;
	sp_pcpu_fast.space_size = sp_space.size;
	sp_pcpu_fast.tags = sp_space.tags;
}

void sp_inline_abi_publish(void)
{
	sp_pcpu_fast.mark_secret = sp_freemark_secret;
	sp_pcpu_fast.by8 = sp_kmalloc_by8;
	if (SP_ASAN || sp_on_valgrind)
		return;
	__atomic_store_n(&sp_pcpu_fast.version, SEGPOOL_INLINE_ABI_VERSION,
			 __ATOMIC_RELEASE);
}

void sp_inline_abi_close(void)
{
	__atomic_store_n(&sp_pcpu_fast.version, 0, __ATOMIC_RELEASE);
}
