# tests/runtime/races.mk — the races check's happens-before core (runtime/races.c)
# on the CPU, fed recorded call sequences directly (no driver, no CUPTI).
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-races     build and run build/tests/check_races

RACES_CHECK := $(B)/tests/check_races

CHECK_TARGETS += check-races
.PHONY: check-races
check-races: $(RACES_CHECK)
	$(KS_SUITE) "$(RACES_CHECK)"

# The core is pure C: compiled in, as it is, beside its test.
$(RACES_CHECK): tests/runtime/check_races.c runtime/races.c runtime/races.h tests/support/testutil.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Werror -Iruntime $(TEST_INC) $< runtime/races.c -o $@ $(CHECK_LIBS)
