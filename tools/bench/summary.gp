# SPDX-License-Identifier: MIT
#
# tools/bench/summary.gp - every speed workload: CPU time per op over
# glibc's; a row per workload (quoted label), a ratio per name in names.

set terminal pngcairo size 1200,560 font ",10"
load gpdir . "/common.gp"

set title "CPU time per operation relative to glibc malloc (median of repetitions; lower is better)" . \
	(page eq "" ? "" : "\n" . page) noenhanced
set ylabel "CPU time / glibc's (log scale)"
set logscale y 2
set yrange [0.0625:*]
set ytics ("1/16" 0.0625, "1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "1" 1, "2" 2, "4" 4, \
	"8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256)
set grid ytics
set key outside right top vertical
set bmargin 10		# the rotated labels, then the note and caption lines
set xtics rotate by -35 scale 0
set boxwidth 0.9
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lw 1.5 front

plot for [i=1:words(names)] datafile using (column(i + 1)):xtic(1) title word(names, i)
