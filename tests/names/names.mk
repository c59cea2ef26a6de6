# names.mk — the name-collision generator (tests/names/check-names.sh): a .cu
# whose kernels, parameters, types and fields are named after every
# identifier libkstub declares and kstub generates must give stubs that
# compile (C99, C11, C++17, strict too) and match nvcc's ABI.

CHECK_TARGETS += check-names
.PHONY: check-names
check-names: $(KSTUB) $(ABI_CHECK)
	$(KS_SUITE) "KSTUB=$(KSTUB) ABI_CHECK=$(ABI_CHECK) NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) bash tests/names/check-names.sh"
