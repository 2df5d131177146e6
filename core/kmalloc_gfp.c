// SPDX-License-Identifier: MIT
/*
 * core/kmalloc_gfp.c - the kernel's kmalloc() semantics over the size
 * classes: gfp bits, ZERO_SIZE_PTR, krealloc(), and the failure path.
 *
 * segpool_malloc() and friends (core/malloc_api.c) are the malloc(3)
 * family; the calls here add what kernel code expects of kmalloc():
 *
 *   - a gfp argument: SEGPOOL_ZERO and SEGPOOL_THISNODE take the size
 *     class through segpool_cache_alloc_node() (which zeroes and keeps to
 *     the node); a request with neither goes to segpool_malloc{,_node}()
 *     and so to its magazine hit path, unchanged;
 *   - kmalloc(0) is SEGPOOL_ZERO_SIZE_PTR, which segpool_kfree() ignores;
 *   - a failure goes through segpool_alloc_failed(): SEGPOOL_NOFAIL retries
 *     and then aborts, otherwise a rate-limited warning unless
 *     SEGPOOL_NOWARN, as the kernel's warn_alloc().
 *
 * Sizes above SEGPOOL_KMALLOC_MAX_CACHE_SIZE are page runs of their node's
 * region, or mappings of their own from 64 MiB up (large/large.c): placed
 * on their node (bound, where regions are), zeroed on SEGPOOL_ZERO only
 * when their pages may hold old data, and power-of-two ones are naturally
 * aligned.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "core/entry.h"
#include "internal/report.h"
#include "os/os.h"

/* Retries of a SEGPOOL_NOFAIL allocation before the abort; pause 2^i ms. */
#define SP_NOFAIL_RETRIES	10

/* Warnings: a burst of SP_WARN_BURST per SP_WARN_PERIOD_NS, then silence. */
#define SP_WARN_BURST		10
#define SP_WARN_PERIOD_NS	(5ULL * 1000 * 1000 * 1000)

static pthread_mutex_t sp_warn_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t sp_warn_start;		/* start of the period, ns */
static unsigned int sp_warn_printed;	/* in this period */
static unsigned long sp_warn_missed;	/* suppressed in this period */

static uint64_t sp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* May a warning be printed now?  *@missed receives the count suppressed
 * in the period that just ended, to print first. */
static bool sp_warn_ratelimit(unsigned long *missed)
{
	uint64_t now = sp_now_ns();
	bool ok;

	pthread_mutex_lock(&sp_warn_lock);
	*missed = 0;
	if (!sp_warn_start || now - sp_warn_start >= SP_WARN_PERIOD_NS) {
		*missed = sp_warn_missed;
		sp_warn_start = now;
		sp_warn_printed = 0;
		sp_warn_missed = 0;
	}
	ok = sp_warn_printed < SP_WARN_BURST;
	if (ok)
		sp_warn_printed++;
	else
		sp_warn_missed++;
	pthread_mutex_unlock(&sp_warn_lock);
	return ok;
}

static const char *sp_req_name(struct segpool_cache *cache, char *buf,
			       size_t len, size_t size)
{
	if (cache && cache->magic == SP_CACHE_MAGIC)
		return cache->name;
	snprintf(buf, len, "kmalloc(%zu)", size);
	return buf;
}

static void *sp_retry(struct segpool_cache *cache, size_t size,
		      unsigned int gfp, int node)
{
	if (cache)
		return segpool_cache_alloc_node(cache, gfp & SEGPOOL_GFP_VALID,
						node);
	return segpool_kmalloc_node(size, (gfp & ~SEGPOOL_NOFAIL) |
				    SEGPOOL_NOWARN, node);
}

