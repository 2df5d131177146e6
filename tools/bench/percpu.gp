# SPDX-License-Identifier: MIT
#
# tools/bench/percpu.gp - the per-CPU layer: its modes against the peers,
# and the memory its magazines hold by thread count.
#
# segpool-bench runs it with -e "gpdir='...'; caption='...'; datafile='...';
# outfile='...'; names='...';
# cached='...'": block 0 of datafile has a row per contender, its name and
# CPU ns per alloc+free pair of the hot pair, the pool pattern and the
# batch; block 1 a row per thread count of workload 3 and, for each name in
# cached (segpool-cache in each per-CPU mode, in that order), the KiB of free
# objects held in magazines and depots after the run, then in magazines
# alone.  "?" marks a missing value.

set terminal pngcairo size 1500,620 font ",10"
set output outfile
set datafile missing "?"
load gpdir . "/common.gp"

set multiplot title "Per-CPU layer: segpool-cache in each mode against the peers (medians of repetitions)"
# room below for the rotated names, the axis label and the caption line
set bmargin 8
set origin 0, 0
set size 0.44, 0.95

set title "one thread, 64 B: CPU ns per alloc+free pair (log scale)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y 10
set ylabel "ns per pair"
set grid ytics
set xtics rotate by -30 scale 0
# a decade of room above the highest bar for the key
ymax = 1
do for [c = 2:4] {
	stats datafile index 0 using c nooutput
	if (STATS_max > ymax) { ymax = STATS_max }
}
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
# more threads than CPUs: a grey band from there on, named at its top
if (cpus > 0) {
	set object 1 rect from cpus * 1.41, graph 0 to graph 1, graph 1 \
		behind fc rgb "#e8e8e8" fs solid noborder
	set label 1 "oversubscribed" at cpus * 1.5, graph 0.96 left front font ",9"
}
set ylabel "KiB"
set grid
# the key beside the panel, clear of the data and of the axes
set key outside right top vertical spacing 1.2
# one colour per per-CPU mode (cached: at most four, two series each, so
# eight at most); every series in the key
# series that coincide (0 KiB in off mode, say) would hide one another:
# each is drawn a little to the right of the one before
nudge(i) = 1.0 + 0.03 * (i - 1)
plot for [i=1:words(cached)] datafile index 1 \
	using (column(1) * nudge(i)):(column(2 * i)) \
	lt i lw 1.5 \
	title word(cached, i) . ": magazines + depots", \
     for [i=1:words(cached)] datafile index 1 \
	using (column(1) * nudge(i)):(column(2 * i + 1)) \
	lt i lw 1.5 dt 2 \
	title word(cached, i) . ": magazines alone"

unset multiplot
