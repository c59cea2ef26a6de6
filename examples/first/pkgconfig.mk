# examples/first/pkgconfig.mk — the first project built with pkg-config
# alone, no kstub.mk: `make -f pkgconfig.mk` makes build/pc/first_driver.
# kstub.pc gives kstub's path, CUDA's, the -I flags and the libraries (with an
# rpath to libkstub, so the program runs from any shell). Under a prefix
# pkg-config does not search (~/.local), set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig.
KSTUB := $(shell pkg-config --variable=kstub kstub)
ifeq ($(KSTUB),)
$(error pkg-config finds no kstub.pc: set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig (PREFIX as in make install))
endif
NVCC := $(shell pkg-config --variable=cuda_path kstub)/bin/nvcc
CPPFLAGS += $(shell pkg-config --cflags kstub) -Ibuild/pc
LDLIBS += $(shell pkg-config --libs kstub)
CFLAGS ?= -std=c11 -Wall -Wextra -Werror -O2
ARCH ?= 90

build/pc/first_driver: build/pc/main_driver.o build/pc/saxpy.kstub.o
	$(CC) $^ -o $@ $(LDLIBS)

build/pc/saxpy.fatbin: saxpy.cu
	@mkdir -p $(@D)
	$(NVCC) -fatbin -gencode arch=compute_$(ARCH),code=sm_$(ARCH) -o $@ $<

# One kstub run writes both files.
build/pc/saxpy.kstub.c: saxpy.cu build/pc/saxpy.fatbin
	$(KSTUB) saxpy.cu --embed build/pc/saxpy.fatbin -o build/pc/saxpy.kstub
build/pc/saxpy.kstub.h: build/pc/saxpy.kstub.c ;

build/pc/main_driver.o: main_driver.c build/pc/saxpy.kstub.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@
build/pc/saxpy.kstub.o: build/pc/saxpy.kstub.c build/pc/saxpy.kstub.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@
