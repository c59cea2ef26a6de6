# tests/generator/sanitize.mk — the generator under sanitizers, its fuzz targets and
# valgrind. Included from tests/tests.mk after sanitize_runtime.mk (it uses
# FUZZ_CC, FUZZ_SECONDS, FUZZ_SYMBOLIZER, SANITIZE_SH and SAN_OPT_ASAN from there); adds
# nothing to CHECK_TARGETS.
#
#   make check-gen-asan       tests/generator/check_gen.c run against an ASan+UBSan build of
#                             the generator (leaks on), in $(B)/asan-gen; the kstub
#                             binary it runs is that build's
#   make fuzz-gen FUZZ_SECONDS=N
#                             each libFuzzer target for N seconds: the manifest reader,
#                             the compile_commands reader, the template engine, the
#                             depfile quoting, the raw .cu scanner, the --embed image
#                             reader (each with its tests/fuzz/dict/ dictionary); then
#                             tests/fuzz/gen_whole.sh, which mutates .cu seeds, runs
#                             the whole generator (the ASan+UBSan kstub of $(B)/asan-all,
#                             leaks on) and compiles what it writes as C11 and C++17, for N
#                             seconds; findings left under $(B)/fuzz-gen/<target>/
#   make fuzz-gen-replay      each target once on every seed (committed under
#                             tests/fuzz/corpus/<target>/, and the copies of the tree's
#                             files scripts/sanitize.sh adds), then gen_whole.sh over
#                             tests/fuzz/corpus/gen_whole/ and kernels/ (seconds; for CI):
#                             every input that once crashed a target is committed there
#   make check-asan           the whole CPU suite (check-all's CHECK_TARGETS, less any
#                             in ASAN_SKIP) built with ASan+UBSan, leaks on, in
#                             $(B)/asan-all: the generator, the runtime, the fakes and
#                             every suite, and the kstub each suite runs
#   make valgrind-gen         valgrind on $(KSTUB) over kernels/*.cu and tests/corpus/*.cu;
#                             libclang's own reports suppressed (tests/valgrind-libclang.supp)

GEN_FUZZ_DIR := $(B)/fuzz-gen
GEN_FUZZ_TARGETS := fuzz_gen_manifest fuzz_gen_compdb fuzz_gen_render fuzz_gen_depfile fuzz_gen_source \
                    fuzz_gen_image fuzz_gen_instscan
GEN_FUZZ_SRC := $(filter-out generator/cli/main.c,$(GEN_SRC)) $(COMMON_SRC)
GEN_FUZZ_OBJ := $(GEN_FUZZ_SRC:%.c=$(GEN_FUZZ_DIR)/obj/%.o) $(GEN_FUZZ_DIR)/obj/runtime_macros.o \
                $(GEN_FUZZ_DIR)/obj/system_names.o
GEN_FUZZ_CFLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=address,undefined -fno-sanitize-recover=all \
                   -I$(LLVM_DIR)/include $(GEN_INC) -DKSTUB_TEMPLATE_DIR='"$(abspath templates)"'

.SECONDARY: $(GEN_FUZZ_OBJ)

$(GEN_FUZZ_DIR)/obj $(GEN_FUZZ_DIR)/bin:
	mkdir -p $@

