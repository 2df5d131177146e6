// SPDX-License-Identifier: MIT
/*
 * selftests/stress/test_percpu_stress.c - the per-CPU layer under many threads.
 *
 * 2, 8 and 64 threads share the machine's CPUs (heavy preemption, and some
 * threads hop between CPUs by themselves), each allocating, freeing,
 * allocating and freeing in bulk, and handing objects to other threads
 * through locked inboxes, so that many objects are freed on another thread
 * and another CPU than the one that allocated them.  Every object is checked
 * twice over:
 *
 *   - the ownership map, a hash set of live pointers split into stripes
 *     under their own mutexes: an object handed out must be absent from it
 *     (else it was handed out twice), an object freed must be present with
 *     the tag of its owner (else it was lost or freed twice);
 *   - its whole size is filled with a pattern derived from its tag when it
 *     is handed out, and the pattern is verified before it is freed (and now
 *     and then while it is held), so an object that a magazine gave to
 *     someone else, or a drain returned to its slab, shows.
 *
 * Further: one thread that moves itself between CPUs every few operations
 * and checks the counts of its own cache against what it did, and caches
 * created, filled on several CPUs, shrunk and destroyed while other threads
 * allocate from other caches (which are shrunk under them, too).  At the end
 * every cache has no live object, its allocs and frees are exactly what the
 * threads did, and it is destroyed.
 *
 * The per-CPU mode is fixed per process, so the program runs once per mode,
 * each run a variant (SP_TEST_MAIN_VARIANTS; see selftests/unit/test_percpu.c).
 * Loads shrink under valgrind and the sanitizers, or by SEGPOOL_TEST_SCALE
 * (sp_test_scaled()).  Random choices come from sp_test_seed().
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "os/cpu.h"
#include "numa/region.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "prof/prof.h"
#include "selftests/lib/harness.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

/* --- variants: one run per mode ------------------------------------------- */

static const char *const env_rseq_mm_cid[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID=mm_cid", NULL,
};

/* two emulated nodes: remote frees everywhere, through the remote lanes */
static const char *const env_rseq_2nodes[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_FAKE_NODES=2",
	NULL,
};

/*
 * Sampled heap profiling on, a sample every 64 KiB: every hit path the
 * counted build's, and some 10,000 sampled objects swapped in and out of
 * their own slabs, under the same ownership and count checks (one file,
 * overwritten by each run, holds the profile written at exit).  Every
 * 512 bytes it is 1.4 million samples: a second on x86-64's learned walk,
 * far too long on an emulated arm64 machine, where each is libgcc's.
 */
static const char *const env_rseq_sampled[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID",
	"SEGPOOL_HEAP_PROFILE=/tmp/segpool-selftest-stress.heap",
	"SEGPOOL_HEAP_SAMPLE=65536", NULL,
};

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=rseq,heap_sampled", env_rseq_sampled },
	{ "mode=rseq_mm_cid", env_rseq_mm_cid },
	{ "mode=rseq,nodes=2_emulated", env_rseq_2nodes },
	{ "mode=lock", sp_test_env_percpu_lock },
	{ "mode=off", sp_test_env_percpu_off },
};

/* --- failures seen on any thread ------------------------------------------ */

static atomic_int errors;

