# SPDX-License-Identifier: MIT
#
# segpool top-level Makefile, in the Kbuild manner.
#
# Each source folder lists its objects in a Kbuild fragment (obj-y += x.o);
# this file gathers them into libsegpool.a and libsegpool.so.
#
#   make                 libraries and segpool.pc
#   make check           build and run every selftest, then "N passed, N failed"
#   make check-numa      the NUMA selftests on emulated multi-node machines
#                        (qemu; RIG_ARGS=...; see tools/numa-rig/)
#   make demo            build and run the example service (examples/logpipe)
#   make bench           benchmark against glibc, jemalloc, tcmalloc, mimalloc
#                        (BENCH_ARGS=...; results in bench-results/)
#   make bench-doc       the same, then refresh Documentation/performance.md
#   make bench-pmr       the std::pmr resources on the log pattern
#                        (BENCH_PMR_ARGS=...; also the last part of bench)
#   make install         PREFIX=/usr/local DESTDIR=
#   make uninstall, clean
#
# Knobs:
#   V=1                  print whole commands
#   O=dir                build out of tree (the source tree stays clean)
#   W=1|2|3, W=e         extra warning tiers; e turns warnings into errors
#                        (combine: W=1e)
#   SANITIZE=address,undefined | thread    sanitized build (use with O=)
#   CC=clang             any C11 compiler with GNU extensions
#   CXX=clang++          the C++17 compiler of the C++ parts (default: g++,
#                        clang++ with CC=clang); -std=c++17
#   NODEPS=1             do not run scripts/install-deps.sh before check/demo

VERSION_MAJOR := 0
VERSION_MINOR := 1
VERSION_PATCH := 0
VERSION       := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
PCDIR   ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

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
CC      ?= cc
AR      ?= ar
ifeq ($(origin CC),default)
CC := cc
endif

# C++: header-only parts of the API (include/segpool/pmr.hpp), their tests,
# examples and benchmarks.  CXX follows CC's compiler family unless set.
ifeq ($(origin CXX),default)
ifneq ($(findstring clang,$(CC)),)
CXX := clang++
else
CXX := g++
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
LDLIBS_LIB := -lnuma -lurcu-memb -lurcu-common -pthread

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
	$(CXXFLAGS)
CFLAGS_ALL  += $(CFLAGS)
LDFLAGS_ALL += $(LDFLAGS)

# --- gather the Kbuild fragments -----------------------------------------------
# The root Kbuild names the library's folders (obj-y += dir/); each folder's
# Kbuild names its objects.
obj-y :=
include $(srctree)/Kbuild
lib-dirs := $(patsubst %/,%,$(filter %/,$(obj-y)))

define collect-objs
obj-y :=
include $(srctree)/$(1)/Kbuild
lib-objs += $$(addprefix $$(objtree)/$(1)/,$$(obj-y))
endef
lib-objs :=
$(foreach d,$(lib-dirs),$(eval $(call collect-objs,$(d))))

test-y :=
test-cxx-y :=
include $(srctree)/selftests/Kbuild
ifeq ($(SANITIZE)$(findstring clang,$(CXX)),)
ifneq ($(shell command -v $(CLANGXX) 2>/dev/null),)
test-clangxx-y := $(addsuffix _clang,$(test-cxx-y))
endif
endif
cxx-tests := $(addprefix $(objtree)/selftests/,$(test-cxx-y))
clangxx-tests := $(addprefix $(objtree)/selftests/,$(test-clangxx-y))
tests := $(addprefix $(objtree)/selftests/,$(test-y)) $(cxx-tests) $(clangxx-tests)
test-harness := $(objtree)/selftests/harness.o

example-y :=
example-cxx-y :=
include $(srctree)/examples/Kbuild

# tools/: the benchmark and the viewer bring their own rules
-include $(srctree)/tools/Makefile.inc
-include $(srctree)/tools/segpool-top/Makefile.inc
-include $(srctree)/tools/numa-rig/Makefile.inc
-include $(srctree)/tools/bench-pmr/Makefile.inc
# the benchmark's smoke mode runs with the selftests
tests += $(tools-tests)
examples := $(addprefix $(objtree)/examples/,$(example-y) $(example-cxx-y))
cxx-examples := $(addprefix $(objtree)/examples/,$(example-cxx-y))

libname   := libsegpool
lib-a     := $(objtree)/$(libname).a
lib-so    := $(objtree)/$(libname).so.$(VERSION)
lib-soname:= $(libname).so.$(VERSION_MAJOR)
lib-pc    := $(objtree)/segpool.pc
config-h  := $(objtree)/include/generated/segpool_config.h

all-deps := $(lib-objs:.o=.d) $(tests:=.d) $(test-harness:.o=.d) $(examples:=.d)

# --- top-level targets ----------------------------------------------------------
.PHONY: all check demo deps docs check-docs install uninstall clean tests examples help
.DEFAULT_GOAL := all
# objects are never intermediate: keep them for incremental builds
.SECONDARY:

all: $(lib-a) $(lib-so) $(lib-pc)

help:
	@awk 'NR >= 3 && !/^#/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' \
		$(srctree)/Makefile

deps:
ifeq ($(NODEPS),)
	$(Q)$(srctree)/scripts/install-deps.sh
endif

tests: $(tests)
examples: $(examples)

# Documentation/api.md is generated from the kernel-doc in include/segpool/.
docs:
	$(quiet) GEN Documentation/api.md
	$(Q)$(srctree)/scripts/gen-api-doc.sh -W > $(srctree)/Documentation/api.md.tmp
	$(Q)mv $(srctree)/Documentation/api.md.tmp $(srctree)/Documentation/api.md

