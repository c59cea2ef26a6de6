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
	$(GRAPH_CHECK)

# The golden stubs are compiled as they are, so what is tested is what the
# generator is held to; the fake's absolute path is built in, as for check_runtime.
$(GRAPH_CHECK): tests/check_graph.c tests/golden/basic.kstub.c tests/golden/basic.kstub.h tests/fake_cuda.h \
                runtime/kstub.h $(B)/lib/libkstub.a | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -Iruntime -Itests -Itests/golden \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' $< tests/golden/basic.kstub.c -o $@ \
	    $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
