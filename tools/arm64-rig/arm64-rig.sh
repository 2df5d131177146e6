#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/arm64-rig/arm64-rig.sh - run the cross-built selftests on emulated
# arm64 machines: Debian's arm64 cloud kernel under qemu-system-aarch64
# (TCG, -M virt) with two NUMA nodes, in rseq mode, and the ownership
# stress of the per-CPU layer in every per-CPU mode.
#
#   tools/arm64-rig/arm64-rig.sh [-c CONFIG[,CONFIG...]] [-p PROGRAM[,...]]
#                                [-k KERNEL] [-K KERNEL] [-b BUSYBOX]
#                                [-t SECONDS]
#                                [-l] [-v] OBJTREE SRCTREE
#
# OBJTREE is an arm64 build tree (make CROSS_COMPILE=aarch64-linux-gnu-
# O=... all tests-check), SRCTREE the source tree.  For each configuration
# the rig packs an initramfs (busybox and binutils for arm64, the
# test programs, the arm64 shared libraries they need and the dynamic
# loader, the files of both trees the programs name by their absolute
# paths, an /init script),
# boots the kernel with it under an outer `timeout` and reads the results
# back from the serial console, as tools/numa-rig/numa-rig.sh does: every
# result line carries a random sentinel made for this boot, and a boot that
# ends without its closing line fails.  The kernel, busybox and binutils
# are Debian's arm64 packages (linux-image-cloud-arm64's kernel,
# busybox, binutils-aarch64-linux-gnu and the libraries of both), taken
# with `apt-get download` and dpkg-deb -x into OBJTREE/arm64-rig/ the first
# time; the cloud kernel has the PL011 console, NUMA and initramfs support
# built in, so the payload is the initramfs itself and needs no module.
#
# Configurations (2 NUMA nodes each, 512 MiB a node):
#   2cpu   cortex-a72, 2 CPUs, one a node: an ARMv8.0 core without LSE, so
#          the depot runs on its lock (no casp); the unit and API tiers
#   4cpu   cortex-a76, 4 CPUs, two a node: LSE, so the depot's stacks are
#          lock-free through casp; the programs of the per-CPU layer and
#          what stands on it, the ownership stress among them (4 vCPUs
#          on 2 host cores make every process start and membarrier fence
#          slow: the whole tiers take over 10 minutes there)
#   16k    cortex-a76, 2 CPUs, one a node, booting Debian's arm64 kernel
#          with 16 KiB pages (linux-image-6.12-arm64-16k) instead: with a
#          build whose page is at least as large (make PAGE_SHIFT=14 or
#          16; make check-arm64-16k) the unit tier; with a build of
#          smaller pages only the refusal: start-up must fail with its
#          message naming both page sizes (one result)
# Default: 2cpu and 4cpu.
#
# The programs: the unit and API tiers in rseq mode, but for what cannot
# run in the guest or takes too long under TCG (the list below says which
# and why).  A program with variants (selftests/lib/harness.h) runs those
# in rseq mode (all but the lock and off ones); the others run as they
# are (rseq is the default mode).  The ownership stress of the stress
# tier (test_percpu_stress and test_stress: every object checked against
# an ownership map and a pattern while threads hand objects across CPUs,
# and drains steal magazines under them) runs in every per-CPU mode:
# test_percpu_stress's variants all, test_stress once with each
# SEGPOOL_PERCPU=rseq, lock and off, at a small load.
# Before them the guest prints the per-CPU mode the library chooses
# (SEGPOOL_VERBOSE=1) by default and with SEGPOOL_PERCPU=lock and off:
# the first must say rseq (otherwise the boot fails), the others lock and
# off; and the depot's stacks test_depot reports must be lock-free (casp)
# exactly when the CPU has LSE.
#
# Options:
#   -c LIST   configurations to run (comma separated)
#   -p LIST   only these programs (comma separated names)
#   -k FILE   kernel image (default: the downloaded one; or
#             $SEGPOOL_ARM64_KERNEL)
#   -K FILE   kernel image with 16 KiB pages, for 16k (default: the
#             downloaded one; or $SEGPOOL_ARM64_KERNEL_16K)
#   -b FILE   arm64 busybox, dynamically linked, so that LD_PRELOAD
#             reaches its programs (default: the downloaded one)
#   -t SECS   time limit of one boot, outer timeout (default 900)
#   -l        keep the serial logs and initramfs in $TMPDIR (path printed)
#   -v        print the whole serial log, not only the test output
#
# Output: the programs' output prefixed by "# ", "# arm64-rig: CONFIG:
# per-CPU mode ...", one "ok"/"not ok" line per program run and
# configuration ("ok ... # SKIP" for a program that exits with status 4),
# "arm64-rig: CONFIG: N passed, N failed" per configuration, then, over all
# of them, "# N skipped" (those and the programs the build left out) and a
# last line "N passed, N failed", as scripts/run-selftests.sh ends.
# Exit status: 0 when everything passed, 1 when something failed, 2 for a
# usage error, 4 (kselftest's "skip") when qemu, the kernel, busybox or
# binutils is missing and cannot be fetched.

