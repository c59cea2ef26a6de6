# tests/generator/emit/emit.mk — what reaches the generated C
# (tests/generator/emit/check_emit.c): names that collide with generated and
# runtime identifiers launched through the fake driver, device variables'
# names, pointer depth, comments, quotes and paths in generated C, the
# #include line, the include guard. Included from tests/tests.mk; uses the
# top-level Makefile's and tests/runtime/runtime.mk's variables. Needs nvcc
# (no GPU), gcc and clang.
#
#   make check-emit

# The program is built by tests/generator/units.mk.
EMIT_CHECK := $(B)/tests/check_emit

.PHONY: check-emit
check-emit: $(EMIT_CHECK) $(KSTUB) $(B)/lib/libkstub.a $(RT_FAKE)
	$(KS_SUITE) "KSTUB=$(KSTUB) KSTUB_LIB=$(B)/lib/libkstub.a FAKE_CUDA=$(RT_FAKE) \
	    NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) SRCDIR=$(CURDIR) SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' \
	    $(EMIT_CHECK)"

CHECK_TARGETS += check-emit

# An --embed image built from another version of the kernels: parameters'
# sizes and offsets checked against PTX, cubin and fatbin images nvcc builds
# at test time (tests/generator/emit/check-image-params.sh).
.PHONY: check-image-params
check-image-params: $(KSTUB)
	$(KS_SUITE) "KSTUB=$(KSTUB) NVCC=$(NVCC) bash tests/generator/emit/check-image-params.sh"

CHECK_TARGETS += check-image-params
