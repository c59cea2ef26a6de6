# kstub — build, test and demo.
#
#   make            the generator (build/bin/kstub) and the runtime (build/lib/libkstub.{a,so})
#   make demo       generate stubs for kernels/*.cu, build examples/, run it
#   make check      every CPU test (Check suites); needs no GPU
#   make gpu-check  the same kernels on a real GPU through the generated stubs
#   make bless      rewrite the golden files under tests/golden/ from the current generator
#   make bench      the benchmark programs (bench/README.md); make bench-run runs them
#   make install    kstub, libkstub, headers, templates, kstub.mk, pkg-config, CMake package,
#                   man page and bash completion under $(DESTDIR)$(PREFIX); make uninstall removes them

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
# Each object's compiler-written list of the headers (and included .c files)
# it reads, beside it as .d: an object is rebuilt when one of those changes,
# and a header that is gone is no error (-MP).
DEPFLAGS := -MMD -MP
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

# The version, written once: include/kstub/kstub.h's KSTUB_VERSION_* numbers. The
# generator's --version (KSTUB_VERSION_TEXT), the soname, kstub.pc and the
# CMake package's version all come from them.
KS_VERSION_MAJOR := $(shell sed -n 's/^\#define KSTUB_VERSION_MAJOR \([0-9]*\).*/\1/p' include/kstub/kstub.h)
KS_VERSION_MINOR := $(shell sed -n 's/^\#define KSTUB_VERSION_MINOR \([0-9]*\).*/\1/p' include/kstub/kstub.h)
KS_VERSION_PATCH := $(shell sed -n 's/^\#define KSTUB_VERSION_PATCH \([0-9]*\).*/\1/p' include/kstub/kstub.h)

