# SPDX-License-Identifier: GPL-2.0
#
# extverity: the dm-extverity kernel module and the extverity tool.
#
#   make            build tools/extverity and drivers/md/dm-extverity.ko
#   make check      install missing build/test dependencies, build, run all tests
#   make check-debug  the VM tests again on a KASAN/lockdep/kmemleak kernel
#   make demo       format a sample image, verify it, show a corruption report
#   make bench      extverity vs dm-verity vs raw in one VM run (bench/results/)
#   make bench-boot a Debian root booted from raw, dm-verity, extverity
#   make bench-uml  their CPU cost under User-Mode Linux (bench/uml.sh)
#   make lint       checkpatch --strict, sparse (C=1) and W=1 on the kernel code
#   make stress     10 minutes of the VM stress scenario (STRESS_SECONDS)
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS (60) each (tests/fuzz)
#   make check-mutants  apply each deliberate bug of tests/mutants/ to a copy
#                   of the tree and run the tests that must catch it
#                   (MUTANTS="NN ...", KVER=6.12; scripts/mutants.sh)
#   make kernel-patch  build/extverity-linux-{6.1,6.12}.patch: the target in tree,
#                   built in, usable from dm-mod.create= (docs/kernel-patch.md)
#   make clean
#
# KVER= selects a kernel Debian ships (6.1, 6.12 or 7.3, or a release of
# one; scripts/kernels.sh): `make KVER=7.3` builds the module for it, `make
# demo KVER=6.1` and `make bench KVER=6.12` boot it.  KDIR selects a kernel
# build tree directly (default: the running kernel's, else the newest
# installed Debian headers).  V=1 shows the commands.

VERSION := 1.0.0

CC ?= cc
override CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wno-unused-parameter -fno-strict-aliasing $(CFLAGS)
# json-c (libjson-c-dev) writes every --json output, as in cryptsetup.
JSONC_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS := $(or $(shell pkg-config --libs json-c 2>/dev/null),-ljson-c)
override CPPFLAGS := -Iinclude/uapi -Itools/lib -Idrivers/md \
	-DEXTVERITY_VERSION='"$(VERSION)"' $(JSONC_CFLAGS) $(CPPFLAGS)
LDLIBS := -lext2fs -lcom_err -lcrypto -lpthread -ldevmapper $(JSONC_LIBS)

SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

