# kstub — build, test and demo.
#
#   make            the generator (build/bin/kstub) and the runtime (build/lib/libkstub.{a,so})
#   make demo       generate stubs for kernels/*.cu, build examples/, run it
#   make check      every CPU test (Check suites); needs no GPU
#   make gpu-check  the same kernels on a real GPU through the generated stubs
#   make bless      rewrite the golden files under tests/golden/ from the current generator
#   make bench      the benchmark programs (bench/README.md); make bench-run runs them
#   make install    kstub, libkstub, the headers, templates and kstub.mk under $(PREFIX)

# ---- user settings -----------------------------------------------------------
CUDA_PATH ?= /usr/local/cuda#            CUDA toolkit (cuda.h, nvcc)
LLVM_DIR ?= /usr/lib/llvm-22#            LLVM 22 install that holds libclang
CC ?= cc#                                 C compiler for the generator and the runtime
CXX ?= c++#                               C++ compiler (compile tests of the generated header)
NVCC ?= $(CUDA_PATH)/bin/nvcc#            device compiler for kernel images
OPT ?= -O2 -g#                            optimisation and debug flags
GPU_ARCHS ?= 80 90#                       SASS targets embedded in the demo's fatbins (PTX of the last one too)
PREFIX ?= /usr/local#                     where `make install` puts things

# ---- fixed flags -----------------------------------------------------------------
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wundef -Wstrict-prototypes \
        -Wmissing-prototypes -Wno-missing-field-initializers
BASE_CFLAGS := -std=c11 $(WARN) $(OPT) -D_GNU_SOURCE -fPIC
CUDA_INC := -I$(CUDA_PATH)/include
HAVE_LIBCLANG := $(wildcard $(LLVM_DIR)/include/clang-c/Index.h)
LIBCLANG_CFLAGS := -I$(LLVM_DIR)/include
LIBCLANG_LIBS := -L$(LLVM_DIR)/lib -Wl,-rpath,$(LLVM_DIR)/lib -lclang
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
NVCC_GENCODE := $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_$(lastword $(GPU_ARCHS)),code=compute_$(lastword $(GPU_ARCHS))

B := build
KSTUB := $(B)/bin/kstub
GEN := $(B)/gen

GEN_SRC := $(sort $(wildcard generator/*.c))
GEN_OBJ := $(GEN_SRC:%.c=$(B)/obj/%.o)
RT_SRC := $(sort $(wildcard runtime/*.c))
RT_OBJ := $(RT_SRC:%.c=$(B)/obj/%.o)
TEMPLATES := $(wildcard templates/*.in)

KERNELS := $(sort $(wildcard kernels/*.cu))
KNAMES := $(notdir $(KERNELS:.cu=))
GEN_H := $(KNAMES:%=$(GEN)/%.kstub.h)
GEN_C := $(KNAMES:%=$(GEN)/%.kstub.c)
GEN_JSON := $(KNAMES:%=$(GEN)/%.kstub.json)
FATBINS := $(KNAMES:%=$(GEN)/%.fatbin)

.PHONY: all deps demo check gpu-check bless clean install gen
all: $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so

# Installs missing Debian packages; a no-op when they are present.
deps:
	@bash scripts/deps.sh

# ---- generator -------------------------------------------------------------------
$(B)/obj/generator/%.o: generator/%.c $(wildcard generator/*.h) | $(B)/obj/generator
	$(CC) $(BASE_CFLAGS) $(LIBCLANG_CFLAGS) -DKSTUB_TEMPLATE_DIR='"$(abspath templates)"' -c $< -o $@

$(KSTUB): $(GEN_OBJ) | $(B)/bin
	$(CC) $(OPT) $^ -o $@ $(LIBCLANG_LIBS) -ljansson

# ---- runtime ---------------------------------------------------------------------
$(B)/obj/runtime/%.o: runtime/%.c $(wildcard runtime/*.h) | $(B)/obj/runtime
	$(CC) $(BASE_CFLAGS) -fvisibility=hidden $(CUDA_INC) -c $< -o $@

$(B)/lib/libkstub.a: $(RT_OBJ) | $(B)/lib
	rm -f $@ && ar rcs $@ $^

$(B)/lib/libkstub.so: $(RT_OBJ) | $(B)/lib
	$(CC) -shared $(OPT) $^ -o $@ -ldl -lpthread

$(B)/obj/generator $(B)/obj/runtime $(B)/bin $(B)/lib $(GEN) $(B)/tests:
	mkdir -p $@

# ---- generated stubs for kernels/ --------------------------------------------------
# On a machine without libclang (the GPU machine) the stubs generated elsewhere
# under build/gen are used as they are.
ifneq ($(HAVE_LIBCLANG),)
$(GEN)/%.fatbin: kernels/%.cu | $(GEN)
	$(NVCC) -fatbin $(NVCC_GENCODE) -o $@ $<

$(GEN)/%.kstub.h $(GEN)/%.kstub.c $(GEN)/%.kstub.json: kernels/%.cu $(GEN)/%.fatbin $(KSTUB) $(TEMPLATES)
	$(KSTUB) $< --embed $(GEN)/$*.fatbin --manifest $(GEN)/$*.kstub.json -o $(GEN)/$*.kstub
endif

gen: $(GEN_H) $(GEN_C) $(GEN_JSON)

# The fatbins are embedded in the stubs, but keep them: users and tests read them too.
.SECONDARY: $(FATBINS)

-include tests/tests.mk
-include examples/examples.mk
-include bench/bench.mk

# Installs under $(DESTDIR)$(PREFIX): bin/kstub, lib/libkstub.{a,so},
# include/kstub.h and kstub_types.h, share/kstub/{templates,kstub.mk}. An
# installed kstub finds its templates through its own path.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/kstub/templates
	install -m 755 $(KSTUB) $(DESTDIR)$(PREFIX)/bin/kstub
	install -m 644 $(B)/lib/libkstub.a $(B)/lib/libkstub.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 runtime/kstub.h runtime/kstub_types.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(TEMPLATES) $(DESTDIR)$(PREFIX)/share/kstub/templates/
	install -m 644 kstub.mk $(DESTDIR)$(PREFIX)/share/kstub/

clean:
	rm -rf $(B)
