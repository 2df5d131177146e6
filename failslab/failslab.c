// SPDX-License-Identifier: MIT
/*
 * failslab/failslab.c - make chosen allocations fail, like the kernel's
 * failslab.
 *
 * The decision follows the kernel's should_fail() step by step: cache
 * filter, times left, space budget, interval, then a random draw against
 * probability.  State (the settings, the eligible-call count, the
 * generator) is guarded by one mutex; only the allocation paths of an armed
 * process take it, so a process that never arms injection pays one relaxed
 * load of sp_failslab_on per allocation call and nothing else.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/fault.h>

#include "internal/init.h"
#include "percpu/pcpu.h"
#include "failslab/failslab.h"
#include "internal/debug.h"
#include "internal/env.h"
#include "internal/report.h"
#include "slab/slab.h"

#define SP_FAILSLAB_DEFAULT_SEED	0x5e9f41150000c0deULL

bool sp_failslab_on;

/*
 * Arm or disarm: the allocation hit paths test nothing of failslab, so
 * while it is armed they are closed (percpu/pcpu.h, sp_pcpu_fast) and every
 * allocation reaches the slow path's test.
 */
static void sp_fs_publish(bool on)
{
	SP_WRITE_ONCE(sp_failslab_on, on);
	if (__atomic_load_n(&sp_ready, __ATOMIC_ACQUIRE))
		sp_pcpu_fast_update(on);
}

static pthread_mutex_t sp_failslab_lock = PTHREAD_MUTEX_INITIALIZER;
SP_LOCK_CLASS_STATIC(sp_failslab_lock, SP_LOCK_FAILSLAB)
static struct segpool_failslab sp_fs;	/* guarded by the lock */
static unsigned long sp_fs_count;	/* eligible calls past
					 * the space budget */
static uint64_t sp_fs_rng;		/* xorshift64* state, never 0 */

static uint32_t sp_fs_random_below(uint32_t n)
{
	uint64_t x = sp_fs_rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sp_fs_rng = x;
	return (uint32_t)(((x * 0x2545f4914f6cdd1dULL) >> 32) % n);
}

static bool sp_fs_armed_locked(void)
{
	return sp_fs.probability > 0 && sp_fs.times != 0;
}

bool sp_should_failslab(struct segpool_cache *c)
{
	bool fail = false;

	pthread_mutex_lock(&sp_failslab_lock);
	if (!sp_fs_armed_locked())
		goto out;
	if (sp_fs.cache[0] && strcmp(sp_fs.cache, c->name))
		goto out;
	if (sp_fs.space > c->object_size) {
		sp_fs.space -= c->object_size;
		goto out;
	}
	if (sp_fs.interval > 1 && ++sp_fs_count % sp_fs.interval)
		goto out;
	if (sp_fs.probability <= sp_fs_random_below(100))
		goto out;

	fail = true;
	if (sp_fs.times > 0 && --sp_fs.times == 0)
		sp_fs_publish(false);
	__atomic_fetch_add(&c->alloc_failslab, 1, __ATOMIC_RELAXED);
	if (sp_fs.verbose)
		sp_warn("failslab: failing an allocation from cache %s "
			"(%ld more to inject)", c->name, sp_fs.times);
out:
	pthread_mutex_unlock(&sp_failslab_lock);
	return fail;
}

static bool sp_fs_valid(const struct segpool_failslab *fs)
{
	return fs && fs->probability <= 100 && fs->times >= -1 &&
	       memchr(fs->cache, '\0', sizeof(fs->cache));
}

SEGPOOL_API int segpool_failslab_set(const struct segpool_failslab *fs)
{
	if (!sp_fs_valid(fs)) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&sp_failslab_lock);
	sp_fs = *fs;
	sp_fs_count = 0;
	sp_fs_rng = fs->seed ? fs->seed : SP_FAILSLAB_DEFAULT_SEED;
	sp_fs_publish(sp_fs_armed_locked());
	pthread_mutex_unlock(&sp_failslab_lock);
	return 0;
}

SEGPOOL_API int segpool_failslab_get(struct segpool_failslab *fs)
{
	int armed;

	if (!fs) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&sp_failslab_lock);
	*fs = sp_fs;
	armed = sp_fs_armed_locked();
	pthread_mutex_unlock(&sp_failslab_lock);
	return armed;
}

