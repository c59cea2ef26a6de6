# tests/graph.mk — typed CUDA graphs on the CPU: the golden file's
# <kernel>_node / <kernel>_node_set entry points (tests/golden/basic.kstub.c,
# compiled in) and runtime/graph.c's life cycle, against the fake libcuda
# (tests/fake_cuda.c). Included from tests/tests.mk; uses the top-level
# Makefile's variables and runtime.mk's fake driver.
#
#   make check-graph      build and run build/tests/check_graph

GRAPH_CHECK := $(B)/tests/check_graph

CHECK_TARGETS += check-graph
.PHONY: check-graph
check-graph: $(GRAPH_CHECK) $(RT_FAKE)
	$(KS_SUITE) "$(GRAPH_CHECK)"

# The golden stubs are compiled as they are, so what is tested is what the
# generator is held to; the fake's absolute path is built in, as for check_runtime.
# The fake driver's controls come from the runtime suite's fixture (tests/runtime_fixture.h).
$(GRAPH_CHECK): tests/check_graph.c tests/golden/basic.kstub.c tests/golden/basic.kstub.h tests/fake_cuda.h \
                tests/runtime_fixture.h tests/testutil.h $(B)/tests/obj/runtime_fixture.o runtime/kstub.h $(B)/lib/libkstub.a \
                | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -Iruntime -Icommon -Itests -Itests/golden \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' $< tests/golden/basic.kstub.c $(B)/tests/obj/runtime_fixture.o \
	    -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread

# ---- on the GPU: tests/gpu/check_graph_gpu.c -----------------------------------
# A graph of typed nodes of several kernels/ kernels and an application memset
# node against one-by-one stub launches, node_set between replays, 1,000
# replays, three streams, whole-graph update and refusals. Built like
# gpu.mk's check_gpu from the stubs under $(GEN) (generated where libclang is);
# without a driver it prints "gpu-check-graph: no CUDA driver (...); skipped".
#
#   make gpu-check-graph       (also part of make gpu-check)
#   make gpu-sanitize-graph    (also part of make gpu-sanitize)

GRAPH_GPU_KERNELS := records scalars templates vector_ops
GRAPH_GPU_CHECK := $(GPU_DIR)/check_graph_gpu
GRAPH_GPU_OBJ := $(GPU_DIR)/check_graph_gpu.o $(GPU_COMMON_OBJ) $(GRAPH_GPU_KERNELS:%=$(GPU_DIR)/%.kstub.o)

$(GPU_DIR)/check_graph_gpu.o: tests/gpu/check_graph_gpu.c tests/gpu/gpu_check.h $(GRAPH_GPU_KERNELS:%=$(GEN)/%.kstub.h) runtime/kstub.h | $(GPU_DIR)
	$(CC) $(GPU_CFLAGS) -c $< -o $@

$(GRAPH_GPU_CHECK): $(GRAPH_GPU_OBJ) $(B)/lib/libkstub.a
	$(CC) $(OPT) $(GRAPH_GPU_OBJ) -o $@ $(B)/lib/libkstub.a -ldl -lpthread -lm

.PHONY: gpu-check-graph gpu-sanitize-graph
gpu-check: gpu-check-graph
gpu-check-graph: $(GRAPH_GPU_CHECK)
	@./$(GRAPH_GPU_CHECK)

gpu-sanitize: gpu-sanitize-graph
gpu-sanitize-graph: $(GRAPH_GPU_CHECK)
	@if [ ! -x "$(COMPUTE_SANITIZER)" ]; then echo "gpu-sanitize-graph: skipped ($(COMPUTE_SANITIZER) not found)"; exit 0; fi; \
	set -e; for tool in memcheck racecheck initcheck synccheck; do \
	    echo "== compute-sanitizer --tool $$tool $(GRAPH_GPU_CHECK)"; \
	    $(COMPUTE_SANITIZER) --tool $$tool --report-api-errors no --error-exitcode 3 ./$(GRAPH_GPU_CHECK); \
	done
