# tests/generator/front/cache.mk — the cache's size cap and `kstub cache` (tests/generator/front/check_cache.c):
# KSTUB_CACHE_SIZE, least-recently-used eviction while generating, --stats,
# --prune and --clear. Included from tests/tests.mk; uses the top-level
# Makefile's variables. Needs libclang (real prelude entries), no GPU.
#
#   make check-cache

CACHE_CHECK := $(B)/tests/check_cache
CACHE_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(CACHE_CHECK): tests/generator/front/check_cache.c tests/support/testutil.c tests/support/testutil.h generator/front/prelude/cachecmd.h \
    $(CACHE_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $(TEST_INC) $< tests/support/testutil.c $(CACHE_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson \
	    $(CHECK_LIBS)

.PHONY: check-cache
check-cache: $(CACHE_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(abspath $(KSTUB)) CUDA_PATH=$(CUDA_PATH) $(CACHE_CHECK)"

CHECK_TARGETS += check-cache
