# tests/runtime/sanitize.mk — the runtime suite under sanitizers, and the
# runtime's fuzz targets. Included from tests/tests.mk; adds only
# check-fuzz-harness to CHECK_TARGETS (each target builds its own copy of
# everything under $(B)).
#
#   make check-fuzz-harness   the fuzz and replay loops with stand-in targets (a failing
#                             target is named, the others still run, exit 1 at the end)
#                             and the macro-growth bound (tests/fuzz/check_harness.sh; seconds)
#   make check-runtime-asan   check-runtime built with ASan+UBSan (leaks on), in $(B)/asan
#   make check-runtime-tsan   check-runtime built with TSan (its 32-thread races included), in $(B)/tsan
#   make fuzz-runtime FUZZ_SECONDS=N
#                             each libFuzzer target (the cache-entry reader, the
#                             #include scanner of the cache key, the image-kind
#                             sniffing) for N seconds (clang's
#                             -fsanitize=fuzzer,address,undefined), from its seeds
#                             (scripts/sanitize.sh makes them); crashes are left as
#                             $(B)/fuzz/<target>/crash-* and fail the target
#   make fuzz-runtime-replay  each target once on every seed: those committed under
#                             tests/fuzz/corpus/<target>/ and the tree's copies (seconds): an input that once
#                             crashed a target is committed there and stays a regression test
#   make fuzz FUZZ_SECONDS=N  every fuzz target, the runtime's and the generator's
#                             (sanitize_gen.mk), N seconds each: the time budget per target;
#                             a target that fails (a finding, an oom past
#                             FUZZ_RSS_MB, a run that did not finish) is named and
#                             the others still run; the exit status is 1 if any failed
#   make fuzz-replay          both replays (what CI runs)
#
# A target's seeds are made at run time in $(B)/fuzz*/<target>/seeds by scripts/sanitize.sh:
# what is committed under tests/fuzz/corpus/<target>/ (seed-* from tests/fuzz/seed.sh:
# generated manifests, nvcc's images, the issue 19 regressions; the rest past findings
# and crafted inputs) plus copies of tests/corpus/, kernels/, the templates and the
# golden manifest, taken at each run and never committed; each target's dictionary is tests/fuzz/dict/*.dict (scripts/sanitize.sh
# picks it). The fuzz and replay loops of both files are scripts/sanitize.sh.
#
# The sanitized suites rerun this Makefile with another B and OPT, so the
# library, the fakes and the suite are all built the same way.

SAN_OPT_ASAN ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all#  ASan+UBSan build flags
SAN_OPT_TSAN ?= -O1 -g -fsanitize=thread#                 TSan build flags
FUZZ_CC ?= /usr/lib/llvm-22/bin/clang#                    a clang with libFuzzer
FUZZ_SECONDS ?= 60#                                       seconds per fuzz target
FUZZ_TARGETS := fuzz_cache_entry fuzz_cache_includes fuzz_image_kind

.PHONY: check-runtime-asan check-runtime-tsan fuzz-runtime fuzz-runtime-replay fuzz fuzz-replay
check-runtime-asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/asan OPT='$(SAN_OPT_ASAN)' check-runtime

check-runtime-tsan:
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:$(TSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/tsan OPT='$(SAN_OPT_TSAN)' check-runtime

# ---- fuzzing ------------------------------------------------------------------------

FUZZ_DIR := $(B)/fuzz
FUZZ_FLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
              -Iinclude/kstub -Iruntime -Icommon $(CUDA_INC)

$(FUZZ_DIR)/bin:
	mkdir -p $@

# Each target is linked with the runtime's own sources and common/, built with the fuzzer's sanitizers.
$(FUZZ_DIR)/bin/fuzz_%: tests/fuzz/fuzz_%.c $(RT_SRC) $(COMMON_SRC) $(wildcard runtime/*.h common/*.h) | $(FUZZ_DIR)/bin
	$(FUZZ_CC) $(FUZZ_FLAGS) $< $(RT_SRC) $(COMMON_SRC) -o $@ -ldl -lpthread

# Each half runs whatever the other found; the exit status says whether any target failed.
fuzz:
	@rc=0; $(MAKE) --no-print-directory fuzz-runtime || rc=1; $(MAKE) --no-print-directory fuzz-gen || rc=1; \
	    if [ $$rc -ne 0 ]; then echo "make fuzz: a target failed (its lines above say which)"; fi; exit $$rc
fuzz-replay:
	@rc=0; $(MAKE) --no-print-directory fuzz-runtime-replay || rc=1; \
	    $(MAKE) --no-print-directory fuzz-gen-replay || rc=1; exit $$rc

CHECK_TARGETS += check-fuzz-harness
.PHONY: check-fuzz-harness
check-fuzz-harness: | $(B)/tests
	$(KS_SUITE) "bash tests/fuzz/check_harness.sh $(B) $(CC)"

FUZZ_SYMBOLIZER ?= $(wildcard $(dir $(FUZZ_CC))llvm-symbolizer)#  for readable stacks
# The loops are scripts/sanitize.sh's, shared with sanitize_gen.mk.
SANITIZE_SH = FUZZ_SYMBOLIZER=$(FUZZ_SYMBOLIZER) bash scripts/sanitize.sh
fuzz-runtime: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/bin/%)
	@$(SANITIZE_SH) fuzz $(FUZZ_SECONDS) $(FUZZ_DIR) $(FUZZ_TARGETS)

fuzz-runtime-replay: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/bin/%)
	@$(SANITIZE_SH) replay $(FUZZ_DIR) $(FUZZ_TARGETS)
