# tests/python/python.mk — the Python target (templates/python/) on the CPU:
# tests/python/kernels.cu generated with -T templates/python (its PTX,
# kernels.ptx, embedded: any image loads in the fake driver), the module
# compiled against $(PYTHON)'s headers with the C stubs and libkstub.a, then
# pytest (test_kernels.py) through the fake driver and mypy over the .pyi.
# Included from tests/tests.mk.
#
#   make check-python       the CPU suite (tests/python/check-python.sh)
#   make check-python-recipes  docs/python.md's CMake and Meson recipes, built and imported
#   make gpu-check-python   the GPU suite on a machine with a GPU, CuPy and
#                           cuda.core (tests/python/test_gpu.py); build the
#                           module here first: make python-gpu-module

PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)#  the Python the module is built for
PY_DIR := $(B)/tests/python
PY_GEN := $(PY_DIR)/kernels_module.c $(PY_DIR)/kernels.c $(PY_DIR)/kernels.h $(PY_DIR)/kernels.pyi
PY_TEMPLATES := $(wildcard templates/python/*.in) templates/python/target.json $(TEMPLATES)
# What the module is built with: Python's headers and its extension suffix (read when a recipe runs).
PY_CFLAGS = -std=c11 -O2 -Wall -Wextra -Werror -fPIC -I"$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
    -Iinclude/kstub -I$(PY_DIR)

# Beside kernels.cu, every file of kernels/ and the corpus files whose names clash with
# what a Python module has: each generated, built, imported and its .pyi checked.
PY_CORPUS := $(wildcard kernels/*.cu) $(addprefix tests/corpus/,abi_array_pointers.cu abi_names.cu abi_records.cu \
    abi_vectors.cu abi_function_pointers.cu abi_class_templates.cu abi_globals.cu)

CHECK_TARGETS += check-python
.PHONY: check-python python-gpu-module gpu-check-python
check-python: $(PY_DIR)/module.ok $(PY_DIR)/double.ok $(RT_FAKE) $(KSTUB) $(PY_CORPUS) tests/python/check-python.sh \
    tests/python/test_kernels.py tests/python/test_dlpack.py tests/python/test_direct.py tests/python/test_exchange.py tests/python/conftest.py tests/python/typing_ok.py tests/python/typing_bad.py
	$(KS_SUITE) "PYTHON=$(PYTHON) DIR=$(PY_DIR) FAKE=$(abspath $(RT_FAKE)) KSTUB=$(KSTUB) CC='$(CC)' \
	    LIB=$(B)/lib/libkstub.a CUDA_PATH=$(CUDA_PATH) CORPUS='$(PY_CORPUS)' bash tests/python/check-python.sh"

ifneq ($(HAVE_LIBCLANG),)
$(PY_GEN) $(PY_DIR)/kernels.json &: tests/python/kernels.cu tests/python/kernels.ptx $(PY_TEMPLATES) $(KSTUB)
	@mkdir -p $(PY_DIR)
	$(KSTUB) -T templates/python tests/python/kernels.cu --embed tests/python/kernels.ptx \
	    --manifest $(PY_DIR)/kernels.json -o $(PY_DIR)/kernels
endif

# The module, named as this Python imports it (kernels.cpython-3X-....so); module.ok stands for it.
$(PY_DIR)/module.ok: $(PY_GEN) include/kstub/kstub_python.h include/kstub/kstub.h include/kstub/kstub_types.h $(B)/lib/libkstub.a
	$(CC) $(PY_CFLAGS) -shared $(PY_DIR)/kernels_module.c $(PY_DIR)/kernels.c $(B)/lib/libkstub.a -ldl -lpthread \
	    -o $(PY_DIR)/kernels$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	touch $@

# The test double of torch's and CuPy's C types (tests/python/array_double.c), for test_direct.py
# alone: it lives in its own folder, on that test's path only.
$(PY_DIR)/double.ok: tests/python/array_double.c
	@mkdir -p $(PY_DIR)/double
	$(CC) $(PY_CFLAGS) -shared $< \
	    -o $(PY_DIR)/double/array_double$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	touch $@

# The GPU machine has no libclang: make the generated sources here (they
# embed kernels.ptx, nvcc's PTX for sm_90) and carry $(PY_DIR) there, where
# gpu-check-python builds the module with that machine's Python and runs
# tests/python/test_gpu.py (GPU_PYTHON: the Python with CuPy, torch, cuda.core).
GPU_PYTHON ?= python3
python-gpu-module: $(PY_GEN)

gpu-check-python: $(B)/lib/libkstub.a
	PYTHON=$(GPU_PYTHON) CC='$(CC)' bash tests/python/gpu-check-python.sh

# examples/python installed with pip into a fresh venv (tests/python/check-python-example.sh).
PY_WHEELS ?= /usr/share/python-wheels#  setuptools and wheel for pip's isolated build, offline
CHECK_TARGETS += check-python-example
.PHONY: check-python-example
check-python-example: $(KSTUB) $(B)/lib/libkstub.a tests/python/check-python-example.sh include/kstub/kstub_python.h \
    $(PY_TEMPLATES) $(wildcard examples/python/*.* examples/python/kernels/* examples/python/src/kstub_example/*)
	$(KS_SUITE) "PYTHON=$(PYTHON) KSTUB=$(KSTUB) LIB=$(B)/lib/libkstub.a DIR=$(abspath $(B)/tests/python-example) \
	    WHEELS=$(PY_WHEELS) bash tests/python/check-python-example.sh"

# The scikit-build-core and meson-python recipes of docs/python.md, built with plain cmake
# and meson against this tree's kstub and imported (tests/python/check-python-recipes.sh).
CHECK_TARGETS += check-python-recipes
.PHONY: check-python-recipes
check-python-recipes: $(KSTUB) $(B)/lib/libkstub.a tests/python/check-python-recipes.sh docs/python.md \
    include/kstub/kstub_python.h $(PY_TEMPLATES) $(wildcard examples/python/kernels/* examples/python/src/kstub_example/*)
	$(KS_SUITE) "PYTHON=$(PYTHON) KSTUB=$(KSTUB) LIB=$(B)/lib/libkstub.a DIR=$(abspath $(B)/tests/python-recipes) \
	    bash tests/python/check-python-recipes.sh"
