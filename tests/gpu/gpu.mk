# gpu.mk — the GPU suite, tests/gpu/check_gpu.c. Included by tests/tests.mk.
#
#   make gpu-check   build build/tests/gpu/check_gpu and run it; it needs a
#                    CUDA driver and device, and without one prints
#                    "gpu-check: no CUDA driver (...); skipped" and passes
#
# Not part of `make check`. The GPU machine has no usable libclang, so there
# the stubs under build/gen (generated on a machine that has it, and carried
# over) are used as they are: this builds only the runtime, the generated .c
# files and the test, with $(CC). Nothing here runs the deps script or needs
# the generator; where libclang is present the top-level rules regenerate
# stale stubs first.

GPU_DIR := $(B)/tests/gpu
GPU_CHECK := $(GPU_DIR)/check_gpu
GPU_CFLAGS := $(BASE_CFLAGS) -Iinclude/kstub -I$(GEN) $(CUDA_INC)
# The GPU suites' shared setup (tests/gpu/gpu_check.h), linked into each.
GPU_COMMON_OBJ := $(GPU_DIR)/gpu_check.o
GPU_OBJ := $(GPU_DIR)/check_gpu.o $(GPU_COMMON_OBJ) $(KNAMES:%=$(GPU_DIR)/%.kstub.o)

$(GPU_DIR)/%.kstub.o: $(GEN)/%.kstub.c $(GEN)/%.kstub.h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(GPU_DIR)/check_gpu.o: tests/gpu/check_gpu.c tests/gpu/gpu_check.h $(GEN_H) include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(GPU_COMMON_OBJ): tests/gpu/gpu_check.c tests/gpu/gpu_check.h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(GPU_CHECK): $(GPU_OBJ) $(B)/lib/libkstub.a
	$(CC) $(OPT) $(GPU_OBJ) -o $@ $(B)/lib/libkstub.a -ldl -lpthread -lm

$(GPU_DIR):
	mkdir -p $@

ifeq ($(HAVE_LIBCLANG),)
# No generator on this machine: name what is missing rather than make's
# "No rule to make target". Existing files count as up to date.
$(GEN)/%.kstub.h $(GEN)/%.kstub.c:
	@echo "error: $@ is missing and this machine has no libclang to generate it;" \
	      "run 'make gen' where libclang 22 is installed and copy $(GEN)/ here" >&2
	@exit 1
endif

.PHONY: gpu-check gpu-check-stubs gpu-sanitize
gpu-check: gpu-check-stubs gpu-check-runtime

gpu-check-stubs: $(GPU_CHECK)
	@./$(GPU_CHECK)

# racecheck (2025.x, on the H200) loses track of launches when 16 threads make
# their first launch at once ("Internal Sanitizer Error: Detected a failure to
# track a kernel launch"), so that one case runs under memcheck only.
gpu-sanitize: $(GPU_CHECK) gpu-sanitize-runtime
	@if [ ! -x "$(COMPUTE_SANITIZER)" ]; then echo "gpu-sanitize: skipped"; exit 0; fi; \
	set -e; \
	echo "== compute-sanitizer --tool memcheck $(GPU_CHECK)"; \
	$(COMPUTE_SANITIZER) --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3 ./$(GPU_CHECK); \
	echo "== compute-sanitizer --tool racecheck $(GPU_CHECK) (without threads/first-launch)"; \
	KSTUB_GPU_SKIP=threads $(COMPUTE_SANITIZER) --tool racecheck --report-api-errors no --error-exitcode 3 ./$(GPU_CHECK); \
	for tool in initcheck synccheck; do \
	    echo "== compute-sanitizer --tool $$tool $(GPU_CHECK)"; \
	    $(COMPUTE_SANITIZER) --tool $$tool --report-api-errors no --error-exitcode 3 ./$(GPU_CHECK); \
	done

# ---- stubs that embed their own source: NVRTC at run time, then the cache ----
NVRTC_STUB := $(GEN)/nvrtc_kernels.kstub
NVRTC_CHECK := $(GPU_DIR)/check_nvrtc_gpu
GPU_LIBNVRTC ?= $(CUDA_PATH)/lib64/libnvrtc.so#   NVRTC for the run, unless KSTUB_LIBNVRTC is set

ifneq ($(HAVE_LIBCLANG),)
$(NVRTC_STUB).h $(NVRTC_STUB).c: tests/gpu/nvrtc_kernels.cu $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed-source -o $(NVRTC_STUB)
endif
gen: $(NVRTC_STUB).h $(NVRTC_STUB).c

$(GPU_DIR)/check_nvrtc_gpu.o: tests/gpu/check_nvrtc_gpu.c $(NVRTC_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(NVRTC_CHECK): $(GPU_DIR)/check_nvrtc_gpu.o $(GPU_DIR)/nvrtc_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-nvrtc
# Cold (compiles) then warm (from the cache), in a fresh cache directory.
gpu-check-nvrtc: $(NVRTC_CHECK)
	@cache=$$(mktemp -d) && trap 'rm -rf "$$cache"' EXIT && \
	export KSTUB_CACHE_DIR="$$cache/kstub" KSTUB_LIBNVRTC="$${KSTUB_LIBNVRTC:-$(GPU_LIBNVRTC)}" && \
	./$(NVRTC_CHECK) cold && ./$(NVRTC_CHECK) warm

gpu-check: gpu-check-nvrtc
