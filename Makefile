# SPDX-License-Identifier: GPL-2.0
#
# odf-unionfs: one entry point for building, testing and demonstrating.
#
#   make            build kernel/unionfs.ko and the tools
#   make deps       install the Debian packages the project needs (as root)
#   make check      unit tests + VM tests, ends with "N passed, N failed"
#   make check-long the long VM tests (tests/vm/long/: a million-entry
#                   directory...), same harness and last line
#   make demo       boot the VM and show the union working
#   make bench      readdir: unionfs vs overlayfs vs bare ext4, one VM run
#                   (BENCH_SIZES="1000 10000 100000"; tests/bench/guest.sh)
#   make vm-run CMD='...' | SCRIPT=path   run something in the VM
#   make check-all-kernels  make check on the default kernel, then on
#                   each release or series in OTHER_KVERS (default 6.12)
#   make check-debug  the VM suite on a KASAN/lockdep kernel (slow)
#   make check-fresh  README's "make check" from nothing in a pristine
#                   debootstrap bookworm root (cached in DEBUG_CACHE; long)
#   make dkms-install  the module to DKMS (/usr/src/unionfs-VERSION), built
#                   and installed for every kernel with headers, rebuilt on
#                   kernel upgrades; make dkms-remove undoes it
#   make check-dkms   in check-fresh's pristine root: make dkms-install, then
#                   the VM loads the DKMS build with modprobe and uses it
#   make check-deb    the same with the packages of make deb installed by apt
#   make deb        Debian packages odf-tools and unionfs-dkms in build/deb/
#                   (dpkg-buildpackage, debian/), checked by lintian
#   make fuzz       fuzz the ODF parsers for FUZZ_SECONDS (default 600),
#                   then mount damaged ODFs in the VM as long (the module)
#   make sparse     the module through sparse (C=1)
#   make install    the tools, /sbin/mount.unionfs and the man pages
#                   (DESTDIR=, PREFIX=/usr, HELPERDIR=/sbin)
#   make clean

# The kernel the module is built for and tested on (scripts/kver.sh): by
# default Debian's default kernel, the release linux-image-amd64 depends on
# (6.1 LTS on Debian 12); KVER=6.12 picks the newest 6.12 release installed
# or in Debian's archive, KVER=6.12.118+deb12-amd64 that release (make deps
# installs its image and headers).  Override the headers with KDIR=.
# The default is a recursive variable, evaluated when a recipe runs, not
# when this file is read: "make check" on a fresh machine reads this file
# before "make deps" has installed the headers, and every recipe after
# deps (and scripts/check.sh, which calls kver.sh itself when KVER is
# empty) must see the installed kernel.
ifeq ($(strip $(KVER)),)
KVER = $(shell $(CURDIR)/scripts/kver.sh)
else
override KVER := $(shell $(CURDIR)/scripts/kver.sh $(KVER))
endif
ifeq ($(filter-out /usr/src/linux-headers-,$(strip $(KDIR))),)
KDIR = /usr/src/linux-headers-$(KVER)
endif
export KVER KDIR

# Debug kernel for check-debug: built once, outside the source tree.
DEBUG_CACHE ?= /var/cache/odf-unionfs
export DEBUG_CACHE

VM_RUN = tests/vm/run.sh --kver $(KVER)

.PHONY: all module tools testprogs benchprogs deps check check-long demo bench \
	bench-run vm-run check-debug check-all-kernels check-fresh dkms-install \
	dkms-remove check-dkms check-deb deb fuzz sparse install clean

all: module tools testprogs

module:
	@if [ -z "$(KVER)" ]; then \
		echo "No linux-headers-*-amd64 with a matching /boot/vmlinuz-*: run 'make deps' as root"; \
		exit 1; fi
	$(MAKE) -C kernel KDIR=$(KDIR)

tools:
	$(MAKE) -C tools

# Programs the VM tests run: test helpers and odfedit (writes ODF
# metadata the way the module would, or damages it on purpose).
testprogs: tools
	$(MAKE) -C tests/vm/prog
	$(MAKE) -C tests/unit all

# The program make bench runs in the VM.
benchprogs:
	$(MAKE) -C tests/bench

