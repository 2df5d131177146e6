# SPDX-License-Identifier: MIT
#
# segpool top-level Makefile, in the Kbuild manner.
#
# Each source folder lists its objects in a Kbuild fragment (obj-y += x.o);
# this file gathers them into libsegpool.a and libsegpool.so.
#
#   make                 libraries (libsegpool.a, libsegpool.so and the
#                        malloc replacement libsegpool-malloc.so) and
#                        segpool.pc
#   make check           the unit and API selftests, the script tests, the
#                        hit-path and documentation checks (60 s a program),
#                        then "N passed, N failed"; installs nothing
#                        (check-deps says what is missing, its tests skip)
#   make stress          the stress selftests (600 s a program)
#   make deps            install the missing Debian packages
#                        (scripts/install-deps.sh): `make deps check`
#   make check-hotpath   the hit paths' structure and instruction budgets
#   make check-layout    includes point down the folders; OS calls only in os/
#   make checkstyle      HACKING.md's habits a script checks: 80 columns,
#                        every file path named in a comment exists
#                        (tools/check/style.sh); part of check
#   make check-numa      the NUMA selftests on emulated multi-node machines
#                        (qemu; RIG_ARGS=...; see tools/numa-rig/)
#   make check-arm64     the arm64 cross build's unit and API selftests on
#                        emulated arm64 machines with 2 nodes, in rseq mode,
#                        the ownership stress in every per-CPU mode
#                        (qemu; ARM64_RIG_ARGS=...; see tools/arm64-rig/)
#   make check-arm64-16k a build of 64 KiB pages (PAGE_SHIFT=16), its unit
#                        tier on an arm64 kernel with 16 KiB pages
#   make check-preload   real programs (python3, gcc, git, sort, perl,
#                        sqlite3, a C++ program: tools/bench/programs.sh;
#                        a forking one) under LD_PRELOAD of
#                        libsegpool-malloc.so against their glibc run
#   make demo            build and run the example service (examples/logpipe)
#   make bench           benchmark against glibc, jemalloc, tcmalloc, mimalloc
#                        (BENCH_ARGS=...; results in bench-results/, or
#                        BENCH_OUT=dir), then real programs and logpipe under
#                        each malloc, then bench-pmr; installs the peers,
#                        gnuplot, strace, sqlite3, git first
#                        (scripts/install-deps.sh bench; NODEPS=1 not);
#                        BENCH_ARGS=--smoke: all of it as a seconds-long
#                        smoke run, correctness only
#   make bench-doc       the same, then refresh Documentation/reference/bench-results.md
#   make man             the man pages, in $(objtree)/man (scripts/gen-man.sh)
#   make install         PREFIX=/usr/local LIBDIR=$(PREFIX)/lib DESTDIR=
#                        (LIBDIR=$(PREFIX)/lib/x86_64-linux-gnu: multiarch);
#                        also BINDIR, INCDIR, MANDIR, DOCDIR, PCDIR, CMAKEDIR
#   make bench-pmr       the std::pmr resources on the log pattern
#                        (BENCH_PMR_ARGS=...; also the last part of bench)
#   make uninstall, clean
#
# More targets, each a part of one above or a step of it:
#   make all             the same as make
#   make docs            regenerate the generated documentation (api.md,
#                        the environment and counter tables)
#   make check-docs      fails when they are stale, when a page or a link
#                        is missing, and when this text lacks a target
#                        (scripts/check-help.sh); part of check
#   make check-deps      say which Debian packages check needs and lacks
#   make tests, tests-check, tests-stress   build the selftests (both
#                        tiers, the unit and API tiers, the stress tier)
#   make examples        build examples/ (make demo runs one)
#   make tools, segpool-top, bench-tools   build every tool, the viewer,
#                        the benchmark
#   make bench-deps, numa-deps, arm64-deps   install what bench,
#                        check-numa and check-arm64 need
#                        (the peer allocators and gnuplot; qemu; the cross
#                        compilers and arm64 libraries)
#   make bench-smoke, bench-pmr-smoke   the benchmarks' smoke runs (part
#                        of check)
#   make bench-stats-cost  segpool against the same code without fast-path
#                        hit counters, side by side
#   make install-kernel, segpool-top-install   parts of install
#   make uninstall-kernel, segpool-top-uninstall   parts of uninstall
#   make tools-clean, segpool-top-clean, bench-pmr-clean, kernel-clean
#                        parts of clean
#   make help            this text
#
# Knobs:
#   V=1                  print whole commands
#   O=dir                build out of tree (the source tree stays clean)
#   W=1|2|3, W=e         extra warning tiers; e turns warnings into errors
#                        (combine: W=1e)
#   SANITIZE=address,undefined | thread    sanitized build (use with O=)
#   CC=clang             any C11 compiler with GNU extensions
#   CROSS_COMPILE=aarch64-linux-gnu-   a cross build for arm64 (use with
#                        O=, e.g. O=build-arm64; scripts/install-deps.sh
#                        arm64 brings the compiler and libraries); HOSTCC
#                        (default cc) builds the documentation generators
#   CXX=clang++          the C++17 compiler of the C++ parts (default: g++,
#                        clang++ with CC=clang); -std=c++17
#   NODEPS=1             do not run scripts/install-deps.sh before demo
#                        (or make deps); check never runs it
#   CHECK_TIMEOUT=60, STRESS_TIMEOUT=600   seconds each program of check,
#                        stress may run (SEGPOOL_TEST_TIMEOUT overrides both)
#   NO_VALGRIND=1        no valgrind annotations even with <valgrind/memcheck.h>
#   NO_HIT_STATS=1       no fast-path hit counters (a benchmark variant)
#   PAGE_SHIFT=12|14|16  segpool's page: 4 KiB (default), 16 or 64 KiB; a
#                        build runs on kernels whose pages are no larger
#                        (arm64's 16 and 64 KiB page kernels; the inline
#                        hit path of x86-64 takes 12 only)
#   DEBUG=1              the debug build: sp_assert(), the lock-order
#                        checker and the rseq abort injection points
#                        (internal/debug.h); use with O=, e.g.
#                        make DEBUG=1 O=build-debug check
#                        (these and the sanitizers are the build switches of
#                        the generated config header: see "config header")
#   CPPFLAGS, CFLAGS, LDFLAGS   added after the project's own flags (so
#                        dpkg-buildflags' hardening and -O2 apply)

