# tests/gpu/real.mk — issue 14 on the GPU (tests/gpu/real_gpu.c): a template
# kernel instantiated only by host code and a kernel needing 100 KiB of
# dynamic shared memory, launched through their stubs. Included by
# tests/tests.mk; `make gpu-check` runs it (gpu-check-real). Without a CUDA
# driver it prints a "skipped" line and passes.
#
# As for gpu.mk, the stubs are generated where libclang is (`make gen`) and
# $(GEN) is carried to the GPU machine, which only compiles and runs.

REAL_STUB := $(GEN)/real_kernels.kstub
REAL_GPU := $(GPU_DIR)/real_gpu

ifneq ($(HAVE_LIBCLANG),)
$(GEN)/real_kernels.fatbin: tests/gpu/real_kernels.cu | $(GEN)
	$(NVCC) -fatbin $(NVCC_GENCODE) -o $@ $<

$(REAL_STUB).h $(REAL_STUB).c: tests/gpu/real_kernels.cu $(GEN)/real_kernels.fatbin $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed $(GEN)/real_kernels.fatbin -o $(REAL_STUB)
endif
gen: $(REAL_STUB).h $(REAL_STUB).c

$(GPU_DIR)/real_gpu.o: tests/gpu/real_gpu.c tests/gpu/gpu_check.h $(REAL_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(REAL_GPU): $(GPU_DIR)/real_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/real_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-real
gpu-check-real: $(REAL_GPU)
	@./$(REAL_GPU)

gpu-check: gpu-check-real
