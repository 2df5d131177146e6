#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/gen-man.sh - the man pages: generate them, or check them.
#
#   scripts/gen-man.sh [-v VERSION] OUTDIR
#   scripts/gen-man.sh -c [-s LIB.so]... [-m MANDIR]
#
# The first form writes
#   OUTDIR/man3/NAME.3         one per function, function-like macro and
#                              struct of include/segpool/*.h, from their
#                              kernel-doc (scripts/gen-api-doc.sh -m)
#   OUTDIR/manS/NAME.S         from each Documentation/man/NAME.S.in
#                              (segpool-top.1, segpool.7, segpool-malloc.7,
#                              segpool-kernel.7, segpool-pmr.3), the
#                              version filled in; segpool.7's ENVIRONMENT
#                              section from the table of
#                              Documentation/reference/environment.md
# and lists them on stdout.  VERSION defaults to SEGPOOL_VERSION_STRING.
#
# -c checks, for `make check-docs` (nothing is written but a temporary
# directory), and reports each problem on stderr:
#   - every exported function has a page: each SEGPOOL_API function of the
#     headers that a global pattern of a scripts/*.map version script
#     matches, each literal segpool_* name of those scripts, and, with -s,
#     each segpool_* function the built shared object exports;
#   - every SEGPOOL_* variable the library reads (getenv() in the library's
#     folders, see Kbuild) is a row of the environment.md table;
#   - segpool-top's page names exactly the program's options (the struct
#     option table and getopt_long() string of tools/segpool-top/options.c),
#     sort letters and words (top_sort_keys[], rows.c) and keys (top_keys[]
#     and the letters top_handle_key() acts on, keys.c), each as a tag of
#     its OPTIONS, SORT CRITERIA or COMMANDS section.
# -m MANDIR checks the pages in MANDIR (an earlier first form) instead of
# generating them.  Exit status: 0, 1 for a problem, 2 for a usage error.
# POSIX sh, sed and awk.

set -eu

LC_ALL=C
export LC_ALL

prog=${0##*/}
srctree=$(cd "$(dirname "$0")/.." && pwd)
check=0
version=
sos=
given=

while [ $# -gt 0 ]; do
	case "$1" in
	-c) check=1; shift ;;
	-v|-s|-m)
		if [ $# -lt 2 ]; then
			echo "$prog: $1 needs an argument" >&2
			exit 2
		fi
		case "$1" in
		-v) version=$2 ;;
		-s) sos="$sos $2" ;;
		-m) given=$2 ;;
		esac
		shift 2
		;;
	-h|--help)
		sed -n '4,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "$prog: unknown option '$1'" >&2
		exit 2
		;;
	*) break ;;
	esac
done

if [ -z "$version" ]; then
	version=$(sed -n 's/^#define SEGPOOL_VERSION_STRING[ 	]*"\(.*\)".*/\1/p' \
		"$srctree/include/segpool/segpool.h")
fi

