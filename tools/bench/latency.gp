# SPDX-License-Identifier: MIT
#
# tools/bench/latency.gp - per-call latency percentiles of workloads 1 and
# 5: a row per contender, p50 p99 p99.9 in ns of pool alloc, pool free,
# xfer alloc, xfer free (less an empty measurement: under 1 ns drawn at 1).

set terminal pngcairo size 1200,900 font ",10"
load gpdir . "/common.gp"

set logscale y 10
# a decade and a half of room above the highest bar, for the key
c0 = 2; c1 = 13; ix = 0; eval maxof
set yrange [1:ymax * 30]
set ylabel "ns per call (log scale)"
set grid ytics
set xtics rotate by -30 scale 0
set key top left

v(c) = column(c) < 1 ? 1 : column(c)
array what[4] = ["workload 1 (pool): allocation", "workload 1 (pool): free", \
		"workload 5 (xfer): allocation", "workload 5 (xfer): free (cross-thread)"]

set multiplot layout 2,2 title "Latency per call: p50, p99, p99.9 (empty measurement subtracted)"
do for [p = 0:3] {
	# the bottom row leaves room for the caption line under its labels
	if (p >= 2) { set bmargin 10 }
	set title what[p + 1]
	plot datafile using (v(2 + 3 * p)):xtic(1) title "p50", \
		'' using (v(3 + 3 * p)) title "p99", \
		'' using (v(4 + 3 * p)) title "p99.9"
}
unset multiplot
