/* SPDX-License-Identifier: MIT */
/*
 * malloc/preload.h - the malloc replacement's private parts.
 *
 * The entry points (malloc/preload.c, malloc/cxx.c, malloc/compat.c) sit on
 * segpool's public calls.  Two things come before the library is up:
 *
 *   bootstrap  a bump allocator in a static area (malloc/bootstrap.c) that
 *              serves the calls made from inside segpool's own
 *              initialisation (liburcu, pthread and stdio allocate
 *              while it runs); its memory is never reused, and free() of it
 *              is a no-op.
 *   bring-up   the first call on a thread that finds the library not ready
 *              initialises it, marked as "inside init" for that thread, so
 *              the calls it makes itself land in the bootstrap area instead
 *              of waiting on their own initialisation.
 */
#ifndef SP_MALLOC_PRELOAD_H
#define SP_MALLOC_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "core/core.h"

/* --- malloc/bootstrap.c --- */

/* Bytes of the bootstrap area; untouched pages cost no memory. */
#define SP_BOOT_SIZE		(1UL << 20)
#define SP_BOOT_SIZE_TEXT	"1024 KiB"	/* in the start-up message */
/* Alignment of every bootstrap block (glibc's MALLOC_ALIGNMENT). */
#define SP_BOOT_ALIGN		16

extern SP_INTERNAL char sp_boot_area[SP_BOOT_SIZE];

/* sp_boot_owns() - is @p inside the bootstrap area? */
static inline bool sp_boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)sp_boot_area < SP_BOOT_SIZE;
}

/*
 * sp_boot_alloc() - @size bytes aligned to @align (a power of two) from the
 * bootstrap area; they read as zero.  Any thread.
 * Return: the memory, or NULL with errno ENOMEM when the area is used up.
 */
SP_INTERNAL void *sp_boot_alloc(size_t size, size_t align);
/*
 * sp_boot_block() - the size asked for the bootstrap block at @p into
 * *@size.  Return: false when @p is not the start of a bootstrap block.
 */
SP_INTERNAL bool sp_boot_block(const void *p, size_t *size);
/* sp_boot_used() - bytes of the area handed out so far. */
SP_INTERNAL size_t sp_boot_used(void);
/* sp_boot_blocks() - blocks handed out so far. */
SP_INTERNAL size_t sp_boot_blocks(void);

/* --- malloc/preload.c --- */

/*
 * Set once the library is ready (malloc/preload.c, sp_pl_bring_up()): one
 * of the two, by the build the process's entry points resolved to
 * (core/entry.h).  malloc() and free() test the first and nothing else;
 * their cold paths test the second.
 */
extern SP_INTERNAL bool sp_pl_fast_on;
extern SP_INTERNAL bool sp_pl_counting;

/* sp_pl_fast() - may malloc() and free() take the open build? */
static inline bool sp_pl_fast(void)
{
	return likely(__atomic_load_n(&sp_pl_fast_on, __ATOMIC_ACQUIRE));
}

/* sp_pl_ready() - may the entry points go straight to segpool? */
static inline bool sp_pl_ready(void)
{
	return likely(__atomic_load_n(&sp_ready, __ATOMIC_ACQUIRE));
}

/*
 * sp_pl_bring_up() - initialise segpool for the calling thread's first
 * allocation.  Return: true when segpool serves from now on; false when
 * the caller is inside segpool's initialisation (or it failed): the
 * bootstrap area serves.  errno is kept.
 */
SP_INTERNAL bool sp_pl_bring_up(void);
/* True while the calling thread runs segpool's initialisation. */
SP_INTERNAL bool sp_pl_in_init(void);
/* sp_pl_set_in_init() - for the selftest: pretend to be inside init. */
SP_INTERNAL void sp_pl_set_in_init(bool on);

/* @align-aligned memory (@align a power of two), as memalign() gives it. */
SP_INTERNAL void *sp_pl_aligned(size_t align, size_t size);

/* --- malloc/conf.c --- */

/* sp_pl_conf_init() - read SEGPOOL_MALLOC_CONF (at start-up, once). */
SP_INTERNAL void sp_pl_conf_init(void);

struct sp_pl_conf_opt {
	const char *name;		/* the key in SEGPOOL_MALLOC_CONF */
	const char *values;		/* what it accepts, in words */
	const char *def;		/* the default */
	const char *what;		/* what it does */
};

/* The options SEGPOOL_MALLOC_CONF understands (the one list of them). */
extern SP_INTERNAL const struct sp_pl_conf_opt sp_pl_conf_opts[];
extern SP_INTERNAL const size_t sp_pl_conf_nr_opts;

/* --- malloc/compat.c --- */

/* Give back what can be given (segpool_shrink_all()): the bytes. */
SP_INTERNAL unsigned long sp_pl_trim(void);

#endif /* SP_MALLOC_PRELOAD_H */
