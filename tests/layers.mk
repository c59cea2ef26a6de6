# tests/layers.mk — no circles between object files (scripts/layers.sh),
# and no source file over 900 lines (scripts/sizes.sh):
# the runtime's and the common library's objects, and the generator's with
# the common library's, each set read with nm. docs/design.md draws the
# floors; a new call that runs back up fails here. Included from
# tests/tests.mk.
#
#   make check-layers

.PHONY: check-layers
check-layers: $(RT_OBJ) $(COMMON_OBJ) $(GEN_SRC:%.c=$(B)/obj/%.o)
	$(KS_SUITE) "sh scripts/layers.sh $(RT_OBJ) $(COMMON_OBJ); r=\$$?; \
	    sh scripts/sizes.sh $(GEN_SRC) $(RT_SRC) $(COMMON_SRC) || r=1; \
	    sh scripts/layers.sh $(GEN_SRC:%.c=$(B)/obj/%.o) $(COMMON_OBJ) && exit \$$r"

CHECK_TARGETS += check-layers
