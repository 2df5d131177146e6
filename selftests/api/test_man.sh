#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_man.sh - the man pages render without a warning, and
# keep man-pages(7)'s layout.
#
# Every page `make man` wrote into $SEGPOOL_OBJTREE/man is rendered by
# man(1) with groff's warnings on (`man --warnings -l`); any warning, or a
# page without NAME, DESCRIPTION or text, fails the test and is named.  Then:
# the pages of the drop-in malloc, the kernel overlay and pmr.hpp exist with
# EXAMPLES; no synopsis shows an export or compiler macro; each errno value
# a RETURN VALUE names is in ERRORS, the next section; SEE ALSO names only
# pages segpool or Debian 12 has; segpool(7)'s FILES names every path of
# debian/*.install.  Last, the coverage checks of scripts/gen-man.sh -c run
# on those same pages.
# Skipped (status 4) without man(1).

set -euo pipefail

srctree=${SEGPOOL_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
objtree=${SEGPOOL_OBJTREE:-$srctree}
mandir=$objtree/man

if ! command -v man >/dev/null 2>&1; then
	echo "man(1) not installed"
	exit 4
fi
pages=("$mandir"/man[137]/*.[137])
if [[ ! -e ${pages[0]} ]]; then
	echo "FAIL: no man pages in $mandir (make man)"
	exit 1
fi

export MANWIDTH=80 LC_ALL=C.UTF-8 MAN_KEEP_FORMATTING=
# one man run for all (fast); on a warning, one per page to name it
if out=$(man --warnings -E UTF-8 -l "${pages[@]}" 2>&1 >/dev/null) && [[ -z "$out" ]]; then
	fail=0
else
	fail=1
	for p in "${pages[@]}"; do
		w=$(man --warnings -E UTF-8 -l "$p" 2>&1 >/dev/null) || true
		[[ -z "$w" ]] || printf 'FAIL: %s:\n%s\n' "${p#"$mandir"/}" "$(sed 's/^/    /' <<<"$w")"
	done
fi
# every page has its name line and a body (cheap: no second rendering)
for p in "${pages[@]}"; do
	if ! grep -q '^\.SH NAME$' "$p" || ! grep -q '^\.SH DESCRIPTION$' "$p" ||
	   [[ $(grep -c '^[^.]' "$p") -lt 2 ]]; then
		echo "FAIL: ${p#"$mandir"/} lacks NAME, DESCRIPTION or any text"
		fail=1
	fi
done
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
for p in "$mandir"/man3/*.3; do
	name=${p#"$mandir"/}
	# a synopsis shows what a reader writes: no export or compiler macros
	if sed -n '/^\.SH SYNOPSIS$/,/^\.SH /p' "$p" |
	   grep -q 'SEGPOOL_\(API\|WUR\|MALLOC\|ALLOC_SIZE\|ALLOC_ALIGN\)'; then
		echo "FAIL: $name: an internal macro in its SYNOPSIS"
		fail=1
	fi
	# errno values named in RETURN VALUE are listed again in ERRORS,
	# the section right after it
	rv=$(sed -n '/^\.SH RETURN VALUE$/,/^\.SH /p' "$p" | sed '$d')
	after=$(sed -n '/^\.SH RETURN VALUE$/,$p' "$p" | sed -n '/^\.SH /p' | sed -n 2p)
	errs=$(grep -o '\bE[A-Z][A-Z0-9]\+\b' <<<"$rv" | sort -u || true)
	for e in $errs; do
		if ! sed -n '/^\.SH ERRORS$/,/^\.SH /p' "$p" | grep -qx "\.B $e"; then
			echo "FAIL: $name: $e in RETURN VALUE, not in ERRORS"
			fail=1
		fi
	done
	if [[ -n $errs && $after != ".SH ERRORS" ]]; then
		echo "FAIL: $name: RETURN VALUE is followed by '$after', not ERRORS"
		fail=1
	fi
done

# SEE ALSO names only pages a Debian 12 system has: ours, or one of these
# (with the package that holds it); rseq(2), for one, is not there.
debian12="slabtop.1 top.1 numa.3 pkg-config.1 malloc.3 calloc.3 realloc.3
free.3 mallinfo.3 mallinfo2.3 malloc_info.3 malloc_trim.3 mallopt.3
malloc_stats.3 ld.so.8 fork.2 _exit.2"	# procps, libnuma-dev, pkgconf, manpages(-dev)
for p in "${pages[@]}"; do
	name=${p#"$mandir"/}
	refs=$(sed -n '/^\.SH SEE ALSO$/,$p' "$p" | sed 's/\\%//g; s/\\-/-/g' |
		sed -n 's/^\.BR \([A-Za-z0-9_.-]*\) (\([1-8]\)).*/\1.\2/p')
	for ref in $refs; do
		sect=${ref##*.}
		[[ -f $mandir/man$sect/$ref ]] && continue
		case " $(echo $debian12) " in
		*" $ref "*) continue ;;
		esac
		echo "FAIL: $name: SEE ALSO $ref, a page neither segpool nor Debian 12 has"
		fail=1
	done
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