# The version is stated once, in include/segpool/segpool.h; the soname
# follows the major number (Documentation/reference/versioning.md).
version-h     := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))include/segpool/segpool.h
version-of     = $(shell sed -n 's/^\#define SEGPOOL_VERSION_$(1)[^0-9]*\([0-9]*\).*/\1/p' $(version-h))
VERSION_MAJOR := $(call version-of,MAJOR)
VERSION_MINOR := $(call version-of,MINOR)
VERSION_PATCH := $(call version-of,PATCH)
VERSION       := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
ifneq ($(shell sed -n 's/^\#define SEGPOOL_VERSION_STRING[^"]*"\(.*\)".*/\1/p' $(version-h)),$(VERSION))
$(error include/segpool/segpool.h: SEGPOOL_VERSION_STRING is not MAJOR.MINOR.PATCH)
endif

PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
BINDIR   ?= $(PREFIX)/bin
PCDIR    ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/segpool
MANDIR   ?= $(PREFIX)/share/man
DOCDIR   ?= $(PREFIX)/share/doc/segpool
DESTDIR  ?=

# --- source and object trees ----------------------------------------------
srctree := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
ifneq ($(O),)
objtree := $(abspath $(O))
else
objtree := $(srctree)
endif

# --- quiet / verbose --------------------------------------------------------
ifeq ($(V),1)
Q :=
quiet := @true
else
Q := @
quiet := @printf '  %-7s %s\n'
endif
# The leading "+" is dropped by make -n; keep $(Q) before real commands only.

# --- compiler and flags -----------------------------------------------------
# CROSS_COMPILE=aarch64-linux-gnu- builds for another machine with the
# prefixed tools (gcc, g++, ar, objdump, nm), the libraries found through
# dpkg multiarch (scripts/install-deps.sh arm64); what runs on the build
# machine while building (the documentation generators) is built by HOSTCC.
CROSS_COMPILE ?=
CC      ?= cc
AR      ?= ar
ifeq ($(origin CC),default)
CC := $(if $(CROSS_COMPILE),$(CROSS_COMPILE)gcc,cc)
endif
ifeq ($(origin AR),default)
AR := $(CROSS_COMPILE)ar
endif
HOSTCC  ?= $(if $(CROSS_COMPILE),cc,$(CC))
OBJDUMP ?= $(CROSS_COMPILE)objdump
NM      ?= $(CROSS_COMPILE)nm

# C++: header-only parts of the API (include/segpool/pmr.hpp), their tests,
# examples and benchmarks.  CXX follows CC's compiler family unless set.
ifeq ($(origin CXX),default)
ifneq ($(findstring clang,$(CC)),)
CXX := clang++
else
CXX := $(CROSS_COMPILE)g++
endif
endif
CXXSTD := -std=c++17
# clang++ builds the C++ selftest a second time (test_pmr_clang) when CXX
# is not clang++ already and the build is not sanitized (sanitizer runtimes
# of two compilers do not mix in one program).
CLANGXX ?= clang++

WARN := -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow \
	-Wundef -Wformat=2 -Wvla -Wpointer-arith -Wimplicit-fallthrough \
	-Wold-style-definition -Wno-missing-field-initializers
WARN-1 := -Wmissing-declarations -Wcast-qual -Wredundant-decls \
	-Wnested-externs -Wwrite-strings
WARN-2 := -Wcast-align -Wswitch-enum -Wsign-compare -Wdisabled-optimization
WARN-3 := -Wconversion -Wpadded -Wpacked

ifneq ($(findstring 1,$(W)),)
WARN += $(WARN-1)
endif
ifneq ($(findstring 2,$(W)),)
WARN += $(WARN-1) $(WARN-2)
endif
ifneq ($(findstring 3,$(W)),)
WARN += $(WARN-1) $(WARN-2) $(WARN-3)
endif
ifneq ($(findstring e,$(W)),)
WARN += -Werror
endif
CXXWARN := -Wall -Wextra -Wundef -Wformat=2 -Wpointer-arith \
	-Wno-missing-field-initializers $(filter -Werror,$(WARN))

OPT      ?= -O2
CSTD     := -std=gnu11
CPPFLAGS_ALL := -D_GNU_SOURCE -I$(srctree)/include -I$(srctree) \
	-I$(objtree)/include/generated
# DWARF 4: Debian 12's valgrind (3.19) cannot read the DWARF 5 forms clang 14
# emits and gives up on the whole program; gdb reads either.
CFLAGS_ALL := $(CSTD) $(OPT) -g -gdwarf-4 -pthread -fPIC -fno-common \
	-fvisibility=hidden $(WARN)
LDLIBS_LIB := -lurcu-memb -lurcu-common -pthread

LIB_ZDEFS := -Wl,-z,defs
ifneq ($(SANITIZE),)
CFLAGS_ALL += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ifneq ($(findstring address,$(SANITIZE))$(findstring undefined,$(SANITIZE)),)
CFLAGS_ALL += -fno-sanitize-recover=all
endif
LDFLAGS_ALL += -fsanitize=$(SANITIZE)
# clang links no sanitizer runtime into a shared object: the program brings
# it, so the library cannot be checked for undefined symbols here.
LIB_ZDEFS :=
endif

