// SPDX-License-Identifier: MIT
/*
 * malloc/bootstrap.c - memory for the calls made before segpool is up.
 *
 * segpool's initialisation asks liburcu, pthread and stdio for
 * help, and each of them may call malloc(): in a program where segpool is
 * the malloc, those calls cannot wait for the initialisation they are part
 * of.  They are served here, from a static area handed out by an atomic
 * bump pointer: no lock, no system call, no dependency on anything that is
 * not set up yet.  A block is never reused (free() of one is a no-op) and
 * its first 16 bytes before the user's pointer keep its size, for realloc()
 * and malloc_usable_size().  A few kilobytes are used in practice; the area
 * is .bss, so the pages never touched cost nothing.
 */
#include <errno.h>
#include <string.h>

#include "malloc/preload.h"

char sp_boot_area[SP_BOOT_SIZE]
	__attribute__((aligned(SP_PAGE_SIZE))) __sp_big;
static size_t sp_boot_top;		/* bytes handed out, atomic */
static size_t sp_boot_count;		/* blocks handed out, atomic */

struct sp_boot_hdr {
	size_t size;			/* bytes asked for */
	size_t magic;			/* SP_BOOT_MAGIC */
};
_Static_assert(sizeof(struct sp_boot_hdr) == SP_BOOT_ALIGN,
	       "a header keeps the user's block 16-byte aligned");

#define SP_BOOT_MAGIC	((size_t)0x5e6b007b10c5ULL)

void *sp_boot_alloc(size_t size, size_t align)
{
	size_t top = __atomic_load_n(&sp_boot_top, __ATOMIC_RELAXED);
	size_t start, end;

	if (align < SP_BOOT_ALIGN)
		align = SP_BOOT_ALIGN;
	if (size > SP_BOOT_SIZE || align > SP_BOOT_SIZE / 2) {
		errno = ENOMEM;
		return NULL;
	}
	do {
		start = SP_ALIGN(top + sizeof(struct sp_boot_hdr), align);
		end = start + SP_ALIGN(size ? size : 1, SP_BOOT_ALIGN);
		if (end > SP_BOOT_SIZE) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&sp_boot_top, &top, end, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	__atomic_fetch_add(&sp_boot_count, 1, __ATOMIC_RELAXED);
	{
		struct sp_boot_hdr *h = (struct sp_boot_hdr *)
			(sp_boot_area + start) - 1;

		h->size = size;
		h->magic = SP_BOOT_MAGIC;
	}
	return sp_boot_area + start;
}

bool sp_boot_block(const void *p, size_t *size)
{
	const struct sp_boot_hdr *h = (const struct sp_boot_hdr *)p - 1;

	/* an interior or stray pointer has no header */
	if (!sp_boot_owns(p) || (uintptr_t)p % SP_BOOT_ALIGN ||
	    (const char *)p < sp_boot_area + sizeof(*h) ||
	    h->magic != SP_BOOT_MAGIC)
		return false;
	*size = h->size;
	return true;
}

size_t sp_boot_used(void)
{
	return __atomic_load_n(&sp_boot_top, __ATOMIC_RELAXED);
}

size_t sp_boot_blocks(void)
{
	return __atomic_load_n(&sp_boot_count, __ATOMIC_RELAXED);
}
