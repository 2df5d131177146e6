# SPDX-License-Identifier: MIT
#
# tools/bench/threads.gp - workload 3: throughput by thread count; a row
# per count, then per name in names Mops per CPU-second median, low, high
# and per wall second median, low, high.

set terminal pngcairo size 1400,600 font ",10"
load gpdir . "/common.gp"

# two panels side by side, one key for both in the column at the right
set multiplot title "Workload 3: random sizes 8-128 B, throughput by threads (median; bars: min-max of repetitions)" . \
	(page eq "" ? "" : "\n" . page) noenhanced
set logscale x 2
set xlabel "threads"
set grid
set bmargin 6
set yrange [0:*]
eval band
set offsets graph 0.05, graph 0.05, graph 0.05, 0
# the harness floor (no allocator) is drawn dashed: a ceiling
dash(i) = word(names, i) eq "floor" ? 2 : 1

set origin 0, 0
set size 0.41, 0.95
unset key
set title "per CPU-second (thread CPU time summed over threads)"
set ylabel "million operations per CPU-second"
plot for [i=1:words(names)] datafile \
	using 1:(column(6 * i - 4)):(column(6 * i - 3)):(column(6 * i - 2)) \
	with yerrorlines lw 1.5 dt dash(i) title word(names, i)

set origin 0.41, 0
set size 0.41, 0.95
set key at screen 0.995, screen 0.86 right top vertical spacing 1.3
set title "per wall-clock second (all threads together)"
set ylabel "million operations per second"
plot for [i=1:words(names)] datafile \
	using 1:(column(6 * i - 1)):(column(6 * i)):(column(6 * i + 1)) \
	with yerrorlines lw 1.5 dt dash(i) title word(names, i)

unset multiplot
