#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/run-selftests.sh - run selftest programs, kselftest style.
#
#   scripts/run-selftests.sh TEST...
#
# `make check` and `make stress` call it with their test programs.  A
# program built with SP_TEST_MAIN_VARIANTS (selftests/lib/harness.h) holds a
# marker; the runner asks it for its variants (PROG --list-variants) and
# runs it once per variant with the variant's environment and
# SEGPOOL_TEST_VARIANT=NAME set, each run its own entry "PROG [NAME]".
# Entries run one at a time, or up to SEGPOOL_TEST_JOBS at once.  A line
# "# [K/N] name" says which entry it is of how many (as it starts, when one
# runs at a time); its output (stdout and stderr) is printed after it ends,
# each line prefixed with "# ", followed by a TAP result line:
#
#   ok N name            exit status 0
#   ok N name # SKIP     exit status 4 (kselftest's "skipped")
#   not ok N name        anything else, a crash or a timeout included
#
# The result depends on the exit status alone, never on what a test prints
# (cmocka's TAP mode prints skipped tests as "not ok ... # SKIP").  At the
# end "# slowest: name 12.34s, ..." names the (up to) five tests that took
# longest, then come "# N skipped" and "N passed, N failed".  Exit status: 1 when
# any test failed, 2 for a usage error, 0 otherwise.
#
# Environment:
#   SEGPOOL_TEST_EXCLUDE  test names (white-space separated) reported as
#                         skipped without running, with the reason given in
#                         SEGPOOL_TEST_EXCLUDE_WHY; a program's name excludes
#                         all its variants
#   SEGPOOL_TEST_MISSING  NAME=TOOL words (scripts/check-deps.sh --skips): the
#                         test NAME reported as skipped, TOOL not installed
#   SEGPOOL_TEST_WRAPPER  a command put before each test, split on white space
#                         (no quoting), e.g. "valgrind -q --error-exitcode=99";
#                         not before a script test (NAME.sh)
#   SEGPOOL_TEST_TIMEOUT  seconds each entry may run, default 600; 0 = no limit
#                         (make check sets 60, make stress 600)
#   SEGPOOL_TEST_JOBS     entries run at once, default 1.  Above 1, each
#                         entry's block (its "[K/N]" line, output and
#                         result) is printed whole when it and every entry
#                         before it have ended, so the output reads as a
#                         run one at a time would, in the same order; for
#                         runs whose programs use one CPU each (CI's
#                         valgrind step: memcheck runs a program's threads
#                         one at a time)
#   SEGPOOL_OBJTREE       the build tree (set by make; passed on to tests)

set -u

SKIP_STATUS=4

