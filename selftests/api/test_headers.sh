#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_headers.sh - the public headers as C and C++ programs see
# them.
#
#  1. Each include/segpool/*.h compiles alone (first and only include) as
#     C11 (gcc, clang) and as C++11 and C++17 (g++, clang++), -Wall -Wextra
#     -pedantic -Werror: hermetic, extern "C" where it must be, no C-only
#     keyword left where C++ would see it.
#  2. selftests/api/header_macros.c names every function-like macro of the
#     headers (a macro it does not name fails the test), and this script
#     appends a use of every object-like macro, so a macro added to a header
#     is compiled as C11, C++11 and C++17 with no edit here.
#  3. That program is linked with the library of this build tree and run,
#     as C and as C++ with the C++ compiler of $SEGPOOL_CC's family.
#
# make check runs it with SEGPOOL_SRCTREE, SEGPOOL_OBJTREE, SEGPOOL_CC and
# SEGPOOL_SANITIZE set.  A compiler that is not installed is skipped (and
# named); with neither C++ compiler the test is skipped (status 4).

set -euo pipefail

srctree=${SEGPOOL_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
objtree=${SEGPOOL_OBJTREE:-$srctree}
cc=${SEGPOOL_CC:-cc}
sanitize=${SEGPOOL_SANITIZE:-}
inc=$srctree/include/segpool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/segpool-headers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

flags=(-Wall -Wextra -pedantic -Werror -I "$srctree/include")
fail=0

have() { command -v "$1" >/dev/null 2>&1; }

cxx_list=()
for x in g++ clang++; do
	if have "$x"; then cxx_list+=("$x"); else echo "$x not installed: skipped"; fi
done
c_list=()
for x in gcc clang; do
	if have "$x"; then c_list+=("$x"); else echo "$x not installed: skipped"; fi
done
if [[ ${#cxx_list[@]} -eq 0 ]]; then
	echo "no C++ compiler: skipped"
	exit 4
fi

# compile LANGUAGE COMPILER STD FILE LABEL
compile() {
	if ! "$2" -x "$1" "-std=$3" "${flags[@]}" -fsyntax-only "$4" \
		>"$tmp/log" 2>&1; then
		echo "FAIL: $5 ($2 -std=$3)"
		sed 's/^/    /' "$tmp/log"
		fail=1
	fi
}

# 1. each header alone
n=0
for h in "$inc"/*.h; do
	name=${h##*/}
	printf '#include <segpool/%s>\n' "$name" >"$tmp/alone.c"
	# an empty translation unit is not valid ISO C: give it one declaration
	printf 'typedef int sp_header_test_nonempty;\n' >>"$tmp/alone.c"
	for c in "${c_list[@]}"; do
		compile c "$c" c11 "$tmp/alone.c" "<segpool/$name> alone"
	done
	for x in "${cxx_list[@]}"; do
		compile c++ "$x" c++11 "$tmp/alone.c" "<segpool/$name> alone"
		compile c++ "$x" c++17 "$tmp/alone.c" "<segpool/$name> alone"
	done
	n=$((n + 1))
done
echo "$n headers compiled alone as C11 (${c_list[*]}), C++11 and C++17 (${cxx_list[*]})"

# 2. the macros: object-like ones are listed from the headers; those whose
# value is an attribute, a linkage brace or nothing are not expressions.
awk '
function flush() {
	if (name == "")
		return
	if (fn)
		print "F " name
	else if (val !~ /^(__attribute__|extern|\}|$)/)
		print "O " name
	else
		skip[name] = 1
	name = ""
}
cont {
	val = val $0
	cont = sub(/\\[ \t]*$/, "", val)
	if (!cont)
		flush()
	next
}
/^#[ \t]*define[ \t]+SEGPOOL_[A-Za-z0-9_]+/ {
	line = $0
	sub(/^#[ \t]*define[ \t]+/, "", line)
	match(line, /^[A-Za-z0-9_]+/)
	name = substr(line, 1, RLENGTH)
	rest = substr(line, RLENGTH + 1)
	fn = substr(rest, 1, 1) == "("
	if (fn)
		sub(/^\([^)]*\)/, "", rest)
	val = rest
	sub(/^[ \t]+/, "", val)
	cont = sub(/\\[ \t]*$/, "", val)
	if (name ~ /_H$/ && val == "") {
		name = ""
		next
	}
	if (!cont)
		flush()
}
END {
	for (s in skip)
		print "S " s
}' "$inc"/*.h | sort -u >"$tmp/macros"

# a name both skipped and usable (one #if branch each) is not an expression
grep '^S ' "$tmp/macros" | cut -c3- >"$tmp/skipped" || true
grep '^O ' "$tmp/macros" | cut -c3- | grep -vxF -f "$tmp/skipped" >"$tmp/objlike" || true
grep '^F ' "$tmp/macros" | cut -c3- >"$tmp/fnlike" || true

missing=0
while read -r m; do
	if ! grep -qw "$m" "$srctree/selftests/api/header_macros.c"; then
		echo "FAIL: function-like macro $m is not used by selftests/api/header_macros.c"
		missing=1
	fi
done <"$tmp/fnlike"
[[ $missing -eq 0 ]] || fail=1

{
	cat "$srctree/selftests/api/header_macros.c"
	echo
	echo "void hm_object_macros(void)"
	echo "{"
	while read -r m; do
		printf '#ifdef %s\n\t(void)(%s);\n#endif\n' "$m" "$m"
	done <"$tmp/objlike"
	echo "}"
} >"$tmp/macros.c"
echo "$(wc -l <"$tmp/fnlike") function-like and $(wc -l <"$tmp/objlike") object-like macros"

flags+=(-Wno-unused-function)
for c in "${c_list[@]}"; do
	compile c "$c" c11 "$tmp/macros.c" "the macros"
done
for x in "${cxx_list[@]}"; do
	compile c++ "$x" c++11 "$tmp/macros.c" "the macros"
	compile c++ "$x" c++17 "$tmp/macros.c" "the macros"
done

# 3. link and run, C and C++, against this tree's static library
case "$cc" in
*clang*) cxx=clang++ ;;
*) cxx=g++ ;;
esac
have "$cxx" || cxx=${cxx_list[0]}
have "$cc" || cc=${c_list[0]}
libs=("$objtree/libsegpool.a" -lurcu-memb -lurcu-common -pthread)
san=()
[[ -z "$sanitize" ]] || san=("-fsanitize=$sanitize")
for lang in c c++; do
	if [[ $lang == c ]]; then comp=$cc std=c11; else comp=$cxx std=c++11; fi
	if ! "$comp" -x "$lang" "-std=$std" "${flags[@]}" "${san[@]}" -g \
		-o "$tmp/macros-$lang" "$tmp/macros.c" -x none "${libs[@]}" \
		>"$tmp/log" 2>&1; then
		echo "FAIL: linking the macros program ($comp -std=$std)"
		sed 's/^/    /' "$tmp/log"
		fail=1
		continue
	fi
	st=0
	"$tmp/macros-$lang" || st=$?
	if [[ $st -ne 0 ]]; then
		echo "FAIL: the macros program ($comp -std=$std) exited with status $st"
		fail=1
	fi
done

exit "$fail"
