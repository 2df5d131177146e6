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
# Each entry runs in turn.  As it starts, a line "# [K/N] name" says which it
# is of how many; its output
# (stdout and stderr) is printed after it ends, each line prefixed with "# ",
# followed by a TAP result line:
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

log=$(mktemp "${TMPDIR:-/tmp}/segpool-selftest.XXXXXX") || exit 2
child=
cleanup() {
	rm -f "$log"
}
# On Ctrl-C or TERM stop the running test (timeout(1) passes the signal on
# to the test's whole process group), then stop.
on_signal() {
	if [[ -n "$child" ]]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
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
failed_names=()
times=()

echo "TAP version 13"
echo "1..$total"
if [[ ${#wrapper[@]} -gt 0 ]]; then
	echo "# wrapper: ${wrapper[*]}"
fi
n=0
for i in "${!e_test[@]}"; do
	n=$((n + 1))
	test=${e_test[i]}
	name=${e_name[i]}
	prog=${test##*/}
	if [[ " ${SEGPOOL_TEST_EXCLUDE:-} " == *" $prog "* ]]; then
		echo "# $name: excluded here: ${SEGPOOL_TEST_EXCLUDE_WHY:-no reason given}"
		echo "ok $n $name # SKIP excluded"
		skipped=$((skipped + 1))
		continue
	fi
	tool=
	for m in ${SEGPOOL_TEST_MISSING:-}; do
		[[ ${m%%=*} != "$prog" ]] || tool=${m#*=}
	done
	if [[ -n "$tool" ]]; then
		echo "# $name: needs $tool, which is not installed (scripts/check-deps.sh)"
		echo "ok $n $name # SKIP $tool not installed"
		skipped=$((skipped + 1))
		continue
	fi
	echo "# [$n/$total] $name"

	[[ -x "$test" ]] || e_why[i]="$test is missing or not executable"
	if [[ -n ${e_why[i]} ]]; then
		echo "# $name: ${e_why[i]}"
		echo "not ok $n $name"
		failed=$((failed + 1))
		failed_names+=("$name")
		continue
	fi
	# a variant: its settings through env(1), before the wrapper
	venv=()
	if [[ -n ${e_env[i]} ]]; then
		read -r -a venv <<<"${e_env[i]}"
		venv=(env "${venv[@]}")
		echo "# ${venv[*]} $test"
	fi

	start=$(date +%s%N)
	# In the background so that a signal to this script is handled at once;
	# stdin from /dev/null so that no test waits on a terminal.
	# a script test (selftests/*.sh) runs compilers and tools, not code of
	# segpool's: no wrapper
	w=("${wrapper[@]}")
	[[ $prog != *.sh ]] || w=()
	"${limiter[@]}" "${venv[@]}" "${w[@]}" "$test" </dev/null >"$log" 2>&1 &
	child=$!
	# (bash's own "Segmentation fault" notice would only repeat ours)
	{ wait "$child"; } 2>/dev/null
	status=$?
	child=
	ms=$((($(date +%s%N) - start) / 1000000))
	took=$(printf '%d.%02ds' $((ms / 1000)) $((ms % 1000 / 10)))
	times+=("$ms	$name	$took")

	sed -e 's/^/# /' "$log"
	# A last line without a newline still ends its line.
	if [[ -s "$log" && -n "$(tail -c 1 "$log")" ]]; then
		echo
	fi

	if [[ $status -eq 0 ]]; then
		echo "# $name: passed in $took"
		echo "ok $n $name"
		passed=$((passed + 1))
	elif [[ $status -eq $SKIP_STATUS ]]; then
		echo "# $name: skipped (exit status $SKIP_STATUS) after $took"
		echo "ok $n $name # SKIP"
		skipped=$((skipped + 1))
	else
		echo "# $name: failed: $(describe_status "$status") after $took"
		echo "not ok $n $name"
		failed=$((failed + 1))
		failed_names+=("$name")
	fi
done

if [[ ${#times[@]} -gt 0 ]]; then
	slowest=$(printf '%s\n' "${times[@]}" | sort -t '	' -k1,1nr | head -n 5 |
		  awk -F '\t' '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $3 }')
	echo "# slowest: $slowest"
fi
if [[ $failed -gt 0 ]]; then
	echo "# failed: ${failed_names[*]}"
fi
echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
