#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/gen-api-doc.sh - render the API reference from the kernel-doc
# comments of the installed headers: Documentation/reference/api.md, or man pages.
#
#   scripts/gen-api-doc.sh [-W] [HEADER...] > Documentation/reference/api.md
#   scripts/gen-api-doc.sh [-W] -m DIR [-v VERSION] [HEADER...]
#
# With no HEADER, every include/segpool/*.h of this source tree: first in
# the order segpool.h includes them, then segpool.h, then the rest by name;
# a header without a "/**" block is left out.  For each "/** ... */" block
# the script takes the declaration that follows it (a prototype up to its
# ";", a struct up to its "};", a #define with its continuation lines) and
# writes name, summary, prototype, parameters or members, description,
# Context and Return as Markdown on stdout.  The parser and both outputs
# are scripts/kernel-doc.awk.  A header's opening comment
# ("segpool/x.h - ...") becomes the introduction of its section, and
# "/* --- group --- */" separators become subheadings.
#
# The output depends on the headers alone (no date, no absolute path, C
# locale), so CI can compare it with the committed Documentation/reference/api.md.
# POSIX sh and awk only.
#
# Problems in the comments (a block whose name is not in the declaration
# after it, an @parameter the prototype does not have, a block with no
# declaration) are reported on stderr as "file:line: warning: ...".
#
#   -W        exit with status 1 when there were warnings
#   -m DIR    write man pages instead: DIR/NAME.3, one per function and
#             function-like macro and one per struct (named without
#             "struct"; constants have none), and list their names on
#             stdout.  A page's SEE ALSO names the other pages of its group
#             (of its header when the header has no groups), every page its
#             text mentions, and segpool(7).  Old DIR/*.3 are removed.
#   -v VER    the version in the man pages' footer (default: segpool.h's
#             SEGPOOL_VERSION_STRING)
#
# Exit status: 0, 1 (warnings with -W, or a header that cannot be read),
# 2 for a usage error.

set -eu

LC_ALL=C
export LC_ALL

prog=${0##*/}
srctree=$(cd "$(dirname "$0")/.." && pwd)
werror=0
mandir=
version=

while [ $# -gt 0 ]; do
	case "$1" in
	-W)
		werror=1
		shift
		;;
	-m|-v)
		if [ $# -lt 2 ]; then
			echo "$prog: $1 needs an argument" >&2
			exit 2
		fi
		if [ "$1" = -m ]; then mandir=$2; else version=$2; fi
		shift 2
		;;
	-h|--help)
		sed -n '4,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	--)
		shift
		break
		;;
	-*)
		echo "$prog: unknown option '$1'" >&2
		exit 2
		;;
	*)
		break
		;;
	esac
done

if [ $# -eq 0 ]; then
	# the order in which the umbrella header includes them, then the
	# umbrella itself, then any other header in byte order of its name
	inc_dir=$srctree/include/segpool
	umbrella=$inc_dir/segpool.h
	list=
	if [ -r "$umbrella" ]; then
		# shellcheck disable=SC2013 # header names hold no blanks
		for h in $(sed -n 's|^#include <segpool/\([A-Za-z0-9_.-]*\.h\)>.*|\1|p' "$umbrella"); do
			[ -r "$inc_dir/$h" ] && list="$list $h"
		done
		list="$list segpool.h"
	fi
	for f in "$inc_dir"/*.h; do
		h=${f##*/}
		case " $list " in
		*" $h "*) ;;
		*) list="$list $h" ;;
		esac
	done
	set --
	for h in $list; do
		set -- "$@" "$inc_dir/$h"
	done
fi

for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "$prog: cannot read $f" >&2
		exit 1
	fi
done

# kernel_doc FILE FMT [awk -v assignments] - run the parser on one header
# with the variables every format takes; 3 from awk (a warning) is kept.
kernel_doc() {
	kd_file=$1
	kd_fmt=$2
	shift 2
	case "$kd_file" in
	"$srctree"/*) rel=${kd_file#"$srctree"/} ;;
	*) rel=$kd_file ;;
	esac
	case "$rel" in
	*include/*) inc=${rel##*include/} ;;
	*) inc=${rel##*/} ;;
	esac
	grouped=0
	if grep -q '^/\* --- ' "$kd_file"; then
		grouped=1
	fi
	rc=0
	awk -v fmt="$kd_fmt" -v rel="$rel" -v inc="$inc" -v grouped="$grouped" \
		"$@" -f "$srctree/scripts/kernel-doc.awk" "$kd_file" || rc=$?
	return "$rc"
}

if [ -n "$mandir" ]; then
	mkdir -p "$mandir" || exit 1
	if [ -z "$version" ]; then
		version=$(sed -n 's/^#define SEGPOOL_VERSION_STRING[ 	]*"\(.*\)".*/\1/p' \
			"$srctree/include/segpool/segpool.h")
	fi
	# the names of every page first: SEE ALSO may point to another header
	pages=
	for f in "$@"; do
		grep -q '^[ 	]*/\*\*' "$f" || continue
		rc=0
		names=$(kernel_doc "$f" names 2>/dev/null) || rc=$?
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
			echo "$prog: awk failed on $f" >&2
			exit 1
		fi
		pages="$pages $names"
	done
	for old in "$mandir"/*.3; do
		if [ -e "$old" ]; then rm -f "$old"; fi
	done
	status=0
	for f in "$@"; do
		grep -q '^[ 	]*/\*\*' "$f" || continue
		rc=0
		kernel_doc "$f" man -v mandir="$mandir" -v version="$version" \
			-v pages="$(echo $pages)" || rc=$?
		if [ "$rc" -eq 3 ]; then
			[ "$werror" -eq 1 ] && status=1
		elif [ "$rc" -ne 0 ]; then
			echo "$prog: awk failed on $f" >&2
			exit 1
		fi
	done
	exit "$status"
fi

cat <<'EOF'
<!-- SPDX-License-Identifier: MIT -->
<!-- Generated by scripts/gen-api-doc.sh from include/segpool/*.h: do not edit. -->

# segpool API reference

This page is generated by `scripts/gen-api-doc.sh` from the kernel-doc
comments of the installed headers, `include/segpool/*.h`.  Do not edit it:
change the comment in the header and regenerate it with
`make docs`.

Include `<segpool/segpool.h>`; it includes every other header.  Link with
`pkg-config --libs segpool` (`-lsegpool` and liburcu-memb, which the inline
RCU wrappers of `<segpool/rcu.h>` call from the program) or CMake's
`segpool::segpool`; static linking also needs `-lurcu-common -pthread`, which
`pkg-config --libs --static segpool` and `segpool::segpool_static` add.
Each function also has a man page (`man segpool_cache_create`), and
`man segpool` is the overview.
EOF

status=0
for f in "$@"; do
	grep -q '^[ 	]*/\*\*' "$f" || continue
	rc=0
	kernel_doc "$f" md || rc=$?
	if [ "$rc" -eq 3 ]; then
		[ "$werror" -eq 1 ] && status=1
	elif [ "$rc" -ne 0 ]; then
		echo "$prog: awk failed on $f" >&2
		exit 1
	fi
done

exit "$status"
