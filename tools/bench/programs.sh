#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/bench/programs.sh - real programs from Debian packages, one runner
# for segpool-bench --programs (timed under each malloc) and
# scripts/check-preload.sh (output compared between glibc and the preload).
#
#   programs.sh prepare DIR [SCALE [OBJTREE]]  the inputs, from fixed seeds
#   programs.sh list DIR [check]    the cases that can run here (check: those
#                                   whose output is the same under any malloc)
#   programs.sh run DIR CASE        run CASE in a fresh folder of DIR; what it
#                                   prints is its result
#
#   python  dicts, lists, strings, a JSON round trip, bytearrays of 40-340 KB
#   sort    a generated file, in memory, then with a small buffer, two
#           threads and temporary files, then unique
#   gcc     gcc -O2 -g -S of the largest C file of the sources
#   git     a repository made, committed to with fixed dates (the ids must
#           match), merged, repacked, checked by fsck
#   perl    a hash of many keys, sorted, deleted, words counted
#   sqlite  sqlite3 :memory:: inserts, two indexes, queries
#   cxx     xthread.cc: threads in a ring, every free cross-thread
#   logpipe examples/logpipe -b malloc: its records/s; logpipe-cache the
#           same on segpool's caches (-b cache)
# SCALE (default 1) multiplies the counts.

set -u
# Debian's programs, not a user's shims or builds of their own (pyenv's
# python3, say) that come first in PATH: the same program under each malloc
PATH=/usr/bin:/bin:$PATH
cmd=${1:?usage: programs.sh prepare|list|run DIR ...}
dir=${2:?usage: programs.sh prepare|list|run DIR ...}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
has() { command -v "$1" >/dev/null 2>&1; }

prepare() {
	local scale=${1:-1} obj=${2:-$src}
	mkdir -p "$dir" || return 1
	awk -v s="$scale" 'function n(x, lo) { x = int(s * x); return x < lo ? lo : x }
		BEGIN { printf "py=%d\nlines=%d\ncommits=%d\nkeys=%d\n",
			n(200000, 2000), n(1500000, 15000), n(30, 12), n(300000, 3000)
		printf "logs=%d\nobj=%s\n", n(2000000, 20000), ARGV[1] }' \
		"$obj" >"$dir/env" || return 1
	. "$dir/env"
	awk -v n="$lines" 'BEGIN { srand(42); for (i = 0; i < n; i++)
		printf "%08x %d line-%d\n", int(rand() * 4294967295),
			int(rand() * 1000), i }' >"$dir/big.txt"
	cat >"$dir/work.py" <<'EOF'
import hashlib, json, random, sys
n = int(sys.argv[1])
random.seed(20251201)
d = {}
for i in range(n):
    d["key-%d" % i] = [i, str(i) * (i % 7), {"n": i, "f": i / 7.0}]
for i in range(0, n, 3):
    del d["key-%d" % i]
