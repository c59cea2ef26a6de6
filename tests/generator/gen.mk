# gen.mk — the generator's Check suites (tests/generator/check_gen.c runs one
# per stage: check_gen_model.c, check_gen_output.c, check_gen_compile.c,
# check_gen_cli.c) and `make bless`.

GEN_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

GEN_SUITE_SRC := $(sort $(wildcard tests/generator/check_gen*.c))
$(B)/tests/check_gen: $(GEN_SUITE_SRC) tests/generator/check_gen.h tests/support/testutil.c tests/support/testutil.h $(GEN_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $(GEN_SUITE_SRC) tests/support/testutil.c $(GEN_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: check-gen bless
check-gen: $(B)/tests/check_gen $(KSTUB) $(GEN_H) $(GEN_C)
	$(KS_SUITE) "KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) $(B)/tests/check_gen"

# Rewrites the golden files from the current generator; review the diff.
# basic.cu embeds basic.ptx; the other inputs (GOLDEN_PLAIN) embed no image;
# GOLDEN_IN_DIR are generated from tests/golden/ itself, beside their .hpp
# (the header includes it as "NAME.hpp", as check-gen's copy does).

GOLDEN_PLAIN := records templates internal globals
GOLDEN_IN_DIR := cxx_types
bless: $(KSTUB)
	$(KSTUB) tests/golden/basic.cu --embed tests/golden/basic.ptx \
	    -o tests/golden/basic.kstub --manifest tests/golden/basic.kstub.json
	@set -e; for g in $(GOLDEN_PLAIN); do \
	    echo "$(KSTUB) tests/golden/$$g.cu -o tests/golden/$$g.kstub --manifest tests/golden/$$g.kstub.json"; \
	    $(KSTUB) tests/golden/$$g.cu -o tests/golden/$$g.kstub --manifest tests/golden/$$g.kstub.json; \
	done
	@set -e; for g in $(GOLDEN_IN_DIR); do \
	    echo "cd tests/golden && $(abspath $(KSTUB)) $$g.cu -o $$g.kstub --manifest $$g.kstub.json"; \
	    (cd tests/golden && $(abspath $(KSTUB)) $$g.cu -o $$g.kstub --manifest $$g.kstub.json); \
	done
	@git --no-pager diff --stat -- tests/golden || true

CHECK_TARGETS += check-gen
