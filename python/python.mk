# SPDX-License-Identifier: MIT
# python/python.mk: the Python package's shared runtime library and `make test-python`. Included by the top-level
# Makefile, which defines CC, CFLAGS, BUILD, RUNTIME_SRC, RUNTIME_HDR and RUNTIME_INC.
#
#   make $(BUILD)/python/libattngen.so   the runtime as a shared library, loaded by python/attngen through ctypes
#   make test-python                     python/tests (unittest) with PYTHON, a python3 that has NumPy
#
# PYTHON: Debian's /usr/bin/python3 when present (python3-numpy, tools/deps.sh test), else python3 on PATH.

PYTHON_LIB := $(BUILD)/python/libattngen.so
PYTHON     ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)

.PHONY: test-python
# built with the test binaries (make test-binaries, two compilers at a time), not alone just before its tests
TEST_BINARIES += $(PYTHON_LIB)

$(PYTHON_LIB): $(RUNTIME_SRC) $(RUNTIME_HDR) python/python.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -fPIC -shared $(RUNTIME_INC) $(RUNTIME_SRC) -o $@.tmp -lm -lpthread && mv $@.tmp $@

test-python: $(PYTHON_LIB)
	@$(PYTHON) -c 'import numpy' 2>/dev/null || { echo "test-python: $(PYTHON) has no NumPy (make deps-test, or PYTHON=...)"; exit 1; }
	ATTNGEN_LIBRARY=$(abspath $(PYTHON_LIB)) PYTHONPATH=python $(PYTHON) -m unittest discover -s python/tests $(if $(V),-v)