static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&errors, 1) >= 16)
		return;
	va_start(ap, fmt);
	fputs("# percpu stress: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* --- the ownership map ---------------------------------------------------- */

/*
 * Striped: stripe = hash % MAP_STRIPES, each an open-addressing table
 * (linear probing, deletion by backward shift) under its own mutex.
 */
#define MAP_STRIPES	64
#define MAP_SLOTS	1024		/* per stripe, a power of two */

struct map_entry {
	uintptr_t p;
	uint64_t tag;
};

struct map_stripe {
	pthread_mutex_t lock;
	unsigned int used;
	struct map_entry e[MAP_SLOTS];
} __attribute__((aligned(64)));

static struct map_stripe *owners;
static atomic_long owners_live;

static uint64_t hash_ptr(uintptr_t p)
{
	uint64_t h = p;

	h ^= h >> 31;
	h *= 0x7fb5d329728ea185ULL;
	h ^= h >> 27;
	h *= 0x81dadef4bc2dd44dULL;
	h ^= h >> 33;
	return h;
}

static void owners_init(void)
{
	owners = aligned_alloc(64, sizeof(*owners) * MAP_STRIPES);
	assert_non_null(owners);
	memset(owners, 0, sizeof(*owners) * MAP_STRIPES);
	for (int i = 0; i < MAP_STRIPES; i++)
		pthread_mutex_init(&owners[i].lock, NULL);
	atomic_store(&owners_live, 0);
}

static void owners_fini(void)
{
	for (int i = 0; i < MAP_STRIPES; i++)
		pthread_mutex_destroy(&owners[i].lock);
	free(owners);
	owners = NULL;
}

/* Claim @p for @tag: it must not be anybody's. */
static void owners_claim(const void *obj, uint64_t tag)
{
	uintptr_t p = (uintptr_t)obj;
	uint64_t h = hash_ptr(p);
	struct map_stripe *s = &owners[h % MAP_STRIPES];
	size_t i = (size_t)(h / MAP_STRIPES) & (MAP_SLOTS - 1);

	pthread_mutex_lock(&s->lock);
	for (; s->e[i].p; i = (i + 1) & (MAP_SLOTS - 1)) {
		if (s->e[i].p == p) {
			uint64_t other = s->e[i].tag;

			pthread_mutex_unlock(&s->lock);
			report("object %p handed out as tag %#" PRIx64
			       " while live as tag %#" PRIx64, obj, tag, other);
			return;
		}
	}
	if (s->used + 1 >= MAP_SLOTS) {
		pthread_mutex_unlock(&s->lock);
		report("ownership map stripe full (test limit)");
		return;
	}
	s->e[i].p = p;
	s->e[i].tag = tag;
	s->used++;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add_explicit(&owners_live, 1, memory_order_relaxed);
}

/* Give @p up before its free: it must be live, and @tag's. */
static void owners_release(const void *obj, uint64_t tag)
{
	uintptr_t p = (uintptr_t)obj;
	uint64_t h = hash_ptr(p);
	struct map_stripe *s = &owners[h % MAP_STRIPES];
	size_t mask = MAP_SLOTS - 1, i = (size_t)(h / MAP_STRIPES) & mask, j;
	uint64_t found;

	pthread_mutex_lock(&s->lock);
	while (s->e[i].p != p) {
		if (!s->e[i].p) {
			pthread_mutex_unlock(&s->lock);
			report("object %p (tag %#" PRIx64
			       ") not live at its free",
			       obj, tag);
			return;
		}
		i = (i + 1) & mask;
	}
	found = s->e[i].tag;
	s->e[i].p = 0;
	s->used--;
	for (j = (i + 1) & mask; s->e[j].p; j = (j + 1) & mask) {
		size_t home = (size_t)(hash_ptr(s->e[j].p) / MAP_STRIPES) &
			      mask;
		bool stays = i <= j ? (home > i && home <= j) :
				      (home > i || home <= j);

		if (!stays) {
			s->e[i] = s->e[j];
			s->e[j].p = 0;
			i = j;
		}
	}
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_sub_explicit(&owners_live, 1, memory_order_relaxed);
	if (found != tag)
		report("object %p freed as tag %#" PRIx64
		       " but owned by %#" PRIx64,
		       obj, tag, found);
}

/* --- caches and items ----------------------------------------------------- */

#define NKINDS		3
static const size_t kind_size[NKINDS] = { 24, 128, 640 };

struct item {
	void *p;
	uint64_t tag;
	unsigned int kind;
};

static struct segpool_cache *make_cache(const char *what, int k)
{
	char name[48];
	struct segpool_cache *c;

	snprintf(name, sizeof(name), "pst-%s-%zu", what, kind_size[k]);
	c = segpool_cache_create(name, kind_size[k], 0,
				 k == 1 ? SEGPOOL_HWCACHE_ALIGN : 0, NULL);
	assert_non_null(c);
	return c;
}

/*
 * The end state of a cache: nothing live, exactly @allocs allocations and
 * as many frees, nothing left anywhere after a shrink, and it can be
 * destroyed.
 */
static void finish_cache(struct segpool_cache *c, unsigned long allocs)
{
	struct segpool_cache_info info = sp_test_info(c);

	if (info.active_objs != 0 || info.allocs != allocs ||
	    info.frees != allocs)
		fail_msg("%s: %" PRIu64 " live, %" PRIu64 " allocs and %" PRIu64
			 " frees; the threads did %lu of each",
			 segpool_cache_name(c), info.active_objs, info.allocs,
			 info.frees, allocs);
	assert_true(info.cpu_objs + info.depot_objs <= info.total_objs);
	assert_true(segpool_cache_shrink(c) >= 0);
	info = sp_test_info(c);
	if (info.cpu_objs || info.depot_objs || info.total_slabs ||
	    info.active_objs)
		fail_msg("%s after shrink: %" PRIu64
			 " objects on CPUs, %" PRIu64 " in depots, %" PRIu64
			 " slabs, %" PRIu64 " live",
			 segpool_cache_name(c), info.cpu_objs, info.depot_objs,
			 info.total_slabs, info.active_objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- workers -------------------------------------------------------------- */

#define HELD_MAX	64
#define INBOX_MAX	32
#define BULK_MAX	16

struct run;

struct worker {
	pthread_t th;
	struct run *run;
	int id;
	bool hops;			/* moves itself between CPUs */
	uint64_t rng, seq;
	struct item held[HELD_MAX];
	size_t nheld;
	pthread_mutex_t inbox_lock;
	struct item inbox[INBOX_MAX];
	size_t ninbox;
	unsigned long allocs[NKINDS], frees[NKINDS];
	unsigned long handed, cross_freed, hops_done;
} __attribute__((aligned(64)));

struct run {
	struct segpool_cache *caches[NKINDS];
	struct worker *w;
	int nthreads;
	unsigned long ops;		/* per worker; 0: until @stop */
	atomic_bool stop;
	atomic_ulong cross_seen;	/* workers that freed another's */
	atomic_int running;		/* workers not yet at @done */
	pthread_barrier_t start, done;
};

static uint64_t rnd(struct worker *w)
{
	return sp_test_rand(&w->rng);
}

/* A fresh object: claim it, write its pattern, hold it. */
static void adopt(struct worker *w, void *p, unsigned int kind)
{
	struct item *it;

	if (w->nheld >= HELD_MAX) {
		report("thread %d: held list overflow (test bug)", w->id);
		return;
	}
	if ((uintptr_t)p % 8) {
		report("object %p misaligned", p);
		return;
	}
	if (kind == 1 && (uintptr_t)p % 64)
		report("HWCACHE_ALIGN object %p not line-aligned", p);
	it = &w->held[w->nheld++];
	it->p = p;
	it->kind = kind;
	it->tag = ((uint64_t)(w->id + 1) << 40) | ++w->seq;
	owners_claim(p, it->tag);
	sp_test_pattern_fill(p, kind_size[kind], it->tag);
	w->allocs[kind]++;
}

/* Last checks before @it's free. */
static void surrender(const struct item *it)
{
	size_t size = kind_size[it->kind];
	size_t bad = sp_test_pattern_check(it->p, size, it->tag);

	if (bad != size)
		report("object %p (size %zu, tag %#" PRIx64
		       "): byte %zu overwritten",
		       it->p, size, it->tag, bad);
	owners_release(it->p, it->tag);
}

static struct item take(struct worker *w, size_t i)
{
	struct item it = w->held[i];

	w->held[i] = w->held[--w->nheld];
	return it;
}

static void free_item(struct worker *w, const struct item *it)
{
	surrender(it);
	segpool_cache_free(w->run->caches[it->kind], it->p);
	w->frees[it->kind]++;
}

static void op_alloc(struct worker *w)
{
	unsigned int kind = (unsigned int)(rnd(w) % NKINDS);
	void *p = segpool_cache_alloc(w->run->caches[kind], 0);

	if (!p) {
		report("thread %d: alloc of %zu failed: %s", w->id,
		       kind_size[kind], strerror(errno));
		return;
	}
	adopt(w, p, kind);
}

static void op_free(struct worker *w)
{
	struct item it;

	if (!w->nheld)
		return;
	it = take(w, (size_t)(rnd(w) % w->nheld));
	free_item(w, &it);
}

static void op_alloc_bulk(struct worker *w)
{
	uint64_t x = rnd(w);
	unsigned int kind = (unsigned int)(x % NKINDS);
	size_t n = 1 + (size_t)(x >> 8) % BULK_MAX;
	void *objs[BULK_MAX];

	if (w->nheld + n > HELD_MAX)
		return;
	if (segpool_cache_alloc_bulk(w->run->caches[kind], 0, n, objs) !=
	    (int)n) {
		report("thread %d: alloc_bulk(%zu) failed: %s", w->id, n,
		       strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++)
		adopt(w, objs[i], kind);
}

static void op_free_bulk(struct worker *w)
{
	unsigned int kind = (unsigned int)(rnd(w) % NKINDS);
	void *objs[BULK_MAX];
	size_t n = 0;

	for (size_t i = w->nheld; i-- > 0 && n < BULK_MAX;) {
		struct item it;

		if (w->held[i].kind != kind)
			continue;
		it = take(w, i);
		surrender(&it);
		objs[n++] = it.p;
	}
	segpool_cache_free_bulk(w->run->caches[kind], n, objs);
	w->frees[kind] += n;
}

/* Give one held object to another thread, which will free it. */
static void op_hand_off(struct worker *w)
{
	struct run *r = w->run;
	struct worker *to;
	uint64_t x = rnd(w);
	size_t i;

	if (!w->nheld || r->nthreads < 2)
		return;
	to = &r->w[(w->id + 1 + (int)(x % (uint64_t)(r->nthreads - 1))) %
		   r->nthreads];
	i = (size_t)(x >> 32) % w->nheld;
	pthread_mutex_lock(&to->inbox_lock);
	if (to->ninbox < INBOX_MAX) {
		to->inbox[to->ninbox++] = w->held[i];
		pthread_mutex_unlock(&to->inbox_lock);
		take(w, i);
		w->handed++;
	} else {
		pthread_mutex_unlock(&to->inbox_lock);
	}
}

/* Objects handed to us: most are freed here, some kept (after a check). */
static void op_inbox(struct worker *w, bool keep_some)
{
	struct item got[INBOX_MAX];
	size_t n;

	pthread_mutex_lock(&w->inbox_lock);
	n = w->ninbox;
	memcpy(got, w->inbox, n * sizeof(got[0]));
	w->ninbox = 0;
	pthread_mutex_unlock(&w->inbox_lock);
	for (size_t i = 0; i < n; i++) {
		size_t size = kind_size[got[i].kind];

		if (keep_some && rnd(w) % 4 == 0 && w->nheld < HELD_MAX) {
			if (sp_test_pattern_check(got[i].p, size,
						  got[i].tag) != size)
				report("handed-over object %p overwritten",
				       got[i].p);
			w->held[w->nheld++] = got[i];
			continue;
		}
		/*
		 * freed by a thread (and maybe on
		 * a CPU) other than its allocator's
		 */
		surrender(&got[i]);
		segpool_cache_free(w->run->caches[got[i].kind], got[i].p);
		w->frees[got[i].kind]++;
		if (!w->cross_freed++)
			atomic_fetch_add(&w->run->cross_seen, 1);
	}
}

/* Verify one held object in place. */
static void op_verify(struct worker *w)
{
	const struct item *it;

	if (!w->nheld)
		return;
	it = &w->held[rnd(w) % w->nheld];
	if (sp_test_pattern_check(it->p, kind_size[it->kind], it->tag) !=
	    kind_size[it->kind])
		report("held object %p (tag %#" PRIx64 ") overwritten", it->p,
		       it->tag);
}

static void op_hop(struct worker *w)
{
	if (sp_test_nr_cpus() < 2)
		return;
	if (sp_test_pin(sp_test_allowed_cpu((unsigned int)rnd(w))) == 0)
		w->hops_done++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	pthread_barrier_wait(&r->start);
	for (unsigned long op = 0;
	     r->ops ? op < r->ops :
		      !atomic_load_explicit(&r->stop, memory_order_relaxed);
	     op++) {
		unsigned int x = (unsigned int)(rnd(w) % 128);

		if (op % 16 == 0)
			op_inbox(w, true);
		if (w->hops && op % 32 == 16)
			op_hop(w);
		if (w->nheld < 4 || x < 48) {
			if (w->nheld < HELD_MAX)
				op_alloc(w);
			else
				op_free(w);
		} else if (x < 82) {
			op_free(w);
		} else if (x < 98) {
			op_hand_off(w);
		} else if (x < 108) {
			op_alloc_bulk(w);
		} else if (x < 118) {
			op_free_bulk(w);
		} else if (x < 120) {
			sched_yield();
		} else {
			op_verify(w);
		}
	}
	atomic_fetch_sub(&r->running, 1);
	/* no hand-offs after this barrier: the inbox empties for good */
	pthread_barrier_wait(&r->done);
	op_inbox(w, false);
	while (w->nheld) {
		struct item it = take(w, w->nheld - 1);

		free_item(w, &it);
	}
	if (w->hops)
		sp_test_unpin();
	return NULL;
}

static void run_init(struct run *r, const char *what, int nthreads,
		     unsigned long ops_per_thread)
{
	uint64_t seed = sp_test_seed();

	memset(r, 0, sizeof(*r));
	r->nthreads = nthreads;
	r->ops = ops_per_thread;
	for (int k = 0; k < NKINDS; k++)
		r->caches[k] = make_cache(what, k);
	r->w = aligned_alloc(64, sizeof(*r->w) * (size_t)nthreads);
	assert_non_null(r->w);
	memset(r->w, 0, sizeof(*r->w) * (size_t)nthreads);
	assert_int_equal(pthread_barrier_init(&r->start, NULL,
					      (unsigned)nthreads + 1), 0);
	assert_int_equal(
		pthread_barrier_init(&r->done, NULL, (unsigned)nthreads), 0);
	for (int i = 0; i < nthreads; i++) {
		struct worker *w = &r->w[i];

		w->run = r;
		w->id = i;
		w->hops = i % 4 == 3;	/* every fourth thread hops CPUs */
		w->rng = (seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)) ^
			  ((uint64_t)nthreads << 48)) | 1;
		pthread_mutex_init(&w->inbox_lock, NULL);
	}
	atomic_store(&errors, 0);
	atomic_store(&r->running, nthreads);
	owners_init();
	for (int i = 0; i < nthreads; i++)
		assert_int_equal(pthread_create(&r->w[i].th, NULL, worker_main,
						&r->w[i]), 0);
}

/* Join the workers (after they were released) and check everything. */
static void run_finish(struct run *r)
{
	unsigned long allocs[NKINDS] = { 0 }, frees[NKINDS] = { 0 };
	unsigned long handed = 0, cross = 0, hops = 0, total = 0;

	for (int i = 0; i < r->nthreads; i++) {
		struct worker *w = &r->w[i];

		assert_int_equal(pthread_join(w->th, NULL), 0);
		for (int k = 0; k < NKINDS; k++) {
			allocs[k] += w->allocs[k];
			frees[k] += w->frees[k];
		}
		handed += w->handed;
		cross += w->cross_freed;
		hops += w->hops_done;
		pthread_mutex_destroy(&w->inbox_lock);
	}
	pthread_barrier_destroy(&r->start);
	pthread_barrier_destroy(&r->done);
	for (int k = 0; k < NKINDS; k++)
		total += allocs[k];
	print_message("# %d threads: %lu allocs, %lu handed over, %lu freed "
		      "by another thread, %lu CPU hops\n",
		      r->nthreads, total, handed, cross, hops);
	assert_int_equal(atomic_load(&errors), 0);
	assert_int_equal(atomic_load(&owners_live), 0);
	for (int k = 0; k < NKINDS; k++) {
		assert_int_equal(allocs[k], frees[k]);
		finish_cache(r->caches[k], allocs[k]);
	}
	if (r->nthreads > 1)
		assert_true(cross > 0);
	owners_fini();
	free(r->w);
}

/*
 * While the workers run, their caches' magazine limit changes under them,
 * again and again, to a class drawn at random: a lower limit shrinks the class
 * new magazines take while full ones of the larger class are loaded, a
 * higher one lets the sizing grow it again, so swaps and depot exchanges
 * meet magazines of two sizes all the time.  (A swap that centred the
 * rounds of a larger magazine into a smaller one once left a top past the
 * end of its magazine, and the demo crashed now and then.)
 */
static void retune(struct run *r)
{
	uint64_t rng = sp_test_seed() ^ 0x7475u;
	const struct timespec pause = { 0, 50000 };
	unsigned long n = 0;

	while (atomic_load(&r->running) > 0) {
		struct segpool_cache_tunables tun = {
			.mag_size = sp_mag_class_cap(sp_test_rand(&rng) %
						     SP_MAG_CLASSES),
		};
		struct segpool_cache *c =
			r->caches[sp_test_rand(&rng) % NKINDS];
		int ret = segpool_cache_set_tunables(c, &tun);

		if (ret && !(ret == -ENOTSUP && sp_pcpu_mode == SP_PCPU_OFF))
			atomic_fetch_add(&errors, 1);
		n++;
		nanosleep(&pause, NULL);
	}
	print_message("# %lu magazine limits set while the workers ran\n", n);
}

static void stress(int nthreads, unsigned long total_ops)
{
	/* static: workers outlive the frame if an assertion fails */
	static struct run r;
	char what[16];

	snprintf(what, sizeof(what), "t%d", nthreads);
	run_init(&r, what, nthreads,
		 sp_test_scaled(total_ops, 2000) / (unsigned long)nthreads);
	pthread_barrier_wait(&r.start);
	retune(&r);
	run_finish(&r);
}

/* --- the tests ------------------------------------------------------------ */

/* "rseq", "rseq_mm_cid", "lock" or "off": what this run was started for. */
static const char *mode_wanted(void)
{
	const char *v = sp_test_variant();
	const char *prefix = "mode=";

	if (!v || strncmp(v, prefix, strlen(prefix)))
		fail_msg("unknown variant %s", v ? v : "(none)");
	return v + strlen(prefix);
}

/* The child runs in the mode it was started for (or rseq's fallback, which
 * test_percpu checks happens only where rseq cannot work). */
static void test_mode_as_asked(void **state)
{
	const char *mode = segpool_percpu_mode();
	const char *want = mode_wanted();

	(void)state;
	print_message("# variant %s: mode \"%s\"\n", sp_test_variant(), mode);
	if (!strcmp(want, "lock")) {
		assert_int_equal(sp_pcpu_mode, SP_PCPU_LOCK);
		assert_true(!strncmp(mode, "lock (", 6));
	} else if (!strcmp(want, "off")) {
		assert_int_equal(sp_pcpu_mode, SP_PCPU_OFF);
		assert_true(!strncmp(mode, "off (", 5));
	} else if (sp_pcpu_mode != SP_PCPU_RSEQ) {
		assert_int_equal(sp_pcpu_mode, SP_PCPU_LOCK);
		assert_true(!strncmp(mode, "lock (", 6));
		print_message("# rseq unavailable here: running in \"%s\"\n",
			      mode);
	} else {
		assert_true(!strncmp(mode, "rseq (", 6));
		/* sampling runs: its setting was taken */
		if (strstr(want, "heap_sampled"))
			assert_true(sp_prof_active());
		if (!strcmp(want, "rseq_mm_cid") &&
		    getauxval(AT_RSEQ_FEATURE_SIZE) >=
			    SP_RSEQ_MM_CID_OFFSET + 4) {
			assert_non_null(strstr(mode, ", slots by mm_cid"));
			assert_true(sp_pcpu_use_mm_cid);
		}
	}
}

/*
 * An rseq variant that fell back to lock mode (valgrind, TSan) would only
 * repeat variant mode=lock: its loads are skipped, which keeps those slow
 * runs short.
 */
static void skip_if_fallen_back(void)
{
	if (!strncmp(mode_wanted(), "rseq", 4) &&
	    sp_pcpu_mode != SP_PCPU_RSEQ) {
		print_message("# rseq fell back to lock mode here: "
			      "variant mode=lock covers this\n");
		skip();
	}
}

static void test_stress_2_threads(void **state)
{
	(void)state;
	skip_if_fallen_back();
	stress(2, 400000);
}

static void test_stress_8_threads(void **state)
{
	(void)state;
	skip_if_fallen_back();
	stress(8, 400000);
}

static void test_stress_64_threads(void **state)
{
	(void)state;
	skip_if_fallen_back();
	stress(64, 400000);
}

/* --- migration mid-way ---------------------------------------------------- */

struct noise {
	struct segpool_cache *c;
	atomic_bool stop;
	unsigned long pairs;
};

/* Keeps both CPUs busy so the migrating thread is also preempted. */
static void *noise_main(void *arg)
{
	struct noise *n = arg;

	while (!atomic_load_explicit(&n->stop, memory_order_relaxed)) {
		void *p = segpool_cache_alloc(n->c, 0);

		if (!p) {
			report("noise: allocation failed");
			break;
		}
		memset(p, 0xa5, 24);
		segpool_cache_free(n->c, p);
		/* preempts the migrating thread, without starving it */
		if (++n->pairs % 256 == 0)
			sched_yield();
	}
	return NULL;
}

/* Counts of @c equal what this thread did to it (it is the only user). */
static void check_own_counts(struct segpool_cache *c, unsigned long allocs,
			     unsigned long frees, unsigned long live,
			     unsigned long op)
{
	struct segpool_cache_info info = sp_test_info(c);

	if (info.allocs != allocs || info.frees != frees ||
	    info.active_objs != live)
		fail_msg("after op %lu: %" PRIu64 " allocs, %" PRIu64
			 " frees, %" PRIu64
			 " live; the thread did %lu, %lu, %lu",
			 op, info.allocs, info.frees, info.active_objs, allocs,
			 frees, live);
}

static void test_migration(void **state)
{
	struct worker *w;
	static struct run r;		/* static: see stress() */
	static struct noise nz[2];
	static pthread_t nth[2];
	unsigned long ops = sp_test_scaled(40000, 2000), hops = 0, next_hop = 1;
	unsigned long misplaced = 0;
	uint64_t hits_before[2] = { 0, 0 };
	int cpus[2], at = 0;

	(void)state;
	skip_if_fallen_back();
	if (sp_test_nr_cpus() < 2) {
		print_message("# one CPU: nothing to migrate between\n");
		skip();
	}
	cpus[0] = sp_test_allowed_cpu(0);
	cpus[1] = sp_test_allowed_cpu(1);
	/* a one-thread run, driven from here: its worker is this thread */
	memset(&r, 0, sizeof(r));
	r.nthreads = 1;
	r.caches[0] = make_cache("mig", 0);
	r.caches[1] = make_cache("mig", 1);
	r.caches[2] = make_cache("mig", 2);
	r.w = w = aligned_alloc(64, sizeof(*w));
	assert_non_null(w);
	memset(w, 0, sizeof(*w));
	w->run = &r;
	w->rng = sp_test_seed() ^ 0x6d16;
	atomic_store(&errors, 0);
	owners_init();
	for (int i = 0; i < 2; i++) {
		memset(&nz[i], 0, sizeof(nz[i]));
		nz[i].c = make_cache(i ? "noise1" : "noise0", 0);
		assert_int_equal(
			pthread_create(&nth[i], NULL, noise_main, &nz[i]), 0);
	}
	if (r.caches[1]->pcpu && !sp_pcpu_use_mm_cid)
		for (int i = 0; i < 2; i++)
			hits_before[i] =
				sp_slot_alloc_hits(
					&r.caches[1]->pcpu->slots[cpus[i]]);

	for (unsigned long op = 0; op < ops; op++) {
		uint64_t x = rnd(w) % 100;

		if (op == next_hop) {
			/* every 1 to 4 operations: to the other CPU */
			at ^= 1;
			assert_int_equal(sp_test_pin(cpus[at]), 0);
			if (sched_getcpu() != cpus[at])
				misplaced++;
			hops++;
			next_hop = op + 1 + rnd(w) % 4;
		}
		if (w->nheld < 2 || (x < 50 && w->nheld < HELD_MAX)) {
			op_alloc(w);
		} else if (x < 90) {
			op_free(w);
		} else if (x < 95) {
			op_alloc_bulk(w);
		} else {
			op_free_bulk(w);
		}
		if (op % 997 == 0 || op + 1 == ops) {
			for (int k = 0; k < NKINDS; k++) {
				unsigned long live = 0;

				for (size_t i = 0; i < w->nheld; i++)
					live += w->held[i].kind ==
						(unsigned int)k;
				check_own_counts(r.caches[k], w->allocs[k],
						 w->frees[k], live, op);
			}
		}
	}
	for (int i = 0; i < 2; i++) {
		atomic_store(&nz[i].stop, true);
		assert_int_equal(pthread_join(nth[i], NULL), 0);
	}
	print_message("# %lu operations, %lu CPU changes (%lu not on the CPU "
		      "asked for right after), noise %lu+%lu pairs\n",
		      ops, hops, misplaced, nz[0].pairs, nz[1].pairs);
	assert_int_equal(misplaced, 0);
	assert_int_equal(atomic_load(&errors), 0);
	/* the 128-byte cache was served by both CPUs' magazines */
	if (r.caches[1]->pcpu && !sp_pcpu_use_mm_cid)
		for (int i = 0; i < 2; i++)
			/* the counted build's too (sampling on) */
			CHECK(sp_slot_alloc_hits(
				      &r.caches[1]->pcpu->slots[cpus[i]]) >
				      hits_before[i],
			      "CPU %d's magazine served none of the thread's "
			      "allocations",
			      cpus[i]);
	while (w->nheld) {
		struct item it = take(w, w->nheld - 1);

		free_item(w, &it);
	}
	sp_test_unpin();
	assert_int_equal(atomic_load(&owners_live), 0);
	for (int k = 0; k < NKINDS; k++)
		finish_cache(r.caches[k], w->allocs[k]);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sp_test_info(nz[i].c).active_objs, 0);
		finish_cache(nz[i].c, nz[i].pairs);
	}
	owners_fini();
	free(w);
}

