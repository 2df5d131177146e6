#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/check/hotpath.sh - the hit paths' structural check (not a timing
# test).
#
#   tools/check/hotpath.sh LIBRARY.so SRCTREE [INLINE-USER]
#
# Disassembles the hit paths of the built library (segpool_cache_alloc,
# segpool_cache_free, segpool_malloc, segpool_free: IFUNCs, so both builds
# each resolves to, sp_*_open and sp_*_counted, core/entry.h): from each
# function's
# entry, straight down to its first ret, which is the magazine hit (every
# miss is a forward jump past it, core/hotpath.h).  Fails when that path
# holds a stack operation (push, pop, an %rsp adjustment), a call, or a lock
# prefix, or is longer than the budget stated in core/hotpath.h; then
# checks that Documentation/internals/percpu.md quotes the counts it found.
# In sp_cache_alloc_open and sp_cache_free_open it also counts the rseq
# sequence (pop, push): from the lea of its descriptor (the instruction
# before the store to the rseq area's rseq_cs, %fs:0x8) to the hit count
# (the first addq $0x1 after it), both included; in a gcc build each count
# must be the one its "rseq-insns:" line in percpu/arch-x86_64.h states,
# so the prose cannot go stale.
#
# An arm64 library (a cross build, make CROSS_COMPILE=aarch64-linux-gnu-)
# is disassembled with $OBJDUMP (default aarch64-linux-gnu-objdump) and
# checked the same way against its own lines: "hotpath-budget-arm64:" in
# core/hotpath.h, "rseq-insns-arm64:" in percpu/arch-arm64.h (the sequence
# from the adrp of its descriptor to its commit, the stp, both included),
# and the "Hit-path instructions on arm64" line of the page.  There a stack
# operation is a store or load at sp, a call is bl or blr, and besides a
# call the hit may hold no exclusive pair, LSE atomic or barrier (ldxr,
# stxr, cas, ldadd, swp, dmb...).  The inline user program is x86-64's
# alone (on arm64 the inline functions are the calls): not walked there.
#
# With INLINE-USER, the program tools/check/inline_user.c built with
# SEGPOOL_INLINE: the same walk over its four functions (the inline hit
# paths as they land in a caller), against the budgets stated in
# include/segpool/inline.h; no call and no lock prefix on them, and no
# stack operation in a gcc build (clang 14 saves one register on the
# free's hit); then the program is run and must see the library's layout
# words.  Prints one line per function and a summary: "N passed, N failed".
set -u

lib=${1:?usage: hotpath.sh LIBRARY.so SRCTREE}
src=${2:?usage: hotpath.sh LIBRARY.so SRCTREE}
user=${3:-}
budget_file=$src/core/hotpath.h
doc=$src/Documentation/internals/percpu.md
pass=0
fail=0

# The library's architecture, from its ELF header: each has its objdump,
# its lines of budgets and counts, and its patterns.
case "$(LC_ALL=C readelf -h "$lib" 2>/dev/null | sed -n 's/^ *Machine: *//p')" in
*X86-64*)
	arch=x86_64 sfx= on=
	objdump=${OBJDUMP:-objdump}
	# the store to the rseq area's rseq_cs (%fs:0x8), one after the lea
	seq_awk='/%fs:0x8\(/ { s = NR - 1 }
		s && /^addq +\$0x1,/ { print NR - s + 1; exit }'
	stack_pat='^(push|pop|call|lock|enter|leave)|%rsp'
	nostack_pat='^(call|lock)'
	;;
*AArch64*)
	arch=arm64 sfx=-arm64 on=" on arm64"
	objdump=${OBJDUMP:-aarch64-linux-gnu-objdump}
	user=
	# the adrp of the descriptor is 2 before the read of tpidr_el0;
	# the commit is the first stp after it
	seq_awk='/^mrs[ \t]+x[0-9]+, *tpidr_el0/ && !s { s = NR - 2 }
		s && /^stp[ \t]/ { print NR - s + 1; exit }'
	atomics='ld[a]?x[rp]|st[l]?x[rp]|cas|ldadd|ldclr|ldeor|ldset|ldsmax'
	atomics+='|ldsmin|ldumax|ldumin|stadd|stclr|steor|stset|swp|dmb|dsb|isb'
	nostack_pat="^(bl|$atomics)[a-z0-9.]*([[:space:]]|\$)"
	stack_pat="$nostack_pat|[[, ]sp([],]|\$)"
	;;
*)
	echo "# $lib: not an x86-64 or arm64 library: hit-path check skipped"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
	;;
esac
if ! command -v "$objdump" >/dev/null 2>&1; then
	echo "# $objdump not found (binutils): hit-path check skipped"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
arch_h=$src/percpu/arch-$arch.h

# The budgets: lines "  hotpath-budget: NAME N" in core/hotpath.h
# ("hotpath-budget-arm64:" for arm64).
declare -A budget
while read -r _ _ name n; do
	budget[$name]=$n
done < <(grep -hE "^ \\* +hotpath-budget$sfx: [a-z_0-9]+ [0-9]+\$" \
	 "$budget_file" "$src/include/segpool/inline.h")

