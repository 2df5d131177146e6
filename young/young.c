// SPDX-License-Identifier: MIT
/*
 * young/young.c - the first small blocks of a process (young/young.h).
 *
 * Why: a process's first allocation of each size class makes the class:
 * its control block and slots, a first slab, a magazine from a magazine
 * cache, and each is a page the process writes for the first time.
 * `cat /dev/null` under the preload made 22 classes and 3 magazine caches
 * for 151 blocks, and took 73 page faults more than under glibc (148
 * against 75), a fault costing 10-15 us on this host: most of what a
 * short process paid for segpool.  Shell scripts, git and compiler
 * drivers are hundreds of such processes.
 *
 * So for its first SP_YOUNG_CLASS_BLOCKS blocks (and SP_YOUNG_CLASS_BYTES)
 * a class's allocations come from this area by an atomic bump pointer: a
 * process whose small blocks are a few dozen per class touches the pages
 * they fill and makes no class at all.  A class past its share, or any
 * class once the area is used up, is made as before, and its blocks come
 * from its slabs from then on; young blocks stay where they are until
 * freed, and their memory is never reused (at most SP_YOUNG_SIZE a
 * process).  When a class cannot be made (a mapping refused: a process
 * that lowered RLIMIT_AS below what it had mapped), the area serves its
 * allocations past the share while it has room.
 *
 * A block is as a slab object of its class would be: the class's size,
 * aligned to the largest power of two that divides it (a slab's objects
 * lie at multiples of it from an aligned slab: kmalloc()'s natural
 * alignment, and what segpool_aligned_alloc() picks classes by), at least
 * 16 bytes.  Its state lies apart, one byte a
 * 16-byte granule of the area at its first granule: the class and whether
 * it is live or freed, 0 at every granule where no block starts.  So a
 * lookup is one load; a pointer into a block's middle, or between blocks,
 * reads 0 and is reported, and a second free is too (the byte turns from
 * live to freed once, by one compare-and-swap).  The class's name in a
 * report is its size class's
 * (core/ hands sp_young_init() its naming).  Below the layers that watch
 * objects (failslab/, prof/, the guard pool's sampling), core/ asks for a
 * young block only while none of them runs.
 */
#include <stdio.h>

#include "internal/report.h"
#include "internal/sanitize.h"
#include "slab/debug.h"
#include "young/young.h"

char sp_young_area[SP_YOUNG_SIZE]
	__attribute__((aligned(SP_PAGE_SIZE))) __sp_big;

/*
 * The state of the block starting at each granule: SP_YOUNG_LIVE or
 * SP_YOUNG_FREED, or-ed with the class; 0 where no block starts.
 */
#define SP_YOUNG_GRANULE	16
#define SP_YOUNG_LIVE		0x40
#define SP_YOUNG_FREED		0x80
#define SP_YOUNG_IDX		0x3f
_Static_assert(SP_YOUNG_CLASSES <= SP_YOUNG_IDX, "a class in 6 bits");

static uint8_t sp_young_map[SP_YOUNG_SIZE / SP_YOUNG_GRANULE] __sp_big;

/*
 * Bytes of the area handed out (the bump pointer), blocks handed out, the
 * bytes of the live ones; each class's size (written by its first block)
 * and blocks handed out (its bytes are their product: a class's size is
 * fixed).  Relaxed atomics, but the map's
 * bytes (release at the allocation, acquire at a lookup).
 */
static size_t sp_young_top;
static uint64_t sp_young_nr, sp_young_live;
static uint32_t sp_young_class_size[SP_YOUNG_CLASSES];
static uint32_t sp_young_class_nr[SP_YOUNG_CLASSES];
static bool sp_young_on;
static void (*sp_young_name_fn)(unsigned int idx, char *buf, size_t size);

void sp_young_init(void (*name_fn)(unsigned int idx, char *buf,
				   size_t size))
{
	const char *dbg = sp_debug_env_string();

	sp_young_name_fn = name_fn;
	sp_young_on = !SP_ASAN && !sp_on_valgrind && (!dbg || !*dbg);
}

bool sp_young_enabled(void)
{
	return sp_young_on;
}

