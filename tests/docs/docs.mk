# tests/docs/docs.mk — what README.md, docs/ and the man page show, checked
# against the tool (tests/docs/check_docs.c): every documented CI gate, found by
# pattern, run against a passing and a failing project. Included from
# tests/tests.mk; uses the top-level Makefile's variables. No nvcc needed.
#
#   make check-docs

DOCS_CHECK := $(B)/tests/check_docs
DOCS_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(DOCS_CHECK): tests/docs/check_docs.c tests/support/testutil.c tests/support/testutil.h $(DOCS_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(DOCS_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson \
	    $(CHECK_LIBS)

.PHONY: check-docs
check-docs: $(DOCS_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) $(DOCS_CHECK)"

CHECK_TARGETS += check-docs
