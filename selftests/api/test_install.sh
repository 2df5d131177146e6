#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# selftests/api/test_install.sh - segpool as its users get it: programs built
# against the `make install DESTDIR=...` image that `make check` makes in
# $SEGPOOL_INSTALL_ROOT, and run.
#
#  1. pkg-config, from the image (--define-prefix: segpool.pc is
#     relocatable): the README's example and selftests/api/install_consumer.c,
#     which calls the inline RCU wrappers (so segpool.pc's Requires must
#     bring liburcu-memb), linked with the shared library.
#  2. pkg-config --static and gcc -static: a fully static program, with
#     NUMA support on; it must report the NUMA state the dynamic one
#     reports, also with SEGPOOL_NUMA_FAKE_NODES=2.
#  3. CMake: find_package(segpool 0.1) with the targets segpool::segpool and
#     segpool::segpool_static; find_package(segpool 1.0) must not be
#     satisfied (segpoolConfigVersion.cmake).
#  4. The installed man pages are where man finds them.
#  5. The .pc files of a Debian-style layout (PREFIX=/usr, a multiarch
#     LIBDIR), made by the Makefile in a folder of their own and put in an
#     image of that shape: pkg-config, with --define-prefix and without,
#     must name the folders that hold the headers and the library
#     (segpool-kernel.pc too).
#
# Skipped (status 4) in a sanitized build (the consumers would need the
# sanitizer runtime; the plain build runs this) and when the image is
# missing.  A missing cmake skips step 3 only, with a note.

set -euo pipefail