# Targets that need the packages run deps first, then build in a fresh
# make (KVER is only known once the headers are installed).
deps:
	@scripts/deps.sh $(if $(KVER),--kver $(KVER))

check: deps
	@$(MAKE) --no-print-directory all
	@scripts/check.sh

check-long: deps
	@$(MAKE) --no-print-directory all
	@scripts/check.sh --long

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory vm-run SCRIPT=tests/vm/demo.sh

# Not part of check: numbers to read, never assertions (docs/benchmarks.md).
bench:
	@scripts/deps.sh --bench $(if $(KVER),--kver $(KVER))
	@$(MAKE) --no-print-directory bench-run

bench-run: all benchprogs
	@tests/bench/run.sh --kver "$(KVER)"

# CMD and SCRIPT are taken unexpanded ($(value ...)) and quoted for the
# shell, so "$$x" in a command reaches the guest's shell intact.
shquote = '$(subst ','\'',$(1))'
vm-run:
ifneq ($(value SCRIPT),)
	@$(VM_RUN) --script $(call shquote,$(value SCRIPT))
else ifneq ($(value CMD),)
	@$(VM_RUN) --cmd $(call shquote,$(value CMD))
else
	@echo "usage: make vm-run CMD='command' | SCRIPT=path"; exit 2
endif

# Each kernel in a make of its own (module, initramfs and VM per KVER);
# not what CI runs (.ci/run runs make check: the default kernel only).
OTHER_KVERS ?= 6.12
check-all-kernels:
	@scripts/check-all-kernels.sh default $(OTHER_KVERS)

# DEBUG_KSERIES=6.12 builds and tests the 6.12 debug kernel instead.
DEBUG_KSERIES ?= 6.1
export DEBUG_KSERIES
check-debug: deps
	@scripts/deps.sh --debug
	@scripts/debug-kernel.sh build
	@scripts/debug-kernel.sh check

deb: deps
	@scripts/deps.sh --deb
	@scripts/deb.sh

# DKMS from the tree (scripts/dkms.sh); the unionfs-dkms package does the
# same from /usr/src.
dkms-install:
	@scripts/deps.sh --dkms
	@scripts/dkms.sh install

dkms-remove:
	@scripts/dkms.sh remove

# Not part of check: dkms-install on a throw-away Debian 12 root (it writes
# /usr/src and /lib/modules), then the DKMS module in the VM.
check-dkms:
	@scripts/deps.sh --fresh
	@FRESH_CMD=scripts/check-dkms.sh FRESH_LOG=build/fresh/dkms.log scripts/check-fresh.sh

check-deb:
	@scripts/deps.sh --fresh
	@FRESH_CMD="scripts/check-dkms.sh --deb" FRESH_LOG=build/fresh/deb.log scripts/check-fresh.sh

# Not part of check: README's "make check" on a Debian 12 root that has
# never seen the project (scripts/check-fresh.sh).
check-fresh:
	@scripts/deps.sh --fresh
	@scripts/check-fresh.sh

# First the parsers of tools/lib and odfck under libFuzzer, then the
# module: union-odf-damage's structure-aware mutations of every ODF
# structure, each volume mounted and used in the VM, for as long (at most
# the 2400 s the long test's timeout allows).
FUZZ_SECONDS ?= 600
fuzz: deps
	@scripts/deps.sh --fuzz
	$(MAKE) -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory all
	VM_TEST_ENV="DAMAGE_SECONDS=$$(( $(FUZZ_SECONDS) < 2400 ? $(FUZZ_SECONDS) : 2400 ))" \
		tests/vm/run.sh --kver "$(KVER)" --out build/vm-fuzz \
		tests/vm/long/union-odf-damage-long.sh

install: tools
	$(MAKE) -C tools install

sparse: deps
	$(MAKE) -C kernel KDIR=$(KDIR) C=2 CF="-D__CHECK_ENDIAN__"

clean:
	-$(MAKE) -C kernel KDIR=$(KDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/fuzz clean
	$(MAKE) -C tests/vm/prog clean
	$(MAKE) -C tests/bench clean
	rm -rf build