CXXFLAGS_ALL := $(CXXSTD) $(OPT) -g -gdwarf-4 -pthread -fPIC $(CXXWARN) \
	$(filter -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer,$(CFLAGS_ALL)) \
	$(CPPFLAGS) $(CXXFLAGS)
CPPFLAGS_ALL += $(CPPFLAGS)
CFLAGS_ALL   += $(CFLAGS)
LDFLAGS_ALL  += $(LDFLAGS)

# --- gather the Kbuild fragments -----------------------------------------------
# The root Kbuild names the library's folders (obj-y += dir/); each folder's
# Kbuild names its objects (obj-y += x.o) and may name folders of its own
# (obj-y += sub/), read in turn.  No folder is named here: a new one is a
# line in the Kbuild above it.
obj-y :=
include $(srctree)/Kbuild
lib-dirs := $(patsubst %/,%,$(filter %/,$(obj-y)))
ifneq ($(filter-out %/,$(obj-y)),)
$(error Kbuild: the root names folders only (obj-y += dir/): $(filter-out %/,$(obj-y)))
endif

# collect-objs DIR: DIR's objects into lib-objs, then its sub-folders'
define collect-objs
obj-y :=
include $(srctree)/$(1)/Kbuild
lib-objs += $$(addprefix $$(objtree)/$(1)/,$$(filter-out %/,$$(obj-y)))
subdirs-$(1) := $$(patsubst %/,$(1)/%,$$(filter %/,$$(obj-y)))
$$(foreach d,$$(subdirs-$(1)),$$(eval $$(call collect-objs,$$(d))))
endef
lib-objs :=
$(foreach d,$(lib-dirs),$(eval $(call collect-objs,$(d))))

# malloc/: the malloc replacement, linked apart (libsegpool-malloc.so)
malloc-y :=
include $(srctree)/malloc/Kbuild
malloc-objs := $(addprefix $(objtree)/malloc/,$(malloc-y))

# selftests/: the tiers (selftests/Kbuild names the folders, each folder's
# Kbuild its programs) and the test library every program links.
test-lib-dirs :=
test-check-dirs :=
test-stress-dirs :=
include $(srctree)/selftests/Kbuild

define collect-tests
test-y :=
test-script-y :=
test-cxx-y :=
include $(srctree)/selftests/$(1)/Kbuild
tests-$(1) := $$(addprefix $$(objtree)/selftests/$(1)/,$$(test-y))
cxx-tests-$(1) := $$(addprefix $$(objtree)/selftests/$(1)/,$$(test-cxx-y))
script-tests-$(1) := $$(addprefix $$(srctree)/selftests/$(1)/,$$(test-script-y))
endef
$(foreach d,$(test-check-dirs) $(test-stress-dirs),$(eval $(call collect-tests,$(d))))

define collect-test-lib
test-lib-y :=
include $(srctree)/selftests/$(1)/Kbuild
test-harness += $$(addprefix $$(objtree)/selftests/$(1)/,$$(test-lib-y))
endef
test-harness :=
$(foreach d,$(test-lib-dirs),$(eval $(call collect-test-lib,$(d))))

# What this machine lacks for some tests (scripts/check-deps.sh --skips):
# those are not built, and the runner reports them skipped.
test-missing := $(shell $(srctree)/scripts/check-deps.sh --skips CXX='$(CXX)')
test-missing-names := $(foreach m,$(test-missing),$(firstword $(subst =, ,$(m))))
drop-missing = $(filter-out $(addprefix %/,$(test-missing-names)),$(1))

cxx-tests := $(foreach d,$(test-check-dirs) $(test-stress-dirs),$(cxx-tests-$(d)))
ifeq ($(SANITIZE)$(CROSS_COMPILE)$(findstring clang,$(CXX)),)
ifneq ($(shell command -v $(CLANGXX) 2>/dev/null),)
clangxx-tests := $(addsuffix _clang,$(call drop-missing,$(cxx-tests)))
endif
endif
# check-tests: the unit and API tiers (more are added by the included
# makefiles: the kernel overlay's, the tools' smoke runs); stress-tests:
# the stress tier.  Both as the runner gets them, the missing included.
check-tests := $(foreach d,$(test-check-dirs),$(tests-$(d)) $(cxx-tests-$(d)) \
	$(filter $(objtree)/selftests/$(d)/%,$(clangxx-tests)))
stress-tests := $(foreach d,$(test-stress-dirs),$(tests-$(d)) $(cxx-tests-$(d)) \
	$(filter $(objtree)/selftests/$(d)/%,$(clangxx-tests)))
script-tests := $(foreach d,$(test-check-dirs),$(script-tests-$(d)))
# every program, for the pattern rules and clean
tests = $(check-tests) $(stress-tests)

example-y :=
example-cxx-y :=
include $(srctree)/examples/Kbuild

# tools/: the benchmark and the viewer bring their own rules
-include $(srctree)/tools/Makefile.inc
-include $(srctree)/tools/segpool-top/Makefile.inc
-include $(srctree)/tools/numa-rig/Makefile.inc
-include $(srctree)/tools/arm64-rig/Makefile.inc
-include $(srctree)/tools/check/Makefile.inc
-include $(srctree)/tools/bench-pmr/Makefile.inc
# the benchmark's smoke mode runs with the unit and API tiers
check-tests += $(tools-tests)
examples := $(addprefix $(objtree)/examples/,$(example-y) $(example-cxx-y))
cxx-examples := $(addprefix $(objtree)/examples/,$(example-cxx-y))

