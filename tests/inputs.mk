# tests/inputs.mk — what a run reads and what it may write (issue 19,
# tests/check_inputs.c): no output replaces a file the run read (a header,
# the compile database, an options file, a template), no -o shadows a header
# the stubs include, a FIFO anywhere is refused instead of blocking, and file
# names cannot inject lines into the diagnostics. Included from
# tests/tests.mk; needs only the generator (no nvcc, no GPU).
#
#   make check-inputs

INPUTS_CHECK := $(B)/tests/check_inputs
# testutil.c's run() uses the generator's buffers (util.c).
INPUTS_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(INPUTS_CHECK): tests/check_inputs.c tests/testutil.c tests/testutil.h $(INPUTS_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $< tests/testutil.c $(INPUTS_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson \
	    $(CHECK_LIBS)

.PHONY: check-inputs
check-inputs: $(INPUTS_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) SRCDIR=$(CURDIR) $(INPUTS_CHECK)"

CHECK_TARGETS += check-inputs
