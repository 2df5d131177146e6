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
# where it is large):
#
#   python     dicts, lists, strings, a JSON round trip (python3)
#   gcc        gcc -O2 compiling the largest C file of this project
#   git        a repository created, committed to (fixed dates: the commit
#              ids must match), repacked, checked with fsck
#   sort       sort of a generated 40 MB file, in memory and with a small
#              buffer and two threads (temporary files)
#   cxx        a multithreaded C++ program compiled here: producers hand
#              strings, vectors and maps to consumers that free them
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

case_python() {
	local py=/usr/bin/python3
	[[ -x $py ]] || { echo "# /usr/bin/python3 not installed"; return 4; }
	cat >"$work/work.py" <<'EOF'
import hashlib, json, random
random.seed(20251201)
d = {}
for i in range(200000):
    d["key-%d" % i] = [i, str(i) * (i % 7), {"n": i, "f": i / 7.0}]
for i in range(0, 200000, 3):
    del d["key-%d" % i]
words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(1, 30)))
         for _ in range(100000)]
words.sort()
text = " ".join(words)
parts = text.split(" ")
s = json.dumps(d, sort_keys=True)
back = json.loads(s)
assert back == d
lists = [list(range(i % 100)) for i in range(50000)]
total = sum(sum(x) for x in lists)
h = hashlib.sha256()
h.update(s.encode()); h.update(text.encode())
print(len(d), len(parts), len(s), total, h.hexdigest())
EOF
	run_both python "$py" "$work/work.py" || return 1
	same python
}

case_gcc() {
	need gcc || return 4
	local src
	src=$(find "$srctree" -path "$srctree/build-*" -prune -o -name '*.c' \
		-printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2)
	# each run has its own directory: map it away from the debug info
	run_both gcc sh -c 'exec gcc -O2 -g -fdebug-prefix-map="$PWD"=/build \
		-Wall -Wextra -D_GNU_SOURCE -I"$1" -I"$1/include" -I"$2" \
		-S -o out.s "$3"' gcc "$srctree" "$(dirname "$so")/include/generated" \
		"$src" || return 1
	for m in glibc segpool; do
		sha256sum <"$work/gcc.$m/out.s" >>"$work/gcc.$m/out"
	done
	echo "# gcc: compiled ${src#"$srctree"/}"
	same gcc
}

case_git() {
	need git || return 4
	cat >"$work/git.sh" <<'EOF'
set -e
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
export HOME=$PWD GIT_CONFIG_NOSYSTEM=1
git init -q -b main repo
cd repo
for i in $(seq 1 30); do
	seq "$i" 3 40000 > "file$((i % 7)).txt"
	mkdir -p "dir$((i % 3))"
	printf 'commit %s\n' "$i" > "dir$((i % 3))/note$i"
	git add -A
	git commit -q -m "commit $i"
done
git branch side HEAD~10
git checkout -q side
echo side > side.txt
git add side.txt
git commit -q -m side
git checkout -q main
git merge -q --no-edit side
git log --format='%H %s' | head -n 5
git gc -q
git repack -adq
git fsck --full 2>&1
git count-objects -v | grep -v size
git diff HEAD~20 --stat | tail -n 1
EOF
	run_both git bash "$work/git.sh" || return 1
	same git
}

case_sort() {
	need sort awk || return 4
	awk 'BEGIN { srand(42); for (i = 0; i < 1500000; i++)
		printf "%08x %d line-%d\n", int(rand() * 4294967295), int(rand() * 1000), i }' \
		>"$work/big.txt"
	run_both sort sh -c "sort $work/big.txt | sha256sum; \
		sort -S 4M --parallel=2 -T . -k2,2n -k1,1 $work/big.txt | sha256sum; \
		sort -u -k2,2n $work/big.txt | wc -l" || return 1
	same sort
}

case_cxx() {
	need g++ || return 4
	cat >"$work/xfree.cc" <<'EOF'
// producers allocate, consumers on other threads free
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct item {
	std::string s;
	std::vector<uint64_t> v;
	std::map<int, std::string> m;
};

static std::mutex mu;
static std::condition_variable cv;
static std::deque<std::unique_ptr<item>> q;
static bool done;

int main()
{
	const int producers = 3, consumers = 3, per = 60000;
	std::vector<std::thread> th;
	std::vector<uint64_t> sums(consumers);

	for (int p = 0; p < producers; p++)
		th.emplace_back([p] {
			uint64_t x = 88172645463325252ULL + p;
			for (int i = 0; i < per; i++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				auto it = std::make_unique<item>();
				it->s.assign(x % 200 + 1, char('a' + x % 26));
				it->v.resize(x % 64, x);
				for (int k = 0; k < int(x % 5); k++)
					it->m[k] = std::to_string(x + k);
				std::lock_guard<std::mutex> g(mu);
				q.push_back(std::move(it));
				cv.notify_one();
			}
		});
	for (int c = 0; c < consumers; c++)
		th.emplace_back([c, &sums] {
			for (;;) {
				std::unique_ptr<item> it;
				{
					std::unique_lock<std::mutex> g(mu);
					cv.wait(g, [] { return done || !q.empty(); });
					if (q.empty())
						return;
					it = std::move(q.front());
					q.pop_front();
				}
				uint64_t s = it->s.size();
				for (auto v : it->v) s += v & 0xff;
				for (auto &kv : it->m) s += kv.second.size();
				sums[c] += s;
			}	// freed here, on the consumer
		});
	for (int p = 0; p < producers; p++)
		th[p].join();
	{
		std::lock_guard<std::mutex> g(mu);
		done = true;
	}
	cv.notify_all();
	for (int c = 0; c < consumers; c++)
		th[producers + c].join();
	uint64_t total = 0;
	for (auto s : sums) total += s;
	std::printf("%llu\n", (unsigned long long)total);
	return 0;
}
EOF
	g++ -std=c++17 -O2 -pthread -o "$work/xfree" "$work/xfree.cc" ||
		return 1
	run_both cxx "$work/xfree" || return 1
	same cxx
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
	if [[ $json == *'"kmalloc-'* ]]; then
		echo "# export: segpool-top -p $pid --json shows the size classes of sleep"
		st=0
	else
		echo "# export: segpool-top -p $pid --json gave nothing usable"
	fi
	return $st
}

echo "TAP version 13"
echo "# preload: $so"
for c in ${SEGPOOL_PRELOAD_CASES:-python gcc git sort cxx fork link export}; do
	echo "# running $c"
	start=$SECONDS
	"case_$c"
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
