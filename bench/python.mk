# bench/python.mk — the Python target's launch rows (bench/launch_py.py):
# bench_kernels.cu through templates/python, committed under bench/gen/python
# like the C stubs (the GPU machine has no libclang), and built there into a
# module for the Python that runs the benchmark. Included from bench/bench.mk.
#
#   make bench-gen            also regenerates bench/gen/python/ (needs libclang)
#   make bench-py-module      build/bench/py/bench_kernels<EXT_SUFFIX> for BENCH_PYTHON

BENCH_PYTHON ?= python3#  the Python with CuPy, cuda.core (and torch) that runs launch_py.py
BENCH_PY_GEN := $(BENCH_GEN)/python
BENCH_PY_SRC := $(BENCH_PY_GEN)/bench_kernels_module.c $(BENCH_PY_GEN)/bench_kernels.c \
    $(BENCH_PY_GEN)/bench_kernels.h $(BENCH_PY_GEN)/bench_kernels.pyi

ifneq ($(HAVE_LIBCLANG),)
# The same embedded fatbin as the C stubs (gen.stamp makes it).
$(BENCH_OUT)/gen_py.stamp: $(BENCH_OUT)/gen.stamp $(wildcard templates/python/*) $(TEMPLATES) $(KSTUB)
	@mkdir -p $(BENCH_PY_GEN)
	$(KSTUB) -T templates/python $(BENCH_KERNEL) --embed $(BENCH_OUT)/bench_kernels.fatbin \
	    -o $(BENCH_PY_GEN)/bench_kernels
	touch $@
$(BENCH_PY_SRC): $(BENCH_OUT)/gen_py.stamp ;
bench-gen: $(BENCH_OUT)/gen_py.stamp
endif

# py_raw (bench/py_raw.c) for Python $(1) into folder $(2), $(3) more flags: with kstub's C stub of
# bench_args (bench/gen, committed) and a libkstub of its own, both hidden (-fvisibility=hidden,
# --exclude-libs): its copy never binds to the kstub Python module's in the same process.
BENCH_PY_RAW = $(CC) -std=c11 -O2 -g -Wall -Wextra $(3) -fPIC -shared -fvisibility=hidden \
    -I"$$($(1) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" -Iinclude/kstub -I$(BENCH_GEN) \
    bench/py_raw.c $(BENCH_GEN)/bench_kernels.kstub.c $(B)/lib/libkstub.a -Wl,--exclude-libs,ALL -ldl -lpthread \
    -o $(2)/py_raw$$($(1) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')

.PHONY: bench-py-module
bench-py-module: $(BENCH_PY_SRC) bench/py_raw.c $(BENCH_GEN)/bench_kernels.kstub.c $(BENCH_GEN)/bench_kernels.kstub.h \
    include/kstub/kstub_python.h $(B)/lib/libkstub.a | $(BENCH_OUT)
	@mkdir -p $(BENCH_OUT)/py
	$(CC) -std=c11 -O2 -Wall -Wextra -fPIC -shared \
	    -I"$$($(BENCH_PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	    -Iinclude/kstub -I$(BENCH_PY_GEN) $(BENCH_PY_GEN)/bench_kernels_module.c $(BENCH_PY_GEN)/bench_kernels.c \
	    $(B)/lib/libkstub.a -ldl -lpthread \
	    -o $(BENCH_OUT)/py/bench_kernels$$($(BENCH_PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	cp $(BENCH_PY_GEN)/bench_kernels.pyi $(BENCH_OUT)/py/
	$(call BENCH_PY_RAW,$(BENCH_PYTHON),$(BENCH_OUT)/py,)

# The module's own cost on this machine (bench/launch_py_cpu.py): the same module built for
# PYTHON over the fake driver, against an empty METH_FASTCALL function (bench/py_empty.c).
# Reported, never asserted. BENCH_PY_CPU_FLAGS: e.g. --rounds 11 --batch 5000.
BENCH_PY_CPU := $(BENCH_OUT)/py-cpu
.PHONY: bench-py-cpu
bench-py-cpu: $(BENCH_PY_CPU)/module.ok $(RT_FAKE)
	PYTHONPATH=$(BENCH_PY_CPU) KSTUB_LIBCUDA=$(abspath $(RT_FAKE)) $(PYTHON) bench/launch_py_cpu.py $(BENCH_PY_CPU_FLAGS)

$(BENCH_PY_CPU)/module.ok: $(BENCH_PY_SRC) bench/py_empty.c bench/py_raw.c $(BENCH_GEN)/bench_kernels.kstub.c \
    $(BENCH_GEN)/bench_kernels.kstub.h tests/python/array_double.c include/kstub/kstub_python.h $(B)/lib/libkstub.a
	@mkdir -p $(BENCH_PY_CPU)
	ext=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))'); \
	inc=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'); \
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -I"$$inc" -Iinclude/kstub -I$(BENCH_PY_GEN) \
	    $(BENCH_PY_GEN)/bench_kernels_module.c $(BENCH_PY_GEN)/bench_kernels.c $(B)/lib/libkstub.a -ldl -lpthread \
	    -o $(BENCH_PY_CPU)/bench_kernels$$ext && \
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -I"$$inc" bench/py_empty.c -o $(BENCH_PY_CPU)/py_empty$$ext && \
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -I"$$inc" tests/python/array_double.c \
	    -o $(BENCH_PY_CPU)/array_double$$ext
	$(call BENCH_PY_RAW,$(PYTHON),$(BENCH_PY_CPU),-Werror)
	touch $@
