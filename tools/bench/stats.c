// SPDX-License-Identifier: MIT
/*
 * tools/bench/stats.c - medians, ranges and percentiles.
 *
 * Repetitions are few (3 to 10), so a run is summarised by its median and
 * its min-max range, never by a mean and a deviation that assume a shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The median of an even count is the mean of the two middle values. */
void bench_summarize(const double *v, unsigned int n, struct bench_summary *s)
{
	double sorted[64];

	memset(s, 0, sizeof(*s));
	if (n == 0) {
		s->median = s->min = s->max = NAN;
		return;
	}
	if (n > sizeof(sorted) / sizeof(sorted[0]))
		n = sizeof(sorted) / sizeof(sorted[0]);
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), bench_cmp_double);
	s->n = n;
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2]
			  : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* Nearest rank: the smallest sample with at least p * n samples at or below. */
uint32_t bench_percentile(const uint32_t *sorted, uint64_t n, double p)
{
	uint64_t rank;

	if (n == 0)
		return 0;
	rank = (uint64_t)ceil(p * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}
