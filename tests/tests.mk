# tests.mk — test targets, included by the top-level Makefile. Each suite's
# rules live in a fragment beside its sources, in the folder of the component
# it tests; each fragment appends its runner to CHECK_TARGETS.
#
#   make check       deps, then every CPU suite (no GPU needed)
#   make gpu-check   the GPU suites (needs a CUDA driver and device): the
#                    generated stubs (gpu/gpu.mk) and the runtime's loaders and
#                    launch forms (gpu/runtime.mk)
#   make gpu-sanitize  both under compute-sanitizer memcheck and racecheck

CHECK_TARGETS :=

# How each suite runs (tests/suite.sh): "check-x: started", its output into
# $(KS_SUITE_LOGS)/check-x.log (the expected errors of negative tests stay
# there), "check-x: N passed, 0 failed"; a failing suite prints its log.
# V=1 shows every suite's output as it runs.
KS_SUITE_LOGS = $(B)/tests/logs
KS_SUITE = @bash tests/suite.sh $@ $(KS_SUITE_LOGS)
# make check runs the suites in parallel, one job per core, and quietly
# (-s: the build's commands are not echoed; warnings still show).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Test programs find the shared helpers (testutil, the fakes' controls, the
# runtime fixture) in tests/support/.
TEST_INC := -Itests/support

# One fragment per suite, in the folder of what it tests (docs/testing.md
# lists them): tests/generator/<stage>/, tests/runtime/, tests/common/, and
# the folders of the tree-wide suites. The order matters where a fragment
# uses another's variables in a rule's prerequisites: gen.mk first
# (GEN_TEST_OBJ), runtime.mk before the suites that use the fake driver,
# abi.mk before names.mk, gpu.mk before the other GPU fragments.
-include tests/generator/gen.mk
-include tests/generator/units.mk
-include tests/runtime/runtime.mk
-include tests/runtime/checks.mk
-include tests/runtime/trace.mk
-include tests/generator/abi.mk
-include tests/gpu/gpu.mk
-include tests/gpu/runtime.mk
-include tests/gpu/checks.mk
-include tests/generator/drift/drift.mk
-include tests/generator/cli/compdb.mk
-include tests/names/names.mk
-include tests/generator/front/pch.mk
-include tests/generator/front/cache.mk
-include tests/common/common.mk
-include tests/generator/real.mk
-include tests/generator/cli/cli.mk
-include tests/docs/docs.mk
-include tests/generator/base/base.mk
-include tests/generator/emit/emit.mk
-include tests/generator/front/front.mk
-include tests/generator/cli/outputs.mk
-include tests/generator/cli/options.mk
-include tests/targets/targets.mk
-include tests/python/python.mk
-include tests/runtime/graph.mk
-include tests/runtime/races.mk
-include tests/runtime/watch.mk
-include tests/gpu/graph.mk
-include tests/gpu/real.mk
-include tests/gpu/internal.mk
-include tests/gpu/spec.mk
-include tests/gpu/races.mk
-include tests/gpu/globals.mk
-include tests/gpu/contexts.mk
-include tests/install/install.mk
-include tests/layers.mk
-include tests/runtime/sanitize.mk
-include tests/generator/sanitize.mk

.PHONY: check check-all
# Deps first, in their own make run: what is installed decides how this
# Makefile reads (libclang present or not). Every suite runs even when one
# fails (KS_SUITE_CONTINUE); the closing line adds up their counts.
check:
	@bash scripts/deps.sh
	@rm -f $(KS_SUITE_LOGS)/results
	@$(MAKE) -s --no-print-directory -j$(CHECK_JOBS) KS_SUITE_CONTINUE=1 check-all

check-all: $(CHECK_TARGETS)
	@bash tests/suite-total.sh $(KS_SUITE_LOGS)/results $(CHECK_TARGETS)

# The two suites once named after their issues (10 and 19), split since by
# the component each case tests; the old names run the suites that hold them.
.PHONY: check-hostile check-inputs
check-hostile: check-base check-emit check-front
check-inputs: check-outputs check-base
