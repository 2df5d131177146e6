#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/check-help.sh - `make help` names every target.
#
#   scripts/check-help.sh SRCTREE
#
# The targets are those of every .PHONY line of the top Makefile and of the
# makefiles it includes (tools/*/Makefile.inc, tools/Makefile.inc,
# scripts/*.mk); `make help` prints the top Makefile's opening comment, in
# which each must appear as "make <target>" or in a comma-separated list
# after one.  Exit status: 0, or 1 naming each target missing.  POSIX sh.

set -eu
LC_ALL=C
export LC_ALL

src=${1:?usage: check-help.sh SRCTREE}
help=$(awk 'NR >= 3 && !/^#/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' \
	"$src/Makefile")
status=0
n=0
for t in $(cat "$src/Makefile" "$src"/tools/Makefile.inc \
		"$src"/tools/*/Makefile.inc "$src"/scripts/*.mk 2>/dev/null |
	   awk '/^\.PHONY:/ { on = 1 } on { print } on && !/\\$/ { on = 0 }' |
	   sed 's/^\.PHONY://; s/\\//' | tr ' \t' '\n\n' | sed '/^$/d' | sort -u); do
	n=$((n + 1))
	# "make t", or ", t" / "t," in a list that follows a "make"
	if ! printf '%s\n' "$help" |
	     grep -Eq "(make|,)[ ]+$t([ ,]|\$)"; then
		echo "check-help: make help does not name the target '$t' (the opening comment of the Makefile)" >&2
		status=1
	fi
done
if [ "$status" -eq 0 ]; then
	echo "make help: $n targets named"
fi
exit "$status"
