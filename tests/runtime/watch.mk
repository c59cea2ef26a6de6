# tests/runtime/watch.mk — the pointers check's free watch (runtime/watch.c)
# end to end on the CPU: libkstub's checked launches against the fake driver,
# whose own frees call back through the fake libcupti (races.mk builds it) as
# the real CUPTI's callbacks would. Included from tests/tests.mk after races.mk.
#
#   make check-watch     build and run build/tests/check_watch

WATCH_CHECK := $(B)/tests/check_watch

CHECK_TARGETS += check-watch
.PHONY: check-watch
ifneq ($(HAVE_CUPTI_H),)
check-watch: $(WATCH_CHECK) $(RT_FAKE) $(RACES_FAKE_CUPTI)
	$(KS_SUITE) "$(WATCH_CHECK)"
else
check-watch:
	@echo "check-watch: skipped (no cupti.h under $(CUDA_PATH))"
endif

$(WATCH_CHECK): tests/runtime/check_watch.c tests/support/fake_cuda.h tests/support/runtime_fixture.h \
                tests/support/testutil.h $(RT_FIXTURE_OBJ) include/kstub/kstub.h $(B)/lib/libkstub.a \
                | $(B)/tests $(RT_FAKE) $(RACES_FAKE_CUPTI)
	$(CC) $(BASE_CFLAGS) -Werror $(CUDA_INC) $(CUPTI_INC) -Iinclude/kstub -Iruntime -Icommon $(TEST_INC) \
	    -DFAKE_CUDA_PATH='"$(abspath $(RT_FAKE))"' -DFAKE_CUPTI_PATH='"$(abspath $(RACES_FAKE_CUPTI))"' \
	    $< $(RT_FIXTURE_OBJ) -o $@ $(B)/lib/libkstub.a $(CHECK_LIBS) -ldl -lpthread
