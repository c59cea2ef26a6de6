# kstub.mk — make rules that turn CUDA kernel files into typed C launch
# stubs. Include it from your Makefile after setting what you need:
#
#     KSTUB_KERNELS := kernels/scale.cu kernels/reduce.cu
#     include path/to/kstub.mk
#
#     app: main.o $(KSTUB_OBJS)
#             $(CC) $^ -o $@ $(KSTUB_LIBS)
#     main.o: main.c | $(KSTUB_HEADERS)
#             $(CC) $(CFLAGS) $(KSTUB_CPPFLAGS) -MMD -c $< -o $@
#
# With kstub installed (`make install`) and its bin/ on PATH, that is all:
# kstub.mk finds kstub.h and libkstub beside the kstub it runs. Otherwise
# set KSTUB, KSTUB_INCLUDE and KSTUB_LIBDIR (see the settings below).
#
# For each DIR/NAME.cu in KSTUB_KERNELS, under $(KSTUB_OUT)/DIR/:
#
#     NAME.fatbin                  nvcc -fatbin for $(KSTUB_ARCHS)  (+ NAME.fatbin.d)
#     NAME.kstub.h .c .json        kstub, with the fatbin embedded   (+ NAME.kstub.d)
#     NAME.kstub.o                 the stub source compiled with $(CC)
#
# Both steps write make depfiles, so editing a header that a kernel file
# includes rebuilds the fatbin and regenerates the stubs, and deleting one
# does not break the build. The rules are correct under make -j.
#
# Why a stamp: kstub rewrites an output only when its content changes, so
# that a touched header does not recompile every file that includes the
# stubs. The kstub rule therefore targets NAME.kstub.stamp (always touched)
# and the outputs hang off it with an empty recipe; make re-reads their
# modification times and rebuilds only what depends on a file that changed.

# Including this file must not change the including Makefile's default goal.
kstub__goal := $(.DEFAULT_GOAL)

kstub__space := $(subst x,,x x)

# Whether the includer left KSTUB_INCLUDE or KSTUB_LIBDIR unset (before the
# defaults below give them an origin).
kstub__find_home := $(filter undefined,$(origin KSTUB_INCLUDE) $(origin KSTUB_LIBDIR))

# ---- settings (set before including; each has a default) ---------------------------
KSTUB ?= kstub#                        the generator (a path, or a name on PATH)
KSTUB_DEP ?= $(or $(wildcard $(KSTUB)),$(kstub__exe))#  prerequisite standing for the
#                                      generator (an installed one is found on PATH):
#                                      set it to $(KSTUB) when your build makes kstub itself
KSTUB_KERNELS ?=#                      the .cu files to make stubs for
KSTUB_OUT ?= build/kstub#              where generated files go (mirrors the .cu paths)
CUDA_PATH ?= /usr/local/cuda#          CUDA toolkit: nvcc, and cuda.h for the stubs
NVCC ?= $(CUDA_PATH)/bin/nvcc#         device compiler
KSTUB_ARCHS ?= 80 90#                  architectures of each fatbin (90, sm_90: SASS, and PTX
#                                      when last; 90-real: SASS; 90-virtual, compute_90: PTX;
#                                      native: this machine's GPU); kstub parses for the first
KSTUB_NVCC_FLAGS ?= -O3 -std=c++17#    nvcc flags (not -I/-D: see KSTUB_CU_CPPFLAGS)
KSTUB_CU_CPPFLAGS ?=#                  -I/-D/-U for the .cu files, given to nvcc and kstub
KSTUB_FLAGS ?=#                        extra kstub options (-std=c++20, --arch sm_90, -T DIR)
KSTUB_DEPFLAG ?= -MMD#                 -MMD: no toolkit headers in depfiles; -MD: all
KSTUB_INCLUDE ?= $(kstub__include)#    directory holding kstub.h (default: see below)
KSTUB_LIBDIR ?= $(kstub__libdir)#      directory holding libkstub (default: see below)
KSTUB_CFLAGS ?= -O2#                   C flags for the generated .c files
KSTUB_FIX ?= $(notdir $(MAKE))$(if $(filter-out Makefile makefile GNUmakefile,$(firstword $(MAKEFILE_LIST))), -f $(firstword $(MAKEFILE_LIST)))#  what kstub-check says fixes stale files