SEGPOOL_API void *segpool_alloc_failed(struct segpool_cache *cache,
				       size_t size, unsigned int gfp, int node)
{
	int err = errno ? errno : ENOMEM;
	unsigned long missed;
	char buf[48];

	if (gfp & SEGPOOL_NOFAIL) {
		for (unsigned int i = 0; err == ENOMEM && i < SP_NOFAIL_RETRIES;
		     i++) {
			void *p;

			if (gfp & SEGPOOL_WAIT)
				sp_os_sleep_ms(1UL << i);
			else
				sp_os_yield();
			errno = 0;
			p = sp_retry(cache, size, gfp, node);
			if (p)
				return p;
			err = errno ? errno : ENOMEM;
		}
		sp_warn("__GFP_NOFAIL allocation failed: %s, node %d: %s%s",
			sp_req_name(cache, buf, sizeof(buf), size), node,
			strerror(err),
			err == ENOMEM ? " after 10 retries" : "");
		abort();
	}
	if (err == ENOMEM && !(gfp & SEGPOOL_NOWARN) &&
	    sp_warn_ratelimit(&missed)) {
		if (missed)
			sp_warn("%lu allocation failure warnings suppressed",
				missed);
		sp_warn("allocation failure: %s, gfp %#x, node %d",
			sp_req_name(cache, buf, sizeof(buf), size), gfp, node);
	}
	errno = err;
	return NULL;
}

SEGPOOL_API void *segpool_kmalloc_node(size_t size, unsigned int gfp, int node)
{
	void *p;

	if (unlikely(gfp & ~SEGPOOL_KMALLOC_GFP_VALID)) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(size == 0))
		return SEGPOOL_ZERO_SIZE_PTR;
	if (unlikely(gfp & SEGPOOL_ZERO) &&
	    (size > SEGPOOL_KMALLOC_MAX_CACHE_SIZE ||
	     !(gfp & SEGPOOL_THISNODE))) {
		/* kzalloc(): calloc's path, the hit path when it can */
		p = sp_malloc_node_zeroed(size, node);
	} else if (likely(!(gfp & (SEGPOOL_ZERO | SEGPOOL_THISNODE))) ||
		   size > SEGPOOL_KMALLOC_MAX_CACHE_SIZE) {
		/* large blocks are placed on (and bound to) their node */
		p = node == SEGPOOL_NUMA_NO_NODE ? sp_malloc_open(size) :
			segpool_malloc_node(size, node);
	} else if (unlikely(sp_init())) {
		p = NULL;
	} else {
		struct segpool_cache *c =
			sp_kmalloc_get(sp_kmalloc_index(size));

		p = c ? segpool_cache_alloc_node(c, gfp & SEGPOOL_GFP_VALID,
						 node) : NULL;
	}
	if (unlikely(!p))
		return segpool_alloc_failed(NULL, size, gfp, node);
	return p;
}

SEGPOOL_API void *segpool_kmalloc(size_t size, unsigned int gfp)
{
	return segpool_kmalloc_node(size, gfp, SEGPOOL_NUMA_NO_NODE);
}

SEGPOOL_API void segpool_kfree(const void *ptr)
{
	if (unlikely(SEGPOOL_ZERO_OR_NULL_PTR(ptr)))
		return;
	sp_free_open((void *)(uintptr_t)ptr);
}

SEGPOOL_API void segpool_kfree_sensitive(const void *ptr)
{
	void *p = (void *)(uintptr_t)ptr;
	size_t n;

	if (unlikely(SEGPOOL_ZERO_OR_NULL_PTR(ptr)))
		return;
	/* checks @ptr as free does: an interior pointer is reported here */
	n = segpool_usable_size(ptr);
	if (n)
		explicit_bzero(p, n);
	sp_free_open(p);
}

SEGPOOL_API void *segpool_krealloc(void *ptr, size_t size, unsigned int gfp)
{
	size_t old;
	void *p;

	if (unlikely(gfp & ~SEGPOOL_KMALLOC_GFP_VALID)) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(size == 0)) {
		segpool_kfree(ptr);
		return SEGPOOL_ZERO_SIZE_PTR;
	}
	old = SEGPOOL_ZERO_OR_NULL_PTR(ptr) ? 0 : segpool_usable_size(ptr);
	if (old && size <= old) {
		/* in place; keep the tail zero for a later grow */
		if (gfp & SEGPOOL_ZERO)
			memset((char *)ptr + size, 0, old - size);
		return ptr;
	}
	p = segpool_kmalloc(size, gfp & ~SEGPOOL_ZERO);
	if (!p)
		return NULL;
	if (old)
		memcpy(p, ptr, old);
	if (gfp & SEGPOOL_ZERO)
		memset((char *)p + old, 0, segpool_usable_size(p) - old);
	segpool_kfree(ptr);
	return p;
}
