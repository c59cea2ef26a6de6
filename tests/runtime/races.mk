# tests/runtime/races.mk — the races check's happens-before core (runtime/races.c)
# on the CPU, fed recorded call sequences directly (no driver, no CUPTI).
# Included from tests/tests.mk; uses the top-level Makefile's variables.
#
#   make check-races     build and run build/tests/check_races

RACES_CHECK := $(B)/tests/check_races

CHECK_TARGETS += check-races
.PHONY: check-races
check-races: $(RACES_CHECK)
	$(KS_SUITE) "$(RACES_CHECK)"

# The core is pure C: compiled in, as it is, beside its test.
$(RACES_CHECK): tests/runtime/check_races.c runtime/races.c runtime/races.h tests/support/testutil.h | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Werror -Iinclude/kstub -Iruntime $(TEST_INC) $< runtime/races.c -o $@ $(CHECK_LIBS)

# End to end: libkstub's checked launches against the fake driver and a fake
# libcupti (tests/support/fake_cupti.c) through which the tests play the
# program's own driver calls.
#
#   make check-races-cupti   build and run build/tests/check_races_cupti
RACES_CUPTI_CHECK := $(B)/tests/check_races_cupti
RACES_FAKE_CUPTI := $(B)/tests/libcupti_fake.so
CUPTI_INC := $(addprefix -I,$(wildcard $(CUDA_PATH)/extras/CUPTI/include))

HAVE_CUPTI_H := $(wildcard $(CUDA_PATH)/include/cupti.h $(CUDA_PATH)/extras/CUPTI/include/cupti.h)

CHECK_TARGETS += check-races-cupti
.PHONY: check-races-cupti
ifneq ($(HAVE_CUPTI_H),)
check-races-cupti: $(RACES_CUPTI_CHECK) $(RT_FAKE) $(RACES_FAKE_CUPTI)
	$(KS_SUITE) "$(RACES_CUPTI_CHECK)"
else
check-races-cupti:
	@echo "check-races-cupti: skipped (no cupti.h under $(CUDA_PATH))"
endif

$(RACES_FAKE_CUPTI): tests/support/fake_cupti.c | $(B)/tests
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) $(CUPTI_INC) -shared $< -o $@

$(RACES_CUPTI_CHECK): tests/runtime/check_races_cupti.c tests/support/fake_cuda.h tests/support/runtime_fixture.h \
                      tests/support/testutil.h $(RT_FIXTURE_OBJ) include/kstub/kstub.h $(B)/lib/libkstub.a \
                      | $(B)/tests $(RT_FAKE) $(RACES_FAKE_CUPTI)
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) $(CUPTI_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' -DFAKE_CUPTI_PATH='"$(abspath $(RACES_FAKE_CUPTI))"' \
	    $< $(RT_FIXTURE_OBJ) -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
