// SPDX-License-Identifier: MIT
/*
 * tools/bench/contenders.c - who competes, and how each one allocates.
 *
 * segpool's two APIs are linked into this program; the malloc contenders
 * are one and the same malloc() call, served by glibc or by the library the
 * driver preloaded into the child (verify.c checks which).  The harness
 * floor (floor.c) stands in for "no allocator" and shows what the loop
 * around the calls costs by itself.
 *
 * segpool-cache-lock and segpool-cache-off are segpool-cache's very code in
 * a child whose environment has SEGPOOL_PERCPU=lock or off (spawn.c), so
 * one run measures the per-CPU layer in each of its modes.
 * segpool-preload is the malloc contender run with libsegpool-malloc.so
 * preloaded: segpool as an unmodified program meets it.
 * segpool-cache-nostats is the same code again, from a build of segpool
 * whose fast path keeps no hit counters (make bench-stats-cost): what the
 * statistics cost, measured side by side.
 * segpool-cache-inline is segpool-cache's calls built with SEGPOOL_INLINE
 * (contender_inline.c): the hit in the caller, a miss a call.
 * segpool-cache-plain and segpool-cache-off-plain are segpool-cache and
 * segpool-cache-off with SEGPOOL_FREELIST_HARDENED=0: beside them they show
 * what freelist hardening costs (in off mode every operation is a slab
 * operation, so the cost there is the most any operation pays).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "tools/bench/bench.h"

/*
 * The built-in contenders, then room for BENCH_MAX_EXTRA peers named on
 * the command line (--peer NAME=LIBRARY: bench_add_peer()).
 */
struct bench_contender bench_contenders[BENCH_NR_BUILTIN + BENCH_MAX_EXTRA] = {
	{
		.name = "segpool-cache", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool_cache_alloc(), one cache per size class",
		.malloc_from = "libc.so.6", .percpu = "rseq",
	}, {
		.name = "segpool-cache-lock", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache with SEGPOOL_PERCPU=lock",
		.malloc_from = "libc.so.6", .percpu = "lock",
	}, {
		.name = "segpool-cache-off", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache with SEGPOOL_PERCPU=off",
		.malloc_from = "libc.so.6", .percpu = "off",
	}, {
		.name = "segpool-cache-nostats", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache built without fast-path hit counters",
		.malloc_from = "libc.so.6", .percpu = "rseq",
		.exec_suffix = "-nostats", .mode_note = "no hit counters",
	}, {
		.name = "segpool-cache-plain", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache with SEGPOOL_FREELIST_HARDENED=0",
		.malloc_from = "libc.so.6", .percpu = "rseq",
		.env = "SEGPOOL_FREELIST_HARDENED=0",
	}, {
		.name = "segpool-cache-off-plain", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache-off with SEGPOOL_FREELIST_HARDENED=0",
		.malloc_from = "libc.so.6", .percpu = "off",
		.env = "SEGPOOL_FREELIST_HARDENED=0",
	}, {
		.name = "segpool-cache-inline", .kind = BENCH_SEGPOOL_CACHE,
		.title = "segpool-cache built with SEGPOOL_INLINE (hit inline)",
		.malloc_from = "libc.so.6", .percpu = "rseq", .inline_api = true,
	}, {
		.name = "segpool-malloc", .kind = BENCH_SEGPOOL_MALLOC,
		.title = "segpool_malloc() size classes",
		.malloc_from = "libc.so.6", .percpu = "rseq",
	}, {
		.name = "glibc", .kind = BENCH_MALLOC, .peer = true,
		.title = "glibc malloc", .package = "libc6",
		.malloc_from = "libc.so.6", .trim_sym = "malloc_trim",
	}, {
		.name = "jemalloc", .kind = BENCH_MALLOC, .peer = true,
		.title = "jemalloc (LD_PRELOAD)", .package = "libjemalloc2",
		.soname = "libjemalloc.so.2", .malloc_from = "libjemalloc.so.2",
		.trim_sym = "mallctl",
	}, {
		.name = "tcmalloc", .kind = BENCH_MALLOC, .peer = true,
		.title = "tcmalloc minimal (LD_PRELOAD)",
		.package = "libtcmalloc-minimal4",
		.soname = "libtcmalloc_minimal.so.4",
		.malloc_from = "libtcmalloc_minimal.so.4",
		.trim_sym = "MallocExtension_ReleaseFreeMemory",
	}, {
		.name = "mimalloc", .kind = BENCH_MALLOC, .peer = true,
		.title = "mimalloc (LD_PRELOAD)", .package = "libmimalloc2.0",
		.soname = "libmimalloc.so.2", .malloc_from = "libmimalloc.so.2",
		.trim_sym = "mi_collect",
	}, {
		/* segpool itself under an unmodified program (malloc/):
		 * make bench finds it through SEGPOOL_BENCH_LIBPATH */
		.name = "segpool-preload", .kind = BENCH_MALLOC,
		.title = "libsegpool-malloc.so (LD_PRELOAD)",
		.soname = "libsegpool-malloc.so.0",
		.malloc_from = "libsegpool-malloc.so.0",
		.trim_sym = "malloc_trim",
	}, {
		.name = "floor", .kind = BENCH_FLOOR,
		.title = "harness floor: no allocator (per-thread LIFO of slots)",
		.malloc_from = "libc.so.6",
	},
};

