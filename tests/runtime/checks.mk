# tests/runtime/checks.mk — the run-time checks (issue 22) on the CPU: libkstub's
# checked launches against the fake driver, NVTX through a small injection
# library. Included from tests/tests.mk.
#
#   make check-checks    build and run build/tests/check_checks

CK_CHECKS := $(B)/tests/check_checks
CK_NVTX_INJECT := $(B)/tests/libnvtx_inject.so

CHECK_TARGETS += check-checks
.PHONY: check-checks
check-checks: $(CK_CHECKS) $(RT_FAKE) $(CK_NVTX_INJECT)
	$(KS_SUITE) "$(CK_CHECKS)"

# An NVTX tool as Nsight would be: records the ranges it is told about.
$(CK_NVTX_INJECT): tests/support/nvtx_inject.c | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) -shared $< -o $@

# The fake driver's controls come from the runtime suite's fixture (tests/support/runtime_fixture.h).
$(CK_CHECKS): tests/runtime/check_checks.c tests/runtime/check_checks_cache.c tests/support/fake_cuda.h tests/support/runtime_fixture.h tests/support/testutil.h $(RT_FIXTURE_OBJ) \
              include/kstub/kstub.h $(B)/lib/libkstub.a | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' -DNVTX_INJECT_PATH='"$(abspath $(CK_NVTX_INJECT))"' \
	    $< tests/runtime/check_checks_cache.c $(RT_FIXTURE_OBJ) -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ljansson -ldl -lpthread
