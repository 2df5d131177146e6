#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_man.sh - the man pages render without a warning.
#
# Every page `make man` wrote into $SEGPOOL_OBJTREE/man is rendered by
# man(1) with groff's warnings on (`man --warnings -l`); any warning, or a
# page without NAME, DESCRIPTION or text, fails the test and is named.  Then the
# coverage checks of scripts/gen-man.sh -c run on those same pages.
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
so=()
[[ -e $objtree/libsegpool.so ]] && so=(-s "$objtree/libsegpool.so")
"$srctree/scripts/gen-man.sh" -c -m "$mandir" "${so[@]}" || fail=1
exit "$fail"
