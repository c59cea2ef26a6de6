# tests/runtime/trace.mk — the trace file (issue 45) on the CPU: libkstub's
# mapped trace against the fake driver, read back by the renderer that
# `kstub trace` uses. Included from tests/tests.mk.
#
#   make check-trace    build and run build/tests/check_trace

CK_TRACE := $(B)/tests/check_trace

CHECK_TARGETS += check-trace
.PHONY: check-trace
check-trace: $(CK_TRACE) $(RT_FAKE) $(KSTUB)
	$(KS_SUITE) "$(CK_TRACE)"

$(CK_TRACE): tests/runtime/check_trace.c tests/support/fake_cuda.h tests/support/runtime_fixture.h \
             tests/support/testutil.h tests/support/trace_lines.h common/tracefmt.h $(RT_FIXTURE_OBJ) \
             include/kstub/kstub.h $(B)/lib/libkstub.a | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' -DKSTUB_PATH='"$(abspath $(KSTUB))"' \
	    $< $(RT_FIXTURE_OBJ) -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ljansson -ldl -lpthread
