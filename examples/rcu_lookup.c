// SPDX-License-Identifier: MIT
/*
 * rcu_lookup - the reader pattern of a SEGPOOL_TYPESAFE_BY_RCU cache.
 *
 * A table of sessions, indexed by session id, is read by lookup threads
 * that take no lock, while a churn thread ends sessions and starts new
 * ones.  Sessions come from a type-safe-by-RCU cache: a session that ends
 * is freed at once and its memory may become a new session straight away
 * (no grace period per object, unlike segpool_cache_free_rcu()), but it
 * stays a struct session for as long as any reader may be looking at it.
 * So a reader:
 *
 *   1. looks up: in a read-side critical section, loads the slot;
 *   2. takes a reference: increments the refcount unless it is zero (a
 *      session being torn down is not revived);
 *   3. re-checks identity: the object may have been freed and reused for
 *      another session between 1 and 2, so the id is compared again after
 *      the reference is held; on a mismatch the reference is dropped and
 *      the lookup fails (or retries).
 *
 * After 3 the session cannot be freed under the reader (it holds a
 * reference), and the read-side section can end.  Every field the readers
 * may read while the object is being reused is accessed atomically.
 *
 *   rcu_lookup [-t threads] [-n lookups per thread] [-s seed]
 *
 * Build: `make examples` (examples/rcu_lookup), or against an installed
 * segpool: cc rcu_lookup.c $(pkg-config --cflags --libs segpool liburcu-memb)
 * Exit status: 0 when every lookup saw the session it asked for, 1 on an
 * inconsistency or a failed call, 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#define NR_SLOTS	1024
#define SESSION_MAGIC	0x5e55104e5e55104eULL

struct session {
	uint64_t magic;		/* set by the ctor; stays
				 * while the slab lives */
	uint64_t id;		/* atomic: the session this object is now */
	uint64_t refs;		/* atomic: 0 = free or being torn down */
	uint64_t generation;	/* atomic: bumped at each reuse */
	char peer[40];
};

static struct segpool_cache *sessions;
static struct session *table[NR_SLOTS];	/* slot i holds session id i */
static int stop;

/* Constructed once per object when its slab is populated: never again. */
static void session_ctor(void *p)
{
	struct session *s = p;

	s->magic = SESSION_MAGIC;
	s->id = UINT64_MAX;
	s->refs = 0;
	s->generation = 0;
}

/* Drop a reference; the last one frees (type-safe: at once). */
static void session_put(struct session *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		segpool_cache_free(sessions, s);
}

