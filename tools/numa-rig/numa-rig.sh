#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/numa-rig/numa-rig.sh - run the NUMA selftests on emulated
# multi-node machines: a real Linux kernel under qemu-system-x86_64 (TCG)
# with an SRAT that describes several nodes.
#
#   tools/numa-rig/numa-rig.sh [-c CONFIG[,CONFIG...]] [-p PROGRAM[,...]]
#                              [-k KERNEL] [-t SECONDS] [-l] [-v] OBJTREE
#
# OBJTREE is the build tree holding selftests/ and examples/ (what `make`
# built).  For each configuration the rig packs an initramfs (busybox-static,
# the test programs with the shared libraries ldd lists and the dynamic
# loader, an /init script), boots the kernel with it under an outer
# `timeout`, and reads the results back from the serial console: the guest
# prints one line per program, tagged with a random sentinel made for this
# boot, so a stale or garbled line can never count.  A boot that ends
# without its closing sentinel line (panic, hang, timeout) fails.  While a
# guest runs, the rig follows its console: "booted after N s", "[k/N] name"
# as each program starts, and a line every 30 s without news.
#
# Configurations (2 vCPUs each at most: the host has 2 cores):
#   2nodes   nodes 0 and 1, one CPU and 512 MiB each, distance 20
#   4nodes   nodes 0..3 with 256 MiB each; CPU 0 on node 0, CPU 1 on node 1,
#            nodes 2 and 3 memory-only
#   sparse   memory on nodes 0 and 2 only (segpool's node ids are sparse);
#            node 1 has CPU 1 and no memory, node 2 has memory and no CPU;
#            node 1 is nearer node 2 (15) than node 0 (20), so CPU 1's
#            allocations go to node 2
# Default: all three.
#
# Options:
#   -c LIST   configurations to run (comma separated)
#   -p LIST   only these programs (comma separated names: test_pages,...)
#   -k FILE   kernel image (default: newest /boot/vmlinuz-*; or
#             $SEGPOOL_RIG_KERNEL)
#   -t SECS   time limit of one boot, outer timeout (default 300)
#   -l        keep the serial logs and initramfs in $TMPDIR (path printed)
#   -v        print the whole serial log, not only the test output
#
# Output: the programs' output prefixed by "# ", one "ok"/"not ok" line per
# program and configuration, "numa-rig: CONFIG: N passed, N failed" per
# configuration and a last line "N passed, N failed" over all of them.
# Exit status: 0 when everything passed, 1 when something failed, 2 for a
# usage error, 4 (kselftest's "skip") when qemu or a kernel is missing.

set -euo pipefail

