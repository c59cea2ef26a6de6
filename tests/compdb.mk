# tests/compdb.mk — the compile_commands.json reader and the depfile quoting
# (tests/check_compdb.c): nvcc options files and @response files, a relative
# "directory", unterminated quotes, ':' and newlines in depfile paths.
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-compdb

COMPDB_CHECK := $(B)/tests/check_compdb
COMPDB_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(COMPDB_CHECK): tests/check_compdb.c tests/testutil.c tests/testutil.h $(COMPDB_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $< tests/testutil.c $(COMPDB_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-compdb
check-compdb: $(COMPDB_CHECK)
	$(KS_SUITE) "$(COMPDB_CHECK)"

CHECK_TARGETS += check-compdb
