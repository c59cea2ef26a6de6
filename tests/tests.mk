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
-include tests/sanitize_runtime.mk
-include tests/sanitize_gen.mk

.PHONY: check check-all
# Deps first, in their own make run: what is installed decides how this
# Makefile reads (libclang present or not).
check:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory check-all

check-all: $(CHECK_TARGETS)
	@echo "make check: all CPU suites passed ($(CHECK_TARGETS:check-%=%))"