/* Increment @refs unless it is 0. */
static bool ref_get_not_zero(uint64_t *refs)
{
	uint64_t v = __atomic_load_n(refs, __ATOMIC_RELAXED);

	do {
		if (v == 0)
			return false;
	} while (!__atomic_compare_exchange_n(refs, &v, v + 1, true,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

/*
 * session_get() - the reader pattern.  Return: session @id with a
 * reference held, or NULL when there is none.
 */
static struct session *session_get(uint64_t id)
{
	struct session *s;

	segpool_rcu_read_lock();
	/* 1. look up */
	s = __atomic_load_n(&table[id % NR_SLOTS], __ATOMIC_ACQUIRE);
	if (s && __atomic_load_n(&s->id, __ATOMIC_RELAXED) == id &&
	    /* 2. take a reference (never revive a dying session) */
	    ref_get_not_zero(&s->refs)) {
		/* 3. re-check identity: it may be another session by now */
		if (__atomic_load_n(&s->id, __ATOMIC_RELAXED) != id) {
			session_put(s);
			s = NULL;
		}
	} else {
		s = NULL;
	}
	segpool_rcu_read_unlock();
	return s;
}

/* A new session @id in slot @id: fields first, then refs, then publish. */
static struct session *session_start(uint64_t id)
{
	struct session *s = segpool_cache_alloc(sessions, 0);

	if (!s)
		return NULL;
	__atomic_store_n(&s->id, id, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->generation, 1, __ATOMIC_RELAXED);
	snprintf(s->peer, sizeof(s->peer), "10.0.%u.%u",
		 (unsigned int)(id >> 8) & 255, (unsigned int)id & 255);
	/* the table's reference; release: a reader that wins it sees the id */
	__atomic_store_n(&s->refs, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&table[id % NR_SLOTS], s, __ATOMIC_RELEASE);
	return s;
}

/* End session @id: unpublish, drop the table's reference. */
static void session_end(uint64_t id)
{
	struct session *s = __atomic_exchange_n(&table[id % NR_SLOTS], NULL,
						__ATOMIC_ACQ_REL);

	if (s)
		session_put(s);
}

struct worker {
	pthread_t thread;
	uint64_t seed;
	unsigned long lookups;
	unsigned long hits;
	unsigned long wrong;	/* a session that was not the one asked for */
};

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *lookup_thread(void *arg)
{
	struct worker *w = arg;

	if (segpool_rcu_register_thread())
		return NULL;
	for (unsigned long i = 0; i < w->lookups; i++) {
		uint64_t id = next_rand(&w->seed) % NR_SLOTS;
		struct session *s = session_get(id);

		if (!s)
			continue;
		/* a reference is held: the session is stable until the put */
		if (s->magic != SESSION_MAGIC ||
		    __atomic_load_n(&s->id, __ATOMIC_RELAXED) != id)
			w->wrong++;
		w->hits++;
		session_put(s);
	}
	segpool_rcu_unregister_thread();
	return NULL;
}

static void *churn_thread(void *arg)
{
	uint64_t x = *(uint64_t *)arg, rounds = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		uint64_t id = next_rand(&x) % NR_SLOTS;

		session_end(id);
		if (!session_start(id)) {
			fprintf(stderr, "rcu_lookup: alloc: %s\n",
				strerror(errno));
			exit(1);
		}
		/*
		 * now and then give empty slabs back: only after a grace period
		 */
		if (++rounds % 4096 == 0)
			segpool_cache_shrink(sessions);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads = 2, lookups = 1000000, hits = 0, wrong = 0;
	uint64_t seed = 0x5e55104eULL;
	struct segpool_rcu_stats st = { .size = sizeof(st) };
	struct segpool_cache_info info = { .size = sizeof(info) };
	struct worker *w;
	pthread_t churn;
	int opt;

	while ((opt = getopt(argc, argv, "t:n:s:h")) != -1) {
		char *end;

		switch (opt) {
		case 't':
			nthreads = strtoul(optarg, &end, 0);
			if (*end || nthreads < 1 || nthreads > 256)
				goto usage;
			break;
		case 'n':
			lookups = strtoul(optarg, &end, 0);
			if (*end || lookups < 1)
				goto usage;
			break;
		case 's':
			seed = strtoull(optarg, &end, 0);
			if (*end || !seed)
				goto usage;
			break;
		default:
			goto usage;
		}
	}

	sessions = segpool_cache_create("session", sizeof(struct session), 0,
					SEGPOOL_TYPESAFE_BY_RCU, session_ctor);
	w = calloc(nthreads, sizeof(*w));
	if (!sessions || !w) {
		perror("rcu_lookup: setup");
		return 1;
	}
	for (uint64_t id = 0; id < NR_SLOTS; id += 2)
		if (!session_start(id)) {
			perror("rcu_lookup: alloc");
			return 1;
		}
	if (pthread_create(&churn, NULL, churn_thread, &seed))
		return 1;
	for (unsigned long i = 0; i < nthreads; i++) {
		w[i].seed = seed + 1 + i;
		w[i].lookups = lookups;
		if (pthread_create(&w[i].thread, NULL, lookup_thread, &w[i]))
			return 1;
	}
	for (unsigned long i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		hits += w[i].hits;
		wrong += w[i].wrong;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(churn, NULL);

	for (uint64_t id = 0; id < NR_SLOTS; id++)
		session_end(id);
	segpool_cache_shrink(sessions);
	if (segpool_rcu_barrier() || segpool_cache_rcu_stats(sessions, &st) ||
	    segpool_cache_get_info(sessions, &info)) {
		perror("rcu_lookup: stats");
		return 1;
	}
	printf("rcu_lookup: %lu threads x %lu lookups: %lu hits, %lu wrong; "
	       "%" PRIu64 " slabs released after a grace period, %" PRIu64
	       " pending, %" PRIu64 " sessions live\n", nthreads, lookups, hits,
	       wrong, st.slabs_released, st.slabs_pending, info.active_objs);
	if (wrong || st.slabs_pending || info.active_objs ||
	    segpool_cache_destroy(sessions)) {
		fprintf(stderr, "rcu_lookup: inconsistent\n");
		return 1;
	}
	free(w);
	return 0;
usage:
	fprintf(stderr, "usage: %s [-t threads] [-n lookups] [-s seed]\n",
		argv[0]);
	return 2;
}