SEGPOOL_API void segpool_failslab_disable(void)
{
	pthread_mutex_lock(&sp_failslab_lock);
	sp_fs.probability = 0;
	sp_fs_publish(false);
	pthread_mutex_unlock(&sp_failslab_lock);
}

/* --- SEGPOOL_FAILSLAB ----------------------------------------------------- */

static bool sp_fs_number(const char *s, size_t len, long long min,
			 long long max, long long *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* One "key=value" of the key form; false for anything unknown or bad. */
static bool sp_fs_parse_pair(struct segpool_failslab *fs, const char *s,
			     size_t len)
{
	const char *eq = memchr(s, '=', len);
	size_t klen, vlen;
	const char *v;
	long long n;

	if (!eq)
		return false;
	klen = (size_t)(eq - s);
	v = eq + 1;
	vlen = len - klen - 1;
#define SP_KEY(k)	(klen == sizeof(k) - 1 && !memcmp(s, k, klen))
	if (SP_KEY("cache")) {
		if (vlen == 0 || vlen > SEGPOOL_CACHE_NAME_MAX)
			return false;
		for (size_t i = 0; i < vlen; i++)
			if (!isgraph((unsigned char)v[i]))
				return false;	/* no cache can have it */
		memcpy(fs->cache, v, vlen);
		fs->cache[vlen] = '\0';
		return true;
	}
	if (SP_KEY("probability") && sp_fs_number(v, vlen, 0, 100, &n))
		fs->probability = (unsigned int)n;
	else if (SP_KEY("interval") && sp_fs_number(v, vlen, 0, LONG_MAX, &n))
		fs->interval = (unsigned long)n;
	else if (SP_KEY("times") && sp_fs_number(v, vlen, -1, LONG_MAX, &n))
		fs->times = (long)n;
	else if (SP_KEY("space") && sp_fs_number(v, vlen, 0, LONG_MAX, &n))
		fs->space = (unsigned long)n;
	else if (SP_KEY("verbose") && sp_fs_number(v, vlen, 0, 2, &n))
		fs->verbose = (unsigned int)n;
	else if (SP_KEY("seed") && sp_fs_number(v, vlen, 0, LLONG_MAX, &n))
		fs->seed = (unsigned long long)n;
	else
		return false;
#undef SP_KEY
	return true;
}

/* The kernel's boot form: <interval>,<probability>,<space>,<times>. */
static bool sp_fs_parse_boot(struct segpool_failslab *fs, const char *s)
{
	long long v[4];
	int i = 0;

	for (const char *p = s; i < 4; i++) {
		size_t len = strcspn(p, ",");
		static const long long lo[4] = { 0, 0, 0, -1 };
		static const long long hi[4] = { LONG_MAX, 100, LONG_MAX,
						 LONG_MAX };

		if (!sp_fs_number(p, len, lo[i], hi[i], &v[i]))
			return false;
		p += len;
		if (i < 3 && *p++ != ',')
			return false;
		if (i == 3 && *p)
			return false;
	}
	fs->interval = (unsigned long)v[0];
	fs->probability = (unsigned int)v[1];
	fs->space = (unsigned long)v[2];
	fs->times = (long)v[3];
	return true;
}

int sp_failslab_parse(const char *s, struct segpool_failslab *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->times = -1;
	fs->interval = 1;
	if (*s >= '0' && *s <= '9' && !strchr(s, '='))
		return sp_fs_parse_boot(fs, s) ? 0 : -EINVAL;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (!sp_fs_parse_pair(fs, s, len))
			return -EINVAL;
		s += len;
		if (*s)
			s++;
	}
	return 0;
}

void sp_failslab_init(void)
{
	const char *env = sp_env_get(SP_ENV_FAILSLAB);
	struct segpool_failslab fs;

	if (!env)
		return;
	if (sp_failslab_parse(env, &fs)) {
		sp_env_bad(SP_ENV_FAILSLAB, env, "not understood");
		return;
	}
	segpool_failslab_set(&fs);
}

void sp_failslab_fork_lock(void)
{
	pthread_mutex_lock(&sp_failslab_lock);
}

void sp_failslab_fork_unlock(void)
{
	pthread_mutex_unlock(&sp_failslab_lock);
}

void sp_failslab_fork_child(void)
{
	pthread_mutex_init(&sp_failslab_lock, NULL);
}
