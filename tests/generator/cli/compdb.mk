# tests/generator/cli/compdb.mk — the compile_commands.json reader and the depfile quoting
# (tests/generator/cli/check_compdb.c): nvcc options files and @response files, a relative
# "directory", unterminated quotes, ':' and newlines in depfile paths.
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-compdb

COMPDB_CHECK := $(B)/tests/check_compdb
COMPDB_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(COMPDB_CHECK): tests/generator/cli/check_compdb.c tests/support/testutil.c tests/support/testutil.h $(COMPDB_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(COMPDB_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-compdb
check-compdb: $(COMPDB_CHECK)
	$(KS_SUITE) "$(COMPDB_CHECK)"

CHECK_TARGETS += check-compdb