libname   := libsegpool
lib-a     := $(objtree)/$(libname).a
lib-so    := $(objtree)/$(libname).so.$(VERSION)
lib-soname:= $(libname).so.$(VERSION_MAJOR)
lib-pc    := $(objtree)/segpool.pc
cmake-cfg := $(objtree)/segpoolConfig.cmake
cmake-ver := $(objtree)/segpoolConfigVersion.cmake
man-dir   := $(objtree)/man
man-stamp := $(man-dir)/.stamp
# make check installs here (DESTDIR) for selftests/api/test_install.sh
install-root := $(objtree)/install-root
malloc-name   := libsegpool-malloc
malloc-so     := $(objtree)/$(malloc-name).so.$(VERSION)
malloc-soname := $(malloc-name).so.$(VERSION_MAJOR)
config-h  := $(objtree)/include/generated/segpool_config.h

# the kernel overlay: its .pc, install rules and selftest (adds to tests)
include $(srctree)/scripts/kernel-overlay.mk

all-deps := $(lib-objs:.o=.d) $(malloc-objs:.o=.d) $(tests:=.d) $(test-harness:.o=.d) $(examples:=.d)

# --- top-level targets ----------------------------------------------------------
.PHONY: all check stress check-deps check-preload demo deps docs check-docs man install \
	uninstall clean tests tests-check tests-stress examples help
.DEFAULT_GOAL := all
# objects are never intermediate: keep them for incremental builds
.SECONDARY:

all: $(lib-a) $(lib-so) $(malloc-so) $(lib-pc) $(cmake-cfg) $(cmake-ver)

help:
	@awk 'NR >= 3 && !/^#/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' \
		$(srctree)/Makefile

deps:
ifeq ($(NODEPS),)
	$(Q)$(srctree)/scripts/install-deps.sh
endif

# (what check-deps.sh --skips names is not built)
tests: tests-check tests-stress
tests-check: $(call drop-missing,$(check-tests))
tests-stress: $(call drop-missing,$(stress-tests))
examples: $(examples)

# The environment table of Documentation/reference/environment.md is
# generated from internal/env_table.c by a small program built for this
# machine.
gen-env-doc := $(objtree)/scripts/gen-env-doc
$(gen-env-doc): $(srctree)/scripts/gen-env-doc.c $(srctree)/internal/env_table.c \
		$(srctree)/internal/env.h $(srctree)/include/segpool/export.h
	$(quiet) HOSTCC $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(HOSTCC) -std=gnu11 -O1 -I$(srctree) -I$(srctree)/include \
		-I$(objtree)/include/generated -o $@ \
		$(srctree)/scripts/gen-env-doc.c $(srctree)/internal/env_table.c

# The generated pages of Documentation/ (Documentation/README.md lists
# them): reference/api.md from the kernel-doc in include/segpool/, the
# table of reference/environment.md from internal/env_table.c, and the
# per-CPU counter tables of reference/stats-keys.md and stats-json.md from
# include/segpool/counters.h.
api-doc := $(srctree)/Documentation/reference/api.md
env-doc := $(srctree)/Documentation/reference/environment.md
gen-counters-doc := $(objtree)/scripts/gen-counters-doc
counters-docs := $(srctree)/Documentation/reference/stats-keys.md \
		 $(srctree)/Documentation/reference/stats-json.md
$(gen-counters-doc): $(srctree)/scripts/gen-counters-doc.c \
		$(srctree)/include/segpool/counters.h
	$(quiet) HOSTCC $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(HOSTCC) -std=gnu11 -O1 -I$(srctree)/include -o $@ $<