set -euo pipefail

prog=${0##*/}
configs=2cpu,4cpu
only=
kernel=${SEGPOOL_ARM64_KERNEL:-}
kernel16k=${SEGPOOL_ARM64_KERNEL_16K:-}
busybox=
limit=900
prog_limit=300		# seconds one program may run in the guest
keep=0
verbose=0

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0"
}

while getopts "c:p:k:K:b:t:lvh" opt; do
	case "$opt" in
	c) configs=$OPTARG ;;
	p) only=$OPTARG ;;
	k) kernel=$OPTARG ;;
	K) kernel16k=$OPTARG ;;
	b) busybox=$OPTARG ;;
	t) limit=$OPTARG ;;
	l) keep=1 ;;
	v) verbose=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [[ $# -ne 2 ]]; then
	usage >&2
	exit 2
fi
objtree=$(cd "$1" && pwd)
srctree=$(cd "$2" && pwd)

# The programs run in the guest: name, command line (relative to the
# program's folder), at most one a line.  Left out (a program of the
# tiers the build has that is in neither list stops the run):
#   test_runner        runs scripts/run-selftests.sh: bash and the host's
#                      tools, not in the guest
#   test_slab_scale    a scaling measurement of many threads: minutes
#                      under TCG, and nothing in it is arm64's own
#   test_reliability   a soak of every path at once: the same
#   test_pmr_inline    the inline hit path is x86-64's (segpool/inline.h):
#                      on arm64 it is test_pmr again
#   test_rcu_stress    the statistics dump racing cache destruction: RCU's,
#                      nothing of the per-CPU layer's or of arm64's
left_out=(test_runner test_slab_scale test_reliability test_pmr_inline
	  test_rcu_stress)
# What the programs skip themselves in the guest, each with its reason
# printed: the tests of other variants than the one running (the lock
# mode's among them), of a sanitizer build, child halves run alone, and
# what needs a program the guest has not: test_sanitizers' valgrind
# tests (valgrind's arm64 build wants glibc's debug symbols beside it;
# CI's valgrind step runs them on x86-64), the python3 half of
# test_malloc's test_preload_small_limit, test_heap_profile's test_pprof
# (google-pprof, which no CI step installs).
# test_debug runs on one CPU (taskset): its use-after-free children must
# find the object their parent freed in their CPU's magazine.
# test_percpu and test_rcu run at a fifth of their load, test_stats at a
# twentieth (its churn of caches created and destroyed, each destroy a
# membarrier fence per CPU, takes minutes under TCG at full load).
# test_percpu_stress and test_stress run at a fiftieth of their load
# (SEGPOOL_TEST_SCALE), in every per-CPU mode (modes_all below).
programs=(
	"test_cache_api|./test_cache_api"
	"test_region|./test_region"
	"test_pages|./test_pages"
	"test_decay|./test_decay"
	"test_os_faults|./test_os_faults"
	"test_startup|./test_startup"
	"test_percpu_hooks|./test_percpu_hooks"
	"test_percpu|env SEGPOOL_TEST_SCALE=0.2 ./test_percpu"
	"test_sizing|./test_sizing"
	"test_depot|./test_depot"
	"test_stats|env SEGPOOL_TEST_SCALE=0.05 ./test_stats"
	"test_stats_print|./test_stats_print"
	"test_top|./test_top"
	"test_heap_profile|./test_heap_profile"
	"test_numa|./test_numa"
	"test_debug|taskset 1 ./test_debug"
	"test_debug_build|./test_debug_build"
	"test_guard|./test_guard"
	"test_harden|./test_harden"
	"test_failslab|./test_failslab"
	"test_sanitizers|./test_sanitizers"
	"test_rcu|env SEGPOOL_TEST_SCALE=0.2 ./test_rcu"
	"test_malloc|./test_malloc"
	"test_arena|./test_arena"
	"test_symbols|./test_symbols"
	"test_kmalloc|./test_kmalloc"
	"test_fork|./test_fork"
	"test_rss|./test_rss"
	"test_json_schema|./test_json_schema"
	"test_export|./test_export"
	"test_mempool|./test_mempool"
	"test_inline|./test_inline"
	"test_pmr|./test_pmr"
	"test_kernel_api|./test_kernel_api"
	"test_kernel_api_installed|./test_kernel_api_installed"
	"test_percpu_stress|env SEGPOOL_TEST_SCALE=0.1 ./test_percpu_stress"
	"test_stress|env SEGPOOL_TEST_SCALE=0.1 ./test_stress"
)
# The programs run in every per-CPU mode, not in rseq mode alone: all
# their variants, or, for one without variants, once with each of
# SEGPOOL_PERCPU=rseq, lock and off.
modes_all=test_percpu_stress,test_stress
# the per-CPU modes, as SEGPOOL_PERCPU names them
modes=(rseq lock off)

# The 4cpu machine's programs (see above), unless -p names others.
percpu_set=test_cache_api,test_percpu_hooks,test_percpu,test_sizing,test_depot
percpu_set+=,test_stats,test_numa,test_debug_build,test_guard,test_failslab
percpu_set+=,test_rcu,test_malloc,test_kmalloc,test_fork,test_mempool
percpu_set+=,test_inline,test_pmr,test_percpu_stress,test_stress

# --- what the host needs ------------------------------------------------------
qemu=$(command -v qemu-system-aarch64 || true)
if [[ -z "$qemu" ]] || ! command -v cpio >/dev/null 2>&1; then
	echo "$prog: missing: qemu-system-aarch64 or cpio" \
		"(scripts/install-deps.sh arm64)" >&2
	exit 4
fi

# The guest's kernel and busybox: Debian's arm64 packages, downloaded once.
cache=$objtree/arm64-rig
# fetch_deb PACKAGE: unpack the arm64 package PACKAGE into $cache/root
fetch_deb() {
	local deb

	mkdir -p "$cache/debs" "$cache/root"
	deb=$(ls "$cache/debs/${1}_"*_arm64.deb 2>/dev/null | head -n 1 || true)
	if [[ -z "$deb" ]]; then
		echo "# arm64-rig: apt-get download $1:arm64"
		(cd "$cache/debs" &&
		 apt-get download -q "$1:arm64" >/dev/null 2>&1) || return 1
		deb=$(ls "$cache/debs/${1}_"*_arm64.deb | head -n 1)
	fi
	dpkg-deb -x "$deb" "$cache/root"
}

if [[ -z "$kernel" ]]; then
	kernel=$(ls "$cache"/root/boot/vmlinuz-*-arm64 2>/dev/null |
		 sort -V | tail -n 1 || true)
	if [[ -z "$kernel" ]]; then
		# the metapackage names the versioned image it depends on
		image=$(apt-cache depends linux-image-cloud-arm64:arm64 \
			2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[^:]*\).*/\1/p' |
			head -n 1)
		if [[ -n "$image" ]] && fetch_deb "$image"; then
			kernel=$(ls "$cache"/root/boot/vmlinuz-*-arm64 |
				 sort -V | tail -n 1)
		fi
	fi
fi
# The kernel with 16 KiB pages, when a configuration wants it: only its
# boot folder is unpacked (the package's modules are not needed).
if [[ ",$configs," == *,16k,* && -z "$kernel16k" ]]; then
	kernel16k=$(ls "$cache"/root-16k/boot/vmlinuz-*-arm64-16k \
		    2>/dev/null | sort -V | tail -n 1 || true)
	image=
	if [[ -z "$kernel16k" ]]; then
		image=$(apt-cache depends linux-image-6.12-arm64-16k:arm64 \
			2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[^:]*\).*/\1/p' |
			head -n 1)
	fi
	if [[ -n "$image" ]]; then
		mkdir -p "$cache/debs" "$cache/root-16k"
		deb=$(ls "$cache/debs/${image}_"*_arm64.deb 2>/dev/null |
		      head -n 1 || true)
		if [[ -z "$deb" ]]; then
			echo "# arm64-rig: apt-get download $image:arm64"
			(cd "$cache/debs" &&
			 apt-get download -q "$image:arm64" >/dev/null 2>&1) ||
				true
			deb=$(ls "$cache/debs/${image}_"*_arm64.deb \
			      2>/dev/null | head -n 1 || true)
		fi
		if [[ -n "$deb" ]]; then
			dpkg-deb --fsys-tarfile "$deb" |
				tar -x -C "$cache/root-16k" ./boot
			kernel16k=$(ls "$cache"/root-16k/boot/vmlinuz-*-16k |
				    sort -V | tail -n 1)
		fi
	fi
	if [[ -z "$kernel16k" || ! -r "$kernel16k" ]]; then
		echo "$prog: no arm64 kernel with 16 KiB pages (apt-get" \
			"download linux-image-6.12-arm64-16k's image failed)" >&2
		exit 4
	fi
