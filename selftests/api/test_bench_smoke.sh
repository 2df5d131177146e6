#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_bench_smoke.sh - make bench BENCH_ARGS=--smoke as a
# newcomer meets it: every step exits 0 within seconds and says it is a
# smoke run, the terminal's text fits 120 columns, and no chart has more
# than eight series.
#
# With SEGPOOL_BENCH_SMOKE_MAKE=1 (CI's bench step) it runs `make NODEPS=1
# bench BENCH_ARGS=--smoke` itself, which also builds what is missing, into
# a temporary folder.  Never from make check, whose build flags a second
# make would change: there it runs make bench's steps (tools/Makefile.inc)
# from the object tree, on a part that keeps within make check's budget and
# draws every chart: segpool-bench --smoke on the workloads behind the
# charts with 1 and 4 threads (4 oversubscribes a 2-CPU machine), and
# --programs --smoke on sort and logpipe's -b malloc and -b cache (the whole
# smoke run of the workloads is segpool-bench-smoke, bench-pmr's is
# bench-pmr-smoke, both in make check too).
#
# Checked: exit status 0; "SMOKE RUN" in the workloads' and the programs'
# output and in results.md (and in bench-pmr's, for all of make bench); every line of the output at most 120 columns;
# each .dat file for gnuplot names its series ("# series:" lines) and none
# more than eight; common.gp defines eight colours and cycles them; the
# PNGs are there when gnuplot is; logpipe's table has a row on segpool's
# caches and one on glibc's malloc.
# Skipped (status 4) under a sanitizer (the programs step preloads, which a
# sanitizer build cannot) and when the benchmark was not built.

set -euo pipefail

srctree=${SEGPOOL_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
objtree=${SEGPOOL_OBJTREE:-$srctree}
bench=$objtree/tools/bench/segpool-bench

if [[ -n ${SEGPOOL_SANITIZE:-} ]]; then
	echo "a sanitizer build ($SEGPOOL_SANITIZE): the programs step cannot preload"
	exit 4
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/segpool-bench-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
fail=0
bad() { echo "FAIL: $*"; fail=1; }

SECONDS=0
if [[ ${SEGPOOL_BENCH_SMOKE_MAKE:-0} == 1 ]]; then
	make --no-print-directory -s -C "$srctree" O="$objtree" NODEPS=1 \
		BENCH_ARGS=--smoke BENCH_OUT="$out" bench >"$tmp/all.txt" 2>&1 ||
		bad "make bench BENCH_ARGS=--smoke exited $?"
	cp "$tmp/all.txt" "$tmp/bench.txt"
	cp "$tmp/all.txt" "$tmp/programs.txt"
else
	if [[ ! -x $bench ]]; then
		echo "segpool-bench not built"
		exit 4
	fi
	export SEGPOOL_BENCH_LIBPATH=$objtree${SEGPOOL_BENCH_LIBPATH:+:$SEGPOOL_BENCH_LIBPATH}
	"$bench" --smoke -w pool,pair,batch,threads,mixed,lat-pool,lat-xfer \
		-t 1,4 --out "$out" >"$tmp/bench.txt" 2>&1 ||
		bad "segpool-bench --smoke exited $?"
	"$bench" --programs --smoke --prog sort,logpipe,logpipe-cache \
		--out "$out/programs" >"$tmp/programs.txt" 2>&1 ||
		bad "segpool-bench --programs --smoke exited $?"
	cat "$tmp"/*.txt >"$tmp/all.txt"
fi
echo "# the smoke run took $SECONDS s"

grep -q "SMOKE RUN" "$tmp/bench.txt" || bad "the workloads' output does not say SMOKE RUN"
grep -q "SMOKE RUN" "$tmp/programs.txt" || bad "the programs' output does not say SMOKE RUN"
grep -q "SMOKE RUN" "$out/results.md" 2>/dev/null || bad "results.md does not say SMOKE RUN"
if [[ ${SEGPOOL_BENCH_SMOKE_MAKE:-0} == 1 ]]; then
	grep -q "^SMOKE RUN: tiny counts" "$tmp/all.txt" ||
		bad "bench-pmr's output does not say SMOKE RUN"
fi

# the terminal's text, tables and prose, at most 120 columns
wide=$(awk 'length($0) > 120 { printf "%d: %.60s...\n", length($0), $0 }' "$tmp/all.txt")
[[ -z $wide ]] || bad "lines wider than 120 columns:"$'\n'"$wide"

# at most eight series a chart, each chart's data naming them
shopt -s nullglob
dats=("$out"/*.dat)
((${#dats[@]} >= 4)) || bad "only ${#dats[@]} gnuplot data files in $out"
for d in "${dats[@]}"; do
	grep -q '^# series:' "$d" || bad "${d##*/} names no series"
	while read -r _ _ series; do
		n=$(wc -w <<<"$series")
		((n <= 8)) || bad "${d##*/}: $n series in one panel: $series"
	done < <(grep '^# series:' "$d")
done
gp=$srctree/tools/bench/common.gp
[[ $(grep -c '^set linetype [0-9]* lc rgb' "$gp") == 8 ]] ||
	bad "common.gp does not define eight colours"
grep -q '^set linetype cycle 8' "$gp" || bad "common.gp does not cycle eight colours"
if command -v gnuplot >/dev/null 2>&1; then
	for d in "${dats[@]}"; do
		[[ -s ${d%.dat}.png ]] || bad "no ${d##*/}'s PNG"
	done
fi
grep -q "floor:" "$out/results.md" || bad "results.md does not say what floor is"

# the main job side by side (make check builds no examples: then no rows)
if [[ ${SEGPOOL_BENCH_SMOKE_MAKE:-0} == 1 || -x $objtree/examples/logpipe ]]; then
	grep -Eq '^\| segpool caches +\| +- +\| +[0-9]+ ' "$tmp/programs.txt" ||
		bad "no logpipe row on segpool's caches"
	grep -Eq '^\| malloc/free +\| +glibc +\| +[0-9]+ ' "$tmp/programs.txt" ||
		bad "no logpipe row on glibc's malloc"
else
	echo "# examples/logpipe not built: its rows not checked"
fi

if ((fail)); then
	echo "--- output"
	cat "$tmp/all.txt"
	exit 1
fi
echo "ok: the smoke run, its text within 120 columns, charts of at most 8 series"
