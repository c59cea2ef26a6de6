# tests/cache.mk — the cache's size cap and `kstub cache` (tests/check_cache.c):
# KSTUB_CACHE_SIZE, least-recently-used eviction while generating, --stats,
# --prune and --clear. Included from tests/tests.mk; uses the top-level
# Makefile's variables. Needs libclang (real prelude entries), no GPU.
#
#   make check-cache

CACHE_CHECK := $(B)/tests/check_cache
CACHE_TEST_OBJ := $(filter-out $(B)/obj/generator/cli/main.o,$(GEN_OBJ))

$(CACHE_CHECK): tests/check_cache.c tests/testutil.c tests/testutil.h generator/front/cachecmd.h \
    $(CACHE_TEST_OBJ) | $(B)/tests
	$(CC) $(BASE_CFLAGS) $(GEN_INC) $< tests/testutil.c $(CACHE_TEST_OBJ) -o $@ $(LIBCLANG_LIBS) -ljansson \
	    $(CHECK_LIBS)

.PHONY: check-cache
check-cache: $(CACHE_CHECK) $(KSTUB)
	$(KS_SUITE) "KSTUB=$(abspath $(KSTUB)) CUDA_PATH=$(CUDA_PATH) $(CACHE_CHECK)"

CHECK_TARGETS += check-cache

# The cache entry both caches write (common/cache_entry.c), on its own:
#   make check-cache-entry
CACHE_ENTRY_CHECK := $(B)/tests/check_cache_entry

$(CACHE_ENTRY_CHECK): tests/check_cache_entry.c common/cache_entry.c common/cache_entry.h \
    common/safefile.c common/safefile.h common/sha256.c common/sha256.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Icommon $< common/cache_entry.c common/safefile.c \
	    common/sha256.c -o $@ $(CHECK_LIBS)

.PHONY: check-cache-entry
check-cache-entry: $(CACHE_ENTRY_CHECK)
	$(KS_SUITE) "$(CACHE_ENTRY_CHECK)"

CHECK_TARGETS += check-cache-entry
