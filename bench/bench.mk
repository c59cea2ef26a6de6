# bench.mk — kstub's benchmarks (bench/README.md says what each measures).
# Included by the top-level Makefile; not part of `make check`.
#
#   make bench            build the GPU benchmark programs under build/bench/
#   make bench-run        bench/run.sh: build them and run them: launch cost, cold
#                         start, graphs, Python launchers; results in $OUT
#                         (when set) else bench/results/ (needs a GPU to
#                         measure; without a driver each program says so)
#   make bench-generator  question 3, the generator's speed against clang and
#                         nvcc, on this machine (needs libclang 22 and nvcc)
#   make bench-project    a 12-directory project's first build, cold and warm,
#                         against nvcc -ptx (bench/project.py; CPU machine)
#   make bench-drift      `kstub diff` of two 100,000-kernel manifests against its
#                         goal (under 1 s); a miss is reported, not failed
#   make bench-cache      `kstub cache --stats/--prune/--clear` over 2,000 to
#                         20,000 entries (BENCH_CACHE_FLAGS, e.g. --dir /dev/shm):
#                         how each operation scales, reported, never asserted
#   make bench-front      the front end over 1,000 to 8,000 explicit
#                         instantiations / headers with kernels (BENCH_FRONT_FLAGS):
#                         how it scales, reported, never asserted
#   make bench-gen        regenerate bench/gen/ from bench/kernels/ (needs
#                         libclang; the GPU machine uses the committed files)
#   make bench-py-module  the Python target's module of the same kernels
#                         (bench/python.mk), for launch_py.py
#   make bench-cold       issue 45: each launch path's cache lines per call against a
#                         fake driver whose launch evicts the caches, under cachegrind
#                         (bench/cold.mk; CPU emulation, reported, never asserted)

# Including this file must not change the including Makefile's default goal.
bench__goal := $(.DEFAULT_GOAL)

# ---- user settings -----------------------------------------------------------
BENCH_ARCH ?= 90#             SASS (and PTX) target of the benchmark images: the H200 is sm_90
BENCH_WERROR ?= -Werror#      warnings are errors here; bench/run.sh relaxes it on other machines

# ---- derived -----------------------------------------------------------------
bench__comma := ,
BENCH_OUT := $(B)/bench
BENCH_GEN := bench/gen
BENCH_KERNEL := bench/kernels/bench_kernels.cu
BENCH_CFLAGS := $(BASE_CFLAGS) $(BENCH_WERROR) -Iinclude/kstub -I$(BENCH_GEN) -Ibench $(CUDA_INC)
BENCH_NVCC_FLAGS := -O2 -std=c++17 -Ibench \
    -gencode arch=compute_$(BENCH_ARCH),code=sm_$(BENCH_ARCH) \
    -Xcompiler -Wall,-Wextra$(if $(BENCH_WERROR),$(bench__comma)-Werror)
BENCH_LIBS := $(B)/lib/libkstub.a -ldl -lpthread -lm

BENCH_PROGS := $(addprefix $(BENCH_OUT)/,launch_bench graph_bench global_bench coldstart \
    cold_null cold_ctx cold_raw cold_kstub cold_nvcc)
BENCH_IMAGES := $(BENCH_OUT)/bench_kernels.cubin $(BENCH_OUT)/bench_kernels.ptx
BENCH_STUB_O := $(BENCH_OUT)/bench_kernels.kstub.o
BENCH_HDRS := bench/bench_util.h $(BENCH_GEN)/bench_kernels.kstub.h include/kstub/kstub.h

.PHONY: bench bench-run bench-gen bench-generator bench-drift bench-project bench-cache bench-front
bench: $(BENCH_PROGS) $(BENCH_IMAGES)

# run.sh builds (warnings not errors: the GPU machine's compilers differ) and runs.
bench-run:
	@bash bench/run.sh

# BENCH_GENERATOR_FLAGS: e.g. --reps 1 --files 3 --limit 2 --make-reps 1 for a smoke run.
bench-generator: $(KSTUB)
	@python3 bench/generator.py --kstub $(KSTUB) $(BENCH_GENERATOR_FLAGS)

# BENCH_PROJECT_FLAGS: e.g. --reps 1 --dirs 4 for a smoke run; --baseline OTHER_KSTUB.
bench-project: $(KSTUB)
	@python3 bench/project.py --kstub $(KSTUB) $(BENCH_PROJECT_FLAGS)

bench-drift: $(KSTUB)
	@python3 bench/drift.py --kstub $(KSTUB) $(BENCH_DRIFT_FLAGS)

bench-cache: $(KSTUB)
	@python3 bench/cache_scale.py --kstub $(KSTUB) $(BENCH_CACHE_FLAGS)

bench-front: $(KSTUB)
	@python3 bench/front_scale.py --kstub $(KSTUB) $(BENCH_FRONT_FLAGS)