docs: $(gen-env-doc) $(gen-counters-doc)
	$(quiet) GEN Documentation/reference/api.md
	$(Q)$(srctree)/scripts/gen-api-doc.sh -W > $(api-doc).tmp
	$(Q)mv $(api-doc).tmp $(api-doc)
	$(quiet) GEN Documentation/reference/environment.md
	$(Q)$(gen-env-doc) < $(env-doc) > $(objtree)/environment.md.tmp
	$(Q)mv $(objtree)/environment.md.tmp $(env-doc)
	$(Q)for f in $(counters-docs); do \
		printf '  %-7s %s\n' GEN Documentation/reference/$${f##*/}; \
		$(gen-counters-doc) < $$f > $(objtree)/counters.md.tmp && \
		mv $(objtree)/counters.md.tmp $$f || exit 1; \
	done

# check-docs: fail when the committed api.md is not what the headers say,
# when an exported function, an environment variable, or an option, sort
# order or key of segpool-top has no man page entry, or the page names one
# the program lacks (with the built .so when there is one),
# when debian/changelog or NEWS is not at the version of segpool.h, or when
# reference/environment.md's table is not what internal/env_table.c says,
# when the counter tables of reference/stats-keys.md and stats-json.md are
# not what include/segpool/counters.h says, or when a relative link of
# Documentation/ or README.md leads nowhere.
check-docs: $(gen-env-doc) $(gen-counters-doc)
	$(Q)$(srctree)/scripts/gen-api-doc.sh -W | diff -u $(api-doc) - \
		|| { echo "Documentation/reference/api.md is stale: run 'make docs'"; exit 1; }
	$(Q)$(gen-env-doc) < $(env-doc) > $(objtree)/environment.md.chk
	$(Q)diff -u $(env-doc) $(objtree)/environment.md.chk \
		|| { echo "Documentation/reference/environment.md's table is stale: run 'make docs'"; exit 1; }
	$(Q)rm -f $(objtree)/environment.md.chk
	$(Q)for f in $(counters-docs); do \
		$(gen-counters-doc) < $$f | diff -u $$f - || \
		{ echo "Documentation/reference/$${f##*/}'s counter table is stale: run 'make docs'"; exit 1; }; \
	done
	$(Q)$(srctree)/scripts/check-doc-links.sh $(srctree)
	$(Q)$(srctree)/scripts/check-help.sh $(srctree)
	$(Q)$(srctree)/scripts/gen-man.sh -c $(if $(wildcard $(lib-so)),-s $(lib-so))
	$(Q)v=$$(sed -n '1s/^segpool (\([^)-]*\).*/\1/p' $(srctree)/debian/changelog); \
	[ "$$v" = "$(VERSION)" ] || \
		{ echo "debian/changelog is at '$$v', include/segpool/segpool.h at $(VERSION)"; exit 1; }
	$(Q)grep -q '^segpool $(VERSION) ' $(srctree)/NEWS || \
		{ echo "NEWS has no section 'segpool $(VERSION) ...'"; exit 1; }

# man: section 3 from the kernel-doc, segpool-top(1), segpool(7)
man: $(man-stamp)
$(man-stamp): $(wildcard $(srctree)/include/segpool/*.h) \
		$(wildcard $(srctree)/Documentation/man/*.in) \
		$(env-doc) $(srctree)/scripts/gen-man.sh \
		$(srctree)/scripts/gen-api-doc.sh $(srctree)/scripts/kernel-doc.awk
	$(quiet) GEN $(patsubst $(objtree)/%,%,$(man-dir))
	$(Q)rm -rf $(man-dir)
	$(Q)$(srctree)/scripts/gen-man.sh -v $(VERSION) $(man-dir) > /dev/null
	$(Q)touch $@

# check-deps: say what this machine lacks (scripts/check-deps.sh); fails
# only when a build dependency is missing.  Installs nothing.
check-deps:
	$(Q)$(srctree)/scripts/check-deps.sh CC='$(CC)' CXX='$(CXX)'

# The runner's settings: the build's compiler, sanitizers, trees and
# install image (for the script tests), and the tests that cannot run here.
run-selftests = SEGPOOL_OBJTREE=$(objtree) SEGPOOL_SRCTREE=$(srctree) \
	SEGPOOL_CC='$(CC)' SEGPOOL_SANITIZE='$(SANITIZE)' \
	SEGPOOL_INSTALL_ROOT=$(install-root) SEGPOOL_TEST_MISSING='$(test-missing)' \
	SEGPOOL_TEST_TIMEOUT=$${SEGPOOL_TEST_TIMEOUT:-$(1)} \
	$(srctree)/scripts/run-selftests.sh

# check: the unit and API tiers, the script tests, the hit-path and
# documentation checks; each program at most CHECK_TIMEOUT seconds
# (SEGPOOL_TEST_TIMEOUT overrides).  Installs nothing: check-deps says
# what is missing, and what needs it is skipped.
# The script tests (test-script-y of the tiers' Kbuild) get the build's
# compiler, sanitizers and install directories.
CHECK_TIMEOUT  ?= 60
STRESS_TIMEOUT ?= 600
check: check-deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all tests-check man
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile check-hotpath
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile check-layout
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile checkstyle
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile check-docs
	$(Q)rm -rf $(install-root)
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile install \
		DESTDIR=$(install-root) > /dev/null
	$(Q)$(call run-selftests,$(CHECK_TIMEOUT)) $(check-tests) $(script-tests)

# stress: the stress tier, each program at most STRESS_TIMEOUT seconds
stress: check-deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all tests-stress
	$(Q)$(call run-selftests,$(STRESS_TIMEOUT)) $(stress-tests)

# check-preload: the real-program tier of the malloc replacement (slow: ~1 min)
check-preload: deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all segpool-top
	$(Q)$(srctree)/scripts/check-preload.sh $(objtree)/$(malloc-soname) $(top-bin)

demo: deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all examples
	$(Q)$(objtree)/examples/logpipe $(DEMO_ARGS)

# --- the generated config header --------------------------------------------------
# Every build switch of segpool is stated here, once, and lands in
# $(config-h) (include/generated/segpool_config.h of the object tree).
# Sources include "segpool_config.h" and test only these macros, never a
# -D flag, a compiler's predefined macro or a header probe of their own;
# each is defined (to the value shown) or absent:
#
#   CONFIG_SEGPOOL_VERSION        "MAJOR.MINOR.PATCH", from
#                                 include/segpool/segpool.h
#   CONFIG_SEGPOOL_VERSION_MAJOR  its major number (the soname's)
#   CONFIG_SEGPOOL_ASAN      1    AddressSanitizer: SANITIZE=address, or
#                                 -fsanitize=address... in CFLAGS
#   CONFIG_SEGPOOL_TSAN      1    ThreadSanitizer: SANITIZE=thread, or
#                                 -fsanitize=thread in CFLAGS
#   CONFIG_SEGPOOL_SANITIZED 1    any SANITIZE=: the sanitizer's malloc
#                                 must serve the whole program
#                                 (selftests/unit/test_malloc.c)
#   CONFIG_SEGPOOL_VALGRIND  1    $(CC) finds <valgrind/memcheck.h> (Debian
#                                 package valgrind) and NO_VALGRIND=1 is
#                                 not given (nor -DSEGPOOL_NO_VALGRIND in
#                                 CPPFLAGS or CFLAGS): the memcheck
#                                 annotations are built (internal/sanitize.h)
#   CONFIG_SEGPOOL_DEBUG     1    DEBUG=1: assertions, the lock-order checker
#                                 and the rseq injection points
#                                 (internal/debug.h); each library object
#                                 is compiled with -include internal/debug.h
#   CONFIG_SEGPOOL_NO_HIT_STATS 1 NO_HIT_STATS=1 (or -DSP_PCPU_NO_HIT_STATS
#                                 in CFLAGS): the fast path does not count
#                                 its hits; a benchmark variant only
#                                 (make bench-stats-cost)
#   CONFIG_SEGPOOL_PAGE_SHIFT N   PAGE_SHIFT=N: segpool's page is 1 << N
#                                 bytes (internal/compiler.h; absent: 12)
#
# The header is rewritten only when its text changes, so a switch that
# changes rebuilds everything and nothing else does.
hash := \#
config-cflags := $(filter -fsanitize=% -D%,$(CPPFLAGS) $(CFLAGS))
config-asan := $(findstring address,$(SANITIZE) $(filter -fsanitize=%,$(config-cflags)))
config-tsan := $(findstring thread,$(SANITIZE) $(filter -fsanitize=%,$(config-cflags)))
ifeq ($(NO_VALGRIND)$(filter -DSEGPOOL_NO_VALGRIND,$(config-cflags)),)
config-valgrind := $(shell printf '$(hash)include <valgrind/memcheck.h>\n' | \
	$(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo 1)
endif
config-no-hit-stats := $(NO_HIT_STATS)$(filter -DSP_PCPU_NO_HIT_STATS,$(config-cflags))
ifneq ($(filter-out 12 14 16,$(PAGE_SHIFT)),)
$(error PAGE_SHIFT=$(PAGE_SHIFT): segpool's page is 4, 16 or 64 KiB \
	(PAGE_SHIFT=12, 14 or 16))
endif
config-defs := CONFIG_SEGPOOL_VERSION="$(VERSION)" \
	CONFIG_SEGPOOL_VERSION_MAJOR=$(VERSION_MAJOR) \
	$(if $(config-asan),CONFIG_SEGPOOL_ASAN=1) \
	$(if $(config-tsan),CONFIG_SEGPOOL_TSAN=1) \
	$(if $(SANITIZE),CONFIG_SEGPOOL_SANITIZED=1) \
	$(if $(config-valgrind),CONFIG_SEGPOOL_VALGRIND=1) \
	$(if $(config-no-hit-stats),CONFIG_SEGPOOL_NO_HIT_STATS=1) \
	$(if $(PAGE_SHIFT),CONFIG_SEGPOOL_PAGE_SHIFT=$(PAGE_SHIFT)) \
	$(if $(filter-out 0,$(DEBUG)),CONFIG_SEGPOOL_DEBUG=1)
config-text := /* generated by the Makefile from its build switches; do not edit */\n$(subst \n ,\n,$(foreach d,$(config-defs),$(hash)define $(subst =, ,$(d))\n))
$(shell mkdir -p $(dir $(config-h)) && \
	{ printf '%b' '$(config-text)' | cmp -s - $(config-h) 2>/dev/null || \
	  printf '%b' '$(config-text)' > $(config-h); })

# --- rebuild when the command line changes (Kbuild keeps .cmd files for this) --
flags-file := $(objtree)/include/generated/build-flags
flags-now  := $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) $(CXX) $(CXXFLAGS_ALL)
$(shell mkdir -p $(dir $(flags-file)) && \
	{ printf '%s\n' '$(flags-now)' | cmp -s - $(flags-file) 2>/dev/null || \
	  printf '%s\n' '$(flags-now)' > $(flags-file); })

# the same for the install directories baked into segpool.pc
dirs-file := $(objtree)/include/generated/install-dirs
dirs-now  := $(PREFIX) $(LIBDIR) $(INCDIR) $(CMAKEDIR) $(VERSION)
$(shell { printf '%s\n' '$(dirs-now)' | cmp -s - $(dirs-file) 2>/dev/null || \
	  printf '%s\n' '$(dirs-now)' > $(dirs-file); })

# --- compile ------------------------------------------------------------------------
$(objtree)/%.o: $(srctree)/%.c $(config-h) $(flags-file)
	$(quiet) CC $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(objtree)/%.o: $(srctree)/%.cpp $(config-h) $(flags-file)
	$(quiet) CXX $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) $(CPPFLAGS_ALL) $(CXXFLAGS_ALL) -MMD -MP -c -o $@ $<

