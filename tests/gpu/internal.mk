# tests/gpu/internal.mk — issue 31 #1 on the GPU (tests/gpu/internal_gpu.c):
# kernels with internal linkage (static, a static template's instances, an
# anonymous namespace) launched through their stubs from a whole-program
# fatbin, and two files' same-named internal kernels from one -rdc image
# (nvcc -dc, then nvcc -dlink -fatbin). Included by tests/tests.mk;
# `make gpu-check` runs it (gpu-check-internal). Without a CUDA driver it
# prints a "skipped" line and passes.
#
# As for gpu.mk, the stubs are generated where libclang is (`make gen`) and
# $(GEN) is carried to the GPU machine, which only compiles and runs.

INTERNAL_STUBS := $(GEN)/internal_kernels.kstub $(GEN)/internal_rdc_a.kstub $(GEN)/internal_rdc_b.kstub
INTERNAL_GPU := $(GPU_DIR)/internal_gpu

ifneq ($(HAVE_LIBCLANG),)
$(GEN)/internal_kernels.fatbin: tests/gpu/internal_kernels.cu | $(GEN)
	$(NVCC) -fatbin $(NVCC_GENCODE) -o $@ $<

$(GEN)/internal_rdc_%.o: tests/gpu/internal_rdc_%.cu | $(GEN)
	$(NVCC) -dc $(NVCC_GENCODE) -o $@ $<

$(GEN)/internal_rdc.fatbin: $(GEN)/internal_rdc_a.o $(GEN)/internal_rdc_b.o
	$(NVCC) -dlink -fatbin $(NVCC_GENCODE) -o $@ $^

$(GEN)/internal_kernels.kstub.h $(GEN)/internal_kernels.kstub.c: tests/gpu/internal_kernels.cu \
    $(GEN)/internal_kernels.fatbin $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed $(GEN)/internal_kernels.fatbin -o $(GEN)/internal_kernels.kstub

$(GEN)/internal_rdc_%.kstub.h $(GEN)/internal_rdc_%.kstub.c: tests/gpu/internal_rdc_%.cu \
    $(GEN)/internal_rdc.fatbin $(KSTUB) $(TEMPLATES) | $(GEN)
	$(KSTUB) $< --embed $(GEN)/internal_rdc.fatbin -o $(GEN)/internal_rdc_$*.kstub
endif
gen: $(INTERNAL_STUBS:%=%.h) $(INTERNAL_STUBS:%=%.c)

$(GPU_DIR)/internal_gpu.o: tests/gpu/internal_gpu.c tests/gpu/gpu_check.h $(INTERNAL_STUBS:%=%.h) \
    include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(INTERNAL_GPU): $(GPU_DIR)/internal_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/internal_kernels.kstub.o \
    $(GPU_DIR)/internal_rdc_a.kstub.o $(GPU_DIR)/internal_rdc_b.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-internal
gpu-check-internal: $(INTERNAL_GPU)
	@./$(INTERNAL_GPU)

gpu-check: gpu-check-internal
