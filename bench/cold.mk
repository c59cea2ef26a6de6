# bench/cold.mk — issue 45's CPU emulation of a launch path's cold-cache cost:
# the cache lines (code and data) each libkstub path touches per call, which a
# real launch (~3 us of driver work that evicts L1 and L2) makes miss again on
# every call. The fake driver built with FAKE_CUDA_COLD_KB evicts the caches in
# cuLaunchKernel, cuLaunchKernelEx and cuMemcpyHtoDAsync (tests/support/fake_cold.h);
# bench/cold_paths.c runs one path N times; bench/cold.py runs each path and
# its raw floor under cachegrind for two N and prints the LL misses per call
# over the floor's. Reported, never asserted. Included from bench/bench.mk.
#
#   make bench-cold   needs valgrind (cachegrind, cg_diff, cg_annotate)
#                     BENCH_COLD_FLAGS: e.g. --paths stub_user,raw_user --calls 50,150
#                     --annotate stub_user (per-function misses of that path)

BENCH_COLD_KB ?= 4096#        data touched per launch: more than the simulated LL (2 MiB)
BENCH_COLD_NOPS_KB ?= 64#     code run per launch: more than the simulated L1i (32 KiB)

BENCH_COLD_DRIVER := $(B)/tests/libcuda_cold.so
BENCH_COLD_PROG := $(BENCH_OUT)/cold_paths

.PHONY: bench-cold
bench-cold: $(BENCH_COLD_PROG) $(BENCH_COLD_DRIVER) $(if $(HAVE_CUPTI_H),$(RACES_FAKE_CUPTI))
	@python3 bench/cold.py --prog $(BENCH_COLD_PROG) --driver $(abspath $(BENCH_COLD_DRIVER)) \
	    $(if $(HAVE_CUPTI_H),--cupti $(abspath $(RACES_FAKE_CUPTI))) $(BENCH_COLD_FLAGS)

$(BENCH_COLD_DRIVER): tests/support/fake_cuda.c tests/support/fake_cuda.h tests/support/fake_cold.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -DFAKE_CUDA_COLD_KB=$(BENCH_COLD_KB) \
	    -DFAKE_CUDA_COLD_NOPS_KB=$(BENCH_COLD_NOPS_KB) -shared $< -o $@ -lpthread

$(BENCH_COLD_PROG): $(BENCH_OUT)/cold_paths.o $(BENCH_STUB_O) $(B)/lib/libkstub.a
	$(CC) $(OPT) $< $(BENCH_STUB_O) -o $@ $(BENCH_LIBS)
