# tests/targets.mk — a second output target, with no change to the front
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
check-targets: $(KSTUB) $(B)/lib/libkstub.a tests/targets/cxx/target.json tests/targets/cxx/header.hpp.in tests/targets/cxx/use.cpp
	rm -rf $(TARGETS_DIR) && mkdir -p $(TARGETS_DIR)/bad
	$(KSTUB) kernels/vector_ops.cu -o $(TARGETS_DIR)/vector_ops
	$(KSTUB) -T tests/targets/cxx kernels/vector_ops.cu -o $(TARGETS_DIR)/vector_ops -MD
	test ! -e $(TARGETS_DIR)/vector_ops.cpp
	grep -q '^ *tests/targets/cxx/header.hpp.in \\$$' $(TARGETS_DIR)/vector_ops.d
	grep -q '^ *tests/targets/cxx/target.json$$' $(TARGETS_DIR)/vector_ops.d
	grep -q '^ *[^ ]*/templates/spelling.in \\$$' $(TARGETS_DIR)/vector_ops.d
	grep -q '^#ifndef VECTOR_OPS_HPP_INCLUDED$$' $(TARGETS_DIR)/vector_ops.hpp
	grep -q '^namespace vector_ops {$$' $(TARGETS_DIR)/vector_ops.hpp
	$(KSTUB) --list -T tests/targets/cxx kernels/vector_ops.cu | grep -q '^ks_status vector_ops::saxpy(ks_launch launch, float a, const float \*KS_RESTRICT x'
	$(CC) -std=c11 -Wall -Wextra -Werror -Iruntime -c $(TARGETS_DIR)/vector_ops.c -o $(TARGETS_DIR)/vector_ops.o
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Iruntime -I$(TARGETS_DIR) -c tests/targets/cxx/use.cpp -o $(TARGETS_DIR)/use.o
	$(CXX) $(filter -fsanitize=%,$(OPT)) $(TARGETS_DIR)/use.o $(TARGETS_DIR)/vector_ops.o $(B)/lib/libkstub.a -ldl -lpthread -o $(TARGETS_DIR)/use
	printf '{"outputs": [{"template": "../x.in", "suffix": ".hpp"}]}\n' > $(TARGETS_DIR)/bad/target.json
	! $(KSTUB) -T $(TARGETS_DIR)/bad kernels/vector_ops.cu -o $(TARGETS_DIR)/bad/out 2> $(TARGETS_DIR)/bad/err
	grep -q 'target.json: error: output 1: "template" and "suffix" must be file names' $(TARGETS_DIR)/bad/err
	test ! -e $(TARGETS_DIR)/bad/out.hpp
	@echo "check-targets: the cxx target generates, compiles and links"
