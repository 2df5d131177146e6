// SPDX-License-Identifier: MIT
/*
 * prof/sample.c - which allocations are sampled, and with what weight.
 *
 * Each thread counts down the bytes to its next sampling point, drawn from
 * an exponential distribution of mean sp_prof_rate (a Poisson process over
 * the bytes it allocates).  The allocation whose bytes reach the point is
 * sampled; the next point is drawn afresh.  Since the distance left at
 * the start of any allocation is again exponential (memoryless), an
 * allocation of s bytes is sampled with probability 1 - exp(-s / rate)
 * whatever came before, and a sample weighs s / (1 - exp(-s / rate)) bytes
 * and 1 / (1 - exp(-s / rate)) objects: the expected total of every call
 * site is its true total, small objects and large alike (tcmalloc's and
 * jemalloc's estimator).
 *
 * Two counts share the allocations: each thread's, in bytes, for those its
 * slow paths serve (sp_prof_due()), and each per-CPU slot's, in objects of
 * its cache, for those the counted build's hit path serves (sp_prof_hit()).
 * Each allocation is counted by one of them, and by memorylessness is
 * sampled with the probability of the bytes its count took, whichever it
 * was: together they are the one process above.
 *
 * No libm: the two functions needed, log of a uniform number and exp of
 * a negative one, are below, good to about 1e-12 relative.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/env.h"
#include "internal/reentry.h"
#include "internal/report.h"
#include "os/os.h"
#include "prof/prof.h"
#include "slab/debug.h"
#include "slab/slab.h"
#include "stats/export.h"
#include "stats/print.h"

bool sp_prof_on;
long long sp_prof_rate = SP_PROF_RATE_DEFAULT;
char sp_prof_path[4096] __sp_big;

/* Per thread: bytes to the next sampling point, and the generator. */
__thread int64_t sp_prof_left __attribute__((tls_model("initial-exec")));
bool sp_prof_idle;
static __thread uint64_t sp_prof_rng __attribute__((tls_model("initial-exec")));
static uint64_t sp_prof_seeds;
/*
 * Set while this thread holds or waits for the table's lock: a signal
 * handler that allocates or frees meanwhile skips the profile rather than
 * wait for a lock its own thread holds.
 */
__thread bool sp_prof_busy __attribute__((tls_model("initial-exec")));

