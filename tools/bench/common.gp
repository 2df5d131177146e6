# SPDX-License-Identifier: MIT
#
# tools/bench/common.gp - what every plot of segpool-bench shares (plot.c
# passes gpdir, caption, note, datafile, outfile, names, cached, cpus, page).
# Eight colours told apart at a glance (Okabe and Ito's, brown for the
# yellow), each with its marker: no chart has more series (plot.c pages
# them).  At the bottom the caption, the machine and commit, and the note.

set linetype 1 lc rgb "#0072b2" pt 5
set linetype 2 lc rgb "#d55e00" pt 7
set linetype 3 lc rgb "#009e73" pt 9
set linetype 4 lc rgb "#cc79a7" pt 11
set linetype 5 lc rgb "#e69f00" pt 13
set linetype 6 lc rgb "#56b4e9" pt 4
set linetype 7 lc rgb "#000000" pt 6
set linetype 8 lc rgb "#8c510a" pt 8
set linetype cycle 8

set output outfile
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set label 99 caption at screen 0.005, screen 0.012 left font ",8" front noenhanced
set label 98 note at screen 0.005, screen 0.035 left font ",8" front noenhanced
# more threads than CPUs: a grey band, named at its top (oversub = 1)
oversub(x) = cpus > 0 ? x * 1.41 : 1e9
band = 'set object 1 rect from oversub(cpus), graph 0 to graph 1, graph 1 behind fc rgb "#e8e8e8" fs solid noborder; set label 1 "oversubscribed" at cpus * 1.5, graph 0.96 left front font ",9"'
# ymax: the largest value in columns c0..c1 of block ix, at least 1
maxof = 'ymax = 1; do for [c = c0:c1] { ' . \
	'stats datafile index ix using c nooutput; ' . \
	'ymax = STATS_max > ymax ? STATS_max : ymax }'