# ---- the benchmark kernels' stubs (committed under bench/gen) ---------------------
# Generated where libclang is; elsewhere the committed files are used as they are.
# The stamp stands for the three outputs, which kstub rewrites only when changed.
ifneq ($(HAVE_LIBCLANG),)
$(BENCH_OUT)/gen.stamp: $(BENCH_KERNEL) $(KSTUB) $(TEMPLATES) | $(BENCH_OUT)
	$(NVCC) -fatbin -gencode arch=compute_$(BENCH_ARCH),code=sm_$(BENCH_ARCH) \
	    -gencode arch=compute_$(BENCH_ARCH),code=compute_$(BENCH_ARCH) \
	    -o $(BENCH_OUT)/bench_kernels.fatbin $<
	$(KSTUB) $< --embed $(BENCH_OUT)/bench_kernels.fatbin \
	    --manifest $(BENCH_GEN)/bench_kernels.kstub.json -o $(BENCH_GEN)/bench_kernels.kstub
	touch $@
$(BENCH_GEN)/bench_kernels.kstub.h $(BENCH_GEN)/bench_kernels.kstub.c: $(BENCH_OUT)/gen.stamp ;
bench-gen: $(BENCH_OUT)/gen.stamp
else
bench-gen:
	@echo "bench-gen: no libclang here; using the committed $(BENCH_GEN)/"
endif

-include bench/python.mk
-include bench/cold.mk

# ---- programs ------------------------------------------------------------------------
$(BENCH_OUT):
	mkdir -p $@

$(BENCH_STUB_O): $(BENCH_GEN)/bench_kernels.kstub.c $(BENCH_HDRS) | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -c $< -o $@

$(BENCH_OUT)/%.o: bench/%.c $(BENCH_HDRS) bench/launch_rt.h | $(BENCH_OUT)
	$(CC) $(BENCH_CFLAGS) -c $< -o $@

$(BENCH_OUT)/launch_rt.o: bench/launch_rt.cu bench/launch_rt.h $(BENCH_KERNEL) | $(BENCH_OUT)
	$(NVCC) $(BENCH_NVCC_FLAGS) -c $< -o $@

# launch_bench mixes C, libkstub and nvcc's runtime: nvcc links (cudart, libstdc++).
$(BENCH_OUT)/launch_bench: $(BENCH_OUT)/launch.o $(BENCH_OUT)/launch_rt.o $(BENCH_STUB_O) $(B)/lib/libkstub.a
	$(NVCC) -o $@ $(BENCH_OUT)/launch.o $(BENCH_OUT)/launch_rt.o $(BENCH_STUB_O) $(BENCH_LIBS)

$(BENCH_OUT)/graph_bench: $(BENCH_OUT)/graph.o $(BENCH_STUB_O) $(B)/lib/libkstub.a
	$(CC) $(OPT) $(BENCH_OUT)/graph.o $(BENCH_STUB_O) -o $@ $(BENCH_LIBS)

$(BENCH_OUT)/global_bench: $(BENCH_OUT)/global.o $(BENCH_STUB_O) $(B)/lib/libkstub.a
	$(CC) $(OPT) $(BENCH_OUT)/global.o $(BENCH_STUB_O) -o $@ $(BENCH_LIBS)

$(BENCH_OUT)/cold_kstub $(BENCH_OUT)/cold_raw: $(BENCH_OUT)/%: $(BENCH_OUT)/%.o $(BENCH_STUB_O) $(B)/lib/libkstub.a
	$(CC) $(OPT) $< $(BENCH_STUB_O) -o $@ $(BENCH_LIBS)

$(BENCH_OUT)/cold_ctx: $(BENCH_OUT)/cold_ctx.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $< -o $@ -ldl

$(BENCH_OUT)/cold_null $(BENCH_OUT)/coldstart: $(BENCH_OUT)/%: $(BENCH_OUT)/%.o
	$(CC) $(OPT) $< -o $@

$(BENCH_OUT)/cold_nvcc: bench/cold_nvcc.cu $(BENCH_KERNEL) | $(BENCH_OUT)
	$(NVCC) $(BENCH_NVCC_FLAGS) $< -o $@

# The same kernels as image files for the cold-start rows (the fatbin is embedded).
$(BENCH_OUT)/bench_kernels.cubin: $(BENCH_KERNEL) | $(BENCH_OUT)
	$(NVCC) -cubin -arch=sm_$(BENCH_ARCH) -o $@ $<
$(BENCH_OUT)/bench_kernels.ptx: $(BENCH_KERNEL) | $(BENCH_OUT)
	$(NVCC) -ptx -arch=compute_$(BENCH_ARCH) -o $@ $<

ifneq ($(bench__goal),)
.DEFAULT_GOAL := $(bench__goal)
endif
