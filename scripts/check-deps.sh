#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/check-deps.sh - what `make check` and `make stress` find missing
# on this machine.  Looks only: installing is scripts/install-deps.sh's job.
#
#   scripts/check-deps.sh [CC=cc] [CXX=g++]
#       one line per missing piece, with the Debian package that brings it
#       and what goes without it; "deps: all present" when nothing is.
#       Exit status 1 when a build dependency is missing (the library or
#       the selftests cannot be built without it), 0 otherwise.
#   scripts/check-deps.sh --skips [CXX=g++]
#       the tests that cannot run here, as NAME=TOOL words on one line (the
#       Makefile does not build them; scripts/run-selftests.sh reports them
#       skipped through SEGPOOL_TEST_MISSING).  Fast: no compiler is run.
#
# The one place that knows what each test needs of the machine beyond the
# build dependencies; the packages are those of scripts/install-deps.sh's
# groups.  Tests that find a tool missing by themselves (valgrind, clang,
# cmake, man, objdump) skip with the reason; they are named here so the
# first lines of `make check` say it all.

set -u

cc=cc
cxx=g++
skips=0
for arg in "$@"; do
	case "$arg" in
	--skips) skips=1 ;;
	CC=*) cc=${arg#CC=} ;;
	CXX=*) cxx=${arg#CXX=} ;;
	*) echo "${0##*/}: unknown argument '$arg'" >&2; exit 2 ;;
	esac
done
# the compiler's first word (CC="ccache gcc" runs gcc through ccache)
read -r cc_cmd _ <<<"$cc"
read -r cxx_cmd _ <<<"$cxx"

have() { command -v "$1" >/dev/null 2>&1; }

if [[ $skips -eq 1 ]]; then
	out=()
	if ! have "$cxx_cmd"; then
		out+=(test_pmr="$cxx_cmd" bench-pmr-smoke="$cxx_cmd")
	fi
	if ! have pkg-config; then
		out+=(test_kernel_api_installed=pkg-config test_install.sh=pkg-config)
	fi
	echo "${out[*]}"
	exit 0
fi

missing_build=()
lines=()

# header FILE PACKAGE WHAT: can $cc include FILE?  WHAT does not build
# without it.
header() {
	printf '#include <%s>\n' "$1" |
		$cc -E -x c - -o /dev/null >/dev/null 2>&1 && return 0
	missing_build+=("$2")
	lines+=("deps: missing $2 (<$1>): $3 cannot be built without it")
}

if ! have "$cc_cmd"; then
	missing_build+=(gcc)
	lines+=("deps: missing the C compiler '$cc_cmd' (package gcc, or set CC=)")
else
	header numa.h libnuma-dev "the selftests (test_numa, test_pages)"
	header urcu/urcu-memb.h liburcu-dev "the library"
	header cmocka.h libcmocka-dev "the selftests"
fi

# optional TOOL PACKAGE WHAT-GOES-WITHOUT-IT
optional() {
	have "$1" || lines+=("deps: no $1 (package $2): $3")
}
optional "$cxx_cmd" g++ "the C++ selftests (test_pmr, bench-pmr-smoke) are skipped, test_headers.sh skips $cxx_cmd"
optional clang++ clang "test_pmr_clang is not built, test_headers.sh skips clang and clang++"
optional pkg-config pkg-config "test_install.sh and test_kernel_api_installed are skipped"
optional cmake cmake "test_install.sh skips the CMake package"
optional groff groff-base "test_man.sh is skipped"
optional man man-db "test_install.sh skips man -w"
optional objdump binutils "check-hotpath and test_symbols' checks are skipped"
optional valgrind valgrind "test_sanitizers checks ASan builds only"
optional google-pprof google-perftools "test_heap_profile's profile is not read by google-pprof"
optional jeprof libjemalloc-dev "test_heap_profile's profile is not read by jeprof"
optional qemu-system-x86_64 qemu-system-x86 "make check-numa cannot run (not part of check)"

if [[ ${#lines[@]} -eq 0 ]]; then
	echo "deps: all present"
	exit 0
fi
printf '%s\n' "${lines[@]}"
if [[ ${#missing_build[@]} -gt 0 ]]; then
	echo "deps: install the missing build dependencies first:" \
		"scripts/install-deps.sh (or apt-get install ${missing_build[*]})" >&2
	exit 1
fi
echo "deps: scripts/install-deps.sh installs what is missing (all: scripts/install-deps.sh all)"
exit 0
