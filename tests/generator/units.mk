# units.mk — the programs of the generator's Check suites that are built
# alike: one source in its component's folder, linked with tests/support's
# testutil.c and the generator's objects (less main.o) as check_gen is. The
# three unit suites run here; the others' fragments beside their sources
# (base.mk, outputs.mk, options.mk, front.mk, emit.mk) say how they run.
#
#   make check-render    tests/generator/emit/check_render.c: the template engine (render.c)
#   make check-naming    tests/generator/model/check_naming.c: naming.c on models built by hand
#   make check-typemap   tests/generator/front/check_typemap.c: each parameter kind of small
#                        .cu files through libclang into the typed model

UNIT_SUITES := emit/check_render model/check_naming front/check_typemap
GEN_CHECK_SRC := $(UNIT_SUITES) base/check_base cli/check_outputs cli/check_options front/check_front emit/check_emit
UNIT_NAMES := $(patsubst check_%,%,$(notdir $(UNIT_SUITES)))
GEN_CHECK_NAMES := $(patsubst check_%,%,$(notdir $(GEN_CHECK_SRC)))

# Each program's source, in its folder; the recipe picks it out of $^.
$(foreach u,$(GEN_CHECK_SRC),$(eval $(B)/tests/$(notdir $u): tests/generator/$u.c))

$(GEN_CHECK_NAMES:%=$(B)/tests/check_%): $(B)/tests/check_%: tests/support/testutil.c tests/support/testutil.h $(GEN_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $(TEST_INC) $(filter %/check_$*.c,$^) tests/support/testutil.c \
	    $(GEN_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: $(UNIT_NAMES:%=check-%)
$(UNIT_NAMES:%=check-%): check-%: $(B)/tests/check_%
	$(KS_SUITE) "CUDA_PATH=$(CUDA_PATH) $(B)/tests/check_$*"

CHECK_TARGETS += $(UNIT_NAMES:%=check-%)