# the same C++ selftest source, compiled by clang++
$(objtree)/selftests/%_clang.o: $(srctree)/selftests/%.cpp $(config-h) $(flags-file)
	$(quiet) CLANGXX $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANGXX) $(CPPFLAGS_ALL) $(CXXFLAGS_ALL) -MMD -MP -c -o $@ $<

# A debug build checks every mutex call of the library (internal/debug.h).
ifneq ($(filter-out 0,$(DEBUG)),)
$(lib-objs) $(malloc-objs): CPPFLAGS_ALL += -include $(srctree)/internal/debug.h
endif

# --- libraries ------------------------------------------------------------------------
$(lib-a): $(lib-objs)
	$(quiet) AR $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Both shared objects: the large arrays after the small variables
# (scripts/segpool.lds, an addition to the default script).
LIB_LDS := -Wl,-T,$(srctree)/scripts/segpool.lds

$(lib-so): $(lib-objs) $(srctree)/scripts/segpool.map $(srctree)/scripts/segpool.lds
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -shared -Wl,-soname,$(lib-soname) \
		-Wl,--version-script=$(srctree)/scripts/segpool.map $(LIB_LDS) \
		$(LIB_ZDEFS) -o $@ $(lib-objs) $(LDLIBS_LIB)
	$(Q)ln -sf $(notdir $@) $(objtree)/$(lib-soname)
	$(Q)ln -sf $(lib-soname) $(objtree)/$(libname).so

