# tests/targets/targets.mk — a second output target, with no change to the front
# end (issue 20 #3): tests/targets/cxx/ is a folder of one template (C++
# wrappers in a namespace over the C stubs) and a target.json (its outputs
# and naming table). Included from tests/tests.mk.
#
#   make check-targets   generate kernels/vector_ops.cu with the C target and
#                        the cxx one, compile both (C11, C++17) and link a
#                        C++ caller of the wrappers against libkstub (no GPU:
#                        the program is linked, not run); and refuse a
#                        broken target.json with an error at it. The template
#                        includes the built-in spelling.in ({{> spelling.in}}),
#                        which the depfile lists.

TARGETS_DIR := $(B)/targets

CHECK_TARGETS += check-targets
.PHONY: check-targets
check-targets: $(KSTUB) $(B)/lib/libkstub.a tests/targets/cxx/target.json tests/targets/cxx/header.hpp.in tests/targets/cxx/use.cpp \
    tests/targets/check-targets.sh
	$(KS_SUITE) "KSTUB=$(KSTUB) CC='$(CC)' CXX='$(CXX)' LIB=$(B)/lib/libkstub.a DIR=$(TARGETS_DIR) \
	    SAN_FLAGS='$(filter -fsanitize=%,$(OPT))' bash tests/targets/check-targets.sh"
