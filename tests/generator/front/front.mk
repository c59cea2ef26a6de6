# tests/generator/front/front.mk — what the front end reads out of a .cu,
# end to end (tests/generator/front/check_front.c): explicit instantiations
# written by macros through clang's preprocessor, __launch_bounds__ text in a
# body, the short-typedef read under valgrind (skipped, saying so, without
# valgrind or under a sanitizer). Included from tests/tests.mk; needs the
# generator, valgrind when installed.
#
#   make check-front

# The program is built by tests/generator/units.mk.
FRONT_CHECK := $(B)/tests/check_front

.PHONY: check-front
check-front: $(FRONT_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) CUDA_PATH=$(CUDA_PATH) SRCDIR=$(CURDIR) SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' \
	    $(FRONT_CHECK)"

CHECK_TARGETS += check-front
