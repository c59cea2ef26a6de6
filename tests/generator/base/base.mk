# tests/generator/base/base.mk — the generator's base: reading files, writing
# outputs, the diagnostics (tests/generator/base/check_base.c): outputs put
# back byte for byte when any file-system call of the write fails (fault
# injection: tests/support/fault_inject.c, an LD_PRELOAD library), a FIFO
# anywhere a run reads refused instead of blocking, file names that cannot
# inject lines into the diagnostics. Included from tests/tests.mk; needs only
# the generator (no nvcc, no GPU).
#
#   make check-base

# The program is built by tests/generator/units.mk.
BASE_CHECK := $(B)/tests/check_base
FAULT_LIB := $(B)/tests/fault_inject.so

$(FAULT_LIB): tests/support/fault_inject.c | $(B)/tests
	$(CC) $(BASE_CFLAGS) -shared $< -o $@ -ldl

.PHONY: check-base
check-base: $(BASE_CHECK) $(FAULT_LIB) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) FAULT_LIB=$(FAULT_LIB) SRCDIR=$(CURDIR) $(BASE_CHECK)"

CHECK_TARGETS += check-base