srctree=${SEGPOOL_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
root=${SEGPOOL_INSTALL_ROOT:-}
cc=${SEGPOOL_CC:-cc}

if [[ -n "${SEGPOOL_SANITIZE:-}" ]]; then
	echo "sanitized build (SANITIZE=$SEGPOOL_SANITIZE): the plain build checks the install"
	exit 4
fi
if [[ -z "$root" || ! -d "$root" ]]; then
	echo "no install image (SEGPOOL_INSTALL_ROOT; make check makes one)"
	exit 4
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/segpool-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0

# where the image put things, whatever PREFIX and LIBDIR were
pc=$(find "$root" -name segpool.pc -print -quit)
cfg=$(find "$root" -name segpoolConfig.cmake -print -quit)
if [[ -z "$pc" || -z "$cfg" ]]; then
	echo "FAIL: the image has no segpool.pc or segpoolConfig.cmake"
	exit 1
fi
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
prefix=$(cd "$(dirname "$cfg")" && cd ../../.. && pwd)
[[ -e $prefix/include/segpool/segpool.h ]] || prefix=$(cd "$prefix/.." && pwd)
echo "image: $root; pkg-config dir ${pcdir#"$root"}"

export PKG_CONFIG_PATH=$pcdir
pkgc() { pkg-config --define-prefix "$@" segpool; }

# the README's example, as the README shows it
awk '/^## Use it/ { on = 1 } on && /^```c$/ { grab = 1; next }
     grab && /^```$/ { exit } grab' "$srctree/README.md" >"$tmp/readme.c"
if [[ ! -s "$tmp/readme.c" ]]; then
	echo "FAIL: no C example under '## Use it' in README.md"
	exit 1
fi
cp "$srctree/selftests/api/install_consumer.c" "$tmp/consumer.c"

# run NAME PROGRAM [ENV...] - run it; its output in $tmp/NAME.out
run() {
	local name=$1 prog=$2 st=0
	shift 2
	env "$@" LD_LIBRARY_PATH="$libdir" "$prog" >"$tmp/$name.out" 2>&1 || st=$?
	if [[ $st -ne 0 ]]; then
		echo "FAIL: $name exited with status $st ($(head -c 300 "$tmp/$name.out"))"
		fail=1
		return 1
	fi
	echo "$name: $(head -n 1 "$tmp/$name.out")"
}

# build NAME CC-ARGS... - compile and link, reporting a failure
build() {
	local name=$1
	shift
	if ! "$@" >"$tmp/$name.log" 2>&1; then
		echo "FAIL: building $name: $*"
		sed 's/^/    /' "$tmp/$name.log"
		fail=1
		return 1
	fi
}

# 1. pkg-config, shared library
cflags=$(pkgc --cflags)
libs=$(pkgc --libs)
case "$cflags $libs" in
*"$root"*) ;;
*) echo "FAIL: pkg-config --define-prefix did not move the paths into the image: $cflags $libs"; fail=1 ;;
esac
# shellcheck disable=SC2086 # flags are words
build readme "$cc" -o "$tmp/readme" "$tmp/readme.c" $cflags $libs &&
	run readme "$tmp/readme"
# shellcheck disable=SC2086
build consumer "$cc" -o "$tmp/consumer" "$tmp/consumer.c" $cflags $libs &&
	run consumer "$tmp/consumer" &&
	run consumer-fake "$tmp/consumer" SEGPOOL_NUMA_FAKE_NODES=2
# what run() ran: the image's library, not a system copy
if [[ -x $tmp/consumer ]] &&
   ! LD_LIBRARY_PATH=$libdir ldd "$tmp/consumer" | grep -F "$libdir/libsegpool.so" >/dev/null; then
	echo "FAIL: the consumer does not load the image's libsegpool.so"
	fail=1
fi

# 2. pkg-config --static, fully static
slibs=$(pkgc --static --libs)
# the library asks the kernel itself: no libnuma, even in a static link
case " $slibs " in
*" -lnuma "*) echo "FAIL: pkg-config --static --libs segpool names -lnuma: $slibs"; fail=1 ;;
esac
# shellcheck disable=SC2086
if build static "$cc" -static -o "$tmp/static" "$tmp/consumer.c" $cflags \
	-L"$libdir" -Wl,-Bstatic $slibs; then
	if readelf -l "$tmp/static" | grep INTERP >/dev/null; then
		echo "FAIL: the static program is dynamically linked"
		fail=1
	fi
	run static "$tmp/static" &&
		run static-fake "$tmp/static" SEGPOOL_NUMA_FAKE_NODES=2
	for v in "" -fake; do
		[[ -f $tmp/static$v.out && -f $tmp/consumer$v.out ]] || continue
		if ! cmp -s "$tmp/static$v.out" "$tmp/consumer$v.out"; then
			echo "FAIL: static and dynamic programs differ: '$(cat "$tmp/static$v.out")' vs '$(cat "$tmp/consumer$v.out")'"
			fail=1
		fi
	done
	if [[ -f $tmp/static-fake.out ]] && ! grep -q "nr_nodes=2$" "$tmp/static-fake.out"; then
		echo "FAIL: the static program did not see SEGPOOL_NUMA_FAKE_NODES=2"
		fail=1
	fi
fi

# 3. CMake
if command -v cmake >/dev/null 2>&1; then
	mkdir -p "$tmp/cm"
	cat >"$tmp/cm/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(segpool_consumer C)
find_package(segpool 1.0 QUIET)
if(segpool_FOUND)
	message(FATAL_ERROR "segpool ${segpool_VERSION} claims to satisfy 1.0")
endif()
find_package(segpool 0.1 REQUIRED)
add_executable(consumer_shared consumer.c)
target_link_libraries(consumer_shared PRIVATE segpool::segpool)
add_executable(consumer_static consumer.c)
target_link_libraries(consumer_static PRIVATE segpool::segpool_static)
CMAKE
	cp "$tmp/consumer.c" "$tmp/cm/"
	if build cmake-configure cmake -S "$tmp/cm" -B "$tmp/cm/build" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" &&
	   build cmake-build cmake --build "$tmp/cm/build"; then
		run cmake-shared "$tmp/cm/build/consumer_shared"
		run cmake-static "$tmp/cm/build/consumer_static"
		if ldd "$tmp/cm/build/consumer_static" | grep libsegpool >/dev/null; then
			echo "FAIL: segpool::segpool_static linked the shared library"
			fail=1
		fi
	fi
else
	echo "cmake not installed: the CMake consumer is not checked"
fi

# 4. man finds the installed pages
mandir=$(find "$root" -type d -name man3 -print -quit)
if [[ -z "$mandir" ]]; then
	echo "FAIL: no man3 directory in the image"
	fail=1
elif command -v man >/dev/null 2>&1; then
	for page in segpool_cache_create segpool-top segpool; do
		if ! MANPATH=$(dirname "$mandir") man -w "$page" >/dev/null 2>&1; then
			echo "FAIL: man does not find $page in the image"
			fail=1
		fi
	done
fi

# 5. a multiarch layout: -I and -L must name folders that hold the files
triplet=x86_64-linux-gnu
ma=$tmp/ma/usr
if ! make -s --no-print-directory -f "$srctree/Makefile" O="$tmp/pcgen" \
	PREFIX=/usr LIBDIR=/usr/lib/$triplet "$tmp/pcgen/segpool.pc" \
	"$tmp/pcgen/segpool-kernel.pc" >"$tmp/pcgen.log" 2>&1; then
	echo "FAIL: making the multiarch .pc files: $(head -c 300 "$tmp/pcgen.log")"
	fail=1
else
	mkdir -p "$ma/lib/$triplet/pkgconfig"
	cp "$tmp/pcgen/segpool.pc" "$tmp/pcgen/segpool-kernel.pc" \
		"$ma/lib/$triplet/pkgconfig/"
	ln -s "$prefix/include" "$ma/include"
	ln -s "$libdir/libsegpool.so" "$ma/lib/$triplet/libsegpool.so"
	for mode in --define-prefix --dont-define-prefix; do
		flags=$(PKG_CONFIG_PATH=$ma/lib/$triplet/pkgconfig pkg-config \
			$mode --cflags --libs segpool-kernel)
		inc=0 kinc=0 lib=0
		for w in $flags; do
			case $w in
			-I"$tmp"/*)
				[[ -e ${w#-I}/segpool/segpool.h ]] && inc=1
				[[ -e ${w#-I}/linux/slab.h ]] && kinc=1 ;;
			-L"$tmp"/*)
				[[ -e ${w#-L}/libsegpool.so ]] && lib=1 ;;
			esac
		done
		if [[ $inc$kinc$lib != 111 ]]; then
			echo "FAIL: pkg-config $mode segpool-kernel in a multiarch image: no folder with segpool.h ($inc), linux/slab.h ($kinc) or libsegpool.so ($lib) in: $flags"
			fail=1
		fi
	done
	[[ $fail -ne 0 ]] || echo "multiarch .pc: segpool and segpool-kernel found"
fi

exit "$fail"
