# tests/layers.mk — the floors and the file sizes: scripts/layers.sh checks
# the runtime's objects and the generator's, each with the common library's,
# against scripts/floors.txt (docs/design.md draws it): no call up a floor
# (read with nm), no circle, no header included out of bounds (another
# folder's private one, a higher floor's, the other tree's: read from the
# compiler's depfiles), no object without a floor; scripts/sizes.sh: no
# source file over 900 lines, the tests' .c files included (the few still
# over it listed, with why, in scripts/sizes-waived.txt). tests/layers-check.sh plants each breach in a
# copy of the tree and expects the check to name it. Included from
# tests/tests.mk.
#
#   make check-layers

.PHONY: check-layers
# The tests' own .c files (not the generated goldens nor the fuzz seeds).
KS_TEST_C = $(shell find tests -name '*.c' -not -path 'tests/fuzz/corpus/*' -not -path 'tests/golden/*' | sort)
check-layers: $(RT_OBJ) $(COMMON_OBJ) $(GEN_SRC:%.c=$(B)/obj/%.o)
	$(KS_SUITE) "sh scripts/layers.sh runtime $(RT_OBJ) $(COMMON_OBJ); r=\$$?; \
	    sh scripts/sizes.sh -x scripts/sizes-waived.txt $(GEN_SRC) $(RT_SRC) $(COMMON_SRC) $(KS_TEST_C) || r=1; \
	    sh scripts/layers.sh generator $(GEN_SRC:%.c=$(B)/obj/%.o) $(COMMON_OBJ) || r=1; \
	    sh tests/layers-check.sh $(B) && exit \$$r"

CHECK_TARGETS += check-layers