# The ENVIRONMENT section: one .TP entry per row of environment.md's table
# "| `NAME` | kind | accepts | default | bad value | effect |" between its
# "<!-- generated:env begin/end -->" markers (generated from
# internal/env_table.c).
env_section() {
	awk '
	function roff(s,    out) {
		gsub(/\\/, "\\e", s)
		# [text](file.md) -> text (file.md); `code` -> bold
		while (match(s, /\[[^]]*\]\([^)]*\)/)) {
			t = substr(s, RSTART, RLENGTH)
			l = t; sub(/\]\(.*/, "", l); sub(/^\[/, "", l)
			s = substr(s, 1, RSTART - 1) l substr(s, RSTART + RLENGTH)
		}
		out = ""
		while (match(s, /`[^`]*`/)) {
			# no hyphenation in code, but a line may break after a comma
			code = substr(s, RSTART + 1, RLENGTH - 2)
			gsub(/,/, ",\\:", code)
			out = out substr(s, 1, RSTART - 1) "\\fB\\%" code "\\fP"
			s = substr(s, RSTART + RLENGTH)
		}
		out = out s
		gsub(/-/, "\\-", out)
		if (out ~ /^[.\047]/)
			out = "\\&" out
		return out
	}
	/^<!-- generated:env begin -->/ { on = 1; next }
	/^<!-- generated:env end -->/ { on = 0; next }
	function cell(s) {
		sub(/^ +/, "", s); sub(/ +$/, "", s)
		gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&amp;/, "\\&", s)
		return s
	}
	function line(label, s) {
		s = roff(s)
		print ".br"
		print label ": " (s ~ /\.$/ ? s : s ".")
	}
	# | Variable | Kind | Accepts | Default | A bad value gives | Effect |
	on && /^\| `SEGPOOL_/ {
		n = split($0, f, "|")
		name = f[2]; gsub(/[ `]/, "", name)
		eff = cell(f[7])
		for (i = 8; i < n; i++)
			eff = eff "|" f[i]
		print ".TP"
		print ".B " name
		eff = roff(eff)
		print (eff ~ /\.$/ ? eff : eff ".")
		line("Accepts", cell(f[4]))
		line("Default", cell(f[5]))
		line("A bad value gives", cell(f[6]))
	}' "$srctree/Documentation/reference/environment.md"
}

generate() {
	out=$1
	mkdir -p "$out/man1" "$out/man3" "$out/man7"
	"$srctree/scripts/gen-api-doc.sh" -W -v "$version" -m "$out/man3" |
		sed "s|^\(.*\)$|$out/man3/\1.3|"
	env_section >"$out/env.tmp"
	if [ ! -s "$out/env.tmp" ]; then
		echo "$prog: no environment table in Documentation/reference/environment.md" >&2
		exit 1
	fi
	# the hand-written pages: NAME.SECTION.in, each into manSECTION/
	for in in "$srctree"/Documentation/man/*.[1-9].in; do
		page=${in##*/}
		page=${page%.in}
		sect=${page##*.}
		mkdir -p "$out/man$sect"
		awk -v version="$version" -v envf="$out/env.tmp" '
			/^@ENVIRONMENT@$/ { while ((getline l < envf) > 0) print l; next }
			{ gsub(/@VERSION@/, version); print }' \
			"$in" >"$out/man$sect/$page"
		echo "$out/man$sect/$page"
	done
	rm -f "$out/env.tmp"
}

if [ "$check" -eq 0 ]; then
	if [ $# -ne 1 ]; then
		echo "usage: $prog [-v VERSION] OUTDIR | -c [-s LIB.so]... [-m MANDIR]" >&2
		exit 2
	fi
	generate "$1"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/segpool-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "$given" ]; then
	mandir=$given
else
	mandir=$tmp/man
	generate "$mandir" >/dev/null
fi
status=0

# --- every exported function has a page --------------------------------------
# SEGPOOL_API functions: the identifier before the first "(" after the macro
awk '
	/SEGPOOL_API/ { buf = ""; on = 1 }
	on {
		buf = buf " " $0
		if (index(buf, "(")) {
			s = substr(buf, 1, index(buf, "(") - 1)
			sub(/[ \t]+$/, "", s)
			n = split(s, w, /[^A-Za-z0-9_]+/)
			print w[n]
			on = 0
		}
	}' "$srctree"/include/segpool/*.h | sort -u >"$tmp/api"

# the global patterns of the version scripts (between "global:" and "local:")
for map in "$srctree"/scripts/*.map; do
	[ -e "$map" ] || continue
	sed -e 's|/\*.*\*/||g' "$map" | awk '
		/global:/ { on = 1; sub(/.*global:/, "") }
		/local:/ { on = 0 }
		on { gsub(/[;{}]/, " "); for (i = 1; i <= NF; i++) print $i }'
done | sort -u >"$tmp/patterns"

: >"$tmp/exported"
while read -r pat; do
	case "$pat" in
	*[*?[]*)
		while read -r fn; do
			# shellcheck disable=SC2254 # the pattern is meant to glob
			case "$fn" in $pat) echo "$fn" ;; esac
		done <"$tmp/api" >>"$tmp/exported"
		;;
	segpool_*) echo "$pat" >>"$tmp/exported" ;;
	esac
done <"$tmp/patterns"
for so in $sos; do
	if [ ! -r "$so" ]; then
		echo "$prog: cannot read $so" >&2
		exit 1
	fi
	nm -D --defined-only "$so" | awk '$2 == "T" && $3 ~ /^segpool_/ {
		sub(/@.*/, "", $3); print $3 }' >>"$tmp/exported"
done
sort -u "$tmp/exported" -o "$tmp/exported"
nexp=0
while read -r fn; do
	nexp=$((nexp + 1))
	if [ ! -f "$mandir/man3/$fn.3" ]; then
		echo "$prog: exported $fn has no man page (a kernel-doc block \"$fn() - ...\" before its prototype makes one)" >&2
		status=1
	fi
done <"$tmp/exported"
if [ "$nexp" -eq 0 ]; then
	echo "$prog: found no exported function at all" >&2
	status=1
fi

# --- every variable the library reads is in the table ------------------------
dirs=$(sed -n 's|^obj-y[ 	]*+=[ 	]*\([A-Za-z0-9_-]*\)/.*|\1|p' "$srctree/Kbuild")
for d in $dirs; do
	cat "$srctree/$d"/*.c 2>/dev/null
done | sed -n -e 's/.*getenv("\(SEGPOOL_[A-Z0-9_]*\)").*/\1/p' \
	-e 's/^#define[ 	]*[A-Z0-9_]*_ENV[A-Z0-9_]*[ 	]*"\(SEGPOOL_[A-Z0-9_]*\)".*/\1/p' \
	-e 's/.*\.name = "\(SEGPOOL_[A-Z0-9_]*\)".*/\1/p' |
	sort -u >"$tmp/envs"
nenv=0
while read -r v; do
	nenv=$((nenv + 1))
	if ! grep -q "^\\.B $v\$" "$mandir/man7/segpool.7"; then
		echo "$prog: the library reads $v, which the environment table of Documentation/reference/environment.md does not list" >&2
		status=1
	fi
done <"$tmp/envs"

# --- segpool-top's options, sort orders and keys are its page's --------------
# Each comes from the one table the program reads: the getopt_long() string
# and struct option table (options.c), top_sort_keys[] (rows.c), top_keys[]
# and the letters top_handle_key() acts on (keys.c).  The page must name
# each in a tag line of its section (OPTIONS, SORT CRITERIA, COMMANDS), and
# name nothing else there.  The tables are found by what they look like, in
# whichever file of tools/segpool-top they are; none found is a failure too.
topsrc=$srctree/tools/segpool-top
toppage=Documentation/man/segpool-top.1.in

# The words of the tag lines (the line after ".TP") of section $1 of the
# page, one a line: font macros and escapes removed, italic placeholders
# (\fIseconds\fP) dropped, split at blanks, commas, quotes and "=".
page_tags() {
	awk -v sect="$1" '
	/^\.SH / { s = substr($0, 5); gsub(/"/, "", s); on = (s == sect); next }
	!on { next }
	/^\.TP/ { tag = 1; next }
	/^\.\\"/ { next }
	tag {
		tag = 0
		l = $0
		sub(/^\.[BIR][BIR]?[ \t]+/, "", l)
		gsub(/\\fI[^\\]*\\f[PR]/, "", l)
		gsub(/\\f[BIRP]/, "", l)
		gsub(/\\-/, "-", l)
		gsub(/\\[&%]/, "", l)
		gsub(/[",=]/, " ", l)
		n = split(l, w, /[ \t]+/)
		for (i = 1; i <= n; i++)
			if (w[i] != "")
				print w[i]
	}' "$mandir/man1/segpool-top.1" | sort -u
}

# compare(what, section, expected-file): both ways; the count in $ncmp
compare() {
	page_tags "$2" >"$tmp/page"
	ncmp=$(wc -l <"$3")
	ncmp=$((ncmp + 0))
	if [ "$ncmp" -eq 0 ]; then
		echo "$prog: found no $1 of segpool-top in $topsrc" >&2
		status=1
		return
	fi
	comm -23 "$3" "$tmp/page" | while read -r w; do
		echo "$prog: segpool-top's $1 '$w' is not a tag of $2 in $toppage" >&2
	done
	comm -13 "$3" "$tmp/page" | while read -r w; do
		echo "$prog: $2 of $toppage names '$w', which is no $1 of segpool-top" >&2
	done
	if ! cmp -s "$3" "$tmp/page"; then
		status=1
	fi
}

# options: --long from the struct option rows, -x from the getopt string
{
	sed -n 's/.*{ "\([a-z][a-z0-9-]*\)", *[a-z_]*_argument,.*/--\1/p' "$topsrc"/*.c
	sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' "$topsrc"/*.c |
		awk '{ gsub(/:/, ""); for (i = 1; i <= length($0); i++)
			print "-" substr($0, i, 1) }'
} | sort -u >"$tmp/opts"
if ! grep -q '^--' "$tmp/opts" || ! grep -q '^-[^-]' "$tmp/opts"; then
	echo "$prog: found no struct option table or getopt_long() string in $topsrc" >&2
	status=1
fi
compare option OPTIONS "$tmp/opts"
nopt=$(grep -c '^--' "$tmp/opts" || :)

# sort orders: the letter and the word of each top_sort_keys[] row
sed -n "s/^[ 	]*\[TOP_SORT_[A-Z_]*\][ 	]*= { '\(.\)', *\"\([a-z]*\)\".*/\1 \2/p" \
	"$topsrc"/*.c >"$tmp/sortrows"
tr ' ' '\n' <"$tmp/sortrows" | sort -u >"$tmp/sorts"
compare "sort letter or word" "SORT CRITERIA" "$tmp/sorts"
nsort=$(wc -l <"$tmp/sortrows")
nsort=$((nsort + 0))

# keys: each name of a top_keys[] row ("up, down, j, k"), and each letter
# top_handle_key() has a case for (so a key cannot work unlisted)
awk '
	/top_keys\[\] = \{/ { tbl = 1; next }
	tbl && /^\};/ { tbl = 0 }
	tbl && /^[ \t]*\{ "/ {
		s = $0; sub(/^[ \t]*\{ "/, "", s); sub(/".*/, "", s)
		n = split(s, k, /, /)
		for (i = 1; i <= n; i++)
			print k[i]
	}
	/^enum top_action top_handle_key\(/ { fn = 1 }
	fn && /^\}/ { fn = 0 }
	fn && /case \047.\047:/ {
		c = $0; sub(/.*case \047/, "", c); c = substr(c, 1, 1)
		print (c == " " ? "space" : c)
	}' "$topsrc"/*.c | sort -u >"$tmp/keys"
compare key COMMANDS "$tmp/keys"
nkey=$ncmp

if [ "$status" -eq 0 ]; then
	echo "man pages: $nexp exported functions, $nenv environment variables, $nopt segpool-top options, $nsort sort orders, $nkey key names: all documented"
fi
exit "$status"
