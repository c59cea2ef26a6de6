# tests/generator/cli/outputs.mk — what the command line lets a run write
# (tests/generator/cli/check_outputs.c): no output replaces a file the run
# read (a header, the compile database, an options file, a template), no -o
# shadows a header the stubs include. Included from tests/tests.mk; needs
# only the generator (no nvcc, no GPU).
#
#   make check-outputs

# The program is built by tests/generator/units.mk.
OUTPUTS_CHECK := $(B)/tests/check_outputs

.PHONY: check-outputs
check-outputs: $(OUTPUTS_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) SRCDIR=$(CURDIR) $(OUTPUTS_CHECK)"

CHECK_TARGETS += check-outputs