fi
# busybox, not busybox-static: test_malloc's test_preload_* run its
# programs under LD_PRELOAD, which a static program ignores
if [[ -z "$busybox" ]]; then
	busybox=$cache/root/bin/busybox
	if [[ ! -x $busybox ]] ||
	   ! readelf -d "$busybox" 2>/dev/null | grep -q NEEDED; then
		fetch_deb busybox || true
	fi
fi
if [[ -z "$kernel" || ! -r "$kernel" || ! -x "$busybox" ]]; then
	echo "$prog: no arm64 kernel or busybox (apt-get download" \
		"linux-image-cloud-arm64:arm64 busybox:arm64 failed;" \
		"dpkg --add-architecture arm64, apt-get update)" >&2
	exit 4
fi
# The guest's binutils, which test_symbols runs on the arm64 libsegpool.so
# (nm, and objdump or readelf): Debian's native arm64 build and the
# packages of the libraries it needs.
tools=(nm objdump readelf)
if [[ ! -x $cache/root/usr/bin/aarch64-linux-gnu-nm ]]; then
	for p in binutils-aarch64-linux-gnu libbinutils libctf0 \
		 libctf-nobfd0 zlib1g libzstd1; do
		if ! fetch_deb "$p"; then
			echo "$prog: no arm64 binutils (apt-get download" \
				"$p:arm64 failed)" >&2
			exit 4
		fi
	done
