# tests/generator/cli/options.mk — kstub's options from the one table
# (generator/cli/optable.c) and the subcommands' edges
# (tests/generator/cli/check_options.c): nvcc's architecture spellings,
# kstub check --help, kstub version, kstub cache's --max-size and missing
# directories, --list --all's device-variable accessors, --target NAME. Included from
# tests/tests.mk; needs only the generator (no nvcc, no GPU).
#
#   make check-options

# The program is built by tests/generator/units.mk.
OPTIONS_CHECK := $(B)/tests/check_options

.PHONY: check-options
check-options: $(OPTIONS_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) SRCDIR=$(CURDIR) $(OPTIONS_CHECK)"

CHECK_TARGETS += check-options
