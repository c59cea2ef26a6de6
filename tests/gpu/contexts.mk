# tests/gpu/contexts.mk — issue 45's contexts on a GPU (tests/gpu/contexts_gpu.c):
# the generated stubs of tests/gpu/globals_kernels.cu in a green context (its
# stream, its variables, a launch from a thread with no context) and another
# device's memory under the pointers check before and after peer access.
# Included by tests/tests.mk; `make gpu-check` runs it (gpu-check-contexts),
# with the library loader and with KSTUB_LOADER=module. Each part prints a
# "skipped (...)" line where the driver or machine lacks what it needs (green
# contexts, a second device that can peer); without a CUDA driver the run
# prints "gpu-contexts: no CUDA driver (...); skipped" and passes.
#
# The stubs are globals.mk's ($(GLOBALS_STUB), generated where libclang is).

CONTEXTS_GPU := $(GPU_DIR)/contexts_gpu

$(GPU_DIR)/contexts_gpu.o: tests/gpu/contexts_gpu.c tests/gpu/gpu_check.h $(GLOBALS_STUB).h include/kstub/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@
$(CONTEXTS_GPU): $(GPU_DIR)/contexts_gpu.o $(GPU_COMMON_OBJ) $(GPU_DIR)/globals_kernels.kstub.o $(B)/lib/libkstub.a
	$(CC) $(OPT) $^ -o $@ -ldl -lpthread -lm

.PHONY: gpu-check-contexts
gpu-check-contexts: $(CONTEXTS_GPU)
	@./$(CONTEXTS_GPU)
	@KSTUB_LOADER=module ./$(CONTEXTS_GPU)

gpu-check: gpu-check-contexts
