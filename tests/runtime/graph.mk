# tests/runtime/graph.mk — typed CUDA graphs on the CPU: the golden file's
# <kernel>_node / <kernel>_node_set entry points (tests/golden/basic.kstub.c,
# compiled in) and runtime/graph.c's life cycle, against the fake libcuda
# (tests/support/fake_cuda.c). Included from tests/tests.mk; uses the top-level
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
# The fake driver's controls come from the runtime suite's fixture (tests/support/runtime_fixture.h).
$(GRAPH_CHECK): tests/runtime/check_graph.c tests/golden/basic.kstub.c tests/golden/basic.kstub.h tests/support/fake_cuda.h \
                tests/support/runtime_fixture.h tests/support/testutil.h $(RT_FIXTURE_OBJ) include/kstub/kstub.h $(B)/lib/libkstub.a \
                | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) -Itests/golden \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' $< tests/golden/basic.kstub.c $(RT_FIXTURE_OBJ) \
	    -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
