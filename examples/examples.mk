# examples.mk — `make demo`, included by the top-level Makefile. The app
# itself is built by examples/Makefile, which uses kstub.mk as a user's
# project would; this file only supplies the freshly built kstub and libkstub.

.PHONY: demo demo-run
# Deps first, in their own make run (as `make check` does): whether libclang
# is installed decides how the Makefile reads.
demo:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory demo-run

demo-run: $(KSTUB) $(B)/lib/libkstub.a
	@$(MAKE) --no-print-directory -f examples/Makefile run KSTUB=$(KSTUB) KSTUB_DEP=$(KSTUB) \
	    KSTUB_INCLUDE=include/kstub KSTUB_LIBDIR=$(B)/lib CUDA_PATH=$(CUDA_PATH) \
	    KSTUB_ARCHS="$(GPU_ARCHS)"
