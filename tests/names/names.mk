# names.mk — the name-collision generator (tests/names/check-names.sh): a .cu
# whose kernels, parameters, types and fields are named after every
# identifier libkstub declares and kstub generates must give stubs that
# compile (C99, C11, C++17, strict too) and match nvcc's ABI.

CHECK_TARGETS += check-names
.PHONY: check-names
check-names: $(KSTUB) $(ABI_CHECK)
	$(KS_SUITE) "KSTUB=$(KSTUB) ABI_CHECK=$(ABI_CHECK) NVCC=$(NVCC) CUDA_PATH=$(CUDA_PATH) bash tests/names/check-names.sh"

# The system's own names (tests/names/check-system-names.sh): parameters,
# members and types named after every standard C / POSIX macro, kernels named
# after every function libkstub imports, and kstub:name asking for one.
CHECK_TARGETS += check-system-names
.PHONY: check-system-names
check-system-names: $(KSTUB) $(B)/lib/libkstub.so
	$(KS_SUITE) "KSTUB=$(KSTUB) LIBKSTUB=$(B)/lib/libkstub.so CUDA_PATH=$(CUDA_PATH) bash tests/names/check-system-names.sh"
