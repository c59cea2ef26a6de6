# tests/runtime/runtime.mk — the runtime's CPU tests: libkstub against a fake libcuda.
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-runtime    build and run build/tests/check_runtime (tests/runtime/check_runtime*.c)
#
# Builds: build/tests/libcuda_fake.so (tests/support/fake_cuda.c), build/tests/libnvrtc_fake.so
# (tests/support/fake_nvrtc.c), build/tests/check_runtime. The compile-and-cache tests
# use the real libnvrtc ($(RT_NVRTC)); they are skipped, saying so, without it.

RT_FAKE := $(B)/tests/libcuda_fake.so
RT_FAKE_NVRTC := $(B)/tests/libnvrtc_fake.so
RT_CHECK := $(B)/tests/check_runtime
RT_NVRTC ?= $(firstword $(wildcard $(CUDA_PATH)/lib64/libnvrtc.so.1[0-9]) $(CUDA_PATH)/lib64/libnvrtc.so)#  the real NVRTC for compile tests

CHECK_TARGETS += check-runtime
.PHONY: check-runtime
check-runtime: $(RT_CHECK) $(RT_FAKE) $(RT_FAKE_NVRTC) $(B)/tests/kstub_h.ok
	$(KS_SUITE) "$(RT_CHECK)"

# kstub.h compiles alone as C99 and C++11, pedantic, and its initialisers are complete.
$(B)/tests/kstub_h.ok: include/kstub/kstub.h | $(B)/tests
	printf '#include "kstub.h"\nstatic ks_image i_ = KS_IMAGE_INIT("a.cu", 0, 0, KS_IMAGE_NONE);\nks_kernel k_ = KS_KERNEL_INIT(&i_, "s", "n", 0, 0, 0);\nconst ks_launch_attrs a_ = KS_LAUNCH_ATTRS_INIT;\n' > $(B)/tests/kstub_h.c
	$(CC) -std=c99 -Wall -Wextra -Wpedantic -Werror -Wmissing-field-initializers -Iinclude/kstub -fsyntax-only $(B)/tests/kstub_h.c
	$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror -Wmissing-field-initializers -Iinclude/kstub -fsyntax-only -x c++ $(B)/tests/kstub_h.c
	touch $@

$(RT_FAKE_NVRTC): tests/support/fake_nvrtc.c | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -shared $< -o $@ -lpthread

# A plain shared object with default visibility: it stands in for libcuda.so.1.
$(RT_FAKE): tests/support/fake_cuda.c tests/support/fake_cuda.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(CUDA_INC) -shared $< -o $@ -lpthread

# The suite: check_runtime.c (main) and its cases, check_runtime_*.c, on the
# shared fixture runtime_fixture.c (tests/support/runtime_fixture.h lists the files).
# Objects with depfiles, as the library's; the fakes' absolute paths are built
# in, so the test runs from any directory.
RT_CHECK_SRC := tests/runtime/check_runtime.c $(sort $(wildcard tests/runtime/check_runtime_*.c)) tests/support/runtime_fixture.c
RT_CHECK_OBJ := $(RT_CHECK_SRC:tests/%.c=$(B)/tests/obj/%.o)
# The fixture alone, which check-checks and check-graph link too.
RT_FIXTURE_OBJ := $(B)/tests/obj/support/runtime_fixture.o

$(RT_CHECK_OBJ): $(B)/tests/obj/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) $(CUDA_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' -DFAKE_NVRTC_PATH='"$(abspath $(RT_FAKE_NVRTC))"' \
	    -DREAL_NVRTC_PATH='"$(RT_NVRTC)"' -c $< -o $@

-include $(RT_CHECK_OBJ:.o=.d)

$(RT_CHECK): $(RT_CHECK_OBJ) $(B)/lib/libkstub.a | $(B)/tests $(RT_FAKE) $(RT_FAKE_NVRTC)
	$(CC) $(OPT) $(RT_CHECK_OBJ) -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
