# tests/gpu/spec.mk — issue 18 on the GPU (tests/gpu/spec_gpu.c): a class
# template specialization by value, std::bool_constant tags, pointers to
# arrays and device function pointers, launched through their stubs and
# checked against the CPU. Included by tests/tests.mk; `make gpu-check` runs
# it (gpu-check-spec). Without a CUDA driver it prints a "skipped" line and
# passes.
#
# As for gpu.mk, the stubs are generated where libclang is (`make gen`) and
# $(GEN) is carried to the GPU machine, which only compiles and runs.

SPEC_STUB := $(GEN)/spec_kernels.kstub
SPEC_GPU := $(GPU_DIR)/spec_gpu

ifneq ($(HAVE_LIBCLANG),)
$(GEN)/spec_kernels.fatbin: tests/gpu/spec_kernels.cu | $(GEN)
	$(NVCC) -fatbin $(NVCC_GENCODE) -o $@ $<

$(SPEC_STUB).h $(SPEC_STUB).c: tests/gpu/spec_kernels.cu $(GEN)/spec_kernels.fatbin $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed $(GEN)/spec_kernels.fatbin -o $(SPEC_STUB)
endif
gen: $(SPEC_STUB).h $(SPEC_STUB).c

$(GPU_DIR)/spec_gpu.o: tests/gpu/spec_gpu.c tests/gpu/gpu_check.h $(SPEC_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(SPEC_GPU): $(GPU_DIR)/spec_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/spec_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-spec
gpu-check-spec: $(SPEC_GPU)
	@./$(SPEC_GPU)

gpu-check: gpu-check-spec