TOOL_SRCS := $(wildcard tools/lib/*.c) $(wildcard tools/programs/*.c) \
	drivers/md/dm-extverity-format.c
TOOL_HDRS := $(wildcard tools/lib/*.h) $(wildcard tools/programs/*.h) \
	drivers/md/dm-extverity-format.h include/uapi/linux/dm-extverity.h

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Kernel build tree, and what building against it needs (KMAKEFLAGS: 7.3's
# headers are built by Debian 13's compiler; scripts/kernel-7.3.sh).
ifneq ($(KVER),)
KDIR = $(shell scripts/kernels.sh kdir $(KVER))
KMAKEFLAGS = $(shell scripts/kernels.sh get $(KVER) KMAKEFLAGS)
KERNEL_RUN := scripts/kernels.sh run $(KVER)
else ifeq ($(origin KDIR), undefined)
KDIR := $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))
endif

.PHONY: all tools module module-build check check-deps demo lint clean bench bench-boot bench-uml check-debug
all: tools module

tools: tools/extverity tools/extverity-generator

# The systemd generator (docs/boot.md) is a program of its own: it links
# nothing of the tool's, so that it runs in an initrd before anything else.
tools/extverity-generator: tools/generator/extverity-generator.c
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $<

build/asan/extverity-generator: tools/generator/extverity-generator.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (asan)"
	$(Q)$(CC) $(CFLAGS) -O1 $(SANITIZE) -o $@ $<

tools/extverity: $(TOOL_SRCS:%.c=build/release/%.o)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/release/%.o: %.c $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/asan/extverity: $(TOOL_SRCS:%.c=build/asan/%.o)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ $(LDLIBS)

build/asan/%.o: %.c $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (asan)"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -O1 $(SANITIZE) -c -o $@ $<

# KVER=: the kernel is prepared (7.3: unpacked, scripts/kernel-7.3.sh)
# before a second make looks up KDIR and KMAKEFLAGS, since make expands a
# whole recipe before it runs its first line.
module:
	$(if $(KVER),$(Q)scripts/kernels.sh prepare $(KVER))
	$(Q)$(MAKE) --no-print-directory module-build

module-build:
	@if [ -z "$(KDIR)" ]; then echo "no kernel headers found: set KDIR= or KVER=" >&2; exit 1; fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKEFLAGS) modules

check-deps:
	$(Q)scripts/install-deps.sh

# TESTS_JOBS: tests/run runs that many tests at once (a VM test leaves a
# core idle part of the time: about 40% of two, measured).
TESTS_JOBS ?= 2
check: check-deps
	$(MAKE) all build/asan/extverity build/asan/extverity-generator
	TESTS_JOBS=$(TESTS_JOBS) tests/run

# The VM tests on a debug kernel built from Debian's linux-source-6.12 with
# KASAN, lockdep, kmemleak (scripts/debug-kernel.sh; docs/testing.md): the
# tests and boots that tests/vm/kernels plans for the series "debug", each
# kernel path of the target once.
check-debug: check-deps
	$(MAKE) tools build/asan/extverity
	TEST_KERNELS=debug TESTS_JOBS=$(TESTS_JOBS) TESTS_OUTDIR=$(CURDIR)/build/tests-debug \
		tests/run --vm

# Mutants (tests/mutants, docs/testing.md "Mutants"): each deliberate bug in
# a copy of the tree, against the tests its patch names; fails unless every
# one is killed.  MUTANTS="03 12" selects some; KVER= the kernel series of
# the VM tests (default 6.12).  Not part of check: about an hour.
.PHONY: check-mutants
check-mutants: check-deps
	KVER=$(or $(KVER),6.12) MUTANTS="$(MUTANTS)" scripts/mutants.sh

# The stress scenario alone, for STRESS_SECONDS (600; make check runs 50 s).
STRESS_SECONDS ?= 600
.PHONY: stress
stress: check-deps
	$(MAKE) all
	VM_STRESS_DURATION=$(STRESS_SECONDS) tests/run tests/vm/t-vm-stress.sh

# libFuzzer harnesses (tests/fuzz, docs/testing.md): clang, ASan and UBSan,
# linked with every tool object but main()'s.  `make fuzz` runs each for
# FUZZ_SECONDS; tests/userspace/t-fuzz.sh runs a short pass in `make check`.
FUZZ_CC := clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,\
	$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS := $(filter-out build/fuzz/obj/tools/programs/extverity.o,\
	$(TOOL_SRCS:%.c=build/fuzz/obj/%.o))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_TARGETS)

fuzz: check-deps
	$(MAKE) fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS)

build/fuzz/obj/%.o: %.c $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (fuzz)"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(CFLAGS) $(FUZZ_FLAGS) \
		-fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -Itools/programs $(CFLAGS) $(FUZZ_FLAGS) \
		-fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

# Not part of check: ratios against dm-verity and raw, see bench/run.sh.
bench: check-deps
	$(MAKE) all
	$(KERNEL_RUN) bench/run.sh

# A Debian root booted from raw, dm-verity and extverity (bench/boot.sh).
bench-boot: check-deps
	$(MAKE) all
	$(KERNEL_RUN) bench/boot.sh

bench-uml: check-deps
	$(MAKE) tools
	bench/uml.sh

demo: check-deps
	$(MAKE) all
	$(KERNEL_RUN) scripts/demo.sh

clean:
	rm -rf build tools/extverity tools/extverity-generator
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi

# Every kernel (scripts/lint.sh); `make lint KDIR=...` only that tree.
lint:
	$(Q)$(if $(filter command line,$(origin KDIR)),KDIR=$(KDIR)) scripts/lint.sh

# The in-tree drop-in for Debian's linux-source-6.1 and -6.12, each checked
# to apply and to pass its tree's checkpatch.pl (docs/kernel-patch.md).
.PHONY: kernel-patch
kernel-patch:
	scripts/kernel-patch.sh 6.1
	scripts/kernel-patch.sh 6.12

# make install [PREFIX=/usr/local] [DESTDIR=]: the tool, its man page and
# bash completion, the systemd generator (under PREFIX/lib/systemd, where
# systemd looks) and its man pages, and for a verified root (docs/boot.md)
# the initramfs-tools hook and local-top script and the dracut module
# (always under /usr/share/initramfs-tools and /usr/lib/dracut/modules.d,
# the only places those look, on Debian as on Fedora).  make install-dkms: the module's source
# for DKMS in $(DESTDIR)/usr/src/extverity-$(VERSION) (then: dkms install
# extverity/$(VERSION)).
PREFIX ?= /usr/local
INITRAMFS_DIR := /usr/share/initramfs-tools
DRACUT_DIR := /usr/lib/dracut/modules.d/90extverity
GENERATOR_DIR = $(PREFIX)/lib/systemd/system-generators
DKMS_DIR := /usr/src/extverity-$(VERSION)
DKMS_FILES := dkms.conf Kbuild drivers/md/Kbuild include/uapi/linux/dm-extverity.h \
	$(filter-out %.mod.c,$(wildcard drivers/md/*.c)) $(wildcard drivers/md/*.h)

.PHONY: install install-dkms uninstall
install: tools
	install -D -m 755 tools/extverity $(DESTDIR)$(PREFIX)/bin/extverity
	install -D -m 644 docs/extverity.8 $(DESTDIR)$(PREFIX)/share/man/man8/extverity.8
	install -D -m 644 scripts/extverity.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/extverity
	install -D -m 755 scripts/initramfs-tools/hooks/extverity \
		$(DESTDIR)$(INITRAMFS_DIR)/hooks/extverity
	install -D -m 755 scripts/initramfs-tools/scripts/local-top/extverity \
		$(DESTDIR)$(INITRAMFS_DIR)/scripts/local-top/extverity
	install -D -m 755 tools/extverity-generator \
		$(DESTDIR)$(GENERATOR_DIR)/extverity-generator
	install -D -m 644 docs/extverity-generator.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/extverity-generator.8
	install -D -m 644 docs/extveritytab.5 $(DESTDIR)$(PREFIX)/share/man/man5/extveritytab.5
	for f in module-setup.sh parse-extverity.sh extverity-root.sh; do \
		install -D -m 755 scripts/dracut/90extverity/$$f $(DESTDIR)$(DRACUT_DIR)/$$f || exit 1; \
	done

install-dkms:
	@for f in $(DKMS_FILES); do \
		echo "install -D -m 644 $$f $(DESTDIR)$(DKMS_DIR)/$$f"; \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_DIR)/$$f || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/extverity \
		$(DESTDIR)$(PREFIX)/share/man/man8/extverity.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/extverity \
		$(DESTDIR)$(INITRAMFS_DIR)/hooks/extverity \
		$(DESTDIR)$(INITRAMFS_DIR)/scripts/local-top/extverity \
		$(DESTDIR)$(GENERATOR_DIR)/extverity-generator \
		$(DESTDIR)$(PREFIX)/share/man/man8/extverity-generator.8 \
		$(DESTDIR)$(PREFIX)/share/man/man5/extveritytab.5 \
		$(addprefix $(DESTDIR)$(DRACUT_DIR)/,module-setup.sh parse-extverity.sh extverity-root.sh)
