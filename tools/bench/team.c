// SPDX-License-Identifier: MIT
/*
 * tools/bench/team.c - run a workload on pinned threads that start together.
 *
 * Every workload runs here, single-threaded ones on a team of one, so that
 * all of them are timed the same way: each worker reads its own
 * CLOCK_THREAD_CPUTIME_ID around its part (the primary figure, summed over
 * workers), and the wall time runs from the first worker's start after the
 * common barrier to the last worker's end (read by the workers themselves:
 * the main thread may be scheduled late).  Worker i is pinned to the i-th
 * usable CPU, round robin.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

struct bench_team {
	pthread_barrier_t start;
	bench_work_fn fn;
	const struct bench_cfg *cfg;
	int cpus[BENCH_MAX_THREADS];
	unsigned int nr_cpus;
};

struct bench_team_arg {
	struct bench_team *team;
	struct bench_worker *w;
};

static void *bench_team_thread(void *p)
{
	struct bench_team_arg *arg = p;
	struct bench_team *team = arg->team;
	struct bench_worker *w = arg->w;
	uint64_t c0;

	if (team->cfg->pin)
		bench_pin(team->cpus[w->id % team->nr_cpus]);
	pthread_barrier_wait(&team->start);
	w->wall_start = bench_ns(CLOCK_MONOTONIC);
	c0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	team->fn(w);
	w->cpu_ns = (double)(bench_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	w->wall_end = bench_ns(CLOCK_MONOTONIC);
	return NULL;
}

/*
 * All workers' samples of one kind, sorted, as percentiles in ns less the
 * cost of an empty measurement (res->empty_ns, measured by the child).
 */
static void bench_team_latency(const struct bench_cfg *cfg,
			       struct bench_worker *ws, unsigned int nr,
			       struct bench_result *res)
{
	static const double pct[BENCH_NR_PCT] = { 0.50, 0.99, 0.999 };

	for (int k = 0; k < BENCH_NR_LAT; k++) {
		uint64_t n = 0;
		uint32_t *all;

		for (unsigned int i = 0; i < nr; i++)
			n += ws[i].lat[k].n;
		if (n == 0)
			continue;
		all = bench_map(n * sizeof(*all));
		if (!all) {
			res->errors++;
			return;
		}
		n = 0;
		for (unsigned int i = 0; i < nr; i++) {
			memcpy(all + n, ws[i].lat[k].v,
			       ws[i].lat[k].n * sizeof(*all));
			n += ws[i].lat[k].n;
		}
		qsort(all, n, sizeof(*all), bench_cmp_u32);
		for (int j = 0; j < BENCH_NR_PCT; j++) {
			double ns = bench_percentile(all, n, pct[j]) * 1e9 /
				    cfg->tsc_hz - res->empty_ns;

			res->lat[k][j] = ns > 0 ? ns : 0;
		}
		res->samples += n;
		bench_unmap(all, n * sizeof(*all));
	}
	res->has_lat = true;
}

int bench_team_run(const struct bench_cfg *cfg, unsigned int nr,
		   bench_work_fn fn, void *shared, uint64_t ops_each,
		   uint64_t lat_cap, struct bench_result *res)
{
	size_t ws_bytes = nr * sizeof(struct bench_worker);
	struct bench_team team = { .fn = fn, .cfg = cfg };
	struct bench_team_arg args[BENCH_MAX_THREADS];
	pthread_t tids[BENCH_MAX_THREADS];
	struct bench_worker *ws;
	unsigned int started = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int err = 0;

	if (nr == 0 || nr > BENCH_MAX_THREADS) {
		bench_warn("%u threads: 1 to %d", nr, BENCH_MAX_THREADS);
		return -1;
	}
	ws = bench_map(ws_bytes);
	if (!ws)
		return -1;
	team.nr_cpus = bench_cpus(team.cpus, BENCH_MAX_THREADS);
	for (unsigned int i = 0; i < nr; i++) {
		struct bench_worker *w = &ws[i];

		w->id = i;
		w->nr = nr;
		w->cfg = cfg;
		w->ops = ops_each;
		w->shared = shared;
		w->rng = cfg->seed * 0x100000001B3ULL + i + 1;
		for (int k = 0; lat_cap && k < BENCH_NR_LAT; k++) {
			w->lat[k].v = bench_map(lat_cap * sizeof(uint32_t));
			w->lat[k].cap = w->lat[k].v ? lat_cap : 0;
		}
	}

	pthread_barrier_init(&team.start, NULL, nr + 1);
	for (; started < nr; started++) {
		args[started] = (struct bench_team_arg){ &team, &ws[started] };
		err = pthread_create(&tids[started], NULL, bench_team_thread,
				     &args[started]);
		if (err)
			break;
	}
	if (err) {
		/* the barrier can never open: nothing sane is left to do */
		bench_die("pthread_create (thread %u of %u): %s", started + 1,
			  nr, strerror(err));
	}
	pthread_barrier_wait(&team.start);
	for (unsigned int i = 0; i < nr; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&team.start);

	for (unsigned int i = 0; i < nr; i++) {
		if (ws[i].wall_start < t0)
			t0 = ws[i].wall_start;
		if (ws[i].wall_end > t1)
			t1 = ws[i].wall_end;
	}
	res->wall_ns += (double)(t1 - t0);
	for (unsigned int i = 0; i < nr; i++) {
		res->cpu_ns += ws[i].cpu_ns;
		res->ops += ws[i].done;
		res->checksum += ws[i].checksum;
		res->expect += ws[i].expect;
		res->errors += ws[i].errors;
	}
	if (lat_cap)
		bench_team_latency(cfg, ws, nr, res);
	for (unsigned int i = 0; i < nr; i++)
		for (int k = 0; k < BENCH_NR_LAT; k++)
			bench_unmap(ws[i].lat[k].v, ws[i].lat[k].cap *
				    sizeof(uint32_t));
	bench_unmap(ws, ws_bytes);
	return 0;
}
