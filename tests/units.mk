# units.mk — unit suites of single generator components, linked with the
# generator's objects (less main.o) as check_gen is:
#
#   make check-render    tests/check_render.c: the template engine (render.c)
#   make check-naming    tests/check_naming.c: naming.c on models built by hand
#   make check-typemap   tests/check_typemap.c: each parameter kind of small
#                        .cu files through libclang into the typed model

UNIT_SUITES := render naming typemap

$(UNIT_SUITES:%=$(B)/tests/check_%): $(B)/tests/check_%: tests/check_%.c tests/testutil.c tests/testutil.h $(GEN_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) $< tests/testutil.c $(GEN_TEST_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson $(CHECK_LIBS)

.PHONY: $(UNIT_SUITES:%=check-%)
$(UNIT_SUITES:%=check-%): check-%: $(B)/tests/check_%
	$(KS_SUITE) "CUDA_PATH=$(CUDA_PATH) $(B)/tests/check_$*"

CHECK_TARGETS += $(UNIT_SUITES:%=check-%)
