# tests/generator/abi.mk — the ABI oracle: every kernel kstub accepts must pack its
# parameters exactly as nvcc's PTX declares them. Included from tests/tests.mk;
# uses the top-level Makefile's variables. Needs nvcc (no GPU) and kstub.
#
#   make check-abi    build build/tests/check_abi and run it on kernels/*.cu,
#                     tests/corpus/*.cu and tests/corpus/real/*.cu (a file's
#                     "// abi-nvcc: ..." and "// abi-kstub: ..." lines add flags)
#
# Inputs are passed on the command line, so a new corpus file needs no edit here.

ABI_CHECK := $(B)/tests/check_abi
ABI_CORPUS := $(sort $(wildcard tests/corpus/*.cu)) $(sort $(wildcard tests/corpus/real/*.cu))

CHECK_TARGETS += check-abi
.PHONY: check-abi
check-abi: $(ABI_CHECK) $(KSTUB) $(KERNELS) $(ABI_CORPUS)
	$(KS_SUITE) "KSTUB=$(KSTUB) NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) $(ABI_CHECK) $(KERNELS) $(ABI_CORPUS)"

$(ABI_CHECK): tests/generator/check_abi.c common/symbol.c common/symbol.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Icommon $< common/symbol.c -o $@ $(CHECK_LIBS) -ljansson
