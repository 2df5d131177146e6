# SPDX-License-Identifier: MIT
#
# tools/bench/common.gp - what every plot of segpool-bench shares, loaded
# first by each script (segpool-bench passes gpdir, where this file is, and
# caption, the machine and commit the figures come from).
#
# Eight colours told apart at a glance (Okabe and Ito's palette, its
# yellow swapped for brown, which reads on white), each with its own marker;
# no chart has more series than these (plot.c pages the contenders), and
# a series keeps its place, its colour, from one chart of a page to the next.
# Then the caption: the machine and commit at the bottom left, and above it
# the note, what "floor" and "oversubscribed" mean where the chart has them.

set linetype 1 lc rgb "#0072b2" pt 5
set linetype 2 lc rgb "#d55e00" pt 7
set linetype 3 lc rgb "#009e73" pt 9
set linetype 4 lc rgb "#cc79a7" pt 11
set linetype 5 lc rgb "#e69f00" pt 13
set linetype 6 lc rgb "#56b4e9" pt 4
set linetype 7 lc rgb "#000000" pt 6
set linetype 8 lc rgb "#8c510a" pt 8
set linetype cycle 8

if (!exists("caption")) { caption = "" }
if (!exists("note")) { note = "" }
if (!exists("cpus")) { cpus = 0 }
if (!exists("page")) { page = "" }
set label 99 caption at screen 0.005, screen 0.012 left font ",8" front noenhanced
set label 98 note at screen 0.005, screen 0.035 left font ",8" front noenhanced