words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(1, 30)))
         for _ in range(n // 2)]
words.sort()
text = " ".join(words)
s = json.dumps(d, sort_keys=True)
assert json.loads(s) == d
lists = [list(range(i % 100)) for i in range(n // 4)]
bufs = [bytearray(random.randint(40000, 340000)) for _ in range(n // 700)]
h = hashlib.sha256()
h.update(s.encode()); h.update(text.encode())
print(len(d), len(s), sum(sum(x) for x in lists), sum(map(len, bufs)), h.hexdigest())
EOF
	cat >"$dir/work.pl" <<'EOF'
my $n = shift; my (%h, %w); my $s = 0;
$h{"key$_"} = [$_, 'v' x ($_ % 17), { m => $_ * 3 }] for 0 .. $n - 1;
$s += $h{$_}[0] + $h{$_}[2]{m} for sort keys %h;
delete $h{"key$_"} for grep { $_ % 3 == 0 } 0 .. $n - 1;
$w{join('', map { chr(97 + ($_ * $i + $i % 7) % 26) } 1 .. 6)}++
	while ($i++ < 2 * $n);
my @top = (sort { $w{$b} <=> $w{$a} || $a cmp $b } keys %w)[0 .. 2];
print "$s ", scalar(keys %h), ' ', scalar(keys %w), " @top\n";
EOF
	cat >"$dir/work.sql" <<EOF
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER, pad BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $keys)
INSERT INTO t(k, v, pad) SELECT printf('key-%08d', (x * 7919) % $keys),
	x % 1000, zeroblob(x % 200) FROM c;
CREATE INDEX t_k ON t(k); CREATE INDEX t_v ON t(v);
SELECT count(*), sum(length(pad)) FROM t WHERE v BETWEEN 100 AND 300;
SELECT k FROM t WHERE k > 'key-0005' ORDER BY k LIMIT 5;
SELECT v, count(*) FROM t GROUP BY v ORDER BY 2 DESC, 1 LIMIT 3;
UPDATE t SET k = k || '-x' WHERE v < 100; DELETE FROM t WHERE v >= 900;
SELECT count(*) FROM t;
EOF
	find "$src" -path "$src/build-*" -prune -o -name '*.c' -printf \
		'%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2 >"$dir/gcc.src"
	if has g++; then
		g++ -std=c++17 -O2 -pthread -o "$dir/xthread" \
			"$src/tools/bench/xthread.cc" || return 1
	fi
}

case_python() { /usr/bin/python3 "$dir/work.py" "$py"; }
case_perl() { perl "$dir/work.pl" "$keys"; }
case_sqlite() { sqlite3 :memory: ".read $dir/work.sql"; }
case_cxx() { "$dir/xthread" 4 $((keys / 30)); }
case_logpipe() { "$obj/examples/logpipe" -q -p -b malloc -n "$logs"; }
case_logpipe-cache() { "$obj/examples/logpipe" -q -p -b cache -n "$logs"; }

case_sort() {
	sort "$dir/big.txt" | sha256sum
	sort -S 4M --parallel=2 -T . -k2,2n -k1,1 "$dir/big.txt" | sha256sum
	sort -u -k2,2n "$dir/big.txt" | wc -l
}

case_gcc() {
	# each run has its own folder: map it away from the debug info
	gcc -O2 -g -fdebug-prefix-map="$PWD"=/build -Wall -Wextra \
		-D_GNU_SOURCE -I"$src" -I"$src/include" \
		-I"$obj/include/generated" -S -o - "$(cat "$dir/gcc.src")" |
		sha256sum
}

case_git() {
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
	export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
	export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
	export GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
	export HOME=$PWD GIT_CONFIG_NOSYSTEM=1
	set -e
	git init -q -b main repo
	cd repo
	for i in $(seq 1 "$commits"); do
		seq "$i" 3 40000 >"file$((i % 7)).txt"
		mkdir -p "dir$((i % 3))"
		printf 'commit %s\n' "$i" >"dir$((i % 3))/note$i"
		git add -A
		git commit -q -m "commit $i"
	done
	git branch side HEAD~$((commits / 3))
	git checkout -q side
	echo side >side.txt
	git add side.txt
	git commit -q -m side
	git checkout -q main
	git merge -q --no-edit side
	git log --format='%H %s' | head -n 5
	git gc -q
	git repack -adq
	git fsck --full 2>&1
	git count-objects -v | grep -v size
	git diff HEAD~$((2 * commits / 3)) --stat | tail -n 1
}

case $cmd in
prepare)
	prepare "${3:-1}" "${4:-}" ;;
list)
	. "$dir/env" || exit 1
	for c in python:/usr/bin/python3 sort:sort gcc:gcc git:git perl:perl \
		 sqlite:sqlite3 cxx:"$dir/xthread" \
		 logpipe:"$obj/examples/logpipe" \
		 logpipe-cache:"$obj/examples/logpipe"; do
		[[ ${3:-} == check && $c == logpipe* ]] && continue
		has "${c#*:}" && echo "${c%%:*}"
	done ;;
run)
	. "$dir/env" || exit 1
	work=$(mktemp -d "$dir/run.XXXXXX") && cd "$work" || exit 1
	"case_${3:?which case?}"
	st=$?
	cd / && rm -rf "$work"
	exit $st ;;
*)
	echo "programs.sh: unknown command '$cmd'" >&2
	exit 2 ;;
esac
