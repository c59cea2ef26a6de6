# gpu_runtime.mk — the runtime's GPU suite, tests/gpu/check_runtime_gpu.c, with
# hand-written descriptors (no generator). Included by the top-level test
# makefiles; adds nothing to CHECK_TARGETS.
#
#   make gpu-check-runtime     build and run it, with the library loader then
#                              with KSTUB_LOADER=module; without a driver it
#                              prints "gpu-runtime: skipped (...)" and passes
#   make gpu-sanitize-runtime  the same under compute-sanitizer memcheck and racecheck
#                              (API errors are not reported: the suite provokes some on purpose,
#                              e.g. cuKernelGetParamInfo one past the last parameter)
#
# Needs nvcc (images are built at build time), gcc, and at run time the driver.

GRT_DIR := $(B)/tests/gpu_runtime
GRT_BIN := $(GRT_DIR)/check_runtime_gpu
GRT_CU := tests/gpu/runtime_kernels.cu
GRT_ARCH ?= 90#                                   SASS for the cubin and the fatbin (PTX of it too)
GRT_LIBNVRTC ?= $(CUDA_PATH)/lib64/libnvrtc.so#    NVRTC the test uses unless KSTUB_LIBNVRTC is set
COMPUTE_SANITIZER ?= $(CUDA_PATH)/bin/compute-sanitizer#  for gpu-sanitize-runtime
GRT_IMAGES := $(GRT_DIR)/runtime_kernels.fatbin $(GRT_DIR)/runtime_kernels.cubin \
              $(GRT_DIR)/runtime_kernels.ptx $(GRT_DIR)/runtime_kernels.cu $(GRT_DIR)/runtime_file.fatbin

$(GRT_DIR):
	mkdir -p $@

$(GRT_DIR)/runtime_kernels.fatbin: $(GRT_CU) | $(GRT_DIR)
	$(NVCC) -fatbin -gencode arch=compute_$(GRT_ARCH),code=[sm_$(GRT_ARCH),compute_$(GRT_ARCH)] -o $@ $<
$(GRT_DIR)/runtime_kernels.cubin: $(GRT_CU) | $(GRT_DIR)
	$(NVCC) -cubin -arch=sm_$(GRT_ARCH) -o $@ $<
$(GRT_DIR)/runtime_kernels.ptx: $(GRT_CU) | $(GRT_DIR)
	$(NVCC) -ptx -arch=compute_$(GRT_ARCH) -o $@ $<
# Files the test loads at run time, beside the executable.
$(GRT_DIR)/runtime_kernels.cu: $(GRT_CU) | $(GRT_DIR)
	cp $< $@
$(GRT_DIR)/runtime_file.fatbin: $(GRT_DIR)/runtime_kernels.fatbin
	cp $< $@

# The images are embedded with .incbin, so they are prerequisites of the program.
$(GRT_BIN): tests/gpu/check_runtime_gpu.c include/kstub/kstub.h $(GRT_IMAGES) $(B)/lib/libkstub.a
	$(CC) $(BASE_CFLAGS) -Werror -Iinclude/kstub $(CUDA_INC) \
	    -DRT_FATBIN='"$(GRT_DIR)/runtime_kernels.fatbin"' -DRT_CUBIN='"$(GRT_DIR)/runtime_kernels.cubin"' \
	    -DRT_PTX='"$(GRT_DIR)/runtime_kernels.ptx"' -DRT_SOURCE='"$(GRT_CU)"' \
	    -DRT_LIBNVRTC='"$(GRT_LIBNVRTC)"' $< -o $@ $(B)/lib/libkstub.a -ldl -lpthread -lm

.PHONY: gpu-check-runtime gpu-sanitize-runtime
gpu-check-runtime: $(GRT_BIN)
	./$(GRT_BIN)
	KSTUB_LOADER=module ./$(GRT_BIN)

gpu-sanitize-runtime: $(GRT_BIN)
	@if [ ! -x "$(COMPUTE_SANITIZER)" ]; then echo "gpu-sanitize-runtime: skipped ($(COMPUTE_SANITIZER) not found)"; exit 0; fi; \
	set -e; for tool in memcheck racecheck initcheck synccheck; do \
	    skip=; [ $$tool = racecheck ] && skip=threads; \
	    echo "== compute-sanitizer --tool $$tool$${skip:+ (without $$skip)}"; \
	    KSTUB_GPU_SKIP=$$skip $(COMPUTE_SANITIZER) --tool $$tool --report-api-errors no --error-exitcode 3 ./$(GRT_BIN); \
	done
