# attngen — see README.md. `make` generates the default model and runs the demo; `make test` runs every test.
LUA      ?= lua5.4
LUAJIT   ?= luajit
CC       ?= cc
BUILD    := build
CFLAGS   ?= -O2
WARN     := -std=c99 -Wall -Wextra -Werror -pedantic
RUNTIME_SRC := runtime/attngen.c runtime/attngen_generic.c
RUNTIME_HDR := runtime/attngen.h runtime/attngen_kernel.h
GEN_SRC  := $(wildcard gen/*.lua gen/isa/*.lua templates/*.tpl templates/isa/*.c)
CONFIGS  := $(wildcard configs/*.lua)
MODELS   := $(patsubst configs/%.lua,%,$(CONFIGS))
DEFAULT_MODEL ?= llama-3-8b

cname = $(subst -,_,$(1))

.PHONY: all deps deps-test deps-bench generate demo test check-generated test-generator size-table clean help
.DEFAULT_GOAL := all

all: deps generate demo

help:
	@echo "make                 install missing packages, generate generated/$(DEFAULT_MODEL), run the demo"
	@echo "make test            every test: generator, drift, kernels (gcc+clang), NEON under qemu, downstream"
	@echo "make generate        regenerate generated/<model>/ for every configs/*.lua and runtime/attngen_generic.c"
	@echo "make check-generated regenerate with lua5.4 and luajit and fail on any difference from the committed files"
	@echo "make bench           full benchmark (table, CSV, PNG plots in build/bench/); bench-quick: a short one"
	@echo "make size-table      docs/size_table.md: lines, bytes, compile time, .text per model"

deps:
	@sh tools/deps.sh build
deps-test:
	@sh tools/deps.sh test
deps-bench:
	@sh tools/deps.sh bench

# ---- generation: one rule per model, outputs written atomically by the generator
generate: $(foreach m,$(MODELS),generated/$(m)/attngen_$(call cname,$(m)).c) runtime/attngen_generic.c

define model_rule
generated/$(1)/attngen_$(call cname,$(1)).c generated/$(1)/attngen_$(call cname,$(1)).h &: configs/$(1).lua $(GEN_SRC)
	$(LUA) gen/attngen.lua configs/$(1).lua -o generated/$(1)
endef
$(foreach m,$(MODELS),$(eval $(call model_rule,$(m))))

runtime/attngen_generic.c: $(GEN_SRC)
	$(LUA) gen/attngen.lua --generic -o runtime

# ---- drift: what is committed must be exactly what both interpreters generate
check-generated:
	@rm -rf $(BUILD)/regen && mkdir -p $(BUILD)/regen
	@set -e; for lua in $(LUA) $(LUAJIT); do \
	  for m in $(MODELS); do $$lua gen/attngen.lua configs/$$m.lua -o $(BUILD)/regen/$$lua/generated/$$m; done; \
	  $$lua gen/attngen.lua --generic -o $(BUILD)/regen/$$lua/runtime; \
	done
	@set -e; fail=0; for lua in $(LUA) $(LUAJIT); do \
	  for m in $(MODELS); do \
	    diff -r -q generated/$$m $(BUILD)/regen/$$lua/generated/$$m >/dev/null || { echo "drift: generated/$$m differs from $$lua output (run make generate)"; fail=1; }; \
	  done; \
	  cmp -s runtime/attngen_generic.c $(BUILD)/regen/$$lua/runtime/attngen_generic.c || { echo "drift: runtime/attngen_generic.c differs from $$lua output"; fail=1; }; \
	done; \
	for d in generated/*/; do m=$$(basename $$d); [ -f configs/$$m.lua ] || { echo "drift: generated/$$m has no configs/$$m.lua"; fail=1; }; done; \
	[ $$fail = 0 ] && echo "check-generated: $(words $(MODELS)) models + generic identical under $(LUA) and $(LUAJIT)"; exit $$fail

# ---- demo: the default model's kernel against the reference and the generic kernel
DEMO_MODEL_DIR := generated/$(DEFAULT_MODEL)
$(BUILD)/demo: examples/demo/demo.c $(RUNTIME_SRC) $(RUNTIME_HDR) $(DEMO_MODEL_DIR)/attngen_$(call cname,$(DEFAULT_MODEL)).c
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(WARN) -Iruntime -I$(DEMO_MODEL_DIR) \
	  -DATTNGEN_DEMO_HEADER='"attngen_$(call cname,$(DEFAULT_MODEL)).h"' \
	  -DATTNGEN_DEMO_TABLE=attngen_table_$(call cname,$(DEFAULT_MODEL)) \
	  examples/demo/demo.c $(DEMO_MODEL_DIR)/attngen_$(call cname,$(DEFAULT_MODEL)).c $(RUNTIME_SRC) -o $@ -lm -lpthread
demo: $(BUILD)/demo
	$(BUILD)/demo

# ---- tests
test-generator:
	@sh tests/test_generator.sh

test: deps-test test-generator check-generated test-native test-neon test-downstream
	@echo "make test: all test groups passed"

-include tests/tests.mk
-include bench/bench.mk
-include examples/downstream/downstream.mk

# docs/size_table.md, also spliced into README.md between the size-table markers
size-table: generate
	@sh tools/size_table.sh
	@awk 'BEGIN { while ((getline l < "docs/size_table.md") > 0) t = t l "\n" } \
	  /<!-- size-table:begin -->/ { print; printf "%s", t; skip = 1; next } \
	  /<!-- size-table:end -->/ { skip = 0 } !skip' README.md > README.md.tmp && mv README.md.tmp README.md
	@echo "size-table: docs/size_table.md and README.md updated"

clean:
	rm -rf $(BUILD)