# check-docs: fail when the committed api.md is not what the headers say.
check-docs:
	$(Q)$(srctree)/scripts/gen-api-doc.sh -W | diff -u $(srctree)/Documentation/api.md - \
		|| { echo "Documentation/api.md is stale: run 'make docs'"; exit 1; }

# check: install what is missing, build, run every selftest.
check: deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all tests
	$(Q)SEGPOOL_OBJTREE=$(objtree) $(srctree)/scripts/run-selftests.sh $(tests)

demo: deps
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile all examples
	$(Q)$(objtree)/examples/logpipe $(DEMO_ARGS)

# --- the generated config header --------------------------------------------------
$(config-h): $(srctree)/Makefile
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q){ echo '/* generated by the Makefile; do not edit */'; \
	  echo '#define CONFIG_SEGPOOL_VERSION "$(VERSION)"'; \
	  echo '#define CONFIG_SEGPOOL_VERSION_MAJOR $(VERSION_MAJOR)'; \
	  $(if $(findstring address,$(SANITIZE)),echo '#define CONFIG_SEGPOOL_ASAN 1';) \
	  $(if $(findstring thread,$(SANITIZE)),echo '#define CONFIG_SEGPOOL_TSAN 1';) \
	  true; } > $@.tmp && mv $@.tmp $@

# --- rebuild when the command line changes (Kbuild keeps .cmd files for this) --
flags-file := $(objtree)/include/generated/build-flags
flags-now  := $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) $(CXX) $(CXXFLAGS_ALL)
$(shell mkdir -p $(dir $(flags-file)) && \
	{ printf '%s\n' '$(flags-now)' | cmp -s - $(flags-file) 2>/dev/null || \
	  printf '%s\n' '$(flags-now)' > $(flags-file); })

# the same for the install directories baked into segpool.pc
dirs-file := $(objtree)/include/generated/install-dirs
dirs-now  := $(PREFIX) $(LIBDIR) $(INCDIR)
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

# --- libraries ------------------------------------------------------------------------
$(lib-a): $(lib-objs)
	$(quiet) AR $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(lib-so): $(lib-objs) $(srctree)/scripts/segpool.map
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -shared -Wl,-soname,$(lib-soname) \
		-Wl,--version-script=$(srctree)/scripts/segpool.map \
		$(LIB_ZDEFS) -o $@ $(lib-objs) $(LDLIBS_LIB)
	$(Q)ln -sf $(notdir $@) $(objtree)/$(lib-soname)
	$(Q)ln -sf $(lib-soname) $(objtree)/$(libname).so

$(lib-pc): $(srctree)/scripts/segpool.pc.in $(srctree)/Makefile $(dirs-file)
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# --- selftests and examples link the static library (internal hooks stay reachable) --
TEST_LDLIBS := -lcmocka -lnuma -lurcu-memb -lurcu-common -pthread

$(objtree)/selftests/%: $(objtree)/selftests/%.o $(test-harness) $(lib-a) $(lib-so)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(test-harness) $(lib-a) $(TEST_LDLIBS)

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

# selftests/exports checks the shared object: tell it where it is.
$(objtree)/selftests/test_exports.o: CPPFLAGS_ALL += \
	-DSEGPOOL_SO_PATH='"$(objtree)/$(libname).so.$(VERSION)"' \
	-DSEGPOOL_MAP_PATH='"$(srctree)/scripts/segpool.map"'

# selftests/arena checks that Documentation/arenas.md names every field.
# and that segpool-top shows the arenas of a process that exports.
$(objtree)/selftests/test_arena.o: CPPFLAGS_ALL += \
	-DSEGPOOL_ARENA_DOC='"$(srctree)/Documentation/arenas.md"' \
	-DSEGPOOL_TOP_PATH='"$(top-bin)"'
$(objtree)/selftests/test_arena: $(top-bin)

# --- install ------------------------------------------------------------------------------
install: all
	$(quiet) INSTALL $(DESTDIR)$(PREFIX)
	$(Q)install -d $(DESTDIR)$(INCDIR)/segpool $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR)
	$(Q)install -m 644 $(srctree)/include/segpool/*.h \
		$(srctree)/include/segpool/*.hpp $(DESTDIR)$(INCDIR)/segpool/
	$(Q)install -m 644 $(lib-a) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(lib-so) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(notdir $(lib-so)) $(DESTDIR)$(LIBDIR)/$(lib-soname)
	$(Q)ln -sf $(lib-soname) $(DESTDIR)$(LIBDIR)/$(libname).so
	$(Q)install -m 644 $(lib-pc) $(DESTDIR)$(PCDIR)/

uninstall:
	$(quiet) UNINST $(DESTDIR)$(PREFIX)
	$(Q)rm -f $(addprefix $(DESTDIR)$(INCDIR)/segpool/,$(notdir $(wildcard $(srctree)/include/segpool/*.h $(srctree)/include/segpool/*.hpp)))
	$(Q)-rmdir $(DESTDIR)$(INCDIR)/segpool 2>/dev/null || true
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/$(libname).a $(DESTDIR)$(LIBDIR)/$(notdir $(lib-so)) \
		$(DESTDIR)$(LIBDIR)/$(lib-soname) $(DESTDIR)$(LIBDIR)/$(libname).so \
		$(DESTDIR)$(PCDIR)/segpool.pc

clean:
	$(quiet) CLEAN $(objtree)
	$(Q)rm -f $(lib-objs) $(all-deps) $(lib-a) $(lib-so) $(objtree)/$(lib-soname) \
		$(objtree)/$(libname).so $(lib-pc) $(tests) $(tests:=.o) $(test-harness) \
		$(examples) $(examples:=.o) $(config-h)

-include $(wildcard $(all-deps))
