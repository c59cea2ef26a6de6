# tests/common/common.mk — the common library's own suite (common/, which
# the generator and libkstub both link). Included from tests/tests.mk.
#
#   make check-cache-entry   the cache entry both caches write (common/cache_entry.c), on its own

CACHE_ENTRY_CHECK := $(B)/tests/check_cache_entry

$(CACHE_ENTRY_CHECK): tests/common/check_cache_entry.c common/cache_entry.c common/cache_entry.h \
    common/safefile.c common/safefile.h common/sha256.c common/sha256.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Icommon $< common/cache_entry.c common/safefile.c \
	    common/sha256.c -o $@ $(CHECK_LIBS)

.PHONY: check-cache-entry
check-cache-entry: $(CACHE_ENTRY_CHECK)
	$(KS_SUITE) "$(CACHE_ENTRY_CHECK)"

CHECK_TARGETS += check-cache-entry
