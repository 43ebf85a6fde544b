# SPDX-License-Identifier: GPL-2.0
#
# extverity: the dm-extverity kernel module and the extverity tool.
#
#   make            build tools/extverity and drivers/md/dm-extverity.ko
#   make check      install missing build/test dependencies, build, run all tests
#   make demo       format a sample image, verify it, show a corruption report
#   make bench      extverity vs dm-verity vs raw in one VM run (bench/results/)
#   make lint       checkpatch --strict, sparse (C=1) and W=1 on the kernel code
#   make clean
#
# KDIR selects the kernel build tree (default: the running kernel's, else the
# newest installed Debian headers).  V=1 shows the commands.

VERSION := 1.0.0

CC ?= cc
override CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wno-unused-parameter -fno-strict-aliasing $(CFLAGS)
override CPPFLAGS := -Iinclude/uapi -Itools/lib -Idrivers/md \
	-DEXTVERITY_VERSION='"$(VERSION)"' $(CPPFLAGS)
LDLIBS := -lext2fs -lcom_err -lcrypto -lpthread -ldevmapper

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

# Kernel build tree.
ifeq ($(origin KDIR), undefined)
KDIR := $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
endif

.PHONY: all tools module check check-deps demo lint clean bench
all: tools module

tools: tools/extverity

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

module:
	@if [ -z "$(KDIR)" ]; then echo "no kernel headers found: set KDIR=" >&2; exit 1; fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

check-deps:
	$(Q)scripts/install-deps.sh

check: check-deps
	$(MAKE) all build/asan/extverity
	tests/run

# Not part of check: ratios against dm-verity and raw, see bench/run.sh.
bench: check-deps
	$(MAKE) all
	bench/run.sh

demo: check-deps
	$(MAKE) all
	scripts/demo.sh

clean:
	rm -rf build tools/extverity
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi

lint:
	$(Q)KDIR=$(KDIR) scripts/lint.sh

# make install [PREFIX=/usr/local] [DESTDIR=]: the tool, its man page and
# bash completion.  make install-dkms: the module's source for DKMS in
# $(DESTDIR)/usr/src/extverity-$(VERSION) (then: dkms install extverity/$(VERSION)).
PREFIX ?= /usr/local
DKMS_DIR := /usr/src/extverity-$(VERSION)
DKMS_FILES := dkms.conf Kbuild drivers/md/Kbuild include/uapi/linux/dm-extverity.h \
	$(filter-out %.mod.c,$(wildcard drivers/md/*.c)) $(wildcard drivers/md/*.h)

.PHONY: install install-dkms uninstall
install: tools
	install -D -m 755 tools/extverity $(DESTDIR)$(PREFIX)/bin/extverity
	install -D -m 644 docs/extverity.8 $(DESTDIR)$(PREFIX)/share/man/man8/extverity.8
	install -D -m 644 scripts/extverity.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/extverity

install-dkms:
	@for f in $(DKMS_FILES); do \
		echo "install -D -m 644 $$f $(DESTDIR)$(DKMS_DIR)/$$f"; \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_DIR)/$$f || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/extverity \
		$(DESTDIR)$(PREFIX)/share/man/man8/extverity.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/extverity