fi

# bin_path BIN: where the build tree has program BIN
bin_dirs=(selftests/unit selftests/api selftests/stress)
bin_path() {
	local d

	for d in "${bin_dirs[@]}"; do
		if [[ -x $objtree/$d/$1 ]]; then
			echo "$objtree/$d/$1"
			return 0
		fi
	done
	return 1
}

# prog_bin ENTRY: the program of a programs[] entry (its word starting "./")
prog_bin() {
	local w

	for w in ${1#*|}; do
		if [[ $w == ./* ]]; then
			echo "${w#./}"
			return
		fi
	done
}

# pick LIST: the entries of all_programs named in LIST (comma separated)
# into programs
pick() {
	local p

	programs=()
	for p in "${all_programs[@]}"; do
		[[ ",$1," == *",${p%%|*},"* ]] && programs+=("$p")
	done
	[[ ${#programs[@]} -ne 0 ]]
}

# Every program the build has in the tiers' folders is in the list above
# or left out by name.
for d in "${bin_dirs[@]}"; do
	for f in "$objtree/$d"/test_*; do
		name=${f##*/}
		[[ -f $f && -x $f && $name != *.sh ]] || continue
		for p in "${programs[@]}" "${left_out[@]}"; do
			[[ ${p%%|*} == "$name" ]] && continue 2
		done
		echo "$prog: $d/$name is neither run nor left out:" \
			"list it in $0" >&2
		exit 2
	done
done

all_programs=("${programs[@]}")
if [[ -n "$only" ]] && ! pick "$only"; then
	echo "$prog: -p $only names none of the rig's programs" >&2
	exit 2
fi

# Programs the build left out (scripts/check-deps.sh --skips) are skipped.
present=()
total_skip=0
for p in "${programs[@]}"; do
	if bin_path "$(prog_bin "$p")" >/dev/null; then
		present+=("$p")
	else
		echo "# arm64-rig: $objtree has no $(prog_bin "$p"): skipped"
		total_skip=$((total_skip + 1))
	fi
done
programs=("${present[@]}")
all_programs=("${programs[@]}")
if [[ ${#programs[@]} -eq 0 ]]; then
	echo "$prog: $objtree has no selftests: build them first" \
		"(make CROSS_COMPILE=aarch64-linux-gnu- O=... tests-check)" >&2
	exit 2
fi
first=$(bin_path "$(prog_bin "${programs[0]}")")
if ! LC_ALL=C readelf -h "$first" | grep -q 'Machine: *AArch64'; then
	echo "$prog: $objtree is not an arm64 build" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/arm64-rig.XXXXXX")
cleanup() {
	if [[ $keep -eq 1 ]]; then
		echo "# arm64-rig: logs and initramfs kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# --- the initramfs ------------------------------------------------------------
root=$work/root
# the arm64 libraries: dpkg multiarch first, then the cross toolchain's,
# then those unpacked with the guest's binutils
lib_dirs=(/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu
	  /usr/aarch64-linux-gnu/lib
	  "$cache/root/lib/aarch64-linux-gnu"
	  "$cache/root/usr/lib/aarch64-linux-gnu")

# copy_lib NAME: the arm64 library NAME and, in turn, what it needs, into
# the guest's /lib/aarch64-linux-gnu
copy_lib() {
	local name=$1 d f need

	[[ -e $root/lib/aarch64-linux-gnu/$name ]] && return 0
	for d in "${lib_dirs[@]}"; do
		[[ -e $d/$name ]] && f=$d/$name && break
	done
	if [[ -z ${f:-} ]]; then
		echo "$prog: no arm64 library $name (in ${lib_dirs[*]})" >&2
		return 1
	fi
	cp -L "$f" "$root/lib/aarch64-linux-gnu/$name"
	for need in $(needed "$f"); do
		copy_lib "$need"
	done
}

# needed FILE: the NEEDED entries of FILE's dynamic section
needed() {
	readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# runpath FILE: the folders of FILE's RUNPATH, one a line
runpath() {
	readelf -d "$1" 2>/dev/null |
		sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' | tr ':' '\n'
}

# copy_needs FILE: the libraries FILE needs: one its RUNPATH finds at the
# same path in the guest (the installed image test_kernel_api_installed
# runs against), the others through copy_lib
copy_needs() {
	local need dir

	for need in $(needed "$1"); do
		for dir in $(runpath "$1"); do
			if [[ -e $dir/$need ]]; then
				copy_abs "$dir/$need"
				copy_needs "$dir/$need"
				continue 2
			fi
		done
		copy_lib "$need"
	done
}

# copy_abs PATH: PATH (file or folder) at the same absolute path in the
# guest: the programs name the trees' files so (the Makefile passes them).
# A missing one, or one the guest would mount over, ends the run here: in
# the guest it would only show as the failure of a test that reads it.
copy_abs() {
	case $1 in
	/proc/* | /sys/* | /dev/*)
		echo "$prog: $1: the guest mounts over its folder" >&2
		exit 2
		;;
	esac
	if [[ ! -e $1 ]]; then
		echo "$prog: no $1, which the programs name: build it first" >&2
		exit 2
	fi
	mkdir -p "$root$(dirname "$1")"
	cp -a -L "$1" "$root$1"
}

# watch_guest CFG PID LOG TAG START - the guest's progress while it runs
watch_guest() {
	local cfg=$1 pid=$2 log=$3 tag=$4 start=$5
	local booted=0 seen=0 quiet_since=$SECONDS n name

	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [[ $booted -eq 0 ]] &&
		   grep -a -q -F "$tag begin" "$log"; then
			booted=1
			quiet_since=$SECONDS
			echo "# arm64-rig: $cfg: booted after" \
				"$((SECONDS - start)) s"
		fi
		n=$(grep -a -c -F "$tag start " "$log" || true)
		while [[ $seen -lt $n ]]; do
			seen=$((seen + 1))
			name=$(grep -a -F "$tag start " "$log" |
			       sed -n "${seen}p" | tr -d '\r' |
			       sed "s/^.*$tag start //")
			echo "# arm64-rig: $cfg: [$seen] $name" \
				"($((SECONDS - start)) s)"
			quiet_since=$SECONDS
		done
		if [[ $((SECONDS - quiet_since)) -ge 60 ]]; then
			state=booting
			[[ $booted -eq 1 ]] && state=running
			echo "# arm64-rig: $cfg: $state," \
				"$((SECONDS - start)) s of at most $limit s"
			quiet_since=$SECONDS
		fi
	done
}

build_initramfs() {
	local sentinel=$1 out=$2 p name cmd bin path

	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,rig,usr/bin,usr/sbin} \
		"$root/lib/aarch64-linux-gnu"
	chmod 1777 "$root/tmp"
	cp "$busybox" "$root/bin/busybox"
	copy_needs "$busybox"
	for p in "${programs[@]}"; do
		path=$(bin_path "$(prog_bin "$p")")
		cp -L "$path" "$root/rig/"
		copy_needs "$path"
	done
	# the dynamic loader where the programs look for it
	ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 \
		"$root/lib/ld-linux-aarch64.so.1"
	# what the programs load by name at run time, which no NEEDED entry
	# says: libgcc_s for glibc's backtrace() (the call sites of the debug
	# caches and of the heap profiler), libm and iconv's UTF-16 converter
	# for test_malloc's test_dlopen (the converter and its configuration
	# in glibc's gconv folder)
	copy_lib libgcc_s.so.1
	copy_lib libm.so.6
	mkdir -p "$root/usr/lib/aarch64-linux-gnu/gconv"
	for path in gconv-modules gconv-modules.d UTF-16.so; do
		cp -a -L "/usr/lib/aarch64-linux-gnu/gconv/$path" \
			"$root/usr/lib/aarch64-linux-gnu/gconv/"
	done
	# what the programs name by absolute path (the Makefile's -D paths)
	for path in "$objtree"/libsegpool.so* "$objtree"/libsegpool-malloc.so* \
		    "$objtree/tools/segpool-top/segpool-top"; do
		copy_abs "$path"
	done
	copy_needs "$objtree/libsegpool-malloc.so"
	for path in "${tools[@]}"; do
		cp "$cache/root/usr/bin/aarch64-linux-gnu-$path" \
			"$root/usr/bin/$path"
		copy_needs "$root/usr/bin/$path"
	done
	copy_abs "$srctree/scripts/segpool.map"
	# (and test_symbols reads the public headers beside the map file)
	copy_abs "$srctree/include/segpool"
	copy_abs "$srctree/Documentation"
	# /init: each program's status goes through a file, since a
	# pipeline's status is its last command's; a program with variants
	# runs each of its rseq variants (as scripts/run-selftests.sh runs
	# them: the variant's settings through env(1)).
	{
		echo '#!/bin/busybox sh'
		echo '/bin/busybox --install -s /bin'
		echo 'export PATH=/bin:/sbin:/usr/bin:/usr/sbin'
		echo 'export LD_LIBRARY_PATH=/lib/aarch64-linux-gnu'
		echo 'mount -t proc proc /proc'
		echo 'mount -t sysfs sysfs /sys'
		echo 'mount -t devtmpfs devtmpfs /dev 2>/dev/null'
		# no tmpfs on /tmp: the root is one already (no root= on the
		# command line), and a mount there would hide the trees'
		# files copy_abs put under /tmp, where CI's clones are
		echo 'mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm'
		echo 'mkdir -p /dev/pts && mount -t devpts devpts /dev/pts'
		echo 'exec </dev/console >/dev/console 2>&1'
		echo "S=RIG-$sentinel"
		echo 'sys=/sys/devices/system'
		echo 'page=$(sed -n "s/^KernelPageSize: *//p" \'
		echo '	/proc/self/smaps | head -n 1)'
		echo 'echo "$S begin kernel $(uname -r), $(uname -m),' \
			'nodes $(cat $sys/node/online),' \
			'cpus $(cat $sys/cpu/online), page $page"'
		echo 'for n in /sys/devices/system/node/node*; do'
		echo '	echo "$S node ${n##*node}: cpus [$(cat $n/cpulist)]"'
		echo 'done'
		echo 'echo "$S cpu features:' \
			'$(grep -m1 Features /proc/cpuinfo | cut -d: -f2)"'
		echo 'cd /rig'
		echo 'export TMPDIR=/tmp'
		echo 'export SEGPOOL_TEST_TIMEOUT='"$prog_limit"
		# the mode the library picks here, as its start-up line says,
		# by default and in each mode asked for
		for m in default "${modes[@]:1}"; do
			echo -n "SEGPOOL_VERBOSE=1 "
			[[ $m == default ]] || echo -n "SEGPOOL_PERCPU=$m "
			echo "./$(prog_bin "${programs[0]}")" \
				"--list-variants 2>&1 >/dev/null |"
			echo '	sed -n "s/^.*\(per-CPU mode .*\)$/$S' \
				"mode $m"' \1/p"'
		done
		# the kernel's pages larger than the build's: its refusal
		if [[ $probe_only -eq 1 ]]; then
			echo "./$(prog_bin "${programs[0]}") --list-variants" \
				"2>&1 >/dev/null |"
			echo '	sed -n "s/^segpool: \(cannot initialise' \
				'.*\)$/$S refused \1/p"'
			programs=()
		fi
		echo 'run() {	# NAME COMMAND...'
		echo '	n=$1; shift'
		echo '	echo "$S start $n"'
		echo '	rm -f /tmp/rc; t0=$(cut -d. -f1 /proc/uptime)'
		echo "	{ timeout $prog_limit \"\$@\"; echo \$? > /tmp/rc; } \\"
		echo "		2>&1 |"
		echo "		sed 's/^/# /'"
		echo '	t1=$(cut -d. -f1 /proc/uptime)'
		echo '	echo "$S result $n $(cat /tmp/rc) $((t1 - t0))s"'
		echo '}'
		for p in ${programs[@]+"${programs[@]}"}; do
			name=${p%%|*}
			cmd=${p#*|}
			bin=$(prog_bin "$p")
			if [[ ",$modes_all," == *",$name,"* ]] &&
			   grep -q -a -F SEGPOOL_SELFTEST_HAS_VARIANTS \
				"$(bin_path "$bin")"; then
				# every variant, every mode
				echo "./$bin --list-variants |"
				echo "while read -r v vset; do"
				echo "	run \"$name [\$v]\" env \$vset" \
					"SEGPOOL_TEST_VARIANT=\$v $cmd"
				echo 'done'
			elif [[ ",$modes_all," == *",$name,"* ]]; then
				for m in "${modes[@]}"; do
					echo "run \"$name [mode=$m]\"" \
						"env SEGPOOL_PERCPU=$m $cmd"
				done
			elif grep -q -a -F SEGPOOL_SELFTEST_HAS_VARIANTS \
				"$(bin_path "$bin")"; then
				# the variants in rseq mode (default or said):
				# not the lock and off ones
				echo "./$bin --list-variants |"
				echo "grep -v -E 'SEGPOOL_PERCPU=(lock|off)' |"
				echo "while read -r v vset; do"
				echo "	run \"$name [\$v]\" env \$vset" \
					"SEGPOOL_TEST_VARIANT=\$v $cmd"
				echo 'done'
			else
				echo "run $name $cmd"
			fi
		done
		echo 'echo "$S end"'
		echo 'poweroff -f'
	} > "$root/init"
	chmod 755 "$root/init"
	if [[ $(id -u) -eq 0 ]]; then
		mknod -m 600 "$root/dev/console" c 5 1
		mknod -m 666 "$root/dev/null" c 1 3
	fi
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet |
		gzip -1) > "$out"
}

# --- the machines -----------------------------------------------------------
qemu_args() {
	case "$1" in
	2cpu)
		echo "-cpu cortex-a72 -m 1024 -smp 2" \
			"-object memory-backend-ram,id=m0,size=512M" \
			"-numa node,nodeid=0,cpus=0,memdev=m0" \
			"-object memory-backend-ram,id=m1,size=512M" \
			"-numa node,nodeid=1,cpus=1,memdev=m1" \
			"-numa dist,src=0,dst=1,val=20"
		;;
	4cpu)
		echo "-cpu cortex-a76 -m 1024 -smp 4" \
			"-object memory-backend-ram,id=m0,size=512M" \
			"-numa node,nodeid=0,cpus=0-1,memdev=m0" \
			"-object memory-backend-ram,id=m1,size=512M" \
			"-numa node,nodeid=1,cpus=2-3,memdev=m1" \
			"-numa dist,src=0,dst=1,val=20"
		;;
	16k)
		echo "-cpu cortex-a76 -m 1024 -smp 2" \
			"-object memory-backend-ram,id=m0,size=512M" \
			"-numa node,nodeid=0,cpus=0,memdev=m0" \
			"-object memory-backend-ram,id=m1,size=512M" \
			"-numa node,nodeid=1,cpus=1,memdev=m1" \
			"-numa dist,src=0,dst=1,val=20"
		;;
	*)
		return 1
		;;
	esac
}

# The build's page (make PAGE_SHIFT=), as its config header says
page_shift=$(sed -n 's/^#define CONFIG_SEGPOOL_PAGE_SHIFT //p' \
	     "$objtree/include/generated/segpool_config.h" 2>/dev/null)
page_shift=${page_shift:-12}

total_pass=0
total_fail=0
rc_all=0
IFS=, read -r -a config_list <<< "$configs"
for cfg in "${config_list[@]}"; do
	if ! args=$(qemu_args "$cfg"); then
		echo "$prog: unknown configuration '$cfg' (2cpu, 4cpu," \
			"16k)" >&2
		exit 2
	fi
	programs=("${all_programs[@]}")
	if [[ -z "$only" && $cfg == 4cpu ]] && ! pick "$percpu_set"; then
		echo "$prog: the build has none of the 4cpu programs" >&2
		exit 2
	fi
	boot_kernel=$kernel
	probe_only=0
	if [[ $cfg == 16k ]]; then
		boot_kernel=$kernel16k
		if [[ $page_shift -lt 14 ]]; then
			probe_only=1
			programs=("${programs[0]}")
		elif [[ -z "$only" ]]; then
			# the unit tier
			unit=
			for p in "${all_programs[@]}"; do
				[[ -x $objtree/selftests/unit/$(prog_bin "$p") ]] &&
					unit+=,${p%%|*}
			done
			pick "$unit"
		fi
	fi
	sentinel=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
	initrd=$work/initrd-$cfg.gz
	log=$work/serial-$cfg.log
	build_initramfs "$sentinel" "$initrd"
	echo "# arm64-rig: $cfg: booting $(basename "$boot_kernel")" \
		"(qemu TCG, $args)" | sed 's/ -object.*)/)/'
	start=$SECONDS
	# shellcheck disable=SC2086
	timeout --kill-after=10 "$limit" "$qemu" -accel tcg -machine virt \
		$args -nographic -nic none -no-reboot \
		-kernel "$boot_kernel" -initrd "$initrd" \
		-append "console=ttyAMA0 quiet panic=-1 loglevel=3" \
		< /dev/null > "$log" 2>&1 &
	guest=$!
	watch_guest "$cfg" "$guest" "$log" "RIG-$sentinel" "$start"
	wait "$guest" || true
	# CRLF and terminal escapes off, so the sentinel lines match exactly
	tr -d '\r' < "$log" |
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[A-Za-z]//g' \
		> "$log.txt"
	tag="RIG-$sentinel"
	if [[ $verbose -eq 1 ]]; then
		sed 's/^/# serial: /' "$log.txt"
	else
		grep -a -E '^# ' "$log.txt" || true
	fi
	grep -a -E "^$tag (begin|node|cpu features)" "$log.txt" |
		sed "s/^$tag /# arm64-rig: $cfg: /" || true
	pass=0
	fail=0
	# 16k: the kernel's pages are 16 KiB, as the guest's smaps says
	if [[ $cfg == 16k ]]; then
		if grep -a -q -E "^$tag begin .*, page 16 kB\$" "$log.txt"
		then
			echo "ok $cfg/kernel page 16 kB"
			pass=$((pass + 1))
		else
			echo "not ok $cfg/kernel page (not 16 kB)"
			fail=$((fail + 1))
		fi
	fi
	# a build of smaller pages: start-up refuses, and says why
	if [[ $probe_only -eq 1 ]]; then
		refused=$(grep -a -F "$tag refused " "$log.txt" |
			  head -n 1 | sed "s/^$tag refused //" || true)
		echo "# arm64-rig: $cfg: ${refused:-no refusal reported}"
		want="the kernel's pages are 16 KiB, larger than this"
		want+=" build's $((1 << (page_shift - 10))) KiB"
		if [[ $refused == *"$want"* ]]; then
			echo "ok $cfg/refused: the build's pages are smaller"
			pass=$((pass + 1))
		else
			echo "not ok $cfg/refused (no \"$want\")"
			fail=$((fail + 1))
		fi
	fi
	# the mode by default, which must be rseq, and as asked for
	for m in default "${modes[@]:1}"; do
		[[ $probe_only -eq 1 ]] && break
		want=$m
		how="SEGPOOL_PERCPU=$m"
		if [[ $m == default ]]; then
			want=rseq
			how="by default"
		fi
		mode=$(grep -a -F "$tag mode $m " "$log.txt" | head -n 1 |
		       sed "s/^$tag mode $m //" || true)
		echo "# arm64-rig: $cfg: $how:" \
			"${mode:-per-CPU mode not reported}"
		if [[ $mode == "per-CPU mode $want"* ]]; then
			echo "ok $cfg/mode $want ($how)"
			pass=$((pass + 1))
		else
			echo "not ok $cfg/mode ($how: not $want:" \
				"${mode:-none})"
			fail=$((fail + 1))
		fi
	done
	# The depot's stacks (test_depot says which): lock-free through casp
	# exactly when the CPU has LSE ("atomics" among its features)
	depot=$(grep -a -o -m 1 -E '(lock-free|spinlocked) stacks' "$log.txt" ||
		true)
	if [[ -n $depot ]]; then
		want="spinlocked stacks"
		grep -a -q -E "^$tag cpu features:.* atomics( |\$)" \
			"$log.txt" && want="lock-free stacks"
		echo "# arm64-rig: $cfg: depot: $depot"
		if [[ $depot == "$want" ]]; then
			echo "ok $cfg/depot $depot, as the CPU's LSE says"
			pass=$((pass + 1))
		else
			echo "not ok $cfg/depot $depot, but the CPU says $want"
			fail=$((fail + 1))
		fi
	fi
	# one result line a run; a program with variants must have had one
	while read -r line; do
		rest=${line#"$tag result "}
		name=${rest% * *}
		status=${rest% *}
		status=${status##* }
		if [[ $status == 0 ]]; then
			echo "ok $cfg/$name (${rest##* })"
			pass=$((pass + 1))
		elif [[ $status == 4 ]]; then
			echo "ok $cfg/$name # SKIP"
			total_skip=$((total_skip + 1))
		else
			echo "not ok $cfg/$name (exit status $status)"
			fail=$((fail + 1))
		fi
	done < <(grep -a -F "$tag result " "$log.txt" || true)
	for p in ${programs[@]+"${programs[@]}"}; do
		name=${p%%|*}
		if ! grep -a -q -E "^$tag result $name( \[[^]]*\])? " \
			"$log.txt"; then
			echo "not ok $cfg/$name (no result: the guest did not" \
				"get there)"
			fail=$((fail + 1))
		fi
	done
	if ! grep -a -q -x -F "$tag end" "$log.txt"; then
		echo "not ok $cfg/boot (no closing line after" \
			"$((SECONDS - start)) s:" \
			"panic, hang or timeout; last serial lines:)"
		tail -n 15 "$log.txt" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
	echo "arm64-rig: $cfg: $pass passed, $fail failed" \
		"($((SECONDS - start)) s)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	[[ $fail -eq 0 ]] || rc_all=1
done
echo "# $total_skip skipped"
echo "$total_pass passed, $total_fail failed"
exit $rc_all
