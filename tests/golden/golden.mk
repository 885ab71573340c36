# SPDX-License-Identifier: MIT
# tests/golden/golden.mk: `make golden`, the golden vectors of tests/golden/data from the models' own code
# (transformers, eager attention, tiny random-weight models; tests/README.md#golden-vectors). Included by the
# top-level Makefile, which defines BUILD. Optional: not part of `make test`, and it needs PyPI (torch, transformers:
# several GB in build/golden-venv). python/tests/test_golden.py reads the committed files with NumPy alone.
#
#   make golden                                  venv in build/golden-venv (created once), then the data files
#   make golden GOLDEN_PYTHON=/path/to/python    an interpreter that already has torch and transformers
#   make golden GOLDEN_MODELS='gemma2 bloom'     only these models (names: tests/golden/tiny_models.py MODELS)

GOLDEN_VENV   := $(BUILD)/golden-venv
GOLDEN_STAMP  := $(GOLDEN_VENV)/.golden-installed
GOLDEN_PYTHON ?=
GOLDEN_MODELS ?=
GOLDEN_DATA   := tests/golden/data

.PHONY: golden golden-venv

# As bench/peers/peers.mk: python3 -m venv needs Debian's python3-venv (installed as root, else the command to run
# is printed); pip then only ever talks to PyPI.
$(GOLDEN_STAMP): tests/golden/requirements.txt
	@set -e; if [ ! -x $(GOLDEN_VENV)/bin/python ]; then \
	  rm -rf $(GOLDEN_VENV); \
	  if ! python3 -m venv $(GOLDEN_VENV); then \
	    rm -rf $(GOLDEN_VENV); \
	    if [ "$$(id -u)" != 0 ]; then echo "golden: python3 -m venv failed; run: sudo apt-get install python3-venv"; exit 1; fi; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	    python3 -m venv $(GOLDEN_VENV); \
	  fi; \
	fi
	$(GOLDEN_VENV)/bin/python -m pip install --disable-pip-version-check -q -r tests/golden/requirements.txt
	$(GOLDEN_VENV)/bin/python -c 'import numpy, torch, transformers'
	@touch $@

golden-venv: $(GOLDEN_STAMP)

golden: $(if $(GOLDEN_PYTHON),,$(GOLDEN_STAMP))
	@py='$(or $(GOLDEN_PYTHON),$(GOLDEN_VENV)/bin/python)'; \
	  $$py -c 'import numpy, torch, transformers' || { echo "golden: $$py lacks numpy, torch or transformers"; exit 1; }; \
	  $$py -W ignore tests/golden/make_golden.py --out $(GOLDEN_DATA) $(GOLDEN_MODELS)

# `make check-catalog`: the catalog's attention values (shape, layer kinds, window, soft-cap, sinks, scale, RoPE
# frequencies, ALiBi slopes) against transformers' config classes and modules (tests/golden/check_catalog.py).
.PHONY: check-catalog
check-catalog: $(if $(GOLDEN_PYTHON),,$(GOLDEN_STAMP))
	@py='$(or $(GOLDEN_PYTHON),$(GOLDEN_VENV)/bin/python)'; \
	  LUA=$(LUA) $$py -W ignore tests/golden/check_catalog.py
