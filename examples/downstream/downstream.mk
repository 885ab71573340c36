# SPDX-License-Identifier: MIT
# Included by the top-level Makefile: `make test-downstream` builds examples/downstream the way a project
# that vendors attngen would (plain C99, -Wall -Wextra -Werror -pedantic, no ISA flags) with gcc, clang,
# the aarch64 cross compiler under qemu, and CMake, and runs each build's self-check.
# Every name here starts with DOWNSTREAM_ or test-downstream so it cannot clash with the includer's.

DOWNSTREAM_DIR     := examples/downstream
DOWNSTREAM_BUILD   ?= build/downstream
DOWNSTREAM_QEMU    ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
DOWNSTREAM_A64_CC  ?= aarch64-linux-gnu-gcc
DOWNSTREAM_MAKE     = $(MAKE) --no-print-directory -C $(DOWNSTREAM_DIR) ATTNGEN_ROOT=$(CURDIR)

.PHONY: test-downstream test-downstream-gcc test-downstream-clang test-downstream-aarch64 test-downstream-cmake
# the five builds are independent (each its own build directory): TEST_JOBS (make test's) of them at a time, each
# one's output printed whole when it ends
DOWNSTREAM_JOBS    ?= $(or $(TEST_JOBS),1)
test-downstream:
	@$(MAKE) --no-print-directory -j$(DOWNSTREAM_JOBS) --output-sync=target test-downstream-gcc test-downstream-clang \
	  test-downstream-aarch64 test-downstream-cmake test-downstream-paged
	@echo "test-downstream: gcc, clang, aarch64 (qemu) and cmake builds, and the paged-cache example, all passed"

test-downstream-gcc:
	$(DOWNSTREAM_MAKE) CC=gcc BUILD=$(abspath $(DOWNSTREAM_BUILD))/gcc run
test-downstream-clang:
	$(DOWNSTREAM_MAKE) CC=clang BUILD=$(abspath $(DOWNSTREAM_BUILD))/clang run
test-downstream-aarch64:
	$(DOWNSTREAM_MAKE) CC=$(DOWNSTREAM_A64_CC) RUN="$(DOWNSTREAM_QEMU)" \
	  BUILD=$(abspath $(DOWNSTREAM_BUILD))/aarch64 run
test-downstream-cmake:
	cmake -S $(DOWNSTREAM_DIR) -B $(DOWNSTREAM_BUILD)/cmake -DATTNGEN_ROOT=$(CURDIR) >/dev/null
	cmake --build $(DOWNSTREAM_BUILD)/cmake
	cd $(DOWNSTREAM_BUILD)/cmake && ctest --output-on-failure