# The generator's own sources, built once with the fuzzer's instrumentation;
# their depfiles as the top-level Makefile's.
$(GEN_FUZZ_DIR)/obj/generator/%.o: generator/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(GEN_FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(GEN_FUZZ_DIR)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(GEN_FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(GEN_FUZZ_DIR)/obj/runtime_macros.o: $(GEN_MACROS_C) | $(GEN_FUZZ_DIR)/obj
	$(FUZZ_CC) $(GEN_FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(GEN_FUZZ_DIR)/obj/system_names.o: $(GEN_SYSNAMES_C) | $(GEN_FUZZ_DIR)/obj
	$(FUZZ_CC) $(GEN_FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

-include $(GEN_FUZZ_OBJ:.o=.d)

$(GEN_FUZZ_DIR)/bin/fuzz_gen_%: tests/fuzz/fuzz_gen_%.c $(GEN_FUZZ_OBJ) | $(GEN_FUZZ_DIR)/bin
	$(FUZZ_CC) $(GEN_FUZZ_CFLAGS) -fsanitize=fuzzer $< $(GEN_FUZZ_OBJ) -o $@ \
	    $(LIBCLANG_LIBS) -ljansson

.PHONY: fuzz-gen fuzz-gen-replay check-gen-asan check-asan valgrind-gen gen-whole-kstub
# gen_whole.sh runs the ASan+UBSan kstub that check-asan builds (the same
# objects, so CI builds it once), with leak detection on: a sanitizer report
# in its output is a finding.
GEN_WHOLE_KSTUB := $(B)/asan-all/bin/kstub
GEN_WHOLE_ENV = KSTUB=$(GEN_WHOLE_KSTUB) CUDA_PATH=$(CUDA_PATH) $(if $(FUZZ_SYMBOLIZER),ASAN_SYMBOLIZER_PATH=$(FUZZ_SYMBOLIZER)) \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS)
gen-whole-kstub:
	@$(MAKE) --no-print-directory B=$(B)/asan-all OPT='$(SAN_OPT_ASAN)' $(GEN_WHOLE_KSTUB)
# stderr is closed in the targets (-close_fd_mask=2): the readers print an
# error per refused input; sanitizer reports still reach the log.
# gen_whole.sh runs after the targets whatever they found.
fuzz-gen: $(GEN_FUZZ_TARGETS:%=$(GEN_FUZZ_DIR)/bin/%) gen-whole-kstub
	@rc=0; FUZZ_ARGS='-close_fd_mask=2 -max_len=32768 -timeout=10' \
	    $(SANITIZE_SH) fuzz $(FUZZ_SECONDS) $(GEN_FUZZ_DIR) $(GEN_FUZZ_TARGETS) || rc=1; \
	$(GEN_WHOLE_ENV) bash tests/fuzz/gen_whole.sh $(FUZZ_SECONDS) $(GEN_FUZZ_DIR)/gen_whole || rc=1; exit $$rc

fuzz-gen-replay: $(GEN_FUZZ_TARGETS:%=$(GEN_FUZZ_DIR)/bin/%) gen-whole-kstub
	@rc=0; $(SANITIZE_SH) replay $(GEN_FUZZ_DIR) $(GEN_FUZZ_TARGETS) || rc=1; \
	$(GEN_WHOLE_ENV) bash tests/fuzz/gen_whole.sh replay $(GEN_FUZZ_DIR)/gen_whole || rc=1; exit $$rc

# Reruns this Makefile with its own B and OPT: the generator, check_gen and the
# kstub binary check_gen runs (KSTUB, set by gen.mk from B) are all the ASan build.
check-gen-asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/asan-gen OPT='$(SAN_OPT_ASAN)' check-gen

# Every CPU suite in one sanitized build, check-install too. Programs a suite
# links against the sanitized libkstub.so (check-real's kstub.mk project,
# check-install's pkg-config, kstub.mk and CMake builds) or that dlopen a
# sanitized fake load libasan after they start: verify_asan_link_order=0
# lets them run. ASAN_SKIP=check-x leaves suites out. check-pch runs without
# its "identical" case (every corpus file five ways, for equal outputs):
# check-abi runs the sanitized kstub over the same files, and the cases
# about the cache's entries all run.
# The Python suites load their module (linked with this build's libkstub.a)
# and the fake driver into the system's uninstrumented python3, which the
# ASan runtime cannot start inside (it must be the first library loaded):
# check-asan leaves them out; the runtime code they call runs sanitized in
# check-runtime, check-checks and the rest.
# check-layers reads objects with nm and their depfiles and runs nothing:
# a sanitized build adds nothing to it (and its planted copies rebuild with
# the plain tree's rules, not the asan-all ones), so it runs in make check only.
ASAN_SKIP ?= check-python check-python-example check-python-recipes check-layers#   suites check-asan leaves out
check-asan:
	@rm -f $(B)/asan-all/tests/logs/results
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0:$(ASAN_OPTIONS) \
	UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS) \
	    $(MAKE) --no-print-directory B=$(B)/asan-all OPT='$(SAN_OPT_ASAN)' PCH_CHECK_ENV=CK_EXCLUDE_TAGS=corpus \
	        CHECK_TARGETS='$(filter-out $(ASAN_SKIP),$(CHECK_TARGETS))' check-all

VALGRIND ?= valgrind#                                     valgrind, for valgrind-gen
VALGRIND_GEN_INPUTS ?= $(sort $(wildcard kernels/*.cu tests/corpus/*.cu))#  a few minutes each under valgrind
valgrind-gen: $(KSTUB)
	@VALGRIND=$(VALGRIND) bash scripts/sanitize.sh valgrind $(KSTUB) $(B)/valgrind-gen $(VALGRIND_GEN_INPUTS)
