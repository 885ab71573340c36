# SPDX-License-Identifier: MIT
# Included by the top-level Makefile: `make test-downstream-paged` (part of test-downstream) generates, builds and
# runs examples/paged natively and, cross-built, under qemu-aarch64 (the NEON kernels).
PAGED_EXAMPLE_BUILD ?= build/paged-example
PAGED_EXAMPLE_MAKE   = $(MAKE) --no-print-directory -C examples/paged ATTNGEN_ROOT=$(CURDIR) LUA=$(LUA)

.PHONY: test-downstream-paged
test-downstream-paged:
	$(PAGED_EXAMPLE_MAKE) CC=gcc BUILD=$(abspath $(PAGED_EXAMPLE_BUILD))/gcc run
	$(PAGED_EXAMPLE_MAKE) CC=aarch64-linux-gnu-gcc LDFLAGS=-static RUN="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
	  BUILD=$(abspath $(PAGED_EXAMPLE_BUILD))/aarch64 run
