# tests/hostile.mk — regression tests for issue 10 that no component suite
# holds (tests/check_hostile.c): outputs put back byte for byte when any
# file-system call of the write fails (fault injection: tests/hostile_fault.c,
# an LD_PRELOAD library), the short-typedef read under valgrind, colliding
# names launched through the fake driver, pointer depth, comments, quotes and
# paths in generated C, __launch_bounds__ text in a body. Included from
# tests/tests.mk; uses the top-level Makefile's and runtime.mk's variables.
# Needs nvcc (no GPU), gcc and clang; valgrind when installed.
#
#   make check-hostile

HOSTILE_CHECK := $(B)/tests/check_hostile
HOSTILE_FAULT := $(B)/tests/hostile_fault.so
HOSTILE_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(HOSTILE_CHECK): tests/check_hostile.c tests/testutil.c tests/testutil.h $(HOSTILE_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $< tests/testutil.c $(HOSTILE_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

$(HOSTILE_FAULT): tests/hostile_fault.c | $(B)/tests
	$(CC) $(BASE_CFLAGS) -shared $< -o $@ -ldl

.PHONY: check-hostile
check-hostile: $(HOSTILE_CHECK) $(HOSTILE_FAULT) $(KSTUB) $(B)/lib/libkstub.a $(RT_FAKE)
	$(KS_SUITE) "KSTUB=$(KSTUB) KSTUB_LIB=$(B)/lib/libkstub.a FAKE_CUDA=$(RT_FAKE) FAULT_LIB=$(HOSTILE_FAULT) \
	    NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) SRCDIR=$(CURDIR) SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' \
	    $(HOSTILE_CHECK)"

CHECK_TARGETS += check-hostile
