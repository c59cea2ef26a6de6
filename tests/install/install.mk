# tests/install/install.mk — installing kstub and using the installed copy
# (tests/install/): `make install` into a scratch prefix, then a Makefile
# with pkg-config, a Makefile with the installed kstub.mk (only PATH set) and
# the CMake example, a library project and an enable_language(CUDA) project
# (Unix Makefiles and Ninja) and the Meson example built against it, rebuilds
# and regeneration, `make uninstall` (also into a PREFIX and a DESTDIR with a
# space and a quote); tests/install/check-prefix.sh: a prefix with a space,
# '&', '#' or a quote installed and used by a pkg-config, a CMake and a
# kstub.mk project, '$', '(', ')', a newline, '|', '\' and '"' refused before
# anything is written; the man page against --help; a man 3 page for every
# public function and macro of libkstub (check-man3.sh); CHANGELOG.md's
# newest version is the build's; the bash completion;
# scripts/deps.sh's message before it installs; tests/install/check-recipes.sh:
# the Make, CMake and Meson recipes' edges (KSTUB_ARCHS, a missing .cu,
# kstub-check without fatbins, a kernel in a subfolder), also alone as
# `make check-recipes`. Included from tests/tests.mk.
# Needs nvcc (no GPU); the CMake and Meson cases say "skipped" where cmake,
# meson or ninja is missing.
#
#   make check-install

.PHONY: check-install check-install-prefix check-recipes
# What check-install installs and builds its projects against: this build,
# or under a sanitizer (make check-asan) an ordinary one beside it, since
# the projects link and run the installed libkstub from a bare environment
# as users do (the sanitized binaries are what every other suite tests).
KS__INSTALL_B = $(if $(findstring -fsanitize,$(OPT)),$(B)/plain,$(B))

check-install: $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so
	$(KS_SUITE) 'rc=0; KSTUB=$(KSTUB) bash tests/install/check-man.sh || rc=1; \
	    LIB=$(B)/lib/libkstub.so bash tests/install/check-man3.sh || rc=1; \
	    VERSION=$(KS__VERSION) bash tests/install/check-changelog.sh || rc=1; \
	    KSTUB=$(KSTUB) bash tests/install/check-completion.sh || rc=1; \
	    bash tests/install/check-deps.sh || rc=1; \
	    B=$(KS__INSTALL_B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-install.sh || rc=1; \
	    B=$(KS__INSTALL_B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-prefix.sh || rc=1; \
	    B=$(KS__INSTALL_B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-recipes.sh || rc=1; \
	    exit $$rc'

# Only the unusual prefixes (issue 26 #4): one install per character, a
# pkg-config, a CMake and a kstub.mk project built against each; the
# characters the installed files cannot carry refused before anything is written.
check-install-prefix: $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so
	$(KS_SUITE) 'B=$(KS__INSTALL_B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-prefix.sh'

CHECK_TARGETS += check-install

# Only the recipes' edges (issue 39): kstub.mk, kstub_add_kernels, the Meson example.
check-recipes: $(KSTUB) $(B)/lib/libkstub.a $(B)/lib/libkstub.so
	$(KS_SUITE) 'B=$(KS__INSTALL_B) CUDA_PATH=$(CUDA_PATH) MAKE_CMD="$(MAKE_COMMAND)" bash tests/install/check-recipes.sh'