# segpool.pc and the CMake package are relocatable: directories under
# $(PREFIX) are written relative to it (${prefix}/..., or to the CMake file's
# own directory), so pkg-config --define-prefix and a moved tree work.
under-prefix = $(patsubst $(PREFIX)/%,$(2)/%,$(patsubst $(PREFIX),$(2),$(1)))
# The .pc files (segpool.pc, segpool-kernel.pc): pkg-config --define-prefix
# takes the prefix to be two levels above the .pc's directory (<prefix>/lib/
# pkgconfig).  Where that holds, directories are ${prefix}-relative; where
# it does not (a multiarch <prefix>/lib/<triplet>/pkgconfig), they are
# written relative to ${pcfiledir}, which pkg-config always knows, and
# --define-prefix has nothing wrong to move.  Outside $(PREFIX), or with
# the .pc outside it: as given.
pc-guess   := $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(PCDIR)))))
pc-dir     = $(if $(filter $(PREFIX) $(PREFIX)/%,$(1)),$(if $(filter \
	$(PREFIX),$(pc-guess)),$(call under-prefix,$(1),$${prefix}),$(if $(filter \
	$(PREFIX)/%,$(PCDIR)),$${pcfiledir}/$(shell realpath -m \
	--relative-to=$(PCDIR) $(1)),$(1))),$(1))
pc-prefix  = $(if $(filter $(PREFIX),$(pc-guess)),$(PREFIX),$(if $(filter \
	$(PREFIX)/%,$(PCDIR)),$${pcfiledir}/$(shell realpath -m \
	--relative-to=$(PCDIR) $(PREFIX)),$(PREFIX)))
pc-sed     = sed -e 's|@PREFIX@|$(pc-prefix)|' -e 's|@LIBDIR@|$(call pc-dir,$(LIBDIR))|' \
	-e 's|@INCDIR@|$(call pc-dir,$(INCDIR))|' -e 's|@VERSION@|$(VERSION)|'
# The malloc replacement: the library's objects and malloc/'s in one shared
# object, so malloc() reaches segpool_malloc()'s hit path by a direct call
# (-Bsymbolic-functions binds every call inside it locally, no PLT).
$(malloc-so): $(lib-objs) $(malloc-objs) $(srctree)/malloc/exports.map \
		$(srctree)/scripts/segpool.lds
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -shared -Wl,-soname,$(malloc-soname) \
		-Wl,--version-script=$(srctree)/malloc/exports.map $(LIB_LDS) \
		-Wl,-Bsymbolic-functions $(LIB_ZDEFS) -o $@ $(lib-objs) \
		$(malloc-objs) $(LDLIBS_LIB)
	$(Q)ln -sf $(notdir $@) $(objtree)/$(malloc-soname)
	$(Q)ln -sf $(malloc-soname) $(objtree)/$(malloc-name).so

$(lib-pc): $(srctree)/scripts/segpool.pc.in $(srctree)/Makefile $(dirs-file)
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(pc-sed) $< > $@

# from the CMake package's directory back to $(PREFIX) ("../../.."), or
# $(PREFIX) itself when CMAKEDIR is not under it
cmake-to-prefix = $(if $(filter $(PREFIX)/%,$(CMAKEDIR)),$${CMAKE_CURRENT_LIST_DIR}/$(shell \
	realpath -m --relative-to=$(CMAKEDIR) $(PREFIX)),$(PREFIX))

$(cmake-cfg): $(srctree)/scripts/segpoolConfig.cmake.in $(srctree)/Makefile $(dirs-file)
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(cmake-to-prefix)|' \
		-e 's|@LIBDIR@|$(call under-prefix,$(LIBDIR),$${_segpool_prefix})|' \
		-e 's|@INCDIR@|$(call under-prefix,$(INCDIR),$${_segpool_prefix})|' \
		-e 's|@SONAME@|$(lib-soname)|' -e 's|@LIBSO@|$(notdir $(lib-so))|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@

$(cmake-ver): $(srctree)/scripts/segpoolConfigVersion.cmake.in $(srctree)/Makefile $(dirs-file)
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|' -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|' $< > $@

# --- selftests and examples link the static library (internal hooks stay reachable) --
TEST_LDLIBS := -lcmocka -lnuma -lurcu-memb -lurcu-common -pthread -ldl

# TEST_OBJS: more objects one test links (set per target, e.g. a tool's)
$(objtree)/selftests/%: $(objtree)/selftests/%.o $(test-harness) $(lib-a) $(lib-so)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(TEST_OBJS) $(test-harness) \
		$(test-extra-objs) $(lib-a) $(TEST_LDLIBS)

