# tests.mk — test targets, included by the top-level Makefile. Each
# component's rules live in their own fragment beside this file; each
# fragment appends its runner to CHECK_TARGETS.
#
#   make check       deps, then every CPU suite (no GPU needed)
#   make gpu-check   the GPU suites (needs a CUDA driver and device): the
#                    generated stubs (gpu.mk) and the runtime's loaders and
#                    launch forms (gpu_runtime.mk)
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

-include tests/gen.mk
-include tests/units.mk
-include tests/runtime.mk
-include tests/checks.mk
-include tests/abi.mk
-include tests/gpu.mk
-include tests/gpu_runtime.mk
-include tests/gpu_check.mk
-include tests/drift.mk
-include tests/compdb.mk
-include tests/names.mk
-include tests/pch.mk
-include tests/cache.mk
-include tests/real.mk
-include tests/cli.mk
-include tests/docs.mk
-include tests/hostile.mk
-include tests/inputs.mk
-include tests/targets.mk
-include tests/graph.mk
-include tests/gpu_real.mk
-include tests/gpu_internal.mk
-include tests/gpu_spec.mk
-include tests/gpu_globals.mk
-include tests/install.mk
-include tests/layers.mk
-include tests/sanitize_runtime.mk
-include tests/sanitize_gen.mk

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