unsigned int bench_nr_contenders = BENCH_NR_BUILTIN;


/* Names and paths of the command line's peers (bench_contenders points in). */
static char bench_extra_name[BENCH_MAX_EXTRA][32];
static char bench_extra_path[BENCH_MAX_EXTRA][PATH_MAX];

int bench_add_peer(const char *spec)
{
	const char *eq = strchr(spec, '=');
	struct bench_contender *c;
	unsigned int k = bench_nr_contenders - BENCH_NR_BUILTIN;
	size_t nlen;

	if (!eq || eq == spec || !eq[1])
		return -EINVAL;
	nlen = (size_t)(eq - spec);
	if (nlen >= sizeof(bench_extra_name[0]) ||
	    strlen(eq + 1) >= sizeof(bench_extra_path[0]) || eq[1] != '/')
		return -EINVAL;
	if (k >= BENCH_MAX_EXTRA)
		return -ENOSPC;
	/* BENCH_NR_BUILTIN must count the table's initialisers */
	if (!bench_contenders[BENCH_NR_BUILTIN - 1].name ||
	    (k == 0 && bench_contenders[BENCH_NR_BUILTIN].name != NULL))
		return -EINVAL;
	memcpy(bench_extra_name[k], spec, nlen);
	bench_extra_name[k][nlen] = '\0';
	if (bench_contender_find(bench_extra_name[k]))
		return -EEXIST;
	/*
	 * the file itself, not a symlink to it: /proc/self/maps names the
	 * file, and the check compares whole paths
	 */
	if (!realpath(eq + 1, bench_extra_path[k]))
		strcpy(bench_extra_path[k], eq + 1);
	c = &bench_contenders[bench_nr_contenders++];
	c->name = bench_extra_name[k];
	c->title = bench_extra_path[k];
	c->kind = BENCH_MALLOC;
	c->peer = true;
	c->soname = bench_extra_path[k];	/* absolute: used as it is */
	c->malloc_from = strrchr(bench_extra_path[k], '/') + 1;
	return 0;
}

const struct bench_contender *bench_contender_find(const char *name)
{
	for (unsigned int i = 0; i < bench_nr_contenders; i++)
		if (!strcmp(bench_contenders[i].name, name))
			return &bench_contenders[i];
	return NULL;
}

struct bench_heap bench_heap;

/* The contender bench_heap_setup() set up, for trim and teardown. */
static const struct bench_contender *bench_heap_owner;

/* --- segpool caches: a cache per class, found by (size + 7) / 8 ---------- */

static struct segpool_cache *bench_caches[BENCH_MAX_CLASSES];
static unsigned int bench_nr_caches;
struct segpool_cache *bench_cache_of[BENCH_CACHE_MAX_SIZE / 8 + 1];

static void *bench_cache_alloc(size_t size)
{
	return segpool_cache_alloc(bench_cache_of[(size + 7) >> 3], 0);
}

static void bench_cache_free(void *p, size_t size)
{
	segpool_cache_free(bench_cache_of[(size + 7) >> 3], p);
}

static int bench_caches_create(const struct bench_sizes *s)
{
	unsigned int k = 0;

	if (s->max > BENCH_CACHE_MAX_SIZE || s->nr == 0) {
		bench_warn("segpool-cache: sizes up to %d bytes only",
			   BENCH_CACHE_MAX_SIZE);
		return -1;
	}
	for (unsigned int i = 0; i < s->nr; i++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-%zu", s->cls[i]);
		bench_caches[i] = segpool_cache_create(name, s->cls[i], 0, 0,
						       NULL);
		if (!bench_caches[i]) {
			bench_warn("segpool_cache_create(%s): %s", name,
				   strerror(errno));
			return -1;
		}
		bench_nr_caches = i + 1;
	}
	/* every size up to the largest class maps to the class that holds it */
	for (size_t slot = 0; slot <= (s->max + 7) / 8; slot++) {
		while (k < s->nr && s->cls[k] < slot * 8)
			k++;
		bench_cache_of[slot] = bench_caches[k < s->nr ? k : s->nr - 1];
	}
	return 0;
}

/* --- segpool_malloc and malloc ------------------------------------------ */

static void *bench_segpool_malloc(size_t size)
{
	return segpool_malloc(size);
}

static void bench_segpool_free(void *p, size_t size)
{
	(void)size;
	segpool_free(p);
}

static void *bench_segpool_realloc(void *p, size_t size)
{
	return segpool_realloc(p, size);
}

static void bench_segpool_big_free(void *p)
{
	segpool_free(p);
}

static void *bench_libc_realloc(void *p, size_t size)
{
	return realloc(p, size);
}

static void bench_libc_big_free(void *p)
{
	free(p);
}

static void *bench_malloc(size_t size)
{
	return malloc(size);
}

static void bench_libc_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

