#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_man.sh - the man pages render without a warning, and
# keep man-pages(7)'s layout.
#
# Every page `make man` wrote into $SEGPOOL_OBJTREE/man is rendered as
# man(1) renders it, with groff's warnings on (what `man --warnings -l`
# shows); any warning, or a page without NAME, DESCRIPTION or text, fails
# the test and is named.  Then:
# the pages of the drop-in malloc, the kernel overlay and pmr.hpp exist with
# EXAMPLES; no synopsis shows an export or compiler macro; each errno value
# a RETURN VALUE names is in ERRORS, the next section; SEE ALSO names only
# pages segpool or Debian 12 has; segpool(7)'s FILES names every path of
# debian/*.install.  Last, the coverage checks of scripts/gen-man.sh -c run
# on those same pages.
# Skipped (status 4) without groff (groff-base, which man-db depends on).

set -euo pipefail

srctree=${SEGPOOL_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
objtree=${SEGPOOL_OBJTREE:-$srctree}
mandir=$objtree/man

if ! command -v groff >/dev/null 2>&1; then
	echo "groff not installed (package groff-base, a dependency of man-db)"
	exit 4
fi
pages=("$mandir"/man[137]/*.[137])
if [[ ! -e ${pages[0]} ]]; then
	echo "FAIL: no man pages in $mandir (make man)"
	exit 1
fi

export LC_ALL=C.UTF-8
# Rendered as man(1) renders a page (man-db's groff pipeline: preconv, tbl,
# -mandoc, 80 columns, --warnings' "mac" set), all pages in one groff run:
# a page at a time through man(1) took 15 s here, this takes 0.1.  groff
# names the file and line of each warning.
fail=0
out=$(groff -mandoc -t -k -Tutf8 -wmac -rLL=80n -rLT=80n -z "${pages[@]}" 2>&1) || fail=1
if [[ -n "$out" ]]; then
	printf 'FAIL: %s\n' "${out//"$mandir"\//}"
	fail=1
fi

# The checks of each page's source, one awk run over them all:
#   every page has its name line and a body (NAME, DESCRIPTION, text);
#   a man3 synopsis shows what a reader writes: no export or compiler
#   macros; each errno value its RETURN VALUE names is listed again as
#   ".B EXXX" in ERRORS, the section right after it;
#   SEE ALSO names only pages a Debian 12 system has: ours, or one of
#   these (procps, libnuma-dev, pkgconf, manpages(-dev)); rseq(2), for
#   one, is not there.
debian12="slabtop.1 top.1 numa.3 pkg-config.1 malloc.3 calloc.3 realloc.3
free.3 mallinfo.3 mallinfo2.3 malloc_info.3 malloc_trim.3 mallopt.3
malloc_stats.3 ld.so.8 fork.2 _exit.2"
ours=$(cd "$mandir" && printf '%s ' man[1-8]/*.[1-8])
awk -v mandir="$mandir/" -v known="$debian12 $ours" '
function word_errnos(line, set,    n, i, w) {
	n = split(line, w, /[^A-Za-z0-9_]+/)
	for (i = 1; i <= n; i++)
		if (w[i] ~ /^E[A-Z][A-Z0-9]+$/)
			set[w[i]] = 1
}
function page_done(    e) {
	if (name == "")
		return
	if (!has_name || !has_desc || text < 2)
		bad(name " lacks NAME, DESCRIPTION or any text")
	if (man3) {
		if (synopsis_macro)
			bad(name ": an internal macro in its SYNOPSIS")
		for (e in rv_err)
			if (!(e in err_listed))
				bad(name ": " e " in RETURN VALUE, not in ERRORS")
		if (length(rv_err) && after_rv != "ERRORS")
			bad(name ": RETURN VALUE is followed by \x27.SH " after_rv "\x27, not ERRORS")
	}
	delete rv_err
	delete err_listed
}
function bad(msg) { print "FAIL: " msg; failed = 1 }
BEGIN {
	n = split(known, k, /[ \n]+/)
	for (i = 1; i <= n; i++) {
		sub(/^man[1-8]\//, "", k[i])
		if (k[i] != "")
			have[k[i]] = 1
	}
}
FNR == 1 {
	page_done()
	name = substr(FILENAME, length(mandir) + 1)
	man3 = name ~ /^man3\//
	has_name = has_desc = text = synopsis_macro = 0
	sect = prev = after_rv = ""
}
/^\.SH / {
	prev = sect
	sect = substr($0, 5)
	if (prev == "RETURN VALUE" && after_rv == "")
		after_rv = sect
	has_name = has_name || sect == "NAME"
	has_desc = has_desc || sect == "DESCRIPTION"
	next
}
!/^\./ { text++ }
sect == "SYNOPSIS" && /SEGPOOL_(API|WUR|MALLOC|ALLOC_SIZE|ALLOC_ALIGN)/ { synopsis_macro = 1 }
sect == "RETURN VALUE" { word_errnos($0, rv_err) }
sect == "ERRORS" && /^\.B E[A-Z][A-Z0-9]+$/ { err_listed[$2] = 1 }
sect == "SEE ALSO" {
	line = $0
	gsub(/\\%/, "", line)
	gsub(/\\-/, "-", line)
	if (match(line, /^\.BR [A-Za-z0-9_.-]* \([1-8]\)/)) {
		ref = substr(line, 5, RLENGTH - 4)
		sub(/ \(/, ".", ref)
		sub(/\)$/, "", ref)
		if (!(ref in have))
			bad(name ": SEE ALSO " ref ", a page neither segpool nor Debian 12 has")
	}
}
END { page_done(); exit failed }
' "${pages[@]}" || fail=1
echo "${#pages[@]} pages rendered"

# --- the layout of man-pages(7) ---------------------------------------------
# the hand-written pages of the drop-in malloc, the kernel overlay and
# <segpool/pmr.hpp> exist, each with an EXAMPLES section
for p in man7/segpool-malloc.7 man7/segpool-kernel.7 man3/segpool-pmr.3; do
	if [[ ! -f $mandir/$p ]] || ! grep -q '^\.SH EXAMPLES$' "$mandir/$p"; then
		echo "FAIL: $p missing, or without EXAMPLES"
		fail=1
	fi
done

# segpool(7)'s FILES names every path the Debian packages install
files=$(sed -n '/^\.SH FILES$/,/^\.SH /p' "$mandir/man7/segpool.7" | sed 's/\\-/-/g; s/\\%//g')
for inst in "$srctree"/debian/*.install; do
	while read -r path; do
		[[ -z $path ]] && continue
		want=$(sed -e 's|^usr/lib/\*/|<libdir>/|' -e 's|^usr/include/|<includedir>/|' \
			-e 's|^usr/bin/|<bindir>/|' -e 's|^usr/share/man/|<mandir>/|' \
			-e 's|^usr/share/doc/|/usr/share/doc/|' -e 's|\.so\.\*$|.so.0|' \
			-e 's|<mandir>/man7/.*|<mandir>/man7/|' <<<"$path")
		if ! grep -qF "$want" <<<"$files"; then
			echo "FAIL: segpool(7) FILES does not name $want ($path of ${inst##*/})"
			fail=1
		fi
	done <"$inst"
done

so=()
[[ -e $objtree/libsegpool.so ]] && so=(-s "$objtree/libsegpool.so")
"$srctree/scripts/gen-man.sh" -c -m "$mandir" "${so[@]}" || fail=1
exit "$fail"