void *sp_young_alloc(unsigned int idx, size_t cls, bool any)
{
	/* as a slab's objects at multiples of @cls from an aligned slab */
	size_t align = SP_MAX(cls & -cls, (size_t)SP_YOUNG_GRANULE);
	size_t top, start, end;
	uint32_t nr;

	if (!sp_young_on || idx >= SP_YOUNG_CLASSES ||
	    (cls > SP_YOUNG_MAX && !any))
		return NULL;
	/*
	 * The class's share, every block it was handed counted (a loop that
	 * frees each block it takes makes its class soon): counted first, so
	 * that racing threads stop too; the class made (the caller's next
	 * step) takes every later allocation.
	 */
	nr = __atomic_fetch_add(&sp_young_class_nr[idx], 1, __ATOMIC_RELAXED);
	if (!any && nr >= SP_MIN((size_t)SP_YOUNG_CLASS_BLOCKS,
				 SP_YOUNG_CLASS_BYTES / cls))
		return NULL;
	top = __atomic_load_n(&sp_young_top, __ATOMIC_RELAXED);
	do {
		start = SP_ALIGN(top, align);
		end = start + SP_ALIGN(cls, (size_t)SP_YOUNG_GRANULE);
		if (end > SP_YOUNG_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&sp_young_top, &top, end, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	__atomic_fetch_add(&sp_young_nr, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sp_young_live, cls, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_young_class_size[idx], (uint32_t)cls,
			 __ATOMIC_RELAXED);
	/* release: a lookup that sees it live sees its class's size */
	__atomic_store_n(&sp_young_map[start / SP_YOUNG_GRANULE],
			 (uint8_t)(idx | SP_YOUNG_LIVE), __ATOMIC_RELEASE);
	return sp_young_area + start;
}

/* The state byte of the block @p starts, or NULL: none starts there. */
static uint8_t *sp_young_state(const void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)sp_young_area;

	if (off % SP_YOUNG_GRANULE)
		return NULL;
	return &sp_young_map[off / SP_YOUNG_GRANULE];
}

/*
 * The state of the block @p points into, for a report's name: the nearest
 * start at or below @p, if @p lies inside its block; or 0.  A misuse's
 * path: a scan of the map.
 */
static uint8_t sp_young_around(const void *p)
{
	size_t g = ((uintptr_t)p - (uintptr_t)sp_young_area) /
		   SP_YOUNG_GRANULE;

	for (size_t k = 0; k <= g; k++) {
		uint8_t st = __atomic_load_n(&sp_young_map[g - k],
					     __ATOMIC_ACQUIRE);
		size_t size;

		if (!st)
			continue;
		size = __atomic_load_n(&sp_young_class_size[st & SP_YOUNG_IDX],
				       __ATOMIC_RELAXED);
		return (uintptr_t)p - (uintptr_t)sp_young_area <
			       (g - k) * SP_YOUNG_GRANULE + size ? st : 0;
	}
	return 0;
}

/* A report of @what (after @op) about @p, with the class's name. */
static __sp_cold __sp_noreturn void
sp_young_misuse(const char *op, const char *what, const void *p,
		uint8_t state)
{
	char name[32] = "", msg[96];

	if (state && (state & SP_YOUNG_IDX) < SP_YOUNG_CLASSES &&
	    sp_young_name_fn)
		sp_young_name_fn(state & SP_YOUNG_IDX, name, sizeof(name));
	snprintf(msg, sizeof(msg), "%s%s%s", op, *op ? " " : "", what);
	sp_report_bad_free(msg, p, name[0] ? name : NULL);
}

size_t sp_young_size(const void *p, const char *op)
{
	uint8_t *m = sp_young_state(p);
	uint8_t st = m ? __atomic_load_n(m, __ATOMIC_ACQUIRE) : 0;

	if (st & SP_YOUNG_LIVE)
		return __atomic_load_n(&sp_young_class_size[st & SP_YOUNG_IDX],
				       __ATOMIC_RELAXED);
	if (st & SP_YOUNG_FREED)
		sp_young_misuse(op, "of freed object", p, st);
	sp_young_misuse(op, "of interior pointer", p, sp_young_around(p));
}

void sp_young_free(void *p)
{
	uint8_t *m = sp_young_state(p);
	uint8_t st = m ? __atomic_load_n(m, __ATOMIC_ACQUIRE) : 0;
	unsigned int idx = st & SP_YOUNG_IDX;

	while (st & SP_YOUNG_LIVE) {
		if (__atomic_compare_exchange_n(m, &st,
						(uint8_t)(idx | SP_YOUNG_FREED),
						false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_sub(&sp_young_live,
					   __atomic_load_n(
						&sp_young_class_size[idx],
						__ATOMIC_RELAXED),
					   __ATOMIC_RELAXED);
			return;
		}
	}
	if (st & SP_YOUNG_FREED)
		sp_young_misuse("", "double free", p, st);
	sp_young_misuse("free", "of interior pointer", p, sp_young_around(p));
}

void sp_young_counts(uint64_t *blocks, uint64_t *area, uint64_t *live)
{
	*blocks = __atomic_load_n(&sp_young_nr, __ATOMIC_RELAXED);
	*area = __atomic_load_n(&sp_young_top, __ATOMIC_RELAXED);
	*live = __atomic_load_n(&sp_young_live, __ATOMIC_RELAXED);
}
