# SPDX-License-Identifier: MIT
# bench/peers/peers.mk: `make bench-peers`, attngen side by side with PyTorch, ONNX Runtime and OpenVINO.
# Included by the top-level Makefile, which defines CC, BUILD, LUA, RUNTIME_SRC/RUNTIME_HDR and deps-bench.
# Optional: not part of `make test`, and it needs PyPI (about 6 GB in build/peers-venv, mostly torch's CUDA libraries).
#
#   make bench-peers                         full run: every case at 1 and 2 threads (about 20 min on 2 busy
#                                            cores, 3 of them the reduced-precision decode cases, 2 the paged ones)
#   make bench-peers PEERS_QUICK=1           smoke run with small sizes (about a minute)
#   make bench-peers PEERS_FILTER='decode'   only the cases whose label contains the substring
#   make bench-peers PEERS_FILTER='kv '      only the decode cases on reduced-precision K/V caches (f16, int8|u8)
#   make bench-peers PEERS_FILTER=paged      only OpenVINO's PagedAttention on its paged caches (u8, f16, f32) against
#                                            attngen's paged cache (same page size and block table) and its contiguous
#                                            one (about 2 min; bench/peers/ov_paged.py)
#   make bench-peers-plot                    redraw the plots from an existing $(BUILD)/peers/ratios_*.dat
# More knobs (PEERS_SECONDS, PEERS_THREADS, PEERS_GAP_MS, PEERS_QUIESCE_MS, PEERS_MIN_SAMPLE_MS) are in bench/peers/bench_peers.py's header.
#
# Steps: (1) a virtual environment in $(BUILD)/peers-venv with bench/peers/requirements.txt, installed once
# (stamp file; delete the venv to reinstall); (2) the runtime as a shared library, $(BUILD)/python/libattngen.so
# (python/python.mk); (3) bench/peers/bench_peers.py, which uses it through the Python package (python/attngen):
# attngen.build generates and compiles the bench-only shapes of bench/peers/configs/*.lua (and any PEERS_MODELS)
# into $(BUILD)/peers/models, recompiling only what changed; it writes results.txt, results.csv and ratios_*.dat
# into $(BUILD)/peers, then gnuplot draws ratios_1t.png, ratios_2t.png (installed first if missing, by the top-level
# Makefile's deps-bench, as for make bench).

PEERS_DIR   := $(BUILD)/peers
PEERS_VENV  := $(BUILD)/peers-venv
PEERS_PY    := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.peers-installed
PEERS_LIB   := $(BUILD)/python/libattngen.so

# The cases' shapes come from bench/peers/configs (llama-3-8b, gemma-2-2b and qwen2-5-0-5b's attention WITHOUT
# RoPE: their catalog tables rotate Q, the peers compute attention alone; peers-h32-kv8-d128-kv adds the f16 and
# int8 cache types of the reduced-precision decode cases). PEERS_MODELS may add catalog models (configs/<model>.lua);
# a shape no table has runs attngen's generic kernel, which the results name.
PEERS_MODELS  :=
PEERS_CONFIGS := $(wildcard bench/peers/configs/*.lua) $(foreach m,$(PEERS_MODELS),configs/$(m).lua)

.PHONY: bench-peers bench-peers-plot bench-peers-venv bench-peers-lib

# python3 -m venv needs Debian's python3-venv (ensurepip) when python3 is the system one: install it as root,
# else say which command to run. pip then only ever talks to PyPI.
$(PEERS_STAMP): bench/peers/requirements.txt
	@set -e; if [ ! -x $(PEERS_PY) ]; then \
	  rm -rf $(PEERS_VENV); \
	  if ! python3 -m venv $(PEERS_VENV); then \
	    rm -rf $(PEERS_VENV); \
	    if [ "$$(id -u)" != 0 ]; then echo "bench-peers: python3 -m venv failed; run: sudo apt-get install python3-venv"; exit 1; fi; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	    python3 -m venv $(PEERS_VENV); \
	  fi; \
	fi
	$(PEERS_PY) -m pip install --disable-pip-version-check -q -r bench/peers/requirements.txt
	$(PEERS_PY) -c 'import numpy, torch, onnx, onnxruntime, openvino'
	@touch $@

bench-peers-venv: $(PEERS_STAMP)
bench-peers-lib: $(PEERS_LIB)

# The plots, as one shell command for both targets below. Not a recursive $(MAKE): make -n runs every recipe line
# that mentions $(MAKE), and that line would start the whole benchmark.
PEERS_PLOT_SH = \
	if ! command -v gnuplot >/dev/null 2>&1; then \
	  echo "bench-peers: gnuplot not found (make deps-bench installs it): no plots"; exit 1; fi; \
	for f in $(PEERS_DIR)/ratios_*t.dat; do \
	  test -f "$$f" || { echo "bench-peers: no $(PEERS_DIR)/ratios_*t.dat: run make bench-peers first"; exit 1; }; \
	  gnuplot -e "data='$$f'; out='$${f%.dat}.png'" bench/peers/plot.gp || exit 1; \
	  echo "bench-peers: plot  $${f%.dat}.png"; done

# The run's exit status (non-zero when attngen failed or any output disagreed) is kept, after the plots are drawn.
PEERS_RUN := PYTHONPATH=python $(PEERS_PY) bench/peers/bench_peers.py --lib $(PEERS_LIB) --configs $(PEERS_CONFIGS) \
             --out $(PEERS_DIR)
bench-peers: deps-bench $(PEERS_STAMP) $(PEERS_LIB)
	@echo "bench-peers: $(PEERS_RUN)"
	@st=0; $(PEERS_RUN) || st=$$?; \
	  ( $(PEERS_PLOT_SH) ) || st=1; exit $$st

bench-peers-plot:
	@$(PEERS_PLOT_SH)
