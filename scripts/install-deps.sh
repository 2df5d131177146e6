#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/install-deps.sh - install the Debian packages segpool needs.
#
# The one place that knows which packages the project uses.  `make deps` and
# `make demo` run it (demo unless NODEPS=1), the README's test command runs it
# before `make check`; CI runs it with extra groups.  `make check` itself
# never installs: scripts/check-deps.sh says what is missing there.
#
#   scripts/install-deps.sh [-n] [GROUP...]
#
# Groups:
#   base      gcc g++ make pkg-config binutils libnuma-dev liburcu-dev
#             libcmocka-dev numactl cmake man-db google-perftools
#             libjemalloc-dev: what `make check` and `make demo` need (g++,
#             cmake and man-db for the header, install and man page
#             checks, google-pprof and jeprof for test_heap_profile's
#             reading of a profile).  Always included.
#   valgrind  valgrind, for SEGPOOL_TEST_WRAPPER="valgrind ..." runs.
#   clang     clang, for `make CC=clang`.
#   bench     libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 gnuplot-nox
#             strace sqlite3 git: the peers and the plots of `make bench`,
#             the counting of mmap calls and two of its real programs.
#   preload   python3 git g++: the real programs `make check-preload` runs
#             under libsegpool-malloc.so (gcc, sort and awk come with base).
#   numa      qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio:
#             the emulated multi-node machine of `make check-numa`.
#   deb       dpkg-dev debhelper lintian: building the Debian packages
#             (dpkg-buildpackage -us -uc -b) and checking them.
#   arm64     gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libnuma-dev:arm64
#             liburcu-dev:arm64 libcmocka-dev:arm64 qemu-system-arm cpio:
#             the cross build (make CROSS_COMPILE=aarch64-linux-gnu-)
#             and the emulated arm64 machine of `make check-arm64`; adds
#             the dpkg architecture arm64 first (multiarch).  The guest's
#             kernel and busybox are not installed: the rig of
#             check-arm64 fetches them with apt-get download.
#   all       every group above but arm64 (which adds an architecture
#             to dpkg: asked for by name only).
#
# Only packages that are not installed are installed: `apt-get update`, then
# `apt-get install -y --no-install-recommends`, through sudo when not root.
# With nothing missing it prints one line and touches nothing.
#
#   -n        only list the missing packages; exit 1 if any are missing.
#
# Exit status: 0 when everything is present (or was installed), 1 when
# packages are missing and cannot be installed here, 2 for a usage error.

set -euo pipefail

prog=${0##*/}

usage() {
	sed -n '4,48p' "$0" | sed 's/^# \{0,1\}//'
}

group_packages() {
	case "$1" in
	base)
		echo gcc g++ make pkg-config binutils libnuma-dev liburcu-dev \
			libcmocka-dev numactl cmake man-db google-perftools \
			libjemalloc-dev
		;;
	valgrind)
		echo valgrind
		;;
	clang)
		echo clang
		;;
	bench)
		echo libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 gnuplot-nox \
			strace sqlite3 git
		;;
	preload)
		echo python3 git g++
		;;
	numa)
		echo qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio
		;;
	deb)
		echo dpkg-dev debhelper lintian
		;;
	arm64)
		echo gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libnuma-dev:arm64 \
			liburcu-dev:arm64 libcmocka-dev:arm64 qemu-system-arm cpio
		;;
	all)
		group_packages base
		group_packages valgrind
		group_packages clang
		group_packages bench
		group_packages preload
		group_packages numa
		group_packages deb
		;;
	*)
		return 1
		;;
	esac
}

dry_run=0
groups=(base)
for arg in "$@"; do
	case "$arg" in
	-n|--dry-run)
		dry_run=1
		;;
	-h|--help)
		usage
		exit 0
		;;
	-*)
		echo "$prog: unknown option '$arg'" >&2
		usage >&2
		exit 2
		;;
	*)
		if ! group_packages "$arg" >/dev/null; then
			echo "$prog: unknown group '$arg' (base, valgrind, clang, bench, preload, numa, deb, arm64, all)" >&2
			exit 2
		fi
		groups+=("$arg")
		;;
	esac
done

# The wanted packages, each once, in a stable order.
wanted=()
for g in "${groups[@]}"; do
	for pkg in $(group_packages "$g"); do
		case " ${wanted[*]} " in
		*" $pkg "*) ;;
		*) wanted+=("$pkg") ;;
		esac
	done
done

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: dpkg-query not found (not Debian?); make sure these are installed: ${wanted[*]}" >&2
	exit 0
fi

# is_installed PKG: PKG is installed; a name without ":arch" means the
# machine's own architecture (or "all"), since with dpkg multiarch the bare
# name also matches another architecture's instance (libnuma-dev:arm64).
native=$(dpkg --print-architecture)
is_installed() {
	local want="$native|all" st

	[[ $1 == *:* ]] && want=${1#*:}
	# read it whole first: grep -q may stop early, and under pipefail a
	# writer cut off by SIGPIPE would read as "not installed"
	st=$(dpkg-query -W -f='${Status} ${Architecture}\n' "$1" 2>/dev/null) ||
		true
	grep -qE "^install ok installed ($want)\$" <<<"$st"
}

missing=()
for pkg in "${wanted[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
	echo "deps: all present"
	exit 0
fi

echo "deps: missing: ${missing[*]}"
if [[ $dry_run -eq 1 ]]; then
	exit 1
fi

# How to become root: already root, sudo without a password, or sudo that may
# ask one on a terminal.
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo_cmd=(sudo -n)
	elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
		sudo_cmd=(sudo)
	else
		echo "deps: not root and sudo is not available; as root, run:" >&2
		echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
fi

apt_env=(env DEBIAN_FRONTEND=noninteractive)
apt_opts=(-o DPkg::Lock::Timeout=300 -o Dpkg::Use-Pty=0)

# A package of another architecture (name:arch) needs that architecture
# known to dpkg before apt-get update reads its lists.
for pkg in "${missing[@]}"; do
	arch=${pkg#*:}
	[[ $arch != "$pkg" ]] || continue
	if [[ $arch != "$native" ]] &&
	   ! dpkg --print-foreign-architectures | grep -qx -- "$arch"; then
		echo "deps: dpkg --add-architecture $arch"
		"${sudo_cmd[@]}" dpkg --add-architecture "$arch"
	fi
done

echo "deps: apt-get update"
"${sudo_cmd[@]}" "${apt_env[@]}" apt-get "${apt_opts[@]}" -q update
echo "deps: apt-get install ${missing[*]}"
"${sudo_cmd[@]}" "${apt_env[@]}" apt-get "${apt_opts[@]}" -q install -y \
	--no-install-recommends "${missing[@]}"

# Say so plainly if apt-get claimed success but something is still absent.
still=()
for pkg in "${missing[@]}"; do
	is_installed "$pkg" || still+=("$pkg")
done
if [[ ${#still[@]} -ne 0 ]]; then
	echo "deps: still missing after apt-get: ${still[*]}" >&2
	exit 1
fi
echo "deps: installed ${missing[*]}"
