# examples.mk — the demo: examples/app.c built the way a user's Makefile
# would build a program with kstub stubs. Included by the top-level Makefile.
#
#   make demo      install missing deps, generate the stubs for kernels/*.cu,
#                  build build/examples/app and run it
#
# What a user's own Makefile needs is the three steps marked (1)-(3): a rule
# that runs kstub (the top-level Makefile's "generated stubs" section), the
# generated .c files compiled like any source, and libkstub at link time.
# No -lcuda: libkstub finds the driver at run time.

EX_DIR := $(B)/examples
EX_APP := $(EX_DIR)/app

# (1) Where kstub.h and the generated headers are, and cuda.h for CUstream.
EX_CFLAGS := $(BASE_CFLAGS) -Iruntime -I$(GEN) $(CUDA_INC)
# (3) libkstub, and what it needs from libc.
EX_LIBS := $(B)/lib/libkstub.a -ldl -lpthread -lm

# (2) Each generated foo.kstub.c is an ordinary C source.
EX_OBJ := $(EX_DIR)/app.o $(KNAMES:%=$(EX_DIR)/%.kstub.o)

$(EX_DIR)/%.kstub.o: $(GEN)/%.kstub.c $(GEN)/%.kstub.h runtime/kstub.h | $(EX_DIR)
	$(CC) $(EX_CFLAGS) -c $< -o $@

# app.c includes every generated header.
$(EX_DIR)/app.o: examples/app.c $(GEN_H) runtime/kstub.h | $(EX_DIR)
	$(CC) $(EX_CFLAGS) -c $< -o $@

$(EX_APP): $(EX_OBJ) $(B)/lib/libkstub.a
	$(CC) $(OPT) $(EX_OBJ) -o $@ $(EX_LIBS)

$(EX_DIR):
	mkdir -p $@

.PHONY: demo-run
# Deps first, in their own make run (as `make check` does): whether libclang
# is installed decides how the Makefile reads.
demo:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory demo-run

demo-run: gen $(EX_APP)
	@echo "demo: kstub generated, from $(words $(KERNELS)) files in kernels/:"
	@for f in $(GEN_H) $(GEN_C) $(wildcard $(GEN_JSON)); do \
	    printf '  %-32s %7s bytes\n' "$$f" "$$(wc -c < $$f)"; done
	@echo "demo: running $(EX_APP)"
	@./$(EX_APP)
