# tests/generator/cli/cli.mk — the kstub command line's edges (issue 14): tests/generator/cli/check_cli.c
# (with check_cli_embed.c and check_cli_build.c).
# --list, what -o names, output folders created (and none left by a failed
# run), --embed of an nvcc PTX/cubin/fatbin checked against the input's
# kernels, make -q / make -n with kstub.mk after a complete build, and the
# kstub-check, KS_CHECK, and every ```sh block of README.md and docs/*.md
# run as written, each in a fresh shell at the root of a copy of the tree
# (the README's first project shown as it is in the tree). Included
# from tests/tests.mk; uses the top-level Makefile's variables. Needs nvcc
# (no GPU).
#
#   make check-cli

CLI_CHECK := $(B)/tests/check_cli
# testutil.c's run() uses the generator's buffers (util.c).
CLI_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

# check_cli.c runs three suites: its own, check_cli_embed.c's, check_cli_build.c's.
CLI_CHECK_SRC := tests/generator/cli/check_cli.c tests/generator/cli/check_cli_embed.c tests/generator/cli/check_cli_build.c

$(CLI_CHECK): $(CLI_CHECK_SRC) tests/generator/cli/check_cli.h tests/support/testutil.c tests/support/testutil.h $(CLI_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $(TEST_INC) $(CLI_CHECK_SRC) tests/support/testutil.c $(CLI_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson \
	    $(CHECK_LIBS)

.PHONY: check-cli
check-cli: $(CLI_CHECK) $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so
	$(KS_SUITE) "KSTUB=$(KSTUB) NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) KSTUB_LIBDIR=$(abspath $(B)/lib) \
	    KSTUB_BUILD=$(B) SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' $(CLI_CHECK)"

CHECK_TARGETS += check-cli