# The rseq sequences' counts: lines "  rseq-insns: NAME N" in
# percpu/arch-x86_64.h, "rseq-insns-arm64:" in percpu/arch-arm64.h (NAME
# the hit path that holds the sequence).
declare -A seq_want
while read -r _ _ name n _; do
	seq_want[$name]=$n
done < <(grep -hE "^ \\* +rseq-insns$sfx: [a-z_0-9]+ [0-9]+( |\$)" "$arch_h")
declare -A seq_count

# walk FILE FUNCTION... : count each hit path, check it against its budget
# (stack operations allowed when $allow_stack is set)
declare -A count
walk() {
	local file=$1 dis fn body n bad want pat
	shift
	dis=$("$objdump" -d --no-show-raw-insn "$file") ||
		{ echo "$objdump failed"; exit 1; }
	for fn in "$@"; do
		body=$(awk -v f="<$fn>:" '
			$2 == f { on = 1; next }
			on && /^$/ { exit }
			on { sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); print; if ($0 ~ /^ret/) exit }
		' <<<"$dis")
		if [[ -z $body ]]; then
			echo "not ok $fn: not found in $file"
			fail=$((fail + 1))
			continue
		fi
		n=$(grep -c . <<<"$body")
		count[$fn]=$n
		if [[ -n ${seq_want[$fn]:-} ]]; then
			seq_count[$fn]=$(awk "$seq_awk" <<<"$body")
		fi
		pat=$stack_pat
		[[ -n ${allow_stack:-} ]] && pat=$nostack_pat
		bad=$(grep -E "$pat" <<<"$body" | head -3 | tr '\n' ';')
		want=${budget[$fn]:-}
		if [[ -n $bad ]]; then
			echo "not ok $fn: $n instructions to ret, but the hit holds: $bad"
			fail=$((fail + 1))
		elif [[ -z $want ]]; then
			echo "not ok $fn: $n instructions; no hotpath-budget line"
			fail=$((fail + 1))
		elif ((n > want)); then
			echo "not ok $fn: $n instructions to ret, over its budget of $want"
			fail=$((fail + 1))
		else
			local what="frame, call or lock prefix"
			[[ -n ${allow_stack:-} ]] && what="call or lock prefix"
			[[ $arch == arm64 ]] && what="frame, call, atomic or barrier"
			echo "ok $fn: $n instructions to ret (budget $want); no $what"
			pass=$((pass + 1))
		fi
	done
}

# The exported names are IFUNCs (core/entry.c): their two builds are walked.
walk "$lib" sp_cache_alloc_open sp_cache_free_open sp_malloc_open sp_free_open
walk "$lib" sp_cache_alloc_counted sp_cache_free_counted sp_malloc_counted \
	sp_free_counted

if [[ -n $user ]]; then
	allow_stack=
	readelf -p .comment "$user" 2>/dev/null | grep -q clang && allow_stack=1
	walk "$user" user_cache_alloc user_cache_free user_malloc64 user_free
	allow_stack=
	echo "# inline pairs: cache API $(( ${count[user_cache_alloc]:-0} + ${count[user_cache_free]:-0} )), segpool_malloc(64)+segpool_free $(( ${count[user_malloc64]:-0} + ${count[user_free]:-0} )) instructions"
	if out=$("$user" 2>&1); then
		echo "ok inline user program runs on the library's words: ${out#\# }"
		pass=$((pass + 1))
	else
		echo "not ok inline user program: ${out:-exit status $?}"
		fail=$((fail + 1))
	fi
fi

pair_cache=$(( ${count[sp_cache_alloc_open]:-0} + ${count[sp_cache_free_open]:-0} ))
pair_malloc=$(( ${count[sp_malloc_open]:-0} + ${count[sp_free_open]:-0} ))
echo "# pairs: cache API $pair_cache, segpool_malloc+segpool_free $pair_malloc instructions"

# The docs quote the counts of a gcc build in one line; it must match.
if readelf -p .comment "$lib" 2>/dev/null | grep -q clang; then
	echo "# built by clang: the docs quote gcc's counts, not compared"
	echo "$pass passed, $fail failed"
	((fail == 0))
	exit
fi
# The sequences' counts, as percpu/arch-x86_64.h (or -arm64.h) states them.
ah=${arch_h#"$src"/}
for fn in "${!seq_want[@]}"; do
	got=${seq_count[$fn]:-}
	if [[ -z $got ]]; then
		echo "not ok rseq sequence of $fn: not found (no arm of the rseq area followed by the count or commit)"
		fail=$((fail + 1))
	elif ((got != seq_want[$fn])); then
		echo "not ok rseq sequence of $fn: $got instructions, $ah says $((seq_want[$fn])): correct its rseq-insns$sfx line"
		fail=$((fail + 1))
	else
		echo "ok rseq sequence of $fn: $got instructions, as $ah says"
		pass=$((pass + 1))
	fi
done
((${#seq_want[@]})) || { echo "not ok $ah has no rseq-insns$sfx line"; fail=$((fail + 1)); }

line="Hit-path instructions$on (tools/check/hotpath.sh): segpool_cache_alloc ${count[sp_cache_alloc_open]:-?}, segpool_cache_free ${count[sp_cache_free_open]:-?}, segpool_malloc ${count[sp_malloc_open]:-?}, segpool_free ${count[sp_free_open]:-?}."
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
