# tests/gpu/globals.mk — issue 29 on the GPU (tests/gpu/globals_gpu.c): device
# variables written and read through their generated accessors around kernels
# that use them. Included by tests/tests.mk; `make gpu-check` runs it
# (gpu-check-globals): the embedded-fatbin build and the NVRTC build
# (--embed-source), each with the library loader and with KSTUB_LOADER=module.
# Without a CUDA driver each run prints a "skipped" line and passes.
#
# As for gpu.mk, the stubs are generated where libclang is (`make gen`) and
# $(GEN) is carried to the GPU machine, which only compiles and runs.

GLOBALS_STUB := $(GEN)/globals_kernels.kstub
GLOBALS_SRC_STUB := $(GEN)/nvrtc/globals_kernels.kstub
GLOBALS_GPU := $(GPU_DIR)/globals_gpu
GLOBALS_GPU_NVRTC := $(GPU_DIR)/globals_gpu_nvrtc

ifneq ($(HAVE_LIBCLANG),)
$(GEN)/globals_kernels.fatbin: tests/gpu/globals_kernels.cu | $(GEN)
	$(NVCC) -fatbin $(NVCC_GENCODE) -o $@ $<

$(GLOBALS_STUB).h $(GLOBALS_STUB).c: tests/gpu/globals_kernels.cu $(GEN)/globals_kernels.fatbin $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed $(GEN)/globals_kernels.fatbin -o $(GLOBALS_STUB)

$(GLOBALS_SRC_STUB).h $(GLOBALS_SRC_STUB).c: tests/gpu/globals_kernels.cu $(KSTUB) $(TEMPLATES) | $(GEN)
	mkdir -p $(GEN)/nvrtc
	$(KSTUB) $< --embed-source -o $(GLOBALS_SRC_STUB)
endif
gen: $(GLOBALS_STUB).h $(GLOBALS_STUB).c $(GLOBALS_SRC_STUB).h $(GLOBALS_SRC_STUB).c

$(GPU_DIR)/globals_gpu.o: tests/gpu/globals_gpu.c tests/gpu/gpu_check.h $(GLOBALS_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@
$(GPU_DIR)/globals_kernels.kstub.o: $(GLOBALS_STUB).c $(GLOBALS_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@
$(GLOBALS_GPU): $(GPU_DIR)/globals_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/globals_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

# The same test over the NVRTC stubs (their header first on the include path).
$(GPU_DIR)/nvrtc:
	mkdir -p $@
$(GPU_DIR)/nvrtc/globals_gpu.o: tests/gpu/globals_gpu.c tests/gpu/gpu_check.h $(GLOBALS_SRC_STUB).h include/kstub/kstub.h | $(GPU_DIR)/nvrtc
	$(CC) $(GPU_CFLAGS) -I$(GEN)/nvrtc -DGLOBALS_NVRTC -c $< -o $@
$(GPU_DIR)/nvrtc/globals_kernels.kstub.o: $(GLOBALS_SRC_STUB).c $(GLOBALS_SRC_STUB).h include/kstub/kstub.h | $(GPU_DIR)/nvrtc
	$(CC) $(GPU_CFLAGS) -I$(GEN)/nvrtc -c $< -o $@
$(GLOBALS_GPU_NVRTC): $(GPU_DIR)/nvrtc/globals_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/nvrtc/globals_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-globals gpu-sanitize-globals
gpu-check-globals: $(GLOBALS_GPU) $(GLOBALS_GPU_NVRTC)
	@./$(GLOBALS_GPU)
	@KSTUB_LOADER=module ./$(GLOBALS_GPU)
	@./$(GLOBALS_GPU_NVRTC)
	@KSTUB_LOADER=module ./$(GLOBALS_GPU_NVRTC)

gpu-sanitize-globals: $(GLOBALS_GPU)
	@if [ ! -x "$(COMPUTE_SANITIZER)" ]; then echo "gpu-sanitize-globals: skipped"; exit 0; fi; \
	set -e; for tool in memcheck racecheck initcheck synccheck; do \
	    echo "== compute-sanitizer --tool $$tool $(GLOBALS_GPU)"; \
	    $(COMPUTE_SANITIZER) --tool $$tool --report-api-errors no --error-exitcode 3 ./$(GLOBALS_GPU); \
	done

gpu-check: gpu-check-globals