if [[ $# -eq 0 ]]; then
	echo "usage: ${0##*/} TEST..." >&2
	exit 2
fi

limit=${SEGPOOL_TEST_TIMEOUT:-600}
if [[ ! "$limit" =~ ^[0-9]+$ ]]; then
	echo "${0##*/}: SEGPOOL_TEST_TIMEOUT must be a number of seconds, not '$limit'" >&2
	exit 2
fi

jobs=${SEGPOOL_TEST_JOBS:-1}
if [[ ! "$jobs" =~ ^[1-9][0-9]*$ ]]; then
	echo "${0##*/}: SEGPOOL_TEST_JOBS must be a number of entries of at least 1, not '$jobs'" >&2
	exit 2
fi
# wait -n -p (bash 5.1) says which entry ended; without it, one at a time
if [[ $jobs -gt 1 ]] &&
	(( BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1) )); then
	echo "# bash ${BASH_VERSION} lacks wait -n -p: entries run one at a time"
	jobs=1
fi

wrapper=()
read -r -a wrapper <<<"${SEGPOOL_TEST_WRAPPER:-}"

limiter=()
if [[ $limit -gt 0 ]]; then
	if command -v timeout >/dev/null 2>&1; then
		limiter=(timeout --kill-after=30 "$limit")
	else
		echo "# timeout(1) not found: tests run without a time limit"
	fi
fi

logdir=$(mktemp -d "${TMPDIR:-/tmp}/segpool-selftest.XXXXXX") || exit 2
declare -A running=()	# pid -> entry index, of the entries running now
cleanup() {
	rm -rf "$logdir"
}
# On Ctrl-C or TERM stop the running tests (timeout(1) passes the signal on
# to each test's whole process group), then stop.
on_signal() {
	local pid

	for pid in "${!running[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${!running[@]}"; do
		wait "$pid" 2>/dev/null
	done
	cleanup
	echo "# interrupted"
	exit 130
}
trap cleanup EXIT
trap on_signal INT TERM

# describe_status STATUS - why a test failed, in words.
describe_status() {
	local st=$1 sig

	if [[ $st -eq 124 && ${#limiter[@]} -gt 0 ]]; then
		echo "timed out (limit ${limit}s, SEGPOOL_TEST_TIMEOUT)"
	elif [[ $st -eq 126 ]]; then
		echo "could not be executed"
	elif [[ $st -eq 127 ]]; then
		echo "command not found"
	elif [[ $st -gt 128 ]]; then
		sig=$(kill -l $((st - 128)) 2>/dev/null) || sig="signal $((st - 128))"
		echo "killed by SIG${sig#SIG}"
	else
		echo "exit status $st"
	fi
}

# The entries: each program once, or once per variant.
marker=SEGPOOL_SELFTEST_HAS_VARIANTS
e_test=()
e_name=()
e_env=()
e_why=()	# why an entry cannot run ("" when it can)
for test in "$@"; do
	name=${test##*/}
	if [[ -f "$test" && -x "$test" ]] && grep -q -a -F "$marker" "$test" 2>/dev/null; then
		if ! list=$("$test" --list-variants 2>&1) || [[ -z "$list" ]]; then
			e_test+=("$test")
			e_name+=("$name [variants?]")
			e_env+=("")
			e_why+=("cannot list its variants: ${list:-no output}")
			continue
		fi
		while read -r vname vset; do
			[[ -n "$vname" ]] || continue
			e_test+=("$test")
			e_name+=("$name [$vname]")
			e_env+=("${vset:+$vset }SEGPOOL_TEST_VARIANT=$vname")
			e_why+=("")
		done <<<"$list"
	else
		e_test+=("$test")
		e_name+=("$name")
		e_env+=("")
		e_why+=("")
	fi
done

total=${#e_test[@]}
passed=0
failed=0
skipped=0
times=()
e_failed=()	# 1 for an entry that failed
e_out=()	# an ended entry's block, "" while it has not ended
e_start=()	# a running entry's start (ns)
printed=0	# entries printed so far, in order

# finish I TEXT... - entry I's block is complete: TEXT's lines, then the
# blocks of every entry before it have ended are printed, in order.
finish() {
	local i=$1

	shift
	e_out[i]=$(printf '%s\n' "$@")
	while [[ $printed -lt $total && -n ${e_out[printed]:-} ]]; do
		printf '%s\n' "${e_out[printed]}"
		unset "e_out[printed]"
		printed=$((printed + 1))
	done
}

# entry_head I - the lines that say which entry I is: "# [K/N] name" and,
# for a variant, its settings.  Printed as it starts when entries run one at
# a time, at the head of its block when they run at once.
entry_head() {
	local i=$1

	echo "# [$((i + 1))/$total] ${e_name[i]}"
	[[ -z ${e_env[i]} ]] || echo "# env ${e_env[i]} ${e_test[i]}"
}

# launch I - start entry I in the background.  stdin from /dev/null so that
# no test waits on a terminal; a script test (selftests/*.sh) runs
# compilers and tools, not code of segpool's: no wrapper.
launch() {
	local i=$1 test=${e_test[$1]} venv=() w=("${wrapper[@]}")

	# a variant: its settings through env(1), before the wrapper
	if [[ -n ${e_env[i]} ]]; then
		read -r -a venv <<<"${e_env[i]}"
		venv=(env "${venv[@]}")
	fi
	[[ ${test##*/} != *.sh ]] || w=()
	e_start[i]=$(date +%s%N)
	"${limiter[@]}" "${venv[@]}" "${w[@]}" "$test" </dev/null \
		>"$logdir/$i" 2>&1 &
	running[$!]=$i
}

# reap - wait for a running entry to end, and finish it.
reap() {
	local pid=0 status i name ms took log lines=() head=()

	# (bash's own "Segmentation fault" notice would only repeat ours)
	{ wait -n -p pid "${!running[@]}"; } 2>/dev/null
	status=$?
	i=${running[$pid]}
	unset "running[$pid]"
	name=${e_name[i]}
	log=$logdir/$i
	ms=$((($(date +%s%N) - e_start[i]) / 1000000))
	took=$(printf '%d.%02ds' $((ms / 1000)) $((ms % 1000 / 10)))
	times+=("$ms	$name	$took")

	# one at a time, these lines were printed as the entry started
	[[ $jobs -eq 1 ]] || mapfile -t head < <(entry_head "$i")
	mapfile -t lines < <(sed -e 's/^/# /' "$log")
	rm -f "$log"
	if [[ $status -eq 0 ]]; then
		lines+=("# $name: passed in $took" "ok $((i + 1)) $name")
		passed=$((passed + 1))
	elif [[ $status -eq $SKIP_STATUS ]]; then
		lines+=("# $name: skipped (exit status $SKIP_STATUS) after $took"
			"ok $((i + 1)) $name # SKIP")
		skipped=$((skipped + 1))
	else
		lines+=("# $name: failed: $(describe_status "$status") after $took"
			"not ok $((i + 1)) $name")
		failed=$((failed + 1))
		e_failed[i]=1
	fi
	finish "$i" "${head[@]}" "${lines[@]}"
}

echo "TAP version 13"
echo "1..$total"
if [[ ${#wrapper[@]} -gt 0 ]]; then
	echo "# wrapper: ${wrapper[*]}"
fi
if [[ $jobs -gt 1 ]]; then
	echo "# $jobs entries at a time (SEGPOOL_TEST_JOBS)"
fi
for i in "${!e_test[@]}"; do
	n=$((i + 1))
	test=${e_test[i]}
	name=${e_name[i]}
	prog=${test##*/}
	if [[ " ${SEGPOOL_TEST_EXCLUDE:-} " == *" $prog "* ]]; then
		skipped=$((skipped + 1))
		finish "$i" "# $name: excluded here: ${SEGPOOL_TEST_EXCLUDE_WHY:-no reason given}" \
			"ok $n $name # SKIP excluded"
		continue
	fi
	tool=
	for m in ${SEGPOOL_TEST_MISSING:-}; do
		[[ ${m%%=*} != "$prog" ]] || tool=${m#*=}
	done
	if [[ -n "$tool" ]]; then
		skipped=$((skipped + 1))
		finish "$i" "# $name: needs $tool, which is not installed (scripts/check-deps.sh)" \
			"ok $n $name # SKIP $tool not installed"
		continue
	fi

	[[ -x "$test" ]] || e_why[i]="$test is missing or not executable"
	if [[ -n ${e_why[i]} ]]; then
		failed=$((failed + 1))
		e_failed[i]=1
		mapfile -t head < <(entry_head "$i")
		finish "$i" "${head[@]}" "# $name: ${e_why[i]}" \
			"not ok $n $name"
		continue
	fi
	while [[ ${#running[@]} -ge $jobs ]]; do
		reap
	done
	if [[ $jobs -eq 1 ]]; then
		# everything before it has been printed: say which starts
		entry_head "$i"
	fi
	launch "$i"
done
while [[ ${#running[@]} -gt 0 ]]; do
	reap
done

if [[ ${#times[@]} -gt 0 ]]; then
	slowest=$(printf '%s\n' "${times[@]}" | sort -t '	' -k1,1nr | head -n 5 |
		  awk -F '\t' '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $3 }')
	echo "# slowest: $slowest"
fi
if [[ $failed -gt 0 ]]; then
	failed_names=()
	for i in "${!e_failed[@]}"; do	# in the entries' order
		failed_names+=("${e_name[i]}")
	done
	echo "# failed: ${failed_names[*]}"
fi
echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
