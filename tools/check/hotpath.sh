#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/check/hotpath.sh - the hit paths' structural check (not a timing
# test).
#
#   tools/check/hotpath.sh LIBRARY.so SRCTREE
#
# Disassembles the hit paths of the built library (segpool_cache_alloc,
# segpool_cache_free, segpool_malloc, segpool_free): from each function's
# entry, straight down to its first ret, which is the magazine hit (every
# miss is a forward jump past it, core/hotpath.h).  Fails when that path
# holds a stack operation (push, pop, an %rsp adjustment), a call, or a lock
# prefix, or is longer than the budget stated in core/hotpath.h; then
# checks that Documentation/internals/percpu.md quotes the counts it found.  Prints
# one line per function and a summary: "N passed, N failed".
set -u

lib=${1:?usage: hotpath.sh LIBRARY.so SRCTREE}
src=${2:?usage: hotpath.sh LIBRARY.so SRCTREE}
budget_file=$src/core/hotpath.h
doc=$src/Documentation/internals/percpu.md
pass=0
fail=0

if ! command -v objdump >/dev/null 2>&1; then
	echo "# objdump not found (binutils): hit-path check skipped"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
if [[ $(uname -m) != x86_64 ]]; then
	echo "# not x86-64: the budgets are the x86-64 sequences'; skipped"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

# The budgets: lines "  hotpath-budget: NAME N" in core/hotpath.h.
declare -A budget
while read -r _ _ name n; do
	budget[$name]=$n
done < <(grep -E '^ \* +hotpath-budget: [a-z_]+ [0-9]+$' "$budget_file")

dis=$(objdump -d --no-show-raw-insn "$lib") || { echo "objdump failed"; exit 1; }

declare -A count
for fn in segpool_cache_alloc segpool_cache_free segpool_malloc segpool_free; do
	body=$(awk -v f="<$fn>:" '
		$2 == f { on = 1; next }
		on && /^$/ { exit }
		on { sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); print; if ($0 ~ /^ret/) exit }
	' <<<"$dis")
	if [[ -z $body ]]; then
		echo "not ok $fn: not found in $lib"
		fail=$((fail + 1))
		continue
	fi
	n=$(grep -c . <<<"$body")
	count[$fn]=$n
	bad=$(grep -E '^(push|pop|call|lock|enter|leave)|%rsp' <<<"$body" | head -3 | tr '\n' ';')
	want=${budget[$fn]:-}
	if [[ -n $bad ]]; then
		echo "not ok $fn: $n instructions to ret, but the hit holds: $bad"
		fail=$((fail + 1))
	elif [[ -z $want ]]; then
		echo "not ok $fn: $n instructions; no hotpath-budget line in core/hotpath.h"
		fail=$((fail + 1))
	elif ((n > want)); then
		echo "not ok $fn: $n instructions to ret, over its budget of $want"
		fail=$((fail + 1))
	else
		echo "ok $fn: $n instructions to ret (budget $want); no frame, call or lock prefix"
		pass=$((pass + 1))
	fi
done

pair_cache=$(( ${count[segpool_cache_alloc]:-0} + ${count[segpool_cache_free]:-0} ))
pair_malloc=$(( ${count[segpool_malloc]:-0} + ${count[segpool_free]:-0} ))
echo "# pairs: cache API $pair_cache, segpool_malloc+segpool_free $pair_malloc instructions"

# The docs quote the counts of a gcc build in one line; it must match.
if readelf -p .comment "$lib" 2>/dev/null | grep -q clang; then
	echo "# built by clang: the docs quote gcc's counts, not compared"
	echo "$pass passed, $fail failed"
	((fail == 0))
	exit
fi
line="Hit-path instructions (tools/check/hotpath.sh): segpool_cache_alloc ${count[segpool_cache_alloc]:-?}, segpool_cache_free ${count[segpool_cache_free]:-?}, segpool_malloc ${count[segpool_malloc]:-?}, segpool_free ${count[segpool_free]:-?}."
if grep -qF -- "$line" "$doc"; then
	echo "ok Documentation/internals/percpu.md quotes these counts"
	pass=$((pass + 1))
else
	echo "not ok Documentation/internals/percpu.md does not quote the counts; it should say:"
	echo "#   $line"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
((fail == 0))
