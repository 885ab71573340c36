# SPDX-License-Identifier: MIT
# bench/neon_model.mk: `make bench-neon-model`, a static throughput estimate of the NEON microkernels with llvm-mca
# (NEON evidence without ARM hardware). Included by the top-level Makefile (which defines BUILD).
# Optional: not part of `make test` or `make bench`.
#
#   make bench-neon-model                                   the models below, gcc's code, Neoverse N1/V1/V2
#   make bench-neon-model NEON_MODEL_MODELS=llama-3-8b,gpt2 other models (any generated/<model>/)
#   make bench-neon-model NEON_MODEL_CC='clang --target=aarch64-linux-gnu'   clang's code instead
#   make bench-neon-model NEON_MODEL_REV=HEAD               generated/ as committed, not the work tree
#
# It installs what it needs first (tools/deps.sh neon-model: python3, gcc-aarch64-linux-gnu, llvm-19; Debian 12's
# llvm-14 has no Neoverse scheduling models and gives the same numbers for every -mcpu). bench/neon_model.py cuts
# each NEON microkernel out of generated/<model>/attngen_<cname>.c, compiles it for aarch64 (-O2 -S), runs
# llvm-mca on each one's steady state (a fully unrolled Q.K^T microkernel: one call, the whole body; a P.V
# microkernel: its inner j-loops) and compares the cycles with the FMA bound. It reads generated/ and never
# regenerates it. Outputs: $(BUILD)/bench/neon_model.txt (the printed table), $(BUILD)/bench/neon_model.csv (one
# row per region and CPU), neon_model.md (the table as Markdown) and the assembly under
# $(BUILD)/bench/neon_model/<model>/. About a minute.

NEON_MODEL_MODELS ?= llama-3-8b,gemma-2-2b,qwen2-5-0-5b,gpt2
NEON_MODEL_CC     ?= aarch64-linux-gnu-gcc
NEON_MODEL_MCA    ?= llvm-mca-19
NEON_MODEL_CPUS   ?= neoverse-n1,neoverse-v1,neoverse-v2
NEON_MODEL_REV    ?=

.PHONY: bench-neon-model

bench-neon-model:
	@sh tools/deps.sh neon-model
	python3 bench/neon_model.py --models '$(NEON_MODEL_MODELS)' --cc '$(NEON_MODEL_CC)' --mca '$(NEON_MODEL_MCA)' \
	  --cpus '$(NEON_MODEL_CPUS)' --out '$(BUILD)/bench' $(if $(NEON_MODEL_REV),--rev '$(NEON_MODEL_REV)')
