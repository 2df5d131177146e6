// SPDX-License-Identifier: MIT
/*
 * slab/harden.c - per-cache free-list secrets and random slab order.
 *
 * Secrets and seeds come from getrandom(2) (non-blocking); should it fail
 * (a seccomp filter, an old kernel), from the clock and addresses, mixed:
 * weaker, never fatal.
 *
 * SEGPOOL_FREELIST_RANDOM: like the kernel's SLAB_FREELIST_RANDOM, each
 * cache draws one random permutation of its slab's object indices at
 * creation (Fisher-Yates), and each slab, when it is populated or left
 * empty, a random starting point in it.  A slab hands out its never-used
 * objects in that order, so the address of the next object is no longer the
 * last one plus the stride.  The permutation lives in the cache's own
 * mapping, after the per-node structs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal/env.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

bool sp_freelist_hardened = true;
bool sp_on_valgrind;

/* splitmix64: one step of a 64-bit state into a well-mixed output. */
uintptr_t sp_freemark_secret = (uintptr_t)0xd0e5f3ee5a11c0deULL;

static inline uint64_t sp_mix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t sp_random_u64(const void *salt)
{
	uint64_t v;
	struct timespec ts;

	if (sp_os_random(&v, sizeof(v)))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
	    (uint64_t)(uintptr_t)salt ^ (uint64_t)(uintptr_t)&v;
	return sp_mix64(&v);
}

void sp_harden_init(void)
{
	sp_freelist_hardened = sp_env_bool(SP_ENV_FREELIST_HARDENED, true);
#if SP_VALGRIND
	sp_on_valgrind = RUNNING_ON_VALGRIND != 0;
#endif
	/* bit 63: no mark is 0 or a user-space pointer (slab/freemark.h) */
	sp_freemark_secret = (uintptr_t)sp_random_u64(&sp_freemark_secret) |
			     (1UL << 63);
}

size_t sp_harden_extra_bytes(const struct segpool_cache *c)
{
	if (!(c->flags & SEGPOOL_FREELIST_RANDOM))
		return 0;
	return (size_t)c->objs_per_slab * sizeof(*c->rand_seq);
}

void sp_harden_cache_init(struct segpool_cache *c, void *extra)
{
	uint64_t seed = sp_random_u64(c);

	c->fl_secret = 0;
	if (sp_freelist_hardened) {
		/* never 0, which means "plain links" */
		while (!c->fl_secret)
			c->fl_secret = (uintptr_t)sp_mix64(&seed);
	}
	c->rand_seq = NULL;
	c->rand_state = sp_mix64(&seed);
	if (!(c->flags & SEGPOOL_FREELIST_RANDOM))
		return;

	c->rand_seq = extra;
	for (unsigned int i = 0; i < c->objs_per_slab; i++)
		c->rand_seq[i] = i;
	for (unsigned int i = c->objs_per_slab - 1; i > 0; i--) {
		unsigned int j = (unsigned int)(sp_mix64(&seed) % (i + 1));
		unsigned int t = c->rand_seq[i];

		c->rand_seq[i] = c->rand_seq[j];
		c->rand_seq[j] = t;
	}
}

unsigned int sp_harden_rand_pos(struct segpool_cache *c)
{
	/* splitmix64 over an atomic counter: safe with no lock held */
	uint64_t state = __atomic_fetch_add(&c->rand_state,
					    0x9e3779b97f4a7c15ULL,
					    __ATOMIC_RELAXED);

	return (unsigned int)(sp_mix64(&state) % c->objs_per_slab);
}

void sp_report_bad_freeptr(const struct segpool_cache *c,
			   const struct sp_slab *s, void *obj)
{
	char *at = (char *)obj + c->fp_offset;
	uintptr_t raw;

	/* the stored word as it is: decoding it here would print the
	 * secret's worth to whoever reads the message */
	sp_san_link_open(c, at);
	memcpy(&raw, at, sizeof(raw));
	sp_san_link_close(c, at);
	sp_warn("bad free-list pointer in free object %p (cache %s, "
		"slab %p-%p, link at offset %u holds %#018" PRIxPTR "): "
		"written after free or overrun by the object before it",
		obj, c->name, (void *)s->base,
		(void *)(s->base + sp_slab_bytes(c)), c->fp_offset, raw);
	abort();
}

void sp_report_short_freelist(const struct segpool_cache *c,
			      const struct sp_slab *s)
{
	sp_warn("free list of slab %p-%p ends with %u of its objects "
		"unaccounted for (cache %s, %u in use of %u): a free object's "
		"link (offset %u) was overwritten after free", (void *)s->base,
		(void *)(s->base + sp_slab_bytes(c)),
		c->objs_per_slab - s->inuse, c->name, s->inuse,
		c->objs_per_slab, c->fp_offset);
	abort();
}

#if SP_ASAN
/*
 * ASan calls __asan_on_error() once it has printed a report: say which
 * segpool object the bad address belongs to, as ASan itself only knows it
 * as poisoned memory.  Found by the ASan runtime in a program that links
 * segpool statically (the shared library exports segpool_* only).
 */
void __asan_on_error(void);

__attribute__((visibility("default"))) void __asan_on_error(void)
{
	const char *addr = __asan_get_report_address();
	const struct sp_slab *s = sp_obj_to_slab(addr);
	const struct segpool_cache *c;
	size_t off, i;

	if (!s)
		return;
	c = s->cache;
	off = (size_t)(addr - s->base);
	i = off / c->stride;
	off -= i * c->stride;
	if (i >= c->objs_per_slab)
		sp_warn("%p is in the unused tail of a slab of cache %s "
			"(slab %p)", (const void *)addr, c->name,
			(void *)s->base);
	else if (off < c->object_size)
		sp_warn("%p is %zu bytes inside object %p of cache %s "
			"(size %u): the object is free", (const void *)addr,
			off, (void *)(s->base + i * c->stride), c->name,
			c->object_size);
	else
		sp_warn("%p is %zu bytes past the end of object %p of cache %s "
			"(size %u)", (const void *)addr, off - c->object_size,
			(void *)(s->base + i * c->stride), c->name,
			c->object_size);
}
#endif
