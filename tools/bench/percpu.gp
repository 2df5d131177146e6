# SPDX-License-Identifier: MIT
#
# tools/bench/percpu.gp - the per-CPU layer against the peers, and what
# its magazines hold.  Block 0: a row per contender, CPU ns per alloc+free
# pair of the hot pair, pool and batch; block 1: a row per thread count of
# workload 3, then per name in cached (segpool-cache's per-CPU modes) the
# KiB held in magazines and depots after the run, then in magazines alone.

set terminal pngcairo size 1500,620 font ",10"
load gpdir . "/common.gp"

set multiplot title "Per-CPU layer: segpool-cache in each mode against the peers (medians of repetitions)"
set bmargin 8
set origin 0, 0
set size 0.44, 0.95
set title "one thread, 64 B: CPU ns per alloc+free pair (log scale)"
set logscale y 10
set ylabel "ns per pair"
set grid ytics
set xtics rotate by -30 scale 0
c0 = 2; c1 = 4; ix = 0; eval maxof
set yrange [1:ymax * 10]
set key inside top right
plot datafile index 0 using 2:xtic(1) title "hot pair", \
	'' index 0 using 3 title "pool (alloc 100, free 50)", \
	'' index 0 using 4 title "batch of 1000"

set origin 0.44, 0
set size 0.56, 0.95
set bmargin 5
set title "workload 3: free objects held after the run (dashed: in per-CPU magazines alone)"
unset logscale y
set style data linespoints
set logscale x 2
set xtics norotate scale 1
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.05, 0
set xlabel "threads"
eval band
set ylabel "KiB"
set grid
set key outside right top vertical spacing 1.2
# series that coincide would hide one another: each a little to the right
nudge(i) = 1.0 + 0.03 * (i - 1)
plot for [i=1:words(cached)] datafile index 1 \
	using (column(1) * nudge(i)):(column(2 * i)) lt i lw 1.5 \
	title word(cached, i) . ": magazines + depots", \
     for [i=1:words(cached)] datafile index 1 \
	using (column(1) * nudge(i)):(column(2 * i + 1)) lt i lw 1.5 dt 2 \
	title word(cached, i) . ": magazines alone"

unset multiplot