static uint64_t sp_prof_next(void)
{
	/* xorshift64* */
	uint64_t x = sp_prof_rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sp_prof_rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* 1 / i!, i = 0 to 13 (exp's series). */
static const double sp_prof_inv_fact[14] = {
	1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
	1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
	1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
};

/* exp(@x) for x <= 0: 2^k e^r with |r| <= ln2/2, Taylor to r^13. */
static double sp_prof_exp(double x)
{
	const double ln2 = 0.69314718055994530942;
	double k, r, sum = 0;
	union { double d; uint64_t u; } p;

	if (x < -700)
		return 0;
	k = x / ln2;
	k = (double)(long long)(k < 0 ? k - 0.5 : k + 0.5);	/* nearest */
	r = x - k * ln2;
	/* Horner, from the r^13 / 13! term down: no division */
	for (int i = 13; i >= 1; i--)
		sum = (sum + sp_prof_inv_fact[i]) * r;
	p.u = (uint64_t)((int64_t)k + 1023) << 52;
	return (1 + sum) * p.d;
}

/*
 * The draw's logarithm, by a table of 128 points in [1, 2): log(c_i) and
 * 1 / c_i, c_i = 1 + i / 128, filled at start-up (sp_prof_log_init()).
 * The series alone (atanh's, to z^9) took a division, a branch taken
 * four times in ten and a chain of nine dependent steps: a fifth of a
 * sample's time, most of it the draw's latency.
 */
#define SP_PROF_LOG_BITS	7
#define SP_PROF_LOG_N		(1U << SP_PROF_LOG_BITS)
static struct sp_prof_log_point {
	double inv;		/* 1 / c_i */
	double at;		/* log(c_i) */
} sp_prof_log_tab[SP_PROF_LOG_N] __sp_big;	/* one line holds both */

/*
 * log(@c), c in [1, 2), to double precision: 2 atanh(z), z = (c - 1) /
 * (c + 1) at most 1/3, its series to 24 terms (past z^31 / 31 each is
 * below 2^-53 of the sum).  Start-up only.
 */
static double sp_prof_log_series(double c)
{
	double z = (c - 1) / (c + 1), z2 = z * z, t = z, sum = 0;

	for (int k = 0; k < 24; k++) {
		sum += t / (2 * k + 1);
		t *= z2;
	}
	return 2 * sum;
}

static void sp_prof_log_init(void)
{
	for (unsigned int i = 0; i < SP_PROF_LOG_N; i++) {
		double c = 1 + (double)i / SP_PROF_LOG_N;

		sp_prof_log_tab[i].at = sp_prof_log_series(c);
		sp_prof_log_tab[i].inv = 1 / c;
	}
}

/*
 * log(@x) for a normal x > 0: x = m 2^e, m in [1, 2), m = c_i (1 + r) with
 * c_i the table's point at or below m, so 0 <= r < 1/128 (computed as
 * m / c_i - 1 by a product: a hair below 0 at worst); log(1 + r) by its
 * series to r^5, what is left (r^6 / 6) below 5e-14.  No division, no
 * branch: a load and five dependent steps.
 */
static double sp_prof_log(double x)
{
	const double ln2 = 0.69314718055994530942;
	union { double d; uint64_t u; } v = { .d = x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	unsigned int i = (unsigned int)(v.u >> (52 - SP_PROF_LOG_BITS)) &
			 (SP_PROF_LOG_N - 1);
	double r, r2;

	v.u = (v.u & ((1ULL << 52) - 1)) | (1023ULL << 52);	/* [1, 2) */
	r = v.d * sp_prof_log_tab[i].inv - 1;
	r2 = r * r;
	return (e * ln2 + sp_prof_log_tab[i].at) +
	       (r - r2 * (0.5 - r * (1.0 / 3))) +
	       r2 * r2 * (r * (1.0 / 5) - 0.25);
}

/* Bytes to the next sampling point: exponential, mean sp_prof_rate. */
static int64_t sp_prof_draw(void)
{
	/* u in (0, 1]: 53 random bits, plus one */
	double u = ((double)(sp_prof_next() >> 11) + 1) *
		   (1.0 / 9007199254740992.0);
	double d = -sp_prof_log(u) * (double)sp_prof_rate;

	return d < 1 ? 1 : d > 4e18 ? (int64_t)4e18 : (int64_t)d;
}

/*
 * 1 / p, p = 1 - exp(-@charged / rate) the chance that an allocation was
 * sampled whose count took @charged bytes.
 */
static double sp_prof_weight_slow(size_t charged)
{
	double x = (double)charged / (double)sp_prof_rate;
	double p;

	/*
	 * Below 1/16 (every size class at the default rate) the series of
	 * 1 - e^-x itself, to x^6: relative error under x^6 / 5040, 1e-11;
	 * the full exp() above for larger blocks and rates.
	 */
	if (x < 0.0625)
		p = x * (1 - x * (1.0 / 2) * (1 - x * (1.0 / 3) *
		    (1 - x * (1.0 / 4) * (1 - x * (1.0 / 5) *
		    (1 - x * (1.0 / 6))))));
	else
		p = 1 - sp_prof_exp(-x);

	return 1 / p;
}

/*
 * 1 / p by the charged size, per thread (the rate is fixed at start-up):
 * four entries, one per size of a thread's mix or so.  Computed afresh,
 * the series' chain and two divisions took a sample as long as its draw.
 */
#define SP_PROF_MEMO_BITS	2
static __thread struct sp_prof_memo {
	size_t charged;
	double inv_p;
} sp_prof_memo[1U << SP_PROF_MEMO_BITS]
	__attribute__((tls_model("initial-exec")));

/*
 * sp_prof_weight() - the allocations a sample stands for: 1 / p, @charged
 * the bytes its count took (its size, or its size class's on a counted
 * hit); in bytes, that times its size.
 */
static double sp_prof_weight(size_t charged)
{
	struct sp_prof_memo *m =
		&sp_prof_memo[(charged * 0x9e3779b97f4a7c15ULL) >>
			      (64 - SP_PROF_MEMO_BITS)];

	if (unlikely(m->charged != charged)) {
		m->inv_p = sp_prof_weight_slow(charged);
		m->charged = charged;
	}
	return m->inv_p;
}

/*
 * The stack, from the allocating call's return address into the program
 * on (@site, sp_prof_site()): the frames inside the library before it are
 * left out (as gperftools' own are), and on the learned walk never visited.
 */
static __sp_always_inline int sp_prof_stack(void *site, void **pcs)
{
	void *buf[SP_PROF_DEPTH + 16];
	void *ra = sp_prof_site_ra(site);
	int max = (int)(sizeof(buf) / sizeof(buf[0]));
	int n = sp_prof_unwind_at(buf, max, (uintptr_t)ra,
				  sp_prof_site_sp(site));
	int from = 0, lib;

	if (n < 0) {
		/* the whole walk (a check, or a frame not learned yet) */
		n = sp_prof_unwind(buf, max);
		from = 1;	/* at least this function */
		for (int i = 1; i < n; i++)
			if (buf[i] == ra) {
				from = i;
				break;
			}
	}
	/* and past the library's own frames, where the bounds are known
	 * (calloc's way, say, returns into the library first) */
	lib = from;
	while (lib < n && sp_debug_libframe(buf[lib]))
		lib++;
	if (lib < n)
		from = lib;
	n -= from;
	if (n > SP_PROF_DEPTH)
		n = SP_PROF_DEPTH;
	if (n < 0)
		n = 0;
	memcpy(pcs, buf + from, (size_t)n * sizeof(void *));
	return n;
}

/* This thread's generator, seeded at its first draw; and its first count. */
static void sp_prof_seed(void)
{
	/* a fixed sequence of seeds: runs repeat, thread by thread */
	uint64_t s = __atomic_add_fetch(&sp_prof_seeds, 1, __ATOMIC_RELAXED);

	s = (s + 0x5eedULL) * 0x9e3779b97f4a7c15ULL;
	s ^= s >> 31;
	sp_prof_rng = s ? s : 1;
	sp_prof_left = sp_prof_draw();
}

__sp_libframe bool sp_prof_due(size_t size)
{
	/* pairs with the store that turned sampling on: the settings before */
	if (!__atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE))
		return false;
	if (unlikely(!sp_prof_rng))
		sp_prof_seed();
	sp_prof_left -= (int64_t)size;
	if (likely(sp_prof_left > 0))
		return false;
	sp_prof_left = sp_prof_draw();
	return true;
}

/*
 * Record @obj, @size bytes of cache @c (NULL: a large block), sampled on
 * a count of @charged bytes.
 */
static void sp_prof_keep(const struct segpool_cache *c, void *obj,
			 size_t size, size_t charged, void *site)
{
	void *pcs[SP_PROF_DEPTH];
	int n;

	/*
	 * The caller is inside the library (internal/reentry.h), so anything
	 * the stack walk might allocate fails at once instead of coming back
	 * here; the walker was run once at start-up, outside, to load what it
	 * needs (prof/unwind.c: glibc's backtrace() opens libgcc_s on its
	 * first call).
	 */
	if (unlikely(sp_prof_busy))	/* a signal handler's, mid-record */
		return;
	sp_lib_enter();		/* a caller outside the library, too */
	sp_prof_busy = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	n = sp_prof_stack(site, pcs);
	sp_prof_record(obj, pcs, n, c ? c->name : NULL, size,
		       sp_prof_weight(charged));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_prof_busy = false;
	sp_lib_exit();
}

__sp_libframe void sp_prof_take(void *obj, size_t size, void *site)
{
	if (sp_prof_due(size))
		sp_prof_keep(NULL, obj, size, size, site);
}

__sp_libframe void *sp_prof_sample_obj(struct segpool_cache *c, void *obj,
				       size_t size, size_t charged, void *site)
{
	void *in;

	/*
	 * An object of a cache with magazines is recorded in a sampled slab
	 * only, whose page tag no slot expects (slab/slab.h, sp_slab_tag()):
	 * its free never takes a hit path, and the slow path drops the
	 * record.  One of a sampled slab of the node of the object the
	 * layers handed out takes its place, and that one (still as they
	 * keep a free object: marked, poisoned) goes back to the caller.
	 * Without one (no memory) the sample is dropped: recorded where it
	 * is, its free could take a hit path and leave the record behind.
	 * A cache without magazines (a debug cache among them) frees on its
	 * slow paths only: recorded where it is.
	 */
	if (c->pcpu && !sp_tag_sampled(sp_space_tag(obj))) {
		in = sp_slab_take_sampled(c, sp_obj_to_slab(obj)->node);
		if (unlikely(!in)) {
			sp_prof_drop();
			return obj;
		}
		obj = in;
	}
	sp_prof_keep(c, obj, size, charged, site);
	return obj;
}

/*
 * Objects of @charged bytes up to and including the one that holds a
 * sampling point drawn afresh: 1 or more, capped where a slot's count
 * ends (a cap only a rate some 2^31 objects long would meet).
 */
static int32_t sp_prof_objs(size_t charged)
{
	int64_t d = sp_prof_draw();
	uint64_t m = ((uint64_t)d + charged - 1) / charged;

	return m > INT32_MAX ? INT32_MAX : m < 1 ? 1 : (int32_t)m;
}

__sp_libframe void *sp_prof_hit(struct segpool_cache *c, void *obj,
				size_t size, int32_t was, int32_t *arm,
				void *site)
{
	size_t charged = c->object_size;
	int32_t m;

	/*
	 * Sampling off: refused (the counted build serves all the same:
	 * never again, nearly), or not started yet (start-up: unarmed,
	 * so that the slot draws once it runs).
	 */
	if (unlikely(!__atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE))) {
		*arm = SP_READ_ONCE(sp_prof_idle) ? INT32_MAX : 0;
		return obj;
	}
	if (unlikely(!sp_prof_rng))
		sp_prof_seed();
	m = sp_prof_objs(charged);
	/*
	 * Unarmed (below 0: the slot's first allocation, or an arming that
	 * did not take, sp_pcpu_sample_arm()): the distance to the slot's
	 * first point is drawn now, from this object on, as it would be at
	 * any moment (memoryless); 0: the point lies here, and the next one
	 * is @m objects on.
	 */
	if (was < 0 && m > 1) {
		*arm = m - 1;
		return obj;
	}
	if (was < 0)
		m = sp_prof_objs(charged);
	*arm = m;
	/* a signal handler's, inside the library: no lock may be taken */
	if (unlikely(sp_lib_nested())) {
		sp_prof_drop();
		return obj;
	}
	sp_lib_enter();
	obj = sp_prof_sample_obj(c, obj, size, charged, site);
	sp_lib_exit();
	return obj;
}

bool sp_prof_init(void)
{
	const char *path = sp_env_get(SP_ENV_HEAP_PROFILE);
	const char *rate = sp_env_get(SP_ENV_HEAP_SAMPLE);
	char check[sizeof(sp_prof_path) + 16], tmp[sizeof(check) + 16];
	const char *why;
	long long r;
	int fd;

	if (rate) {
		why = sp_env_parse(&sp_env_table[SP_ENV_HEAP_SAMPLE], rate, &r);
		if (why) {
			sp_env_bad(SP_ENV_HEAP_SAMPLE, rate, why);
			return false;
		}
		sp_prof_rate = r;
	}
	sp_prof_log_init();
	if (!path)
		return false;
	if (strlen(path) >= sizeof(sp_prof_path) ||
	    sp_stats_path_expand(path, sp_os_pid(), check, sizeof(check))) {
		sp_env_bad(SP_ENV_HEAP_PROFILE, path, "not a usable path");
		return false;
	}
	/* the file must be one we may write: try, now rather than at exit */
	fd = sp_os_user_file_begin(check, tmp, sizeof(tmp));
	if (fd < 0) {
		sp_env_bad(SP_ENV_HEAP_PROFILE, path, strerror(errno));
		return false;
	}
	sp_os_user_file_abort(fd, tmp);
	if (sp_prof_table_init()) {
		sp_env_bad(SP_ENV_HEAP_PROFILE, path,
			   "no memory for the tables");
		return false;
	}
	if (atexit(sp_prof_at_exit)) {
		sp_env_bad(SP_ENV_HEAP_PROFILE, path, "atexit() failed");
		return false;
	}
	snprintf(sp_prof_path, sizeof(sp_prof_path), "%s", path);
	sp_prof_unwind_init();		/* outside the library: may allocate */
	/* segpool-top --sites (sp_prof_sites() refuses until sampling is on) */
	__atomic_store_n(&sp_export_sites_fn, sp_prof_sites, __ATOMIC_RELEASE);
	return true;		/* the caller turns sampling on */
}
