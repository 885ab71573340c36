# SPDX-License-Identifier: MIT
# tests/tests.mk — the numerical test suite. Included by the top-level Makefile (which defines LUA, CC, BUILD,
# RUNTIME_SRC); the defaults below let it also run alone:  make -f tests/tests.mk test-native
#
#   make test-native   generate tests/configs/*.lua, build the Criterion suite with gcc and with clang
#                      (-O2 -Wall -Wextra -Werror, no ISA flags) and run both (clang: every third case of
#                      each kernel, TEST_CLANG_SAMPLE)
#   make test-neon     cross-build tests/run_cases.c for aarch64 (static) and run it under qemu-aarch64
#                      on the reduced case subset (NEON + scalar + generic kernels)
#   make test-cases    the same runner natively, full case list (no Criterion)
#
# Knobs: TEST_JOBS (parallel cases, default: CPUs), TEST_CRITERION_FLAGS, TEST_RUN_FLAGS (e.g. -v),
#        ATTNGEN_TEST_FILTER=substring (Criterion) / TEST_FILTER=substring (run_cases), TEST_CLANG_SAMPLE.

LUA         ?= lua5.4
BUILD       ?= build
RUNTIME_SRC ?= $(sort $(wildcard runtime/*.c)) generated/runtime/attngen_generic.c
RUNTIME_INC ?= -Iruntime -Igenerated/runtime

TEST_GCC      ?= gcc
TEST_CLANG    ?= clang
TEST_A64_CC   ?= aarch64-linux-gnu-gcc
TEST_QEMU     ?= qemu-aarch64
TEST_A64_ROOT ?= /usr/aarch64-linux-gnu
TEST_JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
TEST_CRITERION_FLAGS ?= --jobs $(TEST_JOBS)
TEST_RUN_FLAGS ?=
TEST_FILTER   ?=

TEST_WARN     := -O2 -Wall -Wextra -Werror
# the runtime and generated kernels claim plain C99 with no ISA flags; the test sources use Criterion and POSIX
TEST_LIB_STD  := -std=c99 -pedantic
TEST_SRC_STD  := -std=gnu11

TEST_CONFIGS := $(sort $(wildcard tests/configs/*.lua))
TEST_MODELS  := $(basename $(notdir $(TEST_CONFIGS)))
test_cname    = $(subst -,_,$(1))
TEST_GEN_DIRS := $(addprefix $(BUILD)/gen/,$(TEST_MODELS))
TEST_GEN_C   := $(foreach m,$(TEST_MODELS),$(BUILD)/gen/$(m)/attngen_$(call test_cname,$(m)).c)
TEST_GEN_H   := $(TEST_GEN_C:.c=.h)
TEST_GEN_DEPS := $(wildcard gen/*.lua gen/*/*.lua templates/* templates/*/*)
TEST_TABLES_H := $(BUILD)/tests/attngen_registry_test.h

TEST_INC  := $(RUNTIME_INC) -Itests -I$(BUILD)/tests $(addprefix -I,$(TEST_GEN_DIRS))
TEST_HDRS := $(wildcard runtime/*.h generated/runtime/*.h) tests/cases.h tests/reference.h tests/rope_cases.h tests/kv_types.h tests/merge_cases.h tests/paged_cases.h \
             $(TEST_GEN_H) $(TEST_TABLES_H)

# ---- generation: tests/configs/X.lua -> $(BUILD)/gen/X/attngen_<cname>.{c,h} ----
define test_gen_rule
$(BUILD)/gen/$(1)/attngen_$(call test_cname,$(1)).c $(BUILD)/gen/$(1)/attngen_$(call test_cname,$(1)).h &: tests/configs/$(1).lua $(TEST_GEN_DEPS)
	$$(LUA) gen/attngen.lua $$< -o $(BUILD)/gen/$(1)
	@touch $(BUILD)/gen/$(1)/attngen_$(call test_cname,$(1)).c $(BUILD)/gen/$(1)/attngen_$(call test_cname,$(1)).h
endef
$(foreach m,$(TEST_MODELS),$(eval $(call test_gen_rule,$(m))))

# The registry of test tables (each generated header, TEST_TABLES(X)), written by the generator itself.
# Depends on the configs directory so that adding or removing a config regenerates it.
$(TEST_TABLES_H): tests/configs $(TEST_CONFIGS) $(TEST_GEN_DEPS)
	@mkdir -p $(@D)
	$(LUA) gen/attngen.lua --registry test $(TEST_CONFIGS) -o $(@D)

# ---- objects and binaries, per toolchain: gcc, clang (native), a64 (aarch64, static) ----
TEST_LIB_SRC  = $(RUNTIME_SRC) $(TEST_GEN_C)
TEST_COMMON   = tests/reference.c tests/cases.c tests/rope_cases.c tests/kv_types.c tests/merge_cases.c tests/paged_cases.c

# $(1) toolchain id, $(2) source
define test_obj_rule
$(BUILD)/tests/$(1)/$(notdir $(2:.c=.o)): $(2) $(TEST_HDRS)
	@mkdir -p $$(@D)
	$$(TEST_CC_$(1)) $$(TEST_OPT_$(1)) $(if $(filter tests/%,$(2)),$(TEST_SRC_STD),$(TEST_LIB_STD)) $$(TEST_XFLAGS_$(1)) $(TEST_INC) -c $$< -o $$@
endef

TEST_CC_gcc   = $(TEST_GCC)
TEST_CC_clang = $(TEST_CLANG)
TEST_CC_a64   = $(TEST_A64_CC)
TEST_CC_san   = $(TEST_GCC)
TEST_OPT_gcc   = $(TEST_WARN)
TEST_OPT_clang = $(TEST_WARN)
TEST_OPT_a64   = $(TEST_WARN)
TEST_SAN_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
TEST_OPT_san   = -O1 -g -fno-var-tracking -Wall $(TEST_SAN_FLAGS) # as TEST_OPT_fuzz below
# every build of the runtime for tests fills each scratch buffer a plan takes with quiet NaNs (runtime/attngen_memory.c,
# ATTNGEN_POISON_SCRATCH): a kernel that lets a number it did not write reach an output fails its checks
TEST_POISON := -DATTNGEN_POISON_SCRATCH
TEST_XFLAGS_gcc := $(TEST_POISON)
TEST_XFLAGS_clang := $(TEST_POISON)
TEST_XFLAGS_a64 := $(TEST_POISON)
TEST_XFLAGS_san := $(TEST_POISON)
TEST_LDFLAGS_a64 := -static

$(foreach tc,gcc clang a64 san,$(foreach s,$(TEST_LIB_SRC) $(TEST_COMMON) tests/run_cases.c,$(eval $(call test_obj_rule,$(tc),$(s)))))
$(foreach tc,gcc clang,$(eval $(call test_obj_rule,$(tc),tests/test_kernels.c)))

test_objs = $(addprefix $(BUILD)/tests/$(1)/,$(notdir $(patsubst %.c,%.o,$(TEST_LIB_SRC) $(TEST_COMMON) $(2))))

$(BUILD)/tests/gcc/test_kernels: $(call test_objs,gcc,tests/test_kernels.c)
	$(TEST_GCC) -o $@ $^ -lcriterion -lm -lpthread
$(BUILD)/tests/clang/test_kernels: $(call test_objs,clang,tests/test_kernels.c)
	$(TEST_CLANG) -o $@ $^ -lcriterion -lm -lpthread
$(BUILD)/tests/gcc/run_cases: $(call test_objs,gcc,tests/run_cases.c)
	$(TEST_GCC) -o $@ $^ -lm -lpthread
$(BUILD)/tests/a64/run_cases: $(call test_objs,a64,tests/run_cases.c)
	$(TEST_A64_CC) $(TEST_LDFLAGS_a64) -o $@ $^ -lm -lpthread

.PHONY: test-native test-neon test-cases test-build test-gen test-binaries
test-gen: $(TEST_GEN_C) $(TEST_GEN_H) $(TEST_TABLES_H)
test-build: $(BUILD)/tests/gcc/test_kernels $(BUILD)/tests/clang/test_kernels $(BUILD)/tests/gcc/run_cases

# make test builds the binaries of its groups first, TEST_JOBS compilers at a time (the groups then run one after
# another): built group by group, one compiler at a time, they took about 15 of its minutes on 2 cores
TEST_BINARIES = $(BUILD)/tests/gcc/test_kernels $(BUILD)/tests/clang/test_kernels $(BUILD)/tests/fuzz/fuzz_args \
                $(BUILD)/tests/a64/run_cases
test-binaries:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) $(TEST_BINARIES)

# both builds always run; the target fails if either failed. The clang build runs every kernel on every
# TEST_CLANG_SAMPLE-th of its cases (1: all); the gcc build runs them all.
TEST_CLANG_SAMPLE ?= 3
test-native: $(BUILD)/tests/gcc/test_kernels $(BUILD)/tests/clang/test_kernels
	@st=0; \
	echo "== Criterion suite, gcc build =="; $(BUILD)/tests/gcc/test_kernels $(TEST_CRITERION_FLAGS) || st=1; \
	echo "== Criterion suite, clang build (every $(TEST_CLANG_SAMPLE)th case of each kernel) =="; \
	ATTNGEN_TEST_SAMPLE=$(TEST_CLANG_SAMPLE) $(BUILD)/tests/clang/test_kernels $(TEST_CRITERION_FLAGS) || st=1; \
	exit $$st

test-cases: $(BUILD)/tests/gcc/run_cases
	$(BUILD)/tests/gcc/run_cases -j $(TEST_JOBS) $(TEST_RUN_FLAGS) $(TEST_FILTER)

test-neon: $(BUILD)/tests/a64/run_cases
	$(TEST_QEMU) -L $(TEST_A64_ROOT) $(BUILD)/tests/a64/run_cases --qemu -j $(TEST_JOBS) $(TEST_RUN_FLAGS) $(TEST_FILTER)

# ---- optional: the full case list under AddressSanitizer + UBSan (inputs are allocated to their exact
# extent, so any read past a tensor is reported). Not part of `make test`; the build is slow (~4 min, -j2).
$(BUILD)/tests/san/run_cases: $(call test_objs,san,tests/run_cases.c)
	$(TEST_GCC) $(TEST_SAN_FLAGS) -o $@ $^ -lm -lpthread
.PHONY: test-sanitize
test-sanitize: $(BUILD)/tests/san/run_cases
	ASAN_OPTIONS=detect_leaks=1 $(BUILD)/tests/san/run_cases -j $(TEST_JOBS) $(TEST_RUN_FLAGS) $(TEST_FILTER)

# ---- make test-fuzz (part of `make test`): tests/fuzz_args.c under ASan + UBSan (-fno-sanitize-recover=all):
# deterministic checks of sizes, threads, ISAs and aliasing, then a bounded random loop over valid and invalid attngen_args (valid
# calls against the float64 reference, invalid ones must fail with a message and write nothing), and every third
# iteration the attention features' values (tests/fuzz_args.c, feature_iteration): t-window-sinks-h6-kv2-d40's
# specialized window and sink-logit kernels, and t-features-neon-h5-d24, whose NEON-only table binds the generic
# kernels with every feature's table values on x86. Five small test tables keep the sanitizer build short. Knobs:
# FUZZ_SECONDS (default 30), FUZZ_SEED (the default seed is printed), FUZZ_ITERS=N (a fixed count instead of a time;
# replays a run exactly).
FUZZ_SECONDS ?= 30
FUZZ_SEED    ?=
FUZZ_ITERS   ?=
FUZZ_MODELS  := t-tail-h2-d17 t-odd-h6-d40 t-window-sinks-h6-kv2-d40 t-features-neon-h5-d24 t-paged-window-h4-kv2-d32 t-lanes-h8-kv2-d20
FUZZ_GEN_C   := $(foreach m,$(FUZZ_MODELS),$(BUILD)/gen/$(m)/attngen_$(call test_cname,$(m)).c)
FUZZ_SRC     := $(RUNTIME_SRC) $(FUZZ_GEN_C) tests/reference.c tests/fuzz_args.c
TEST_FUZZ_FLAGS ?= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_CC_fuzz     = $(TEST_GCC)
# -g for the reports' file and line; -fno-var-tracking: gcc's tracking of variables across the long unrolled kernels
# was most of the build (one table 44 s with it, 12 s without), and a report needs only the line
TEST_OPT_fuzz    = -O1 -g -fno-var-tracking -Wall -Wextra $(TEST_FUZZ_FLAGS)
TEST_XFLAGS_fuzz = $(TEST_POISON) -D'FUZZ_TABLES(X)=$(foreach m,$(FUZZ_MODELS),X($(call test_cname,$(m))))'
$(foreach s,$(FUZZ_SRC),$(eval $(call test_obj_rule,fuzz,$(s))))
$(BUILD)/tests/fuzz/fuzz_args: $(addprefix $(BUILD)/tests/fuzz/,$(notdir $(FUZZ_SRC:.c=.o)))
	$(TEST_GCC) $(TEST_FUZZ_FLAGS) -o $@ $^ -lm -lpthread
.PHONY: test-fuzz
test-fuzz: $(BUILD)/tests/fuzz/fuzz_args
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  $(if $(FUZZ_SEED),FUZZ_SEED=$(FUZZ_SEED)) $(if $(FUZZ_ITERS),FUZZ_ITERS=$(FUZZ_ITERS)) $<
