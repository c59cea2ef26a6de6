# tests/install.mk — installing kstub and using the installed copy
# (tests/install/): `make install` into a scratch prefix, then a Makefile
# with pkg-config, a Makefile with the installed kstub.mk (only PATH set) and
# the CMake example (Unix Makefiles and Ninja) built against it, rebuilds and
# regeneration, `make uninstall` (also into a PREFIX and a DESTDIR with a space
# and a quote); the man page against --help; the bash
# completion. Included from tests/tests.mk. Needs nvcc (no GPU); the CMake
# cases say "skipped" where cmake or ninja is missing.
#
#   make check-install

.PHONY: check-install
check-install: $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so
	@KSTUB=$(KSTUB) bash tests/install/check-man.sh
	@KSTUB=$(KSTUB) bash tests/install/check-completion.sh
	@B=$(B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-install.sh

CHECK_TARGETS += check-install
