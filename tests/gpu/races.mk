# races.mk — the races check (issue 45) on a GPU: tests/gpu/check_races_gpu.c
# with hand-written descriptors (no generator), its kernels built here with
# nvcc; CUPTI (libcupti, from the toolkit) is loaded by libkstub at run time.
# Adds nothing to CHECK_TARGETS; part of make gpu-check.
#
#   make gpu-check-races    build and run it; without a driver it prints
#                           "gpu-check-races: skipped (...)" and passes
#
# Needs nvcc and gcc; at run time the driver and libcupti (KSTUB_CUPTI=path
# where the loader cannot find it: $(CUDA_PATH)/extras/CUPTI/lib64 or lib64).

GRC_DIR := $(B)/tests/gpu_races
GRC_BIN := $(GRC_DIR)/check_races_gpu
GRC_FATBIN := $(GRC_DIR)/races_kernels.fatbin
GRC_ARCH ?= 90#                          SASS and PTX target of the test kernels

$(GRC_DIR):
	mkdir -p $@

$(GRC_FATBIN): tests/gpu/races_kernels.cu | $(GRC_DIR)
	$(NVCC) -fatbin -gencode arch=compute_$(GRC_ARCH),code=[sm_$(GRC_ARCH),compute_$(GRC_ARCH)] -o $@ $<

$(GRC_BIN): tests/gpu/check_races_gpu.c include/kstub/kstub.h $(B)/lib/libkstub.a | $(GRC_DIR)
	$(CC) $(BASE_CFLAGS) -Werror -Iinclude/kstub $(CUDA_INC) -DRC_FATBIN='"$(abspath $(GRC_FATBIN))"' \
	    $< -o $@ $(B)/lib/libkstub.a -ldl -lpthread -lm

# The toolkit's CUPTI, for the loader, unless KSTUB_CUPTI already names one.
GRC_CUPTI := $(firstword $(wildcard $(CUDA_PATH)/extras/CUPTI/lib64/libcupti.so $(CUDA_PATH)/lib64/libcupti.so $(CUDA_PATH)/lib/libcupti.so))

.PHONY: gpu-check-races
gpu-check: gpu-check-races
gpu-check-races: $(GRC_BIN) $(GRC_FATBIN)
	KSTUB_CUPTI="$${KSTUB_CUPTI:-$(GRC_CUPTI)}" ./$(GRC_BIN)
