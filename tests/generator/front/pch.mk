# tests/generator/front/pch.mk — the precompiled prelude cache (tests/generator/front/check_pch.c) and the
# result cache (tests/generator/front/check_result.c): outputs,
# depfiles and messages byte-identical with and without it over kernels/ and
# tests/corpus/, and every entry it must refuse or rebuild. Included from
# tests/tests.mk; uses the top-level Makefile's variables. Needs clang-14
# for the foreign-PCH case (a libclang other than kstub's).
#
#   make check-pch

PCH_CHECK := $(B)/tests/check_pch
RESULT_CHECK := $(B)/tests/check_result
# More environment for the suite: check-asan leaves out the "identical" case,
# tagged "corpus" (CK_EXCLUDE_TAGS=corpus; docs/testing.md says why).
PCH_CHECK_ENV ?=
PCH_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(PCH_CHECK): tests/generator/front/check_pch.c tests/support/testutil.c tests/support/testutil.h $(PCH_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(PCH_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

# The result cache (tests/generator/front/check_result.c): the kstub binary alone.
# (testutil.c's run() uses the generator's buffers, util.c).
$(RESULT_CHECK): tests/generator/front/check_result.c tests/support/testutil.c tests/support/testutil.h $(PCH_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(PCH_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-pch
check-pch: $(PCH_CHECK) $(RESULT_CHECK) $(KSTUB)
	$(KS_SUITE) "$(PCH_CHECK_ENV) KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) $(PCH_CHECK); r=\$$?; \
	    $(PCH_CHECK_ENV) KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) $(RESULT_CHECK) && exit \$$r"

CHECK_TARGETS += check-pch
