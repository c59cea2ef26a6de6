# tests/generator/drift/drift.mk — the build-and-CI suite (tests/generator/drift/check_drift.c): depfiles,
# write-if-changed, deterministic output, kstub.mk on the sample project
# tests/mkproj under make -j, compile_commands.json (-p), kstub check and
# kstub diff. Included from tests/tests.mk; uses the top-level Makefile's
# variables. Needs nvcc (no GPU) for the sample project's fatbin.
#
#   make check-drift

DRIFT_CHECK := $(B)/tests/check_drift
DRIFT_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(DRIFT_CHECK): tests/generator/drift/check_drift.c tests/support/testutil.c tests/support/testutil.h $(DRIFT_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(DRIFT_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-drift
check-drift: $(DRIFT_CHECK) $(KSTUB) $(B)/lib/libkstub.a kstub.mk $(wildcard tests/mkproj/*)
	$(KS_SUITE) "KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) NVCC=$(NVCC) KSTUB_LIBDIR=$(abspath $(B)/lib) \
	    SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' $(DRIFT_CHECK)"

CHECK_TARGETS += check-drift
