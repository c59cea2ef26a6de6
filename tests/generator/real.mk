# tests/generator/real.mk — kstub on .cu files as real projects write them (issue 14):
# tests/generator/check_real.c. Host code, template kernels instantiated by host code,
# kernels in project headers and --kernels-in, the nvcc compatibility header
# (generator/front/compat.c), internal-linkage kernels named in notes, and a/util.cu
# beside b/util.cu linked into one program with kstub.mk. Included from
# tests/tests.mk; uses the top-level Makefile's variables. Needs nvcc (no GPU).
#
#   make check-real
#
# The ABI of the same files against nvcc's PTX is check-abi's (tests/generator/abi.mk
# runs it over tests/corpus/real/ too).

REAL_CHECK := $(B)/tests/check_real

REAL_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(REAL_CHECK): tests/generator/check_real.c tests/support/testutil.c tests/support/testutil.h $(REAL_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(REAL_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-real
check-real: $(REAL_CHECK) $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so $(RT_FAKE)
	$(KS_SUITE) "KSTUB=$(KSTUB) NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) KSTUB_LIBDIR=$(abspath $(B)/lib) \
	    FAKE_CUDA=$(abspath $(RT_FAKE)) SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' $(REAL_CHECK)"

CHECK_TARGETS += check-real
