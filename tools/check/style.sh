#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/check/style.sh - the habits of HACKING.md that a script can check
# (make checkstyle, part of make check; needs no build).
#
#  1. 80 columns: no line of a C or C++ source is wider than 80 columns
#     (a tab to the next multiple of 8).
#  2. Paths in comments exist: a file path named in a comment of a C or
#     C++ source (dir/name.ext) names a file of the tree, from its root,
#     from include/ (<segpool/...>), from Documentation/ (the pages), from
#     the commenting file's own folder, or a system header.  Paths into
#     the Linux sources (mm/, kernel/) are other projects' and pass.
#  3. The lock levels a debug build checks (enum sp_lock_level of
#     internal/debug.h, "SP_LOCK_X = N, /* path ..."): level N of the lock
#     order in core/init.c's head comment (" * N. ...") names that path.
#  4. cmocka's asserts on the test's own thread: a function a selftest
#     starts with pthread_create() calls no assert_*() or fail*() of
#     cmocka (a failure there ends the thread's stack with longjmp into
#     the test thread's frame); the thread records what went wrong, and
#     the test asserts on it after the join (HACKING.md, Tests).
#
# Usage: style.sh SRCTREE.  Prints one TAP-like line per check
# and "N passed, N failed"; exit status 1 when one failed.
set -u

src=${1:?usage: style.sh SRCTREE}
cd "$src" || exit 1
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok $*"; }
bad() { fail=$((fail + 1)); echo "not ok $*"; }

# the C and C++ sources, wherever a clone or a tarball keeps them
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' | sort)
else
	mapfile -t files < <(find . -path ./debian -prune -o -path './build-*' \
		-prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
		-o -name '*.hpp' \) -print | sed 's|^\./||' | sort)
fi

# --- 1. 80 columns ------------------------------------------------------------
wide=$(awk '{
		w = 0
		for (i = 1; i <= length($0); i++)
			w = substr($0, i, 1) == "\t" ? int(w / 8) * 8 + 8 : w + 1
		if (w > 80) { n++; if (n <= 10) print FILENAME ":" FNR ": " w }
	} END { if (n > 10) print "... and " n - 10 " more" }' "${files[@]}")
if [[ -n $wide ]]; then
	while IFS= read -r l; do
		bad "80 columns: $l columns"
	done <<<"$wide"
else
	ok "80 columns: no line of the ${#files[@]} C and C++ sources is wider"
fi

# --- 2. paths in comments -----------------------------------------------------
# comment text per line, "LINE:TEXT", string literals skipped
comments='
{
	line = $0; out = ""
	while (length(line)) {
		if (inc) {
			e = index(line, "*/")
			if (!e) { out = out " " line; break }
			out = out " " substr(line, 1, e - 1)
			line = substr(line, e + 2); inc = 0
			continue
		}
		s = index(line, "/*"); d = index(line, "//"); q = index(line, "\"")
		if (q && (!s || q < s) && (!d || q < d)) {
			rest = substr(line, q + 1)
			if (match(rest, /^([^"\\]|\\.)*"/))
				line = substr(rest, RLENGTH + 1)
			else
				line = ""
			continue
		}
		if (d && (!s || d < s)) { out = out " " substr(line, d + 2); break }
		if (!s) break
		line = substr(line, s + 2); inc = 1
	}
	if (out != "") print NR ":" out
}'
path_re='(^|[^A-Za-z0-9_./<>@$-])([A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\.(c|h|sh|md|map|txt|inc|awk|in|py|cpp|hpp|mk|json)'
stale=0
npaths=0
for f in "${files[@]}"; do
	dir=$(dirname "$f")
	while IFS=: read -r l p; do
		npaths=$((npaths + 1))
		case $p in mm/* | kernel/*) continue ;; esac
		[[ -e $p || -e include/$p || -e Documentation/$p ||
		   -e $dir/$p || -e /usr/include/$p ]] && continue
		bad "paths in comments: $f:$l names $p, which does not exist"
		stale=1
	done < <(awk "$comments" "$f" | awk -v re="$path_re" '{
			l = $0; sub(/:.*/, "", l); t = substr($0, length(l) + 2)
			while (match(t, re)) {
				p = substr(t, RSTART, RLENGTH)
				t = substr(t, RSTART + RLENGTH)
				if (t ~ /^[A-Za-z0-9_]/)
					continue	# x.cc, y.config
				sub(/^[^A-Za-z0-9_.]/, "", p)
				print l ":" p
			}
		}')
done
(( stale )) || ok "paths in comments: all $npaths exist"

# --- 3. the lock levels ------------------------------------------------------
levels=0
lbad=0
while read -r name n path; do
	levels=$((levels + 1))
	# the text of level N, up to the next level or the end of the list
	text=$(awk -v n="$n" '
		$0 ~ "^ \\* +" n "\\. " { on = 1 }
		on && $0 ~ "^ \\* +[0-9]+\\. " && $0 !~ "^ \\* +" n "\\. " { exit }
		on && /^ \*$/ { exit }
		on { print }' core/init.c)
	if [[ -z $text ]]; then
		bad "lock levels: internal/debug.h's $name is level $n, which core/init.c's order lacks"
		lbad=1
	elif ! grep -qF "$path" <<<"$text"; then
		bad "lock levels: internal/debug.h's $name is level $n ($path); core/init.c's level $n does not name $path"
		lbad=1
	fi
done < <(sed -nE 's|^[[:space:]]*(SP_LOCK_[A-Z_]+)[[:space:]]*=[[:space:]]*([0-9]+),[[:space:]]*/\*[[:space:]]*([a-z_]+/[a-z_]+\.[ch]).*|\1 \2 \3|p' internal/debug.h)
(( levels )) || { bad "lock levels: no level found in internal/debug.h"; lbad=1; }
(( lbad )) || ok "lock levels: the $levels levels of internal/debug.h are core/init.c's"

# --- 4. no cmocka assert off the test thread ----------------------------------
nthr=0
abad=0
for f in $(printf '%s\n' "${files[@]}" | grep '^selftests/.*\.c$'); do
	# names passed as pthread_create()'s third argument, even on a new line
	for fn in $(tr '\n' ' ' < "$f" |
		    grep -oE 'pthread_create\([^,]*,[^,]*,[[:space:]]*[A-Za-z_][A-Za-z0-9_]*' |
		    sed -E 's/.*,[[:space:]]*//' | sort -u); do
		nthr=$((nthr + 1))
		# the function's body: from its definition to the closing brace
		awk -v fn="$fn" '
			$0 ~ "^(static )?void \\*" fn "\\(" { on = 1; next }
			on && /^}/ { exit }
			on && /(^|[^A-Za-z0-9_])(assert_[a-z_]+|fail|fail_msg)[[:space:]]*\(/ {
				print NR ": " $0
			}' "$f" | while IFS= read -r hit; do
			echo "not ok cmocka off-thread: $f:${hit%%:*}: $fn, a thread, asserts"
		done | grep . && abad=1
	done
done
if (( abad )); then
	fail=$((fail + 1))
else
	ok "cmocka off-thread: none of the $nthr thread functions of selftests/ asserts"
fi

echo "$pass passed, $fail failed"
(( fail == 0 ))