$(cxx-tests): $(objtree)/selftests/%: $(objtree)/selftests/%.o $(test-harness) $(lib-a)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CXX) $(CXXFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(test-harness) $(lib-a) $(TEST_LDLIBS)

$(clangxx-tests): $(objtree)/selftests/%: $(objtree)/selftests/%.o $(test-harness) $(lib-a)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CLANGXX) $(CXXFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(test-harness) $(lib-a) $(TEST_LDLIBS)

$(cxx-examples): $(objtree)/examples/%: $(objtree)/examples/%.o $(lib-a)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CXX) $(CXXFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(lib-a) $(LDLIBS_LIB)

$(objtree)/examples/%: $(objtree)/examples/%.o $(lib-a)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(lib-a) $(LDLIBS_LIB)

# selftests/unit/test_malloc links malloc/'s objects too (malloc() is segpool's in
# the whole program) and preloads the shared object into real programs.
$(objtree)/selftests/unit/test_malloc: $(malloc-objs) $(malloc-so)
# (not in a sanitized build: the sanitizer's malloc must serve every call)
# (CONFIG_SEGPOOL_SANITIZED tells the test)
ifeq ($(SANITIZE),)
$(objtree)/selftests/unit/test_malloc: test-extra-objs := $(malloc-objs)
endif
# (-fno-builtin: the compiler must not fold away the malloc()/free() pairs
# and misuse the tests are made of)
$(objtree)/selftests/unit/test_malloc.o: CFLAGS_ALL += -fno-builtin
$(objtree)/selftests/unit/test_malloc.o: CPPFLAGS_ALL += \
	-DSEGPOOL_MALLOC_SO_PATH='"$(objtree)/$(malloc-soname)"' \
	-DSEGPOOL_MALLOC_DOC_PATH='"$(srctree)/Documentation/guide/malloc.md"'

# selftests/api/test_symbols checks the shared object: tell it where it is.
$(objtree)/selftests/api/test_symbols.o: CPPFLAGS_ALL += \
	-DSEGPOOL_SO_PATH='"$(objtree)/$(libname).so.$(VERSION)"' \
	-DSEGPOOL_MAP_PATH='"$(srctree)/scripts/segpool.map"'

# selftests/unit/test_runner runs scripts/run-selftests.sh from the source tree
$(objtree)/selftests/unit/test_runner.o: CPPFLAGS_ALL += -DSEGPOOL_SRCTREE='"$(srctree)"'
# selftests/unit/test_arena checks that Documentation/guide/arenas.md names every field.
# and that segpool-top shows the arenas of a process that exports.
$(objtree)/selftests/unit/test_arena.o: CPPFLAGS_ALL += \
	-DSEGPOOL_ARENA_DOC='"$(srctree)/Documentation/guide/arenas.md"' \
	-DSEGPOOL_TOP_PATH='"$(top-bin)"'
$(objtree)/selftests/unit/test_arena: $(top-bin)

# --- install ------------------------------------------------------------------------------
doc-dirs  := guide reference internals
doc-files := README.md HACKING.md NEWS LICENSE Documentation/README.md \
	$(patsubst $(srctree)/%,%,$(foreach d,$(doc-dirs),$(wildcard $(srctree)/Documentation/$(d)/*.md)))
doc-images := $(notdir $(wildcard $(srctree)/Documentation/images/*.png))

install: all man
	$(quiet) INSTALL $(DESTDIR)$(PREFIX)
	$(Q)install -d $(DESTDIR)$(INCDIR)/segpool $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR) \
		$(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(DOCDIR)/Documentation/images \
		$(addprefix $(DESTDIR)$(DOCDIR)/Documentation/,$(doc-dirs)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man,1 3 7)
	$(Q)install -m 644 $(srctree)/include/segpool/*.h \
		$(srctree)/include/segpool/*.hpp $(DESTDIR)$(INCDIR)/segpool/
	$(Q)install -m 644 $(lib-a) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(lib-so) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(notdir $(lib-so)) $(DESTDIR)$(LIBDIR)/$(lib-soname)
	$(Q)ln -sf $(lib-soname) $(DESTDIR)$(LIBDIR)/$(libname).so
	$(Q)install -m 755 $(malloc-so) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(notdir $(malloc-so)) $(DESTDIR)$(LIBDIR)/$(malloc-soname)
	$(Q)ln -sf $(malloc-soname) $(DESTDIR)$(LIBDIR)/$(malloc-name).so
	$(Q)install -m 644 $(lib-pc) $(DESTDIR)$(PCDIR)/
	$(Q)install -m 644 $(cmake-cfg) $(cmake-ver) $(DESTDIR)$(CMAKEDIR)/
	$(Q)for s in 1 3 7; do \
		install -m 644 $(man-dir)/man$$s/*.$$s $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done
	$(Q)for f in $(doc-files); do \
		install -m 644 $(srctree)/$$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; \
	done
	$(Q)for f in $(doc-images); do \
		install -m 644 $(srctree)/Documentation/images/$$f \
			$(DESTDIR)$(DOCDIR)/Documentation/images/ || exit 1; \
	done

uninstall:
	$(quiet) UNINST $(DESTDIR)$(PREFIX)
	$(Q)rm -f $(addprefix $(DESTDIR)$(INCDIR)/segpool/,$(notdir $(wildcard $(srctree)/include/segpool/*.h $(srctree)/include/segpool/*.hpp)))
	$(Q)-rmdir $(DESTDIR)$(INCDIR)/segpool 2>/dev/null || true
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/$(libname).a $(DESTDIR)$(LIBDIR)/$(notdir $(lib-so)) \
		$(DESTDIR)$(LIBDIR)/$(lib-soname) $(DESTDIR)$(LIBDIR)/$(libname).so \
		$(DESTDIR)$(LIBDIR)/$(notdir $(malloc-so)) \
		$(DESTDIR)$(LIBDIR)/$(malloc-soname) $(DESTDIR)$(LIBDIR)/$(malloc-name).so \
		$(DESTDIR)$(PCDIR)/segpool.pc \
		$(DESTDIR)$(CMAKEDIR)/segpoolConfig.cmake $(DESTDIR)$(CMAKEDIR)/segpoolConfigVersion.cmake
	$(Q)-rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true
	$(Q)if [ -d $(man-dir) ]; then cd $(man-dir) && for p in man*/*.[137]; do \
		rm -f $(DESTDIR)$(MANDIR)/$$p; done; fi
	$(Q)rm -rf $(DESTDIR)$(DOCDIR)

clean:
	$(quiet) CLEAN $(objtree)
	$(Q)rm -f $(lib-objs) $(all-deps) $(lib-a) $(lib-so) $(objtree)/$(lib-soname) \
		$(objtree)/$(libname).so $(malloc-objs) $(malloc-so) \
		$(objtree)/$(malloc-soname) $(objtree)/$(malloc-name).so \
		$(lib-pc) $(cmake-cfg) $(cmake-ver) $(tests) $(tests:=.o) $(test-harness) \
		$(examples) $(examples:=.o) $(config-h)
	$(Q)rm -rf $(man-dir) $(install-root)

-include $(wildcard $(all-deps))
