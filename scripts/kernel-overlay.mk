# SPDX-License-Identifier: MIT
#
# scripts/kernel-overlay.mk - the kernel overlay (include/segpool/kernel/),
# included by the top Makefile: its pkg-config file, its install rules and
# its selftest, built twice.
#
#   segpool-kernel.pc    Cflags -I<includedir>/segpool/kernel, Requires
#                        segpool and liburcu-memb (the RCU wrappers);
#                        relocatable as segpool.pc (pc-sed of the Makefile)
#   make install         also installs <includedir>/segpool/kernel/linux/*.h
#                        and segpool-kernel.pc
#   selftests/api/test_kernel_api            the kernel-style selftest against
#                        the tree (-Iinclude/segpool/kernel, libsegpool.a)
#   selftests/api/test_kernel_api_installed  the same source against an image
#                        made with `make install DESTDIR=...` in
#                        selftests/api/kernel-image/, through
#                        `pkg-config --cflags --libs segpool-kernel`

kernel-hdrs   := $(wildcard $(srctree)/include/segpool/kernel/linux/*.h)
kernel-pc     := $(objtree)/segpool-kernel.pc
kapi-test     := $(objtree)/selftests/api/test_kernel_api
kapi-inst     := $(objtree)/selftests/api/test_kernel_api_installed
kapi-image    := $(objtree)/selftests/api/kernel-image
kapi-stamp    := $(kapi-image)/.installed
KAPI_PC_ENV   := PKG_CONFIG_SYSROOT_DIR=$(kapi-image) \
	PKG_CONFIG_PATH=$(kapi-image)$(PCDIR)

check-tests += $(kapi-test) $(kapi-inst)

.PHONY: install-kernel uninstall-kernel kernel-clean

all: $(kernel-pc)
install: install-kernel
uninstall: uninstall-kernel
clean: kernel-clean

.SECONDEXPANSION:
# (dirs-file is defined further down the top Makefile: secondary expansion)
$(kernel-pc): $(srctree)/scripts/segpool-kernel.pc.in $(srctree)/Makefile $$(dirs-file)
	$(quiet) GEN $(patsubst $(objtree)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(pc-sed) $< > $@

install-kernel: $(kernel-pc)
	$(Q)install -d $(DESTDIR)$(INCDIR)/segpool/kernel/linux $(DESTDIR)$(PCDIR)
	$(Q)install -m 644 $(kernel-hdrs) $(DESTDIR)$(INCDIR)/segpool/kernel/linux/
	$(Q)install -m 644 $(kernel-pc) $(DESTDIR)$(PCDIR)/

uninstall-kernel:
	$(Q)rm -f $(addprefix $(DESTDIR)$(INCDIR)/segpool/kernel/linux/,$(notdir $(kernel-hdrs))) \
		$(DESTDIR)$(PCDIR)/segpool-kernel.pc
	$(Q)-rmdir $(DESTDIR)$(INCDIR)/segpool/kernel/linux \
		$(DESTDIR)$(INCDIR)/segpool/kernel 2>/dev/null || true

# Both built with -D_FORTIFY_SOURCE=2, as Debian's build flags build them:
# kfree_sensitive() must not clear more than the compiler knows of (not
# under a sanitizer, nor without optimisation, where it means nothing).
kapi-fortify  := $(if $(or $(SANITIZE),$(filter -O0,$(OPT))),,\
	-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)

# in the tree: the overlay folder first, as pkg-config would put it
$(objtree)/selftests/api/test_kernel_api.o: CPPFLAGS_ALL += \
	-I$(srctree)/include/segpool/kernel $(kapi-fortify)

$(kapi-test): $(objtree)/selftests/api/test_kernel_api.o $(lib-a)
	$(quiet) LD $(patsubst $(objtree)/%,%,$@)
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(lib-a) $(TEST_LDLIBS)

# installed: a fresh image, then only what pkg-config says (and cmocka)
# (install needs everything all and man make: made first here, so the
# sub-make never builds them beside this make's own jobs)
$(kapi-stamp): $(lib-a) $(lib-so) $(malloc-so) $(lib-pc) $(kernel-pc) \
		$(kernel-hdrs) $(man-stamp) $(cmake-cfg) $(cmake-ver) \
		$(wildcard $(srctree)/include/segpool/*.h)
	$(quiet) INSTALL $(patsubst $(objtree)/%,%,$(kapi-image))
	$(Q)rm -rf $(kapi-image)
	$(Q)$(MAKE) --no-print-directory -f $(srctree)/Makefile install \
		DESTDIR=$(kapi-image) > /dev/null
	$(Q)touch $@

$(kapi-inst): $(srctree)/selftests/api/test_kernel_api.c $(kapi-stamp)
	$(quiet) CC/LD $(patsubst $(objtree)/%,%,$@)
	$(Q)flags=$$($(KAPI_PC_ENV) pkg-config --cflags --libs segpool-kernel) && \
	$(CC) $(CSTD) $(OPT) -g -gdwarf-4 -pthread $(WARN) \
		$(filter -fsanitize=% -fno-%,$(CFLAGS_ALL)) $(LDFLAGS_ALL) \
		$(kapi-fortify) -DKAPI_INSTALLED -o $@ $< $$flags -lcmocka \
		-Wl,-rpath,$(kapi-image)$(LIBDIR)

kernel-clean:
	$(Q)rm -rf $(kapi-image) $(kapi-inst) $(kernel-pc)