prog=${0##*/}
configs=2nodes,4nodes,sparse
only=
kernel=${SEGPOOL_RIG_KERNEL:-}
limit=300
prog_limit=240		# seconds one program may run in the guest
keep=0
verbose=0

usage() {
	sed -n '4,46p' "$0" | sed 's/^# \{0,1\}//'
}

while getopts "c:p:k:t:lvh" opt; do
	case "$opt" in
	c) configs=$OPTARG ;;
	p) only=$OPTARG ;;
	k) kernel=$OPTARG ;;
	t) limit=$OPTARG ;;
	l) keep=1 ;;
	v) verbose=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [[ $# -ne 1 ]]; then
	usage >&2
	exit 2
fi
objtree=$(cd "$1" && pwd)

# The programs run in the guest: name, command line (relative to /rig).
# test_numa runs once per variant (this machine's topology, lock mode,
# emulated nodes, 16 MiB regions), test_percpu once per mode; the others are the selftests whose areas
# change with several nodes (test_percpu at a fifth of its load: TCG is
# slow); logpipe is the demo with its per-node figures.
programs=(
	"test_numa|./test_numa"
	"test_kmalloc|./test_kmalloc"
	"test_cache_api|./test_cache_api"
	"test_region|./test_region"
	"test_pages|./test_pages"
	"test_percpu|env SEGPOOL_TEST_SCALE=0.2 ./test_percpu"
	"logpipe|./logpipe -n 200000 -t 2"
)

# --- what the host needs ------------------------------------------------------
qemu=$(command -v qemu-system-x86_64 || true)
busybox=$(command -v busybox || true)
for b in /bin/busybox /usr/bin/busybox; do
	[[ -z "$busybox" && -x $b ]] && busybox=$b
done
if [[ -z "$kernel" ]]; then
	kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1 || true)
fi
missing=()
[[ -n "$qemu" ]] || missing+=(qemu-system-x86_64)
# busybox-static: ldd finds no dynamic section in it
bb_ldd=$( [[ -n "$busybox" ]] && LC_ALL=C ldd "$busybox" 2>&1 || true)
[[ "$bb_ldd" == *"not a dynamic"* ]] || missing+=("busybox (static)")
[[ -n "$kernel" && -r "$kernel" ]] || missing+=("a kernel image in /boot")
command -v cpio >/dev/null 2>&1 || missing+=(cpio)
if [[ ${#missing[@]} -ne 0 ]]; then
	echo "$prog: missing: ${missing[*]} (scripts/install-deps.sh numa)" >&2
	exit 4
fi
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

# bin_path BIN: where the build tree has program BIN
bin_dirs=(selftests/unit selftests/api selftests/stress examples)
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

if [[ -n "$only" ]]; then
	picked=()
	for p in "${programs[@]}"; do
		[[ ",$only," == *",${p%%|*},"* ]] && picked+=("$p")
	done
	if [[ ${#picked[@]} -eq 0 ]]; then
		echo "$prog: -p $only names none of the rig's programs" >&2
		exit 2
	fi
	programs=("${picked[@]}")
fi

for p in "${programs[@]}"; do
	bin=$(prog_bin "$p")
	bin_path "$bin" >/dev/null && continue
	echo "$prog: $objtree has no $bin: build it first (make all tests examples)" >&2
	exit 2
done

# A selftest with variants (selftests/lib/harness.h) runs once per variant,
# as scripts/run-selftests.sh runs it: "NAME [VARIANT]", its settings
# through env(1) before the command.
expanded=()
for p in "${programs[@]}"; do
	path=$(bin_path "$(prog_bin "$p")")
	if ! grep -q -a -F SEGPOOL_SELFTEST_HAS_VARIANTS "$path"; then
		expanded+=("$p")
		continue
	fi
	if ! list=$("$path" --list-variants) || [[ -z "$list" ]]; then
		echo "$prog: $path --list-variants failed" >&2
		exit 2
	fi
	while read -r vname vset; do
		[[ -n "$vname" ]] || continue
		expanded+=("${p%%|*} [$vname]|env ${vset:+$vset }SEGPOOL_TEST_VARIANT=$vname ${p#*|}")
	done <<<"$list"
done
programs=("${expanded[@]}")

work=$(mktemp -d "${TMPDIR:-/tmp}/numa-rig.XXXXXX")
cleanup() {
	if [[ $keep -eq 1 ]]; then
		echo "# numa-rig: logs and initramfs kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# --- the initramfs ------------------------------------------------------------
# copy_with_libs FILE: FILE into /rig, its libraries and loader at their paths.
root=$work/root
copy_lib() {
	local lib=$1

	[[ -e $root$lib ]] && return 0
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
}

copy_with_libs() {
	local f=$1 lib

	cp -L "$f" "$root/rig/"
	while read -r lib; do
		copy_lib "$lib"
	done < <(ldd "$f" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
}

# watch_guest CFG PID LOG TAG START - the guest's progress while it runs:
# "booted" once its first line is out, "[k/N] name" as each program
# starts, and every 30 s without news how long it has been, so a slow
# boot under TCG does not look like a hang.
watch_guest() {
	local cfg=$1 pid=$2 log=$3 tag=$4 start=$5
	local booted=0 seen=0 quiet_since=$SECONDS n name

	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [[ $booted -eq 0 ]] && grep -a -q -F "$tag begin" "$log"; then
			booted=1
			quiet_since=$SECONDS
			echo "# numa-rig: $cfg: booted after $((SECONDS - start)) s"
		fi
		n=$(grep -a -c -F "$tag start " "$log" || true)
		while [[ $seen -lt $n ]]; do
			seen=$((seen + 1))
			name=$(grep -a -F "$tag start " "$log" | sed -n "${seen}p" |
			       tr -d '\r' | sed "s/^.*$tag start //")
			echo "# numa-rig: $cfg: [$seen/${#programs[@]}] $name" \
				"($((SECONDS - start)) s)"
			quiet_since=$SECONDS
		done
		if [[ $((SECONDS - quiet_since)) -ge 30 ]]; then
			echo "# numa-rig: $cfg: $([[ $booted -eq 1 ]] && echo running ||
				echo booting), $((SECONDS - start)) s of at most $limit s"
			quiet_since=$SECONDS
		fi
	done
}

build_initramfs() {
	local sentinel=$1 out=$2 p name cmd bin

	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,rig,usr/bin,usr/sbin}
	cp "$busybox" "$root/bin/busybox"
	for p in "${programs[@]}"; do
		copy_with_libs "$(bin_path "$(prog_bin "$p")")"
	done
	# /init: each program's status goes through a file, since a
	# pipeline's status is its last command's.
	{
		echo '#!/bin/busybox sh'
		echo '/bin/busybox --install -s /bin'
		echo 'export PATH=/bin:/sbin:/usr/bin:/usr/sbin'
		echo 'mount -t proc proc /proc'
		echo 'mount -t sysfs sysfs /sys'
		echo 'mount -t devtmpfs devtmpfs /dev 2>/dev/null'
		echo 'mount -t tmpfs tmpfs /tmp'
		echo 'exec </dev/console >/dev/console 2>&1'
		echo "S=RIG-$sentinel"
		echo 'echo "$S begin kernel $(uname -r), nodes $(cat /sys/devices/system/node/online), cpus $(cat /sys/devices/system/cpu/online)"'
		echo 'for n in /sys/devices/system/node/node*; do'
		echo '	echo "$S node ${n##*node}: cpus [$(cat $n/cpulist)], $(grep MemTotal $n/meminfo | tr -s " " | cut -d" " -f4-5)"'
		echo 'done'
		echo 'cd /rig'
		echo 'export TMPDIR=/tmp'
		# Output prefixed "# ": no program can print a result line.
		# busybox timeout: a hung program fails alone (status 143).
		for p in "${programs[@]}"; do
			name=${p%%|*}
			cmd=${p#*|}
			echo "echo \"\$S start $name\""
			echo "rm -f /tmp/rc; t0=\$(cut -d. -f1 /proc/uptime)"
			echo "{ timeout $prog_limit $cmd; echo \$? > /tmp/rc; } 2>&1 | sed 's/^/# /'"
			echo "t1=\$(cut -d. -f1 /proc/uptime)"
			echo "echo \"\$S result $name \$(cat /tmp/rc) \$((t1 - t0))s\""
		done
		echo 'echo "$S end"'
		echo 'poweroff -f'
	} > "$root/init"
	chmod 755 "$root/init"
	if [[ $(id -u) -eq 0 ]]; then
		mknod -m 600 "$root/dev/console" c 5 1
		mknod -m 666 "$root/dev/null" c 1 3
	fi
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) > "$out"
}

# --- the machines ---------------------------------------------------------------
qemu_numa_args() {
	case "$1" in
	2nodes)
		echo "-m 1024 -smp 2,sockets=2,cores=1,threads=1" \
			"-object memory-backend-ram,id=m0,size=512M" \
			"-numa node,nodeid=0,cpus=0,memdev=m0" \
			"-object memory-backend-ram,id=m1,size=512M" \
			"-numa node,nodeid=1,cpus=1,memdev=m1" \
			"-numa dist,src=0,dst=1,val=20"
		;;
	4nodes)
		echo "-m 1024 -smp 2,sockets=2,cores=1,threads=1" \
			"-object memory-backend-ram,id=m0,size=256M" \
			"-numa node,nodeid=0,cpus=0,memdev=m0" \
			"-object memory-backend-ram,id=m1,size=256M" \
			"-numa node,nodeid=1,cpus=1,memdev=m1" \
			"-object memory-backend-ram,id=m2,size=256M" \
			"-numa node,nodeid=2,memdev=m2" \
			"-object memory-backend-ram,id=m3,size=256M" \
			"-numa node,nodeid=3,memdev=m3"
		;;
	sparse)
		echo "-m 1024 -smp 2,sockets=2,cores=1,threads=1" \
			"-object memory-backend-ram,id=m0,size=512M" \
			"-numa node,nodeid=0,cpus=0,memdev=m0" \
			"-numa node,nodeid=1,cpus=1" \
			"-object memory-backend-ram,id=m2,size=512M" \
			"-numa node,nodeid=2,memdev=m2" \
			"-numa dist,src=0,dst=1,val=20" \
			"-numa dist,src=0,dst=2,val=25" \
			"-numa dist,src=1,dst=2,val=15"
		;;
	*)
		return 1
		;;
	esac
}

total_pass=0
total_fail=0
rc_all=0
IFS=, read -r -a config_list <<< "$configs"
for cfg in "${config_list[@]}"; do
	if ! numa_args=$(qemu_numa_args "$cfg"); then
		echo "$prog: unknown configuration '$cfg' (2nodes, 4nodes, sparse)" >&2
		exit 2
	fi
	sentinel=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
	initrd=$work/initrd-$cfg.gz
	log=$work/serial-$cfg.log
	build_initramfs "$sentinel" "$initrd"
	echo "# numa-rig: $cfg: booting $(basename "$kernel") (qemu TCG, 2 vCPUs)"
	start=$SECONDS
	# -cpu qemu64,-cx16: newer cloud kernels panic early on the default model
	# shellcheck disable=SC2086
	timeout --kill-after=10 "$limit" "$qemu" -accel tcg -machine pc \
		-cpu qemu64,-cx16 $numa_args \
		-nographic -nic none -no-reboot -kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet panic=-1 loglevel=3" \
		< /dev/null > "$log" 2>&1 &
	guest=$!
	watch_guest "$cfg" "$guest" "$log" "RIG-$sentinel" "$start"
	wait "$guest" || true
	# CRLF and terminal escapes off, so the sentinel lines match exactly
	tr -d '\r' < "$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[A-Za-z]//g' > "$log.txt"
	tag="RIG-$sentinel"
	if [[ $verbose -eq 1 ]]; then
		sed 's/^/# serial: /' "$log.txt"
	else
		grep -a -E '^# ' "$log.txt" || true
		grep -a -F "$tag begin" "$log.txt" | sed "s/^$tag /# numa-rig: $cfg: /" || true
		grep -a -F "$tag node" "$log.txt" | sed "s/^$tag /# numa-rig: $cfg: /" || true
	fi
	pass=0
	fail=0
	for p in "${programs[@]}"; do
		name=${p%%|*}
		line=$(grep -a -F "$tag result $name " "$log.txt" | tail -n 1 || true)
		status=${line#"$tag result $name "}
		status=${status%% *}
		if [[ -n "$line" && "$status" == 0 ]]; then
			echo "ok $cfg/$name (${line##* })"
			pass=$((pass + 1))
		elif [[ -n "$line" && "$status" == 4 ]]; then
			echo "ok $cfg/$name # SKIP"
			pass=$((pass + 1))
		elif [[ -n "$line" ]]; then
			echo "not ok $cfg/$name (exit status $status)"
			fail=$((fail + 1))
		else
			echo "not ok $cfg/$name (no result: the guest did not get there)"
			fail=$((fail + 1))
		fi
	done
	if ! grep -a -q -x -F "$tag end" "$log.txt"; then
		echo "not ok $cfg/boot (no closing line after $((SECONDS - start)) s: panic," \
			"hang or timeout; last serial lines:)"
		tail -n 15 "$log.txt" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
	echo "numa-rig: $cfg: $pass passed, $fail failed ($((SECONDS - start)) s)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	[[ $fail -eq 0 ]] || rc_all=1
done
echo "$total_pass passed, $total_fail failed"
exit $rc_all
