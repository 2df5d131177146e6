# SPDX-License-Identifier: MIT
#
# tools/bench/common.gp - what every plot of segpool-bench shares, loaded
# first by each script (segpool-bench passes gpdir, where this file is, and
# caption, the machine and commit the figures come from).
#
# One colour and one marker per line type, 16 of them, so no two series of a
# plot share either (the contenders are at most 16, and each keeps its line
# type, its place in names, in every plot); then the caption line at the
# bottom left of the image.

set linetype 1 lc rgb "#1f77b4" pt 1
set linetype 2 lc rgb "#d62728" pt 2
set linetype 3 lc rgb "#2ca02c" pt 3
set linetype 4 lc rgb "#ff7f0e" pt 4
set linetype 5 lc rgb "#9467bd" pt 5
set linetype 6 lc rgb "#8c564b" pt 6
set linetype 7 lc rgb "#e377c2" pt 7
set linetype 8 lc rgb "#7f7f7f" pt 8
set linetype 9 lc rgb "#bcbd22" pt 9
set linetype 10 lc rgb "#17becf" pt 10
set linetype 11 lc rgb "#000000" pt 11
set linetype 12 lc rgb "#aec7e8" pt 12
set linetype 13 lc rgb "#98df8a" pt 13
set linetype 14 lc rgb "#ffbb78" pt 14
set linetype 15 lc rgb "#c5b0d5" pt 15
set linetype 16 lc rgb "#8b0000" pt 64
set linetype cycle 16

if (!exists("caption")) { caption = "" }
set label 99 caption at screen 0.005, screen 0.012 left font ",8" front noenhanced
