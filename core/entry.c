// SPDX-License-Identifier: MIT
/*
 * core/entry.c - the exported hit-path entry points, as IFUNC symbols that
 * resolve to the open or the counted build (core/entry.h).
 *
 * The resolvers run inside the dynamic linker, possibly before this
 * object is relocated and before the C library is initialised: they call
 * nothing but sp_os_early_env() (os/early.c, written for that) and reach
 * their data PC-relative.  No stack protector, no sanitizer.
 */
#include <stdbool.h>

#include <segpool/segpool.h>

#include "core/entry.h"
#include "os/os.h"

#define SP_RESOLVER_ATTRS						\
	__attribute__((no_stack_protector, no_sanitize_address,	\
		       no_sanitize("undefined", "thread"), used))

/*
 * 0: not asked yet, 1: the open build, 2: the counted build; plus 4 when
 * a resolver read the environment itself (before start-up could say).
 */
static int sp_entry_choice;

SP_RESOLVER_ATTRS bool sp_entry_counted(void)
{
	int choice = __atomic_load_n(&sp_entry_choice, __ATOMIC_RELAXED);

	if (!choice) {
		/* two threads resolving at once read the same answer */
		choice = (sp_os_early_env("SEGPOOL_HEAP_PROFILE=") ? 2 : 1) |
			 4;
		__atomic_store_n(&sp_entry_choice, choice, __ATOMIC_RELAXED);
	}
	return (choice & 3) == 2;
}

bool sp_entry_chosen_early(void)
{
	return __atomic_load_n(&sp_entry_choice, __ATOMIC_RELAXED) & 4;
}

void sp_entry_decide(bool counted)
{
	int none = 0;

	__atomic_compare_exchange_n(&sp_entry_choice, &none, counted ? 2 : 1,
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

SP_RESOLVER_ATTRS static __typeof__(segpool_cache_alloc) *
sp_resolve_cache_alloc(void)
{
	return sp_entry_counted() ? sp_cache_alloc_counted
				  : sp_cache_alloc_open;
}

SP_RESOLVER_ATTRS static __typeof__(segpool_cache_free) *
sp_resolve_cache_free(void)
{
	return sp_entry_counted() ? sp_cache_free_counted : sp_cache_free_open;
}

SP_RESOLVER_ATTRS static __typeof__(segpool_malloc) *sp_resolve_malloc(void)
{
	return sp_entry_counted() ? sp_malloc_counted : sp_malloc_open;
}

SP_RESOLVER_ATTRS static __typeof__(segpool_free) *sp_resolve_free(void)
{
	return sp_entry_counted() ? sp_free_counted : sp_free_open;
}

SEGPOOL_API void *segpool_cache_alloc(struct segpool_cache *cache,
				      unsigned int gfp)
	__attribute__((ifunc("sp_resolve_cache_alloc")));
SEGPOOL_API void segpool_cache_free(struct segpool_cache *cache, void *obj)
	__attribute__((ifunc("sp_resolve_cache_free")));
SEGPOOL_API void *segpool_malloc(size_t size)
	__attribute__((ifunc("sp_resolve_malloc")));
SEGPOOL_API void segpool_free(void *ptr)
	__attribute__((ifunc("sp_resolve_free")));