# ---- where an installed kstub keeps its headers and library -------------------------------
# `make install` puts kstub in PREFIX/bin, kstub.h in PREFIX/include and
# libkstub in PREFIX/lib. So with KSTUB_INCLUDE and KSTUB_LIBDIR unset, they
# default to ../include and ../lib beside the kstub that KSTUB names (through
# PATH, symlinks resolved) when kstub.h and libkstub are there, else to what
# pkg-config says of an installed kstub.pc, else to nothing (system paths).
# Looked up once per make run, here; pkg-config only when kstub's own
# directory has not got them. The install's folder may hold any character
# (a space, '&', '#', quotes, '\'): kstub__exe is written as a make
# prerequisite reads it (a space escaped) and the two directories as one
# shell word each ('…' quoted), since they are used in recipes only;
# pkg-config's answers come escaped for the shell already.
kstub__path := $(shell p=$$(command -v $(KSTUB) 2>/dev/null) && realpath -- "$$p" 2>/dev/null)
kstub__exe := $(subst $(kstub__space),\ ,$(kstub__path))
ifneq ($(kstub__find_home),)
kstub__home := $(if $(kstub__path),$(shell h='$(subst ','\'',$(kstub__path))' && h=$${h%/*} && h=$${h%/*} && \
    [ -f "$$h/include/kstub.h" ] && ls "$$h/lib"/libkstub.* >/dev/null 2>&1 && \
    printf '%s' "$$h" | sed "s/'/'\\\\''/g; s/^/'/; s/$$/'/"))
kstub__include := $(if $(kstub__home),$(kstub__home)/include)
kstub__libdir := $(if $(kstub__home),$(kstub__home)/lib)
ifeq ($(kstub__include),)
kstub__include := $(shell pkg-config --variable=includedir kstub 2>/dev/null)
kstub__libdir := $(shell pkg-config --variable=libdir kstub 2>/dev/null)
endif
endif

# ---- derived ---------------------------------------------------------------------------
comma := ,

# KSTUB_ARCHS as nvcc and CMake write architectures. Each word becomes
# NUM:KIND, KIND being sass (90-real), ptx (90-virtual, compute_90) or both
# (90, sm_90: SASS, and PTX too when it is the last word); NUM is digits with
# an optional a or f (90a, 100f). native is what __nvcc_device_query (the
# helper behind nvcc -arch=native) reports for this machine's GPUs, looked
# up once, and only when named. Anything else stops make with a message
# naming the word and the forms accepted. The variables are recursive and
# used in recipes only, so a bad KSTUB_ARCHS stops the first kstub or nvcc
# step, never make clean.
kstub__archs_forms := NN, sm_NN, NN-real, NN-virtual, compute_NN (NN: 90, 90a, 100f, ...) or native
kstub__nodigits = $(subst 9,,$(subst 8,,$(subst 7,,$(subst 6,,$(subst 5,,$(subst 4,,$(subst \
    3,,$(subst 2,,$(subst 1,,$(subst 0,,$(1)))))))))))
kstub__base = $(if $(filter %a,$(1)),$(1:%a=%),$(1:%f=%))
kstub__is_num = $(and $(call kstub__base,$(1)),$(if $(call kstub__nodigits,$(call kstub__base,$(1))),,$(1)))
kstub__device_query = $(eval kstub__device_query := $(shell "$(CUDA_PATH)/bin/__nvcc_device_query" 2>/dev/null))$(kstub__device_query)
kstub__native = $(or $(sort $(subst $(comma), ,$(kstub__device_query))),$(error kstub.mk: \
    KSTUB_ARCHS has 'native', but no GPU is visible here ($(CUDA_PATH)/bin/__nvcc_device_query \
    found none): name the architectures instead, e.g. KSTUB_ARCHS := 90))
kstub__arch1 = $(if $(filter native,$(1)),$(foreach n,$(kstub__native),$(n):both),$(strip \
    $(eval kstub__w := $(patsubst sm_%,%,$(1)))$(eval kstub__k := both)\
    $(if $(filter compute_%,$(1)),$(eval kstub__w := $(1:compute_%=%))$(eval kstub__k := ptx))\
    $(if $(filter %-real,$(1)),$(eval kstub__w := $(1:%-real=%))$(eval kstub__k := sass))\
    $(if $(filter %-virtual,$(1)),$(eval kstub__w := $(1:%-virtual=%))$(eval kstub__k := ptx))\
    $(if $(call kstub__is_num,$(kstub__w)),\
        $(kstub__w):$(kstub__k),$(error kstub.mk: KSTUB_ARCHS: '$(1)' is not an architecture; \
        write $(kstub__archs_forms)))))
kstub__archs = $(or $(foreach a,$(KSTUB_ARCHS),$(call kstub__arch1,$(a))),$(error kstub.mk: \
    KSTUB_ARCHS is empty; write $(kstub__archs_forms)))
kstub__gencode1 = $(foreach n,$(firstword $(subst :, ,$(1))),$(if $(filter %:both %:sass,$(1)),\
    -gencode arch=compute_$(n)$(comma)code=sm_$(n))$(if $(or $(filter %:ptx,$(1)),$(2)),\
    -gencode arch=compute_$(n)$(comma)code=compute_$(n)))
KSTUB_GENCODE = $(strip $(foreach a,$(kstub__archs),$(call kstub__gencode1,$(a),$(and \
    $(filter %:both,$(a)),$(filter $(a),$(lastword $(kstub__archs)))))))
# The architecture kstub parses the kernels for: the first of KSTUB_ARCHS
# (a family's 100f as sm_100, which clang knows; --arch in KSTUB_FLAGS comes
# after it, and wins).
KSTUB_ARCH_FLAG = --arch sm_$(patsubst %f,%,$(firstword $(subst :, ,$(firstword $(kstub__archs)))))

# What users of the stubs need: kstub.h, cuda.h, and the generated headers.
KSTUB_CPPFLAGS := $(if $(KSTUB_INCLUDE),-I$(KSTUB_INCLUDE)) -I$(CUDA_PATH)/include \
    $(sort $(patsubst %/,-I%,$(dir $(KSTUB_KERNELS:%=$(KSTUB_OUT)/%))))
# With KSTUB_LIBDIR, the program also finds libkstub.so there at run time.
# (A relative KSTUB_LIBDIR is made absolute for the rpath; one found above
# is absolute already, and quoted.)
kstub__abs_libdir = $(if $(filter /% '%,$(firstword $(KSTUB_LIBDIR))),$(KSTUB_LIBDIR),$(abspath $(KSTUB_LIBDIR)))
KSTUB_LIBS := $(if $(KSTUB_LIBDIR),-L$(KSTUB_LIBDIR) -Wl$(comma)-rpath$(comma)$(kstub__abs_libdir)) \
    -lkstub -ldl -lpthread -lm

KSTUB_STEMS := $(KSTUB_KERNELS:%.cu=$(KSTUB_OUT)/%)
KSTUB_HEADERS := $(KSTUB_STEMS:=.kstub.h)
KSTUB_SOURCES := $(KSTUB_STEMS:=.kstub.c)
KSTUB_MANIFESTS := $(KSTUB_STEMS:=.kstub.json)
KSTUB_OBJS := $(KSTUB_STEMS:=.kstub.o)
KSTUB_FATBINS := $(KSTUB_STEMS:=.fatbin)

# The kstub command for the stem $* (DIR/NAME); used in recipes only.
kstub_run = $(KSTUB) $*.cu $(KSTUB_CU_CPPFLAGS) $(KSTUB_ARCH_FLAG) $(KSTUB_FLAGS) --embed $(KSTUB_OUT)/$*.fatbin \
    -o $(KSTUB_OUT)/$*.kstub --manifest $(KSTUB_OUT)/$*.kstub.json \
    $(KSTUB_DEPFLAG) -MF $(KSTUB_OUT)/$*.kstub.d -MT $(KSTUB_OUT)/$*.kstub.stamp

# ---- rules -----------------------------------------------------------------------------
# Static pattern rules (the targets listed): a DIR/NAME.cu in KSTUB_KERNELS
# that does not exist then stops make with its own "No rule to make target
# 'DIR/NAME.cu'", where a pattern rule would not apply and leave the stamp
# below to kstub__force, with no recipe, and the C compiler to report a
# missing NAME.kstub.c.
$(KSTUB_FATBINS): $(KSTUB_OUT)/%.fatbin: %.cu
	@mkdir -p $(@D)
	$(NVCC) -fatbin $(KSTUB_GENCODE) $(KSTUB_NVCC_FLAGS) $(KSTUB_CU_CPPFLAGS) \
	    $(KSTUB_DEPFLAG) -MF $@.d -MT $@ -MP -o $@ $<

# One kstub run makes all three outputs; the stamp records that it ran.
$(KSTUB_STEMS:=.kstub.stamp): $(KSTUB_OUT)/%.kstub.stamp: %.cu $(KSTUB_OUT)/%.fatbin $(KSTUB_DEP)
	@mkdir -p $(@D)
	$(kstub_run)
	@touch $@

# The outputs come with the stamp. Their recipe does nothing, so make reads
# their modification times again after it and judges the files that include
# them by those (unchanged stubs recompile nothing). It is one '+' line that
# expands to nothing rather than an empty recipe: make -n and make -q run a
# '+' line and then read the file's time, where for an empty recipe they
# assume the file changed, so after a complete build they would report work
# that a real make does not do. One rule per file: a rule with several
# targets would make make treat the others as brand new whenever the
# stamp's recipe runs.
kstub__nothing :=
$(KSTUB_OUT)/%.kstub.h: $(KSTUB_OUT)/%.kstub.stamp
	+$(kstub__nothing)
$(KSTUB_OUT)/%.kstub.c: $(KSTUB_OUT)/%.kstub.stamp
	+$(kstub__nothing)
$(KSTUB_OUT)/%.kstub.json: $(KSTUB_OUT)/%.kstub.stamp
	+$(kstub__nothing)

# Should an output have been deleted since its stamp was made, run kstub
# again (it writes only what is missing or different).
kstub__missing := $(foreach s,$(KSTUB_STEMS),$(if $(and $(wildcard $(s).kstub.h),\
    $(wildcard $(s).kstub.c),$(wildcard $(s).kstub.json)),,$(s).kstub.stamp))
$(kstub__missing): kstub__force
.PHONY: kstub__force
kstub__force:

# -Wno-psabi: a stub that takes a type aligned to more than 16 bytes by value
# (CUtensorMap: 128) makes GCC note that GCC before 4.6 passed such a
# parameter otherwise; stub and caller are built by today's compiler, so the
# note cannot apply, and GCC ignores a #pragma for it. Only the stubs get it.
$(KSTUB_OUT)/%.kstub.o: $(KSTUB_OUT)/%.kstub.c $(KSTUB_OUT)/%.kstub.h
	$(CC) $(KSTUB_CFLAGS) -Wno-psabi $(KSTUB_CPPFLAGS) -c $< -o $@

# Keep every generated file: they are inputs to other steps and to tools
# (kstub check, kstub diff), not scratch.
.SECONDARY: $(KSTUB_FATBINS) $(KSTUB_HEADERS) $(KSTUB_SOURCES) $(KSTUB_MANIFESTS) \
    $(KSTUB_STEMS:=.kstub.stamp)

-include $(KSTUB_STEMS:=.fatbin.d) $(KSTUB_STEMS:=.kstub.d)

.PHONY: kstub-check kstub-clean
# Whether the generated files are what kstub makes from the .cu files now,
# for CI: builds nothing (no nvcc, no fatbin rebuilt) and tells a compatible
# change from a breaking one. Per kernel file: kstub diff of the manifest on
# disk against one made now (to a scratch folder) classifies the kernels'
# changes; when they kept their signatures, kstub check compares the files
# with the fatbin on disk embedded. Without the fatbin (a CI job that has
# kstub and the CUDA headers only) the files cannot be compared, since the
# .c embeds it and the header names it among the options: the signatures
# decide alone, and a note says so. The recipe exits
# with the worst of kstub's statuses, so make's last line says which:
#   (none)     up to date
#   Error 4    out of date, changes compatible with existing callers
#   Error 12   breaking changes (a kernel removed, a parameter changed, ...)
#   Error 1    kstub could not tell (a parse error, a missing manifest)
# (make itself then exits 2, as for any failed recipe.)
kstub-check:
	@rc=0; tmp=$$(mktemp -d) || exit 1; \
	for cu in $(KSTUB_KERNELS); do s=$(KSTUB_OUT)/$${cu%.cu}; n=$${cu##*/}; \
	    $(KSTUB) $$cu $(KSTUB_CU_CPPFLAGS) $(KSTUB_ARCH_FLAG) $(KSTUB_FLAGS) -o $$tmp/$${n%.cu}.kstub \
	        --manifest $$tmp/$${n%.cu}.json || { rc=1; continue; }; \
	    $(KSTUB) diff --source $$cu $$s.kstub.json $$tmp/$${n%.cu}.json; r=$$?; \
	    if [ $$r -eq 0 ] && [ ! -f $$s.fatbin ]; then \
	        echo "kstub-check: note: $$s.fatbin is not built, so only the kernels' signatures were compared (the stubs embed it: build it for a full check)" >&2; \
	    elif [ $$r -eq 0 ]; then \
	        $(KSTUB) check $$cu $(KSTUB_CU_CPPFLAGS) $(KSTUB_ARCH_FLAG) $(KSTUB_FLAGS) --fix-command '$(KSTUB_FIX)' \
	            --embed $$s.fatbin -o $$s.kstub --manifest $$s.kstub.json; r=$$?; \
	    fi; \
	    case $$r in 0) ;; 4|12) [ $$rc -eq 1 ] || [ $$rc -eq 12 ] || rc=$$r ;; *) rc=1 ;; esac; \
	done; rm -rf $$tmp; \
	case $$rc in \
	    4) echo "kstub-check: out of date; the kernels' changes are compatible (4); to fix, run: $(KSTUB_FIX)" >&2 ;; \
	    12) echo "kstub-check: BREAKING changes for existing callers (12); to regenerate, run: $(KSTUB_FIX)" >&2 ;; \
	    1) echo "kstub-check: kstub failed (1)" >&2 ;; \
	esac; exit $$rc

kstub-clean:
	rm -f $(KSTUB_FATBINS) $(KSTUB_HEADERS) $(KSTUB_SOURCES) $(KSTUB_MANIFESTS) \
	    $(KSTUB_OBJS) $(KSTUB_STEMS:=.kstub.stamp) $(KSTUB_STEMS:=.kstub.d) \
	    $(KSTUB_STEMS:=.fatbin.d)

.DEFAULT_GOAL := $(kstub__goal)