int bench_heap_setup(const struct bench_contender *c,
		     const struct bench_sizes *sizes)
{
	bench_heap_owner = c;
	bench_heap.realloc = NULL;
	bench_heap.big_alloc = bench_segpool_malloc;
	bench_heap.big_free = bench_segpool_big_free;
	switch (c->kind) {
	case BENCH_SEGPOOL_CACHE:
		bench_heap.alloc = c->inline_api ? bench_cache_alloc_inline
						 : bench_cache_alloc;
		bench_heap.free = c->inline_api ? bench_cache_free_inline
						: bench_cache_free;
		return bench_caches_create(sizes);
	case BENCH_SEGPOOL_MALLOC:
		bench_heap.alloc = bench_segpool_malloc;
		bench_heap.free = bench_segpool_free;
		bench_heap.realloc = bench_segpool_realloc;
		return 0;
	case BENCH_MALLOC:
		bench_heap.alloc = bench_malloc;
		bench_heap.free = bench_libc_free;
		bench_heap.realloc = bench_libc_realloc;
		bench_heap.big_alloc = bench_malloc;
		bench_heap.big_free = bench_libc_big_free;
		return 0;
	case BENCH_FLOOR:
		bench_heap.big_alloc = NULL;
		bench_heap.big_free = NULL;
		bench_heap.alloc = bench_floor_alloc;
		bench_heap.free = bench_floor_free;
		return bench_floor_setup(sizes->max);
	}
	return -1;
}

/* --- giving memory back -------------------------------------------------- */

const char *bench_heap_trim(void)
{
	const struct bench_contender *c = bench_heap_owner;
	void *sym;

	switch (c->kind) {
	case BENCH_SEGPOOL_CACHE: {
		static char what[48];
		int slabs = 0;

		for (unsigned int i = 0; i < bench_nr_caches; i++) {
			int n = segpool_cache_shrink(bench_caches[i]);

			if (n < 0)
				return "segpool_cache_shrink failed";
			slabs += n;
		}
		snprintf(what, sizeof(what), "segpool_cache_shrink: %d slab%s",
			 slabs, slabs == 1 ? "" : "s");
		return what;
	}
	case BENCH_SEGPOOL_MALLOC:
		return "none (no public trim for size classes)";
	case BENCH_FLOOR:
		return "none";
	case BENCH_MALLOC:
		break;
	}
	/* each peer's own entry point, found in its own library */
	sym = c->trim_sym ? bench_contender_sym(c, c->trim_sym) : NULL;
	if (!sym)
		return "none (entry point not found)";
	if (!strcmp(c->trim_sym, "malloc_trim")) {
		((int (*)(size_t))sym)(0);
		return "malloc_trim(0)";
	}
	if (!strcmp(c->trim_sym, "mallctl")) {
		/* MALLCTL_ARENAS_ALL is 4096: purge every arena */
		if (((bench_mallctl_fn)sym)("arena.4096.purge", NULL, NULL,
					    NULL, 0))
			return "mallctl arena.4096.purge failed";
		return "mallctl(\"arena.4096.purge\")";
	}
	if (!strcmp(c->trim_sym, "mi_collect")) {
		((void (*)(bool))sym)(true);
		return "mi_collect(true)";
	}
	if (!strcmp(c->trim_sym, "MallocExtension_ReleaseFreeMemory")) {
		((void (*)(void))sym)();
		return "MallocExtension_ReleaseFreeMemory()";
	}
	return "none (unknown entry point)";
}

/* --- what the per-CPU layer holds ------------------------------------------ */

void bench_heap_cached(struct bench_result *res)
{
	if (!bench_heap_owner || bench_heap_owner->kind != BENCH_SEGPOOL_CACHE)
		return;
	for (unsigned int i = 0; i < bench_nr_caches; i++) {
		struct segpool_cache_info info = { .size = sizeof(info) };

		if (segpool_cache_get_info(bench_caches[i], &info)) {
			bench_warn("segpool_cache_get_info(%s) failed",
				   segpool_cache_name(bench_caches[i]));
			return;
		}
		res->cpu_objs += info.cpu_objs;
		res->depot_objs += info.depot_objs;
		res->cached_bytes += (info.cpu_objs + info.depot_objs) *
				     info.object_size;
		res->cpu_bytes += info.cpu_objs * info.object_size;
		if (info.mag_size > res->mag_size)
			res->mag_size = info.mag_size;
		if (info.depot_max > res->depot_max)
			res->depot_max = info.depot_max;
		res->fast_allocs += info.alloc_fastpath;
		res->slow_allocs += info.alloc_slowpath;
		res->fast_frees += info.free_fastpath;
		res->slow_frees += info.free_slowpath;
	}
	res->caches = bench_nr_caches;
	res->has_cached = true;
}

void bench_heap_teardown(void)
{
	if (!bench_heap_owner || bench_heap_owner->kind != BENCH_SEGPOOL_CACHE)
		return;
	for (unsigned int i = 0; i < bench_nr_caches; i++)
		if (segpool_cache_destroy(bench_caches[i]))
			bench_warn("segpool_cache_destroy(%s) failed",
				   segpool_cache_name(bench_caches[i]));
	bench_nr_caches = 0;
}
