# tests/sanitize_runtime.mk — the runtime suite under sanitizers, and the
# runtime's fuzz targets. Included from tests/tests.mk; adds nothing to
# CHECK_TARGETS (each target builds its own copy of everything under $(B)).
#
#   make check-runtime-asan   check-runtime built with ASan+UBSan (leaks on), in $(B)/asan
#   make check-runtime-tsan   check-runtime built with TSan (its 32-thread races included), in $(B)/tsan
#   make fuzz-runtime FUZZ_SECONDS=N
#                             each libFuzzer target below for N seconds (clang's
#                             -fsanitize=fuzzer,address,undefined), from its seed corpus
#                             tests/fuzz/corpus/<target>/; crashes are left as
#                             $(B)/fuzz/<target>/crash-* and fail the target
#
# The sanitized suites rerun this Makefile with another B and OPT, so the
# library, the fakes and the suite are all built the same way.

SAN_OPT_ASAN ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all#  ASan+UBSan build flags
SAN_OPT_TSAN ?= -O1 -g -fsanitize=thread#                 TSan build flags
FUZZ_CC ?= /usr/lib/llvm-22/bin/clang#                    a clang with libFuzzer
FUZZ_SECONDS ?= 60#                                       seconds per fuzz target
FUZZ_TARGETS := fuzz_cache_entry fuzz_image_kind

.PHONY: check-runtime-asan check-runtime-tsan fuzz-runtime
check-runtime-asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/asan OPT='$(SAN_OPT_ASAN)' check-runtime

check-runtime-tsan:
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:$(TSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/tsan OPT='$(SAN_OPT_TSAN)' check-runtime

# ---- fuzzing ------------------------------------------------------------------------

FUZZ_DIR := $(B)/fuzz
FUZZ_FLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
              -Iruntime $(CUDA_INC)

$(FUZZ_DIR):
	mkdir -p $@

# The cache-entry reader is cache.c itself, with sha256.c and status.c for what it calls.
$(FUZZ_DIR)/fuzz_cache_entry: tests/fuzz/fuzz_cache_entry.c runtime/cache.c runtime/sha256.c runtime/status.c \
                              $(wildcard runtime/*.h) | $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) tests/fuzz/fuzz_cache_entry.c runtime/cache.c runtime/sha256.c runtime/status.c \
	    -o $@ -lpthread

$(FUZZ_DIR)/fuzz_image_kind: tests/fuzz/fuzz_image_kind.c runtime/image_kind.h | $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) $< -o $@

fuzz-runtime: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_DIR)/$$t/corpus; \
	    echo "== $$t for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_DIR)/$$t/ $(FUZZ_DIR)/$$t/corpus tests/fuzz/corpus/$$t \
	        2>&1 | grep -E '^#|stat::|ERROR|SUMMARY|crash|==' | grep -vE 'pulse|REDUCE|NEW ' | tail -12; \
	    if ls $(FUZZ_DIR)/$$t/crash-* $(FUZZ_DIR)/$$t/leak-* $(FUZZ_DIR)/$$t/timeout-* >/dev/null 2>&1; then \
	        echo "$$t: findings in $(FUZZ_DIR)/$$t/"; exit 1; fi; \
	done
