# gpu_check.mk — the run-time checks (issue 22) on a GPU:
# tests/gpu/check_checks_gpu.c with hand-written descriptors (no generator),
# its kernels built here with nvcc, NVTX seen through tests/support/nvtx_inject.c.
# Adds nothing to CHECK_TARGETS; part of make gpu-check.
#
#   make gpu-check-checks    build and run it; without a driver it prints
#                            "gpu-check-checks: skipped (...)" and passes
#
# Needs nvcc and gcc; at run time the driver, and libcupti for the pointers
# check's free watch (as tests/gpu/races.mk finds it). No libclang, no jansson.

GCK_DIR := $(B)/tests/gpu_checks
GCK_BIN := $(GCK_DIR)/check_checks_gpu
GCK_FATBIN := $(GCK_DIR)/check_kernels.fatbin
GCK_ARCH ?= 90#                          SASS and PTX target of the test kernels

$(GCK_DIR):
	mkdir -p $@

$(GCK_FATBIN): tests/gpu/check_kernels.cu | $(GCK_DIR)
	$(NVCC) -fatbin -gencode arch=compute_$(GCK_ARCH),code=[sm_$(GCK_ARCH),compute_$(GCK_ARCH)] -o $@ $<

$(GCK_BIN): tests/gpu/check_checks_gpu.c tests/support/trace_lines.h include/kstub/kstub.h $(B)/lib/libkstub.a | $(GCK_DIR)
	$(CC) $(BASE_CFLAGS) -Werror -Iinclude/kstub -Icommon -Itests/support $(CUDA_INC) \
	    -DCK_FATBIN='"$(abspath $(GCK_FATBIN))"' -DNVTX_INJECT_PATH='"$(abspath $(B)/tests/libnvtx_inject.so)"' \
	    $< -o $@ $(B)/lib/libkstub.a -ldl -lpthread -lm

.PHONY: gpu-check-checks
gpu-check: gpu-check-checks
# The toolkit's CUPTI for the pointers check's free watch, unless KSTUB_CUPTI names one.
GCK_CUPTI := $(firstword $(wildcard $(CUDA_PATH)/extras/CUPTI/lib64/libcupti.so $(CUDA_PATH)/lib64/libcupti.so $(CUDA_PATH)/lib/libcupti.so))
gpu-check-checks: $(GCK_BIN) $(GCK_FATBIN) $(B)/tests/libnvtx_inject.so
	KSTUB_CUPTI="$${KSTUB_CUPTI:-$(GCK_CUPTI)}" ./$(GCK_BIN)
