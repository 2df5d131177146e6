#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/check-preload.sh - real programs on libsegpool-malloc.so.
#
#   scripts/check-preload.sh LIBSEGPOOL_MALLOC_SO [SEGPOOL_TOP]
#
# `make check-preload` runs it.  Each case runs a real program from a Debian
# package once on glibc's malloc and once with LD_PRELOAD of the shared
# object, and passes when both exit 0 with the same output (a digest of it
# where it is large).  The programs are tools/bench/programs.sh's, the
# runner segpool-bench --programs times them with (its "check" list: python,
# sort, gcc, git, perl, sqlite, cxx; see there), plus:
#
#   fork       a C program that forks children while its threads allocate
#   link       a program linked with -lsegpool-malloc: its malloc() is
#              segpool's (checked through segpool_usable_size())
#   export     SEGPOOL_EXPORT=1 under the preload, read by segpool-top -p
#              (when SEGPOOL_TOP names the viewer)
#
# A case whose program is not installed is skipped (install-deps.sh preload
# installs them).  Output is TAP-like; the last lines are "# N skipped" and
# "N passed, N failed".  SEGPOOL_PRELOAD_TIMEOUT bounds each run (seconds,
# default 300); SEGPOOL_PRELOAD_CASES="gcc git" runs only those cases.
# Exit status 1 when a case failed.

set -u

