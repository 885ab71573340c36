# SPDX-License-Identifier: MIT
# attngen — see README.md. `make` brings generated/ up to date and runs the default model's demo; `make test` runs
# every test; `make help` lists the targets and variables.
LUA      ?= lua5.4
LUAJIT   ?= luajit
CC       ?= cc
BUILD    := build
CFLAGS   ?= -O2
WARN     := -std=c99 -Wall -Wextra -Werror -pedantic
# runtime/ is hand-written, one file per job (every .c and .h there belongs to the runtime); generated/runtime/ is
# its generated part (attngen_spec.h from gen/spec.lua, and the generic kernels), written by `attngen --runtime`
GEN_RUNTIME := generated/runtime
RUNTIME_SRC := $(sort $(wildcard runtime/*.c)) $(GEN_RUNTIME)/attngen_generic.c
RUNTIME_HDR := $(sort $(wildcard runtime/*.h)) $(GEN_RUNTIME)/attngen_spec.h
RUNTIME_INC := -Iruntime -I$(GEN_RUNTIME)
GEN_SRC  := $(wildcard gen/*.lua gen/isa/*.lua templates/*.tpl templates/isa/*.c)
CONFIGS  := $(wildcard configs/*.lua)
MODELS   := $(patsubst configs/%.lua,%,$(CONFIGS))
DEFAULT_MODEL ?= llama-3-8b

cname = $(subst -,_,$(1))

.PHONY: all deps deps-test deps-bench generate demo test check-generated test-generator size-table clean help
.DEFAULT_GOAL := all

all: deps generate demo

help:
	@echo "Targets (README.md has the details):"
	@echo "  make, make all       deps, then generate (every stale model and the generic kernels), then demo"
	@echo "  make demo            build and run the demo of DEFAULT_MODEL (kernel chosen, error vs float64, speed)"
	@echo "  make generate        regenerate generated/<model>/ for every configs/*.lua, and $(GEN_RUNTIME)/"
	@echo "  make generated/<model>/attngen_<cname>.c   regenerate one model (<cname>: <model> with - as _)"
	@echo "  make check-generated regenerate with LUA and LUAJIT; fail on any difference from the committed files"
	@echo "  make deps            install missing Debian packages for building (tools/deps.sh build)"
	@echo "  make deps-test       ... and for make test (Criterion, aarch64 gcc, qemu-user, cmake, pkg-config)"
	@echo "  make deps-bench      ... and for make bench (gnuplot)"
	@echo "  make test            every test group below (deps-test first)"
	@echo "    test-generator     bad configs and flags, lua5.4/luajit identity (tests/test_generator.sh)"
	@echo "    check-generated    the drift check above"
	@echo "    test-native        Criterion kernel suite, gcc and clang builds (tests/tests.mk)"
	@echo "    test-neon          the case list cross-built for aarch64, run under qemu-aarch64"
	@echo "    test-downstream    examples/downstream: -gcc, -clang, -aarch64, -cmake; examples/paged: -paged (each a target)"
	@echo "    test-install       install into a temporary prefix, build with CMake and pkg-config, uninstall"
	@echo "    test-python        the Python package (python/tests) against float64 NumPy; PYTHON=$(PYTHON)"
	@echo "  make test-cases      the native case runner, no Criterion (TEST_FILTER=substring)"
	@echo "  make test-sanitize   the case list under ASan + UBSan (slow; not part of make test)"
	@echo "  make test-gen, test-build   only generate / build the test suites"
	@echo "  make bench           full benchmark (5.5-7 min): table, $(BUILD)/bench/results.csv, PNG plots"
	@echo "  make bench-quick     a few cases (~10 s), same outputs; both run deps-bench first"
	@echo "  make bench-machine   only the machine measurement (FMA peak, read bandwidth)"
	@echo "  make bench-plot      redraw the plots from $(BUILD)/bench/results.csv"
	@if [ -f bench/peers/peers.mk ]; then \
	  echo "  make bench-peers     attngen vs PyTorch, ONNX Runtime, OpenVINO (needs PyPI; bench-peers-plot redraws)"; fi
	@if [ -f tests/golden/golden.mk ]; then \
	  echo "  make golden          tests/golden/data from the models' own code (needs PyPI; GOLDEN_PYTHON=, GOLDEN_MODELS=)"; \
	  echo "  make check-catalog   the catalog's attention values against transformers (needs PyPI; GOLDEN_PYTHON=)"; fi
	@echo "  make size-table      docs/size_table.md: kernels, lines, bytes, compile time, .text per model"
	@echo "  make $(BUILD)/python/libattngen.so   the runtime as a shared library, for the Python package (python/)"
	@echo "  make install         generator command, libattngen.a, headers, attngen.pc, CMake package (install.mk)"
	@echo "  make uninstall       remove exactly what make install installed (its manifest)"
	@echo "  make clean           remove $(BUILD)/"
	@echo "  make help            this list"
	@echo "Variables (make VAR=value ...):"
	@echo "  DEFAULT_MODEL=$(DEFAULT_MODEL)   model of the demo (any configs/<model>.lua)"
	@echo "  CC=$(CC) CFLAGS=$(CFLAGS)   compiler and flags of the demo and the installed library"
	@echo "  LUA=$(LUA) LUAJIT=$(LUAJIT)   interpreters of generate / check-generated"
	@echo "  PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)   install location (staged under DESTDIR when set)"
	@echo "  INSTALL_CFLAGS       flags of libattngen.a (default: CFLAGS -fPIC)"
	@echo "  TEST_JOBS TEST_FILTER ATTNGEN_TEST_FILTER TEST_CRITERION_FLAGS TEST_RUN_FLAGS TEST_GCC TEST_CLANG"
	@echo "  TEST_A64_CC TEST_QEMU   test knobs (tests/tests.mk, tests/README.md)"
	@echo "  BENCH_FILTER=substring BENCH_CASE_SECONDS BENCH_BW_MIB   bench knobs (BENCH_MODE: bench=full, bench-quick=quick)"
	@echo "Environment of programs using attngen: ATTNGEN_VERBOSE=1 (log selections), ATTNGEN_ISA=scalar|avx512|avx2|neon"
deps:
	@sh tools/deps.sh build
deps-test:
	@sh tools/deps.sh test
deps-bench:
	@sh tools/deps.sh bench

# ---- generation: one rule per model, outputs written atomically by the generator
generate: $(foreach m,$(MODELS),generated/$(m)/attngen_$(call cname,$(m)).c) $(GEN_RUNTIME)/attngen_generic.c

define model_rule
generated/$(1)/attngen_$(call cname,$(1)).c generated/$(1)/attngen_$(call cname,$(1)).h &: configs/$(1).lua $(GEN_SRC)
	$(LUA) gen/attngen.lua configs/$(1).lua -o generated/$(1)
endef
$(foreach m,$(MODELS),$(eval $(call model_rule,$(m))))

$(GEN_RUNTIME)/attngen_generic.c $(GEN_RUNTIME)/attngen_spec.h $(GEN_RUNTIME)/attngen_spec.py &: $(GEN_SRC)
	$(LUA) gen/attngen.lua --runtime -o $(GEN_RUNTIME)

# ---- drift: what is committed must be exactly what both interpreters generate
check-generated: deps
	@rm -rf $(BUILD)/regen && mkdir -p $(BUILD)/regen
	@set -e; for lua in $(LUA) $(LUAJIT); do \
	  for m in $(MODELS); do $$lua gen/attngen.lua configs/$$m.lua -o $(BUILD)/regen/$$lua/generated/$$m; done; \
	  $$lua gen/attngen.lua --runtime -o $(BUILD)/regen/$$lua/generated/runtime; \
	done
	@set -e; fail=0; for lua in $(LUA) $(LUAJIT); do \
	  for m in $(MODELS); do \
	    diff -r -q generated/$$m $(BUILD)/regen/$$lua/generated/$$m >/dev/null || { echo "drift: generated/$$m differs from $$lua output (run make generate)"; fail=1; }; \
	  done; \
	  diff -r -q $(GEN_RUNTIME) $(BUILD)/regen/$$lua/generated/runtime >/dev/null || { echo "drift: $(GEN_RUNTIME) differs from $$lua output (run make generate)"; fail=1; }; \
	done; \
	for d in generated/*/; do m=$$(basename $$d); [ $$m = runtime ] || [ -f configs/$$m.lua ] || { echo "drift: generated/$$m has no configs/$$m.lua"; fail=1; }; done; \
	[ $$fail = 0 ] && echo "check-generated: $(words $(MODELS)) models + generic identical under $(LUA) and $(LUAJIT)"; exit $$fail

# ---- demo: the default model's kernel against the reference and the generic kernel
DEMO_MODEL_DIR := generated/$(DEFAULT_MODEL)
$(BUILD)/demo: examples/demo/demo.c $(RUNTIME_SRC) $(RUNTIME_HDR) $(DEMO_MODEL_DIR)/attngen_$(call cname,$(DEFAULT_MODEL)).c
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(WARN) $(RUNTIME_INC) -I$(DEMO_MODEL_DIR) \
	  -DATTNGEN_DEMO_HEADER='"attngen_$(call cname,$(DEFAULT_MODEL)).h"' \
	  -DATTNGEN_DEMO_TABLE=attngen_table_$(call cname,$(DEFAULT_MODEL)) \
	  examples/demo/demo.c $(DEMO_MODEL_DIR)/attngen_$(call cname,$(DEFAULT_MODEL)).c $(RUNTIME_SRC) -o $@ -lm -lpthread
demo: $(BUILD)/demo
	$(BUILD)/demo

# ---- tests
test-generator:
	@sh tests/test_generator.sh

test: deps-test test-generator check-generated test-binaries test-native test-fuzz test-neon test-downstream test-install test-python
	@echo "make test: all test groups passed"

-include tests/tests.mk
-include bench/bench.mk
-include bench/peers/peers.mk
-include bench/neon_model.mk
-include examples/downstream/downstream.mk
-include examples/paged/paged.mk
-include install.mk
-include python/python.mk
-include tests/golden/golden.mk

# docs/size_table.md (linked from README.md and docs/performance.md)
size-table: generate
	@sh tools/size_table.sh
	@echo "size-table: docs/size_table.md updated"

clean:
	rm -rf $(BUILD)
