# SPDX-License-Identifier: MIT
# bench/bench.mk: benchmark targets, included by the top-level Makefile (which defines CC, BUILD, LUA,
# RUNTIME_SRC, RUNTIME_HDR).
#
#   make bench          full run (about 5.5 min on 2 vCPUs): machine peak + bandwidth, every case, CSV, PNG plots
#   make bench-quick    a few cases (about 10 s), same outputs
#   Both first install gnuplot if missing (make deps-bench); the first build adds about 30 s.
#   make bench-machine  only the machine measurement (FMA peak, read bandwidth)
#   make bench-plot     redraw the plots from an existing $(BUILD)/bench/results.csv
#
# Outputs in $(BUILD)/bench/: results.csv, machine.csv, results.txt (the printed table), prefill_d128.png,
# prefill_d64.png, decode.png. Built with -O2 and no ISA flags: the AVX2 code of the kernels and of
# bench/machine.c carries per-function target attributes.

BENCH_DIR    := $(BUILD)/bench
BENCH_BIN    := $(BENCH_DIR)/bench
BENCH_MBIN   := $(BENCH_DIR)/machine
BENCH_CFLAGS := -O2 -std=c99 -Wall -Wextra -pedantic -pthread $(RUNTIME_INC) -Ibench

# The generated tables the bench uses: catalog models (committed in generated/) and bench-only shapes
# (bench/configs/*.lua, generated into $(BENCH_DIR)/gen at build time), listed in one registry header that the
# generator writes (attngen --registry bench), so bench.c names no model.
BENCH_MODELS  := llama-3-8b gpt2 bert-base llama-3-70b qwen2-5-0-5b gemma-2-2b
BENCH_CONFIGS := $(addprefix configs/,$(addsuffix .lua,$(BENCH_MODELS))) $(wildcard bench/configs/*.lua)
BENCH_XNAMES  := $(basename $(notdir $(wildcard bench/configs/*.lua)))
BENCH_XSRC    := $(foreach m,$(BENCH_XNAMES),$(BENCH_DIR)/gen/$(m)/attngen_$(subst -,_,$(m)).c)
BENCH_GEN_SRC := $(foreach m,$(BENCH_MODELS),generated/$(m)/attngen_$(subst -,_,$(m)).c) $(BENCH_XSRC)
BENCH_REGISTRY := $(BENCH_DIR)/gen/attngen_registry_bench.h
BENCH_GEN_DEF := -I$(BENCH_DIR)/gen $(foreach f,$(BENCH_GEN_SRC),-I$(dir $(f)))
define bench_gen_rule
$(BENCH_DIR)/gen/$(1)/attngen_$(subst -,_,$(1)).c $(BENCH_DIR)/gen/$(1)/attngen_$(subst -,_,$(1)).h &: bench/configs/$(1).lua $(GEN_SRC)
	$$(LUA) gen/attngen.lua $$< -o $(BENCH_DIR)/gen/$(1)
endef
$(foreach m,$(BENCH_XNAMES),$(eval $(call bench_gen_rule,$(m))))
$(BENCH_REGISTRY): $(BENCH_CONFIGS) $(GEN_SRC)
	$(LUA) gen/attngen.lua --registry bench $(BENCH_CONFIGS) -o $(BENCH_DIR)/gen
BENCH_SRC    := bench/bench.c bench/machine.c bench/naive.c
BENCH_HDR    := bench/machine.h bench/naive.h $(wildcard runtime/*.h generated/runtime/*.h) $(BENCH_GEN_SRC:.c=.h) \
                $(BENCH_REGISTRY)

.PHONY: bench bench-quick bench-machine bench-plot

$(BENCH_BIN): $(BENCH_SRC) $(BENCH_HDR) $(RUNTIME_SRC) $(BENCH_GEN_SRC) bench/bench.mk
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) $(BENCH_GEN_DEF) $(BENCH_SRC) $(RUNTIME_SRC) $(BENCH_GEN_SRC) -o $@ -lm

$(BENCH_MBIN): bench/machine.c bench/machine.h bench/bench.mk
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) -DBENCH_MACHINE_MAIN bench/machine.c -o $@

# $(call bench_run,MODE): run the bench (table to stdout and results.txt, exit status kept), then plot.
define bench_run
	@echo "bench: BENCH_MODE=$(1) $(BENCH_BIN) $(BENCH_DIR)"
	@{ BENCH_MODE=$(1) $(BENCH_BIN) $(BENCH_DIR); echo $$? > $(BENCH_DIR)/.status; } | tee $(BENCH_DIR)/results.txt; \
	  st=$$(cat $(BENCH_DIR)/.status); rm -f $(BENCH_DIR)/.status; \
	  $(MAKE) --no-print-directory bench-plot || st=1; \
	  echo "bench: table  $(BENCH_DIR)/results.txt"; \
	  echo "bench: CSV    $(BENCH_DIR)/results.csv (machine: $(BENCH_DIR)/machine.csv)"; \
	  exit $$st
endef

bench: deps-bench $(BENCH_BIN)
	$(call bench_run,full)

bench-quick: deps-bench $(BENCH_BIN)
	$(call bench_run,quick)

bench-machine: $(BENCH_MBIN)
	$(BENCH_MBIN)

bench-plot:
	@if ! command -v gnuplot >/dev/null 2>&1; then \
	  echo "bench: gnuplot not found (make deps-bench installs it): no plots"; exit 1; fi
	@test -f $(BENCH_DIR)/results.csv || { echo "bench: no $(BENCH_DIR)/results.csv: run make bench first"; exit 1; }
	@gnuplot -e "dir='$(BENCH_DIR)'" bench/plot.gp 2>&1 | grep -v 'Skipping data file with no valid points' || true
	@echo "bench: plots  $(BENCH_DIR)/prefill_d128.png $(BENCH_DIR)/prefill_d64.png $(BENCH_DIR)/decode.png"
