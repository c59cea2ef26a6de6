# tests/runtime.mk — the runtime's CPU tests: libkstub against a fake libcuda.
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-runtime    build and run build/tests/check_runtime
#
# Builds: build/tests/libcuda_fake.so (tests/fake_cuda.c), build/tests/check_runtime.

RT_FAKE := $(B)/tests/libcuda_fake.so
RT_CHECK := $(B)/tests/check_runtime

CHECK_TARGETS += check-runtime
.PHONY: check-runtime
check-runtime: $(RT_CHECK) $(RT_FAKE)
	$(RT_CHECK)

# A plain shared object with default visibility: it stands in for libcuda.so.1.
$(RT_FAKE): tests/fake_cuda.c tests/fake_cuda.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -shared $< -o $@ -lpthread

# The fake's absolute path is built in, so the test runs from any directory.
$(RT_CHECK): tests/check_runtime.c tests/fake_cuda.h runtime/kstub.h $(B)/lib/libkstub.a | $(B)/tests $(RT_FAKE)
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -Iruntime -Itests \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' $< -o $@ \
	    $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
