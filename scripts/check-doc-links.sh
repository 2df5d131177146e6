#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/check-doc-links.sh - every relative link of the documentation
# leads somewhere (make check-docs).
#
#   scripts/check-doc-links.sh [SRCTREE]
#
# Reads README.md, examples/README.md and every Markdown page under
# Documentation/.  A link [text](target) or ![alt](target) whose target has
# no scheme (no "http:", "mailto:", ...) and is not a bare "#anchor" must
# name a file or directory that exists, relative to the page; a "#anchor"
# after it must be a heading of that page (GitHub's rule: lower case,
# punctuation dropped, blanks to "-").  Links inside code spans and fenced
# code blocks are not links.  Prints one line per broken link and exits 1
# when there is one.  POSIX sh and awk.

set -eu
LC_ALL=C
export LC_ALL

srctree=${1:-.}
cd "$srctree"

pages=$(find README.md examples/README.md Documentation -name '*.md' 2>/dev/null | sort)

# page<TAB>target, one a line
links=$(awk '
	FNR == 1 { fence = 0 }
	/^[ \t]*```/ { fence = !fence; next }
	fence { next }
	{
		s = $0
		gsub(/`[^`]*`/, "", s)
		while (match(s, /\]\([^) \t]+\)/)) {
			t = substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
			if (t ~ /^[a-z][a-z0-9+.-]*:/ || t ~ /^#/)
				continue
			print FILENAME "\t" t
		}
	}' $pages)

# anchor: the GitHub anchors of page $1's headings, one a line
anchors() {
	awk '
	/^[ \t]*```/ { fence = !fence; next }
	fence || !/^#+ / { next }
	{
		h = $0
		sub(/^#+ +/, "", h)
		h = tolower(h)
		gsub(/[^a-z0-9 _-]/, "", h)
		gsub(/ /, "-", h)
		print h
	}' "$1"
}

status=0
n=0
tab=$(printf '\t')
while IFS="$tab" read -r page target; do
	[ -n "$page" ] || continue
	n=$((n + 1))
	file=${target%%#*}
	case $target in
	*'#'*) anchor=${target#*#} ;;
	*) anchor= ;;
	esac
	dir=$(dirname "$page")
	path=$dir/$file
	[ -n "$file" ] || path=$page
	if [ ! -e "$path" ]; then
		echo "$page: link to $target: no such file" >&2
		status=1
		continue
	fi
	if [ -n "$anchor" ] && [ -f "$path" ] && \
	   ! anchors "$path" | grep -qxF -- "$anchor"; then
		echo "$page: link to $target: no such heading in $path" >&2
		status=1
	fi
done <<EOF
$links
EOF

if [ "$status" -ne 0 ]; then
	echo "check-doc-links: broken links (above)" >&2
else
	echo "check-doc-links: $n relative links resolve"
fi
exit "$status"