if [[ $# -lt 1 || ! -r $1 ]]; then
	echo "usage: ${0##*/} LIBSEGPOOL_MALLOC_SO [SEGPOOL_TOP]" >&2
	exit 2
fi
so=$(realpath "$1")
top=${2:-}
srctree=$(realpath "$(dirname "${BASH_SOURCE[0]}")/..")
limit=${SEGPOOL_PRELOAD_TIMEOUT:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/segpool-preload.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
skipped=0
n=0
failed_names=()

# run_both NAME CMD... - run CMD in $work/NAME.glibc and $work/NAME.segpool
# (each its own directory, the current one), on glibc then under the
# preload; stdout to out, stderr to err.  Return: 0 when both exit 0.
run_both() {
	local name=$1 dir st=0
	shift
	for mode in glibc segpool; do
		dir=$work/$name.$mode
		mkdir -p "$dir"
		if [[ $mode == glibc ]]; then
			(cd "$dir" && timeout "$limit" "$@") >"$dir/out" 2>"$dir/err"
		else
			(cd "$dir" && LD_PRELOAD=$so timeout "$limit" "$@") \
				>"$dir/out" 2>"$dir/err"
		fi
		local rc=$?
		if [[ $rc -ne 0 ]]; then
			echo "# $name: exit status $rc on $mode; stderr:"
			sed -e 's/^/#   /' "$dir/err" | tail -n 20
			st=1
		fi
	done
	return $st
}

# same NAME - the two runs printed the same.
same() {
	local name=$1

	if ! cmp -s "$work/$name.glibc/out" "$work/$name.segpool/out"; then
		echo "# $name: output differs between glibc and segpool:"
		diff -u "$work/$name.glibc/out" "$work/$name.segpool/out" |
			head -n 30 | sed -e 's/^/#   /'
		return 1
	fi
	echo "# $name: $(wc -c <"$work/$name.glibc/out") bytes of output, identical"
}

result() {
	local name=$1 st=$2

	n=$((n + 1))
	if [[ $st -eq 0 ]]; then
		echo "ok $n $name"
		passed=$((passed + 1))
	elif [[ $st -eq 4 ]]; then
		echo "ok $n $name # SKIP"
		skipped=$((skipped + 1))
	else
		echo "not ok $n $name"
		failed=$((failed + 1))
		failed_names+=("$name")
	fi
}

need() {
	local p
	for p in "$@"; do
		if ! command -v "$p" >/dev/null 2>&1; then
			echo "# $p not installed (scripts/install-deps.sh preload)"
			return 1
		fi
	done
}

# a program of tools/bench/programs.sh, in its list for this check
case_program() {
	local name=$1

	if [[ " $programs " != *" $name "* ]]; then
		echo "# $name: not installed (scripts/install-deps.sh preload)"
		return 4
	fi
	run_both "$name" "$srctree/tools/bench/programs.sh" run "$work/in" \
		"$name" || return 1
	same "$name"
}

case_fork() {
	need cc || return 4
	cat >"$work/forker.c" <<'EOF'
/* threads allocate without pause while the main thread forks children
 * that allocate, fork again, and exec */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_bool stop;

static void *load(void *arg)
{
	unsigned long x = (unsigned long)arg * 2654435761UL + 1;
	void *held[128] = { 0 };

	while (!atomic_load(&stop)) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		free(held[x % 128]);
		held[x % 128] = malloc(x % (x % 16 ? 4000 : 300000) + 1);
	}
	for (int i = 0; i < 128; i++)
		free(held[i]);
	return NULL;
}

static int child(int i)
{
	char *s = NULL;
	size_t sum = 0;

	alarm(60);
	for (int k = 0; k < 2000; k++) {
		s = realloc(s, (size_t)k * 37 + 1);
		memset(s, 'a' + k % 26, (size_t)k * 37 + 1);
		sum += (unsigned char)s[k * 37];
	}
	free(s);
	if (i % 5 == 0) {
		pid_t g = fork();
		int st;

		if (g == 0)
			_exit(malloc(100) ? 0 : 1);
		waitpid(g, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 2;
	}
	if (i % 7 == 0)
		execl("/bin/echo", "echo", "exec", (char *)NULL);
	return sum == 0;
}

int main(void)
{
	pthread_t th[3];
	int bad = 0;

	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, load, (void *)(i + 1));
	for (int i = 0; i < 200; i++) {
		int st;
		pid_t p = fork();

		if (p == 0)
			_exit(child(i));
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("children failed: %d\n", bad);
	return bad != 0;
}
EOF
	cc -O2 -pthread -o "$work/forker" "$work/forker.c" || return 1
	run_both fork "$work/forker" || return 1
	same fork
}

case_link() {
	need cc || return 4
	local dir
	dir=$(dirname "$so")
	cat >"$work/linked.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <segpool/segpool.h>

int main(void)
{
	char *s = strdup("linked with -lsegpool-malloc");
	void *p = malloc(100);

	/* segpool_usable_size() knows only segpool's memory */
	printf("%s: %d %d\n", s, segpool_usable_size(p) >= 100,
	       segpool_usable_size(s) > 0);
	free(p);
	free(s);
	return 0;
}
EOF
	cc -O2 -I"$srctree/include" -o "$work/linked" "$work/linked.c" \
		-L"$dir" -lsegpool-malloc -Wl,-rpath,"$dir" || return 1
	local out
	out=$(timeout "$limit" "$work/linked") || return 1
	echo "# link: $out"
	[[ $out == "linked with -lsegpool-malloc: 1 1" ]]
}

case_export() {
	[[ -n $top && -x $top ]] || { echo "# segpool-top not given"; return 4; }
	need sleep || return 4
	local pid json st=1
	SEGPOOL_EXPORT=1 LD_PRELOAD=$so sleep 30 &
	pid=$!
	for _ in $(seq 1 50); do
		json=$("$top" -p "$pid" --json 2>/dev/null) && break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# the library's magazine caches are always there; a size class
	# only once sleep allocated from it (classes are made at first use)
	if [[ $json == *'"segpool-magazine-'* ]]; then
		echo "# export: segpool-top -p $pid --json shows the caches of sleep"
		st=0
	else
		echo "# export: segpool-top -p $pid --json gave nothing usable"
	fi
	return $st
}

echo "TAP version 13"
echo "# preload: $so"
"$srctree/tools/bench/programs.sh" prepare "$work/in" 1 "$(dirname "$so")" ||
	exit 2
programs=$("$srctree/tools/bench/programs.sh" list "$work/in" check | xargs)
for c in ${SEGPOOL_PRELOAD_CASES:-python gcc git sort perl sqlite cxx fork \
	link export}; do
	echo "# running $c"
	start=$SECONDS
	if declare -F "case_$c" >/dev/null; then
		"case_$c"
	else
		case_program "$c"
	fi
	st=$?
	echo "# $c: $((SECONDS - start)) s"
	result "$c" "$st"
done
if [[ $failed -gt 0 ]]; then
	echo "# failed: ${failed_names[*]}"
fi
echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
