# tests/gpu/graph.mk — typed CUDA graphs on the GPU (tests/gpu/check_graph_gpu.c);
# check-graph (tests/runtime/graph.mk) is the same on the CPU. Included by
# tests/tests.mk after gpu.mk.
#
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

$(GPU_DIR)/check_graph_gpu.o: tests/gpu/check_graph_gpu.c tests/gpu/gpu_check.h $(GRAPH_GPU_KERNELS:%=$(GEN)/%.kstub.h) include/kstub/kstub.h | $(GPU_DIR)
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