# The code both trees share (sha256, safe files, cache entries, image kinds):
# a small static library that kstub links and libkstub holds.
COMMON_SRC := $(sort $(wildcard common/*.c))
COMMON_OBJ := $(COMMON_SRC:%.c=$(B)/obj/%.o)
COMMON_LIB := $(B)/lib/libkstub_common.a
# The generator's folders, from the command line down to its ground floor
# (docs/design.md). Only generator/ (and common/) is on the include path:
# a file includes another folder's header by its path ("front/walk.h").
GEN_DIRS := generator/cli generator/drift generator/emit generator/front generator/front/prelude generator/image generator/model generator/base
GEN_INC := -Igenerator -Icommon \
    -DKSTUB_VERSION_TEXT='"$(KS_VERSION_MAJOR).$(KS_VERSION_MINOR).$(KS_VERSION_PATCH)"'
GEN_SRC := $(sort $(wildcard $(GEN_DIRS:%=%/*.c)))
# The macro names libkstub's headers define, as a table the generator
# reserves (scripts/runtime_macros.sh; built from the headers, never by hand).
GEN_MACROS_C := $(B)/obj/gensrc/runtime_macros.c
# The macros and file-scope names the system's C headers hold (standard C,
# common POSIX, the ones libkstub includes), two sorted tables the generator
# steps aside for (scripts/system_names.sh, read with $(CC) at build time).
GEN_SYSNAMES_C := $(B)/obj/gensrc/system_names.c
# The generator's objects, and last the common library they link.
GEN_OBJ := $(GEN_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gensrc/runtime_macros.o $(B)/obj/gensrc/system_names.o $(COMMON_LIB)
RT_SRC := $(sort $(wildcard runtime/*.c))
RT_OBJ := $(RT_SRC:%.c=$(B)/obj/%.o)
# libkstub's installed (public) headers; runtime/ keeps the private ones.
PUBLIC_H := $(sort $(wildcard include/kstub/*.h))
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
$(B)/obj/generator/%.o: generator/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) -DKSTUB_TEMPLATE_DIR='"$(abspath templates)"' -c $< -o $@

# cli/main.c prints the version kstub.h holds.
$(B)/obj/generator/cli/main.o: include/kstub/kstub.h

$(GEN_MACROS_C): include/kstub/kstub.h include/kstub/kstub_types.h scripts/runtime_macros.sh | $(B)/obj/gensrc
	sh scripts/runtime_macros.sh include/kstub/kstub.h include/kstub/kstub_types.h > $@.tmp && mv $@.tmp $@

$(B)/obj/gensrc/runtime_macros.o: $(GEN_MACROS_C)
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) -c $< -o $@

$(GEN_SYSNAMES_C): scripts/system_names.sh $(RT_SRC) runtime/internal.h | $(B)/obj/gensrc
	CC='$(CC)' sh scripts/system_names.sh $(RT_SRC) runtime/internal.h include/kstub/kstub.h include/kstub/kstub_types.h > $@.tmp && mv $@.tmp $@

$(B)/obj/gensrc/system_names.o: $(GEN_SYSNAMES_C)
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) $(LIBCLANG_CFLAGS) $(GEN_INC) -c $< -o $@

$(KSTUB): $(GEN_OBJ) | $(B)/bin
	$(CC) $(OPT) $^ -o $@ $(LIBCLANG_LIBS) -ljansson

# ---- common (both trees) ---------------------------------------------------------
# Hidden like the runtime's own symbols: libkstub exports none of them.
$(B)/obj/common/%.o: common/%.c | $(B)/obj/common
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) -fvisibility=hidden -Icommon -c $< -o $@

$(COMMON_LIB): $(COMMON_OBJ) | $(B)/lib
	rm -f $@ && ar rcs $@ $^

# ---- runtime ---------------------------------------------------------------------
$(B)/obj/runtime/%.o: runtime/%.c | $(B)/obj/runtime
	$(CC) $(BASE_CFLAGS) $(DEPFLAGS) -fvisibility=hidden -Iinclude/kstub -Icommon $(CUDA_INC) -c $< -o $@

# CUPTI's users (the one subscription, the races check, the free watch) compile
# against cupti.h, which some toolkits keep apart.
$(B)/obj/runtime/cupti.o $(B)/obj/runtime/races_check.o $(B)/obj/runtime/watch.o: \
    CUDA_INC += $(addprefix -I,$(wildcard $(CUDA_PATH)/extras/CUPTI/include))

# The static library holds the common objects too: a user links -lkstub alone.
$(B)/lib/libkstub.a: $(RT_OBJ) $(COMMON_OBJ) | $(B)/lib
	rm -f $@ && ar rcs $@ $^

# The shared library is versioned: the real file libkstub.so.MAJOR.MINOR.PATCH
# with soname libkstub.so.MAJOR, and the two links to it. The numbers come
# from include/kstub/kstub.h, the one place they are written (KS_VERSION_*, above).
LIBKSTUB_SONAME := libkstub.so.$(KS_VERSION_MAJOR)
LIBKSTUB_REAL := libkstub.so.$(KS_VERSION_MAJOR).$(KS_VERSION_MINOR).$(KS_VERSION_PATCH)

$(B)/lib/$(LIBKSTUB_REAL): $(RT_OBJ) $(COMMON_LIB) | $(B)/lib
	$(CC) -shared $(OPT) -Wl,-soname,$(LIBKSTUB_SONAME) $^ -o $@ -ldl -lpthread

$(B)/lib/$(LIBKSTUB_SONAME): $(B)/lib/$(LIBKSTUB_REAL)
	ln -sf $(LIBKSTUB_REAL) $@

# What -lkstub finds at link time; programs then record the soname.
$(B)/lib/libkstub.so: $(B)/lib/$(LIBKSTUB_SONAME)
	ln -sf $(LIBKSTUB_SONAME) $@

$(B)/obj/gensrc $(B)/obj/common $(B)/obj/runtime $(B)/bin $(B)/lib $(GEN) $(B)/tests:
	mkdir -p $@

# The depfiles of the objects above (absent before their first build, when
# every object is built anyway). The runtime-macros table is generated
# source, named as a prerequisite of its object, never #included.
-include $(patsubst %.o,%.d,$(filter %.o,$(GEN_OBJ))) $(COMMON_OBJ:.o=.d) $(RT_OBJ:.o=.d)

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

# ---- install / uninstall ------------------------------------------------------------
# Installs under $(DESTDIR)$(PREFIX):
#   bin/kstub                                  the generator (finds its templates from its own path)
#   lib/libkstub.a, lib/libkstub.so*           the runtime (the real file and its symlinks)
#   include/kstub.h, include/kstub_types.h     the runtime's public headers (include/kstub/ here;
#                                              installed flat: <kstub.h> with -I$(PREFIX)/include)
#   share/kstub/templates/, share/kstub/kstub.mk
#   lib/pkgconfig/kstub.pc                     pkg-config --cflags --libs kstub
#   lib/pkgconfig/kstub-static.pc              the same with libkstub.a (no run-time dependency)
#   lib/cmake/kstub/kstub{Config,ConfigVersion}.cmake   find_package(kstub CONFIG)
#   share/man/man1/kstub.1, share/bash-completion/completions/kstub
#   share/man/man3/*.3                         a page per libkstub function and macro (links: .so)
#   share/doc/kstub/LICENSE, CHANGELOG.md
# `make uninstall` (same PREFIX and DESTDIR) removes exactly these files and
# the directories only kstub uses. Everything here is a real file under
# $(B) or the source tree; the .in files are filled in as they are installed.

MAN3 := $(sort $(wildcard man/man3/*.3))

KS__VERSION = $(KS_VERSION_MAJOR).$(KS_VERSION_MINOR).$(KS_VERSION_PATCH)
KS__DEST = $(DESTDIR)$(PREFIX)

# Every installed file, relative to $(PREFIX): what uninstall removes.
KS__INSTALL_FILES = bin/kstub lib/libkstub.a lib/libkstub.so lib/$(LIBKSTUB_SONAME) lib/$(LIBKSTUB_REAL) \
    $(PUBLIC_H:include/kstub/%=include/%) \
    $(TEMPLATES:templates/%=share/kstub/templates/%) $(PY_TARGET:templates/%=share/kstub/templates/%) share/kstub/kstub.mk \
    lib/pkgconfig/kstub.pc lib/pkgconfig/kstub-static.pc lib/cmake/kstub/kstubConfig.cmake lib/cmake/kstub/kstubConfigVersion.cmake \
    share/man/man1/kstub.1 share/bash-completion/completions/kstub \
    $(MAN3:man/%=share/man/%) share/doc/kstub/LICENSE share/doc/kstub/CHANGELOG.md
# Directories no other package shares: uninstall removes them once empty.
KS__INSTALL_DIRS = share/kstub/templates/python share/kstub/templates share/kstub lib/cmake/kstub share/doc/kstub
# The Python target (docs/python.md): its templates, installed as share/kstub/templates/python (-T).
PY_TARGET := $(wildcard templates/python/*.in templates/python/*.json)

# A destination as one shell word, whatever PREFIX or DESTDIR hold (a
# space, a quote): single-quoted, each ' written as '\''.
ks__q = '$(subst ','\'',$(1))'

# @PREFIX@ & co. in kstub.pc.in and cmake/*.cmake.in: scripts/subst.awk takes
# each value literally from the environment and escapes it for the file's
# syntax (pkg-config's or CMake's), so '&', '|', '#', quotes and '\' in
# PREFIX or CUDA_PATH land in the files as they are.
KS__SUBST = KS_SUBST_PREFIX=$(call ks__q,$(PREFIX)) KS_SUBST_CUDA_PATH=$(call ks__q,$(CUDA_PATH)) \
    KS_SUBST_VERSION='$(KS__VERSION)' KS_SUBST_LIB_REAL='$(LIBKSTUB_REAL)' \
    KS_SUBST_LIB_SONAME='$(LIBKSTUB_SONAME)' awk -v syntax=$(1) -f scripts/subst.awk

# What install refuses in PREFIX and CUDA_PATH, before it builds or writes
# anything: the characters with which the installed files could not work
# (tests/install/check-prefix.sh installs with each of the others, a space,
# '&', '#' and a single quote among them, and builds a pkg-config, a CMake
# and a kstub.mk project against the install). A '$' make itself would read
# as a variable ('$b', not '$(b)') is refused too, rather than installed
# under the shortened path.
define ks__newline


endef
ks__chars := dollar lp rp newline bar backslash quote
ks__c_dollar := $$
ks__c_lp := (
ks__c_rp := )
ks__c_newline := $(ks__newline)
ks__c_bar := |
ks__c_backslash := $(subst x,,x\x)
ks__c_quote := "
ks__say_dollar := a '$$'
ks__say_lp := a '('
ks__say_rp := a ')'
ks__say_newline := a newline
ks__say_bar := a '|'
ks__say_backslash := a '\'
ks__say_quote := a '"'
ks__why_pc := pkg-config cannot carry it into kstub.pc (pkgconf prints it unescaped in --cflags and --libs)
ks__why_dollar := $(ks__why_pc)
ks__why_lp := $(ks__why_pc)
ks__why_rp := $(ks__why_pc)
ks__why_newline := a .pc file is read by lines
ks__why_bar := make takes it for the order-only separator in a list of prerequisites (kstub.mk's rules and CMake's Makefile generator name kstub as one)
ks__why_backslash := CMake reads it as a path separator (find_package(kstub) would not find the package)
ks__why_quote := nvcc refuses it in an -I path (kstub_add_kernels hands nvcc the target's include directories, kstub's among them)
# The first such character in the value of the variable named $(1).
ks__unsafe = $(firstword $(foreach c,$(ks__chars),$(if $(findstring $(ks__c_$(c)),$($(1))),$(c))) \
    $(if $(findstring $$,$(subst $$$$,,$(subst $$$(ks__c_lp),,$(subst $${,,$(value $(1)))))),dollar))
ifneq ($(filter install,$(MAKECMDGOALS)),)
$(foreach v,PREFIX CUDA_PATH,$(foreach c,$(call ks__unsafe,$(v)),$(error $(v) holds $(ks__say_$(c)): \
    $(ks__why_$(c)); nothing was installed, choose a $(v) without it)))
endif

KS__D = $(call ks__q,$(KS__DEST)/$(1))

.PHONY: uninstall
install: all
	install -d $(call KS__D,bin) $(call KS__D,lib) $(call KS__D,include) \
	    $(call KS__D,share/kstub/templates) $(call KS__D,share/kstub/templates/python) \
	    $(call KS__D,lib/pkgconfig) $(call KS__D,lib/cmake/kstub) \
	    $(call KS__D,share/man/man1) $(call KS__D,share/man/man3) $(call KS__D,share/doc/kstub) \
	    $(call KS__D,share/bash-completion/completions)
	install -m 755 $(KSTUB) $(call KS__D,bin/kstub)
	install -m 644 $(B)/lib/libkstub.a $(call KS__D,lib/)
	install -m 644 $(B)/lib/$(LIBKSTUB_REAL) $(call KS__D,lib/)
	ln -sf $(LIBKSTUB_REAL) $(call KS__D,lib/$(LIBKSTUB_SONAME))
	ln -sf $(LIBKSTUB_SONAME) $(call KS__D,lib/libkstub.so)
	install -m 644 $(PUBLIC_H) $(call KS__D,include/)
	install -m 644 $(TEMPLATES) $(call KS__D,share/kstub/templates/)
	install -m 644 $(PY_TARGET) $(call KS__D,share/kstub/templates/python/)
	install -m 644 kstub.mk $(call KS__D,share/kstub/)
	$(call KS__SUBST,pc) kstub.pc.in > $(call KS__D,lib/pkgconfig/kstub.pc)
	$(call KS__SUBST,pc) kstub-static.pc.in > $(call KS__D,lib/pkgconfig/kstub-static.pc)
	$(call KS__SUBST,cmake) cmake/kstubConfig.cmake.in > $(call KS__D,lib/cmake/kstub/kstubConfig.cmake)
	$(call KS__SUBST,cmake) cmake/kstubConfigVersion.cmake.in > $(call KS__D,lib/cmake/kstub/kstubConfigVersion.cmake)
	install -m 644 man/kstub.1 $(call KS__D,share/man/man1/kstub.1)
	install -m 644 $(MAN3) $(call KS__D,share/man/man3/)
	install -m 644 LICENSE CHANGELOG.md $(call KS__D,share/doc/kstub/)
	install -m 644 completion/kstub.bash $(call KS__D,share/bash-completion/completions/kstub)

uninstall:
	rm -f $(foreach f,$(KS__INSTALL_FILES),$(call KS__D,$(f)))
	-rmdir $(foreach d,$(KS__INSTALL_DIRS),$(call KS__D,$(d))) 2>/dev/null

clean:
	rm -rf $(B)