/* --- destroy and shrink while others allocate ----------------------------- */

static void test_destroy_while_others_run(void **state)
{
	unsigned long rounds = sp_test_scaled(300, 12);
	unsigned long shrunk_in_use = 0, fast_y = 0;
	static struct run r;		/* static: see stress() */

	(void)state;
	skip_if_fallen_back();
	/* four threads on caches of their own, until told to stop */
	run_init(&r, "busy", 4, 0);
	pthread_barrier_wait(&r.start);

	for (unsigned long i = 0; i < rounds; i++) {
		struct segpool_cache *y = make_cache(i % 2 ? "y-odd" : "y-even",
						     (int)(i % NKINDS));
		size_t size = segpool_cache_object_size(y);
		void *objs[96];
		struct segpool_cache_info info;

		/* objects allocated on one CPU, freed on another (when there
		 * are two), so magazines of several slots and the depot hold
		 * them */
		for (int s = 0; s < 2; s++) {
			sp_test_pin(sp_test_allowed_cpu((unsigned int)i +
							(unsigned int)s));
			for (int k = 0; k < 48; k++) {
				objs[s * 48 + k] = segpool_cache_alloc(y, 0);
				CHECK(objs[s * 48 + k],
				      "round %lu: allocation failed", i);
				memset(objs[s * 48 + k], (int)k, size);
			}
		}
		sp_test_pin(sp_test_allowed_cpu((unsigned int)i + 1));
		segpool_cache_free_bulk(y, 48, objs);
		sp_test_pin(sp_test_allowed_cpu((unsigned int)i));
		for (int k = 48; k < 96; k++)
			segpool_cache_free(y, objs[k]);
		sp_test_unpin();
		info = sp_test_info(y);
		CHECK(info.active_objs == 0 && info.allocs == 96 &&
			      info.frees == 96,
		      "round %lu: %" PRIu64 " live, %" PRIu64
		      " allocs, %" PRIu64 " frees",
		      i, info.active_objs, info.allocs, info.frees);
		fast_y += info.cpu_objs;
		if (y->pcpu)
			CHECK(info.cpu_objs > 0,
			      "round %lu: no object cached per CPU", i);
		if (i % 2) {
			/*
			 * shrink: nothing left on any CPU,
			 * in the depot or in slabs
			 */
			assert_true(segpool_cache_shrink(y) >= 0);
			info = sp_test_info(y);
			CHECK(!info.cpu_objs && !info.depot_objs &&
				      !info.total_slabs,
			      "round %lu: shrink left %" PRIu64
			      " on CPUs, %" PRIu64 " in depots, %" PRIu64
			      " slabs",
			      i, info.cpu_objs, info.depot_objs,
			      info.total_slabs);
		}
		/* destroy drains the magazines of every slot itself */
		CHECK(segpool_cache_destroy(y) == 0,
		      "round %lu: destroy failed", i);
		/* and the caches in use are drained under the workers' feet */
		for (int k = 0; k < NKINDS; k++) {
			assert_true(segpool_cache_shrink(r.caches[k]) >= 0);
			shrunk_in_use++;
		}
		if (atomic_load(&errors))
			break;
	}
	/*
	 * Under valgrind's one-thread-at-a-time scheduling the rounds can be
	 * over before the workers ran at all: they run on until one of them
	 * has freed an object of another's (the check run_finish() makes).
	 */
	for (int t = 0; t < 60000 && !atomic_load(&r.cross_seen) &&
	     !atomic_load(&errors); t++)
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	atomic_store(&r.stop, true);
	print_message("# %lu caches made, filled, shrunk or destroyed (%lu "
		      "objects were cached on CPUs); %lu shrinks of caches in "
		      "use\n", rounds, fast_y, shrunk_in_use);
	run_finish(&r);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_mode_as_asked),
	cmocka_unit_test(test_stress_2_threads),
	cmocka_unit_test(test_stress_8_threads),
	cmocka_unit_test(test_stress_64_threads),
	cmocka_unit_test(test_migration),
	cmocka_unit_test(test_destroy_while_others_run),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
