/*
 * check_races_cupti.c — the races check end to end on the CPU: libkstub's
 * checked launches against the fake driver, with a fake libcupti
 * (tests/support/fake_cupti.c) standing in for CUPTI: it keeps the callback
 * libkstub subscribes, and the tests play the program's own driver calls
 * (stream creation, event record and wait, copies, frees) through it as the
 * real CUPTI would. Also: CUPTI missing or held by another tool fails every
 * launch, saying why; the callbacks turned on; nothing loaded when off.
 * One forked process per case.
 */
#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */
#include "testutil.h"           /* run_suite */
#include "trace_lines.h"        /* trace_lines: a trace as kstub trace prints it */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

#ifndef FAKE_CUPTI_PATH
#define FAKE_CUPTI_PATH "build/tests/libcupti_fake.so"
#endif

/* axpy(float *y [extent n], const float *x, int n) */
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry axpy()\n{\n ret;\n}\n";
static ks_image image = KS_IMAGE_INIT("axpy.cu", ptx, sizeof ptx, KS_IMAGE_PTX);
static const ks_extent_op n_extent[] = {{KS_EXTENT_PARAM, 2}};
static const ks_param_desc params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, n_extent, 0},
    {8, 8, 8, KS_PARAM_POINTER, "x", "const float *", 4, 4, NULL, 0, NULL, 1},
    {16, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
};
static ks_kernel axpy = KS_KERNEL_INIT(&image, "axpy", "axpy", 3, params, 0);
static const size_t offs[] = {0, 8, 16}, sizes[] = {8, 8, 4};

/* y without its extent hint: its range runs to the allocation's end. */
static const ks_param_desc params_nohint[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, NULL, 0, NULL, 0},
    {8, 8, 8, KS_PARAM_POINTER, "x", "const float *", 4, 4, NULL, 0, NULL, 1},
    {16, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
};
static ks_kernel axpy_nohint = KS_KERNEL_INIT(&image, "axpy", "axpy_nohint", 3, params_nohint, 0);

static void (*emit)(unsigned id, void *ctx, const void *params, int result);
static int (*enabled)(unsigned id);

#define S1 ((CUstream)(uintptr_t)0x5001)
#define S2 ((CUstream)(uintptr_t)0x5002)

static ks_status launch_on(ks_kernel *k, CUstream s, unsigned long long y, unsigned long long x, int n, int line)
{
    void *args[3] = {&y, &x, &n};
    ks_launch l = ks_launch_1d(4, 64);
    l.stream = s;
    return ks_kernel_launch_at(k, &l, args, "app.c", line);
}

static void setup(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    unsetenv("FAKE_CUPTI_BUSY");
    setenv("KSTUB_CUPTI", FAKE_CUPTI_PATH, 1);
    fake_cuda_open();
    fake.set_params("axpy", 3, offs, sizes);
    void *lib = dlopen(FAKE_CUPTI_PATH, RTLD_NOW);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    emit = (void (*)(unsigned, void *, const void *, int))(uintptr_t)dlsym(lib, "fake_cupti_emit");
    enabled = (int (*)(unsigned))(uintptr_t)dlsym(lib, "fake_cupti_enabled");
    ck_assert_msg(emit != NULL && enabled != NULL, "the fake CUPTI lacks its controls");
}

/* The fake driver's current context, as CUPTI would name it in each callback. */
static void *current_ctx(void)
{
    void *p;
    CUcontext ctx = NULL;
    CUresult (*get_current)(CUcontext *);
    if (ks_driver_proc("cuCtxGetCurrent", &p) != KS_OK)
        return NULL;
    memcpy(&get_current, &p, sizeof p);
    get_current(&ctx);
    return ctx;
}

static void make_stream(CUstream s, unsigned flags)
{
    cuStreamCreate_params p = {&s, flags};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, current_ctx(), &p, CUDA_SUCCESS);
}

static void turn_on(void)
{
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    make_stream(S1, CU_STREAM_NON_BLOCKING);
    make_stream(S2, CU_STREAM_NON_BLOCKING);
}

/* Without the dlopen of setup: whether libkstub loaded CUPTI itself. */
static void setup_off(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    setenv("KSTUB_CUPTI", FAKE_CUPTI_PATH, 1);
    fake_cuda_open();
    fake.set_params("axpy", 3, offs, sizes);
}

START_TEST(off_loads_nothing)
{
    char path[] = "/tmp/kstub-races-off-XXXXXX";     /* trace: not into the working directory */
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_SYNC | KS_CHECK_NVTX | KS_CHECK_TRACE), KS_OK);
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 4, 1), KS_OK);
    unlink(path);
    ck_assert_msg(dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_NOLOAD) == NULL, "CUPTI was loaded");
    /* "all" leaves races out; its pointers check loads CUPTI for the free watch
     * (tests/runtime/check_watch.c), which turns on none of the races' callbacks. */
    ck_assert_status(ks_checks_set(KS_CHECK_ALL), KS_OK);
    void *lib = dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(lib != NULL, "CUPTI was not loaded");
    load_control(&enabled, lib, "fake_cupti_enabled");
    ck_assert(!enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
}
END_TEST

START_TEST(missing_cupti_fails_every_launch)
{
    setenv("KSTUB_CUPTI", "/nonexistent/libcupti.so", 1);
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    for (int i = 0; i < 2; i++) {
        ck_assert_status(launch_on(&axpy, S1, 0, 0, 4, 1), KS_ERR_UNSUPPORTED);
        ck_assert_message_has("not launched: the races check needs CUPTI: libcupti could not be loaded "
                              "(tried /nonexistent/libcupti.so");
        ck_assert_message_has("set KSTUB_CUPTI to its path");
    }
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(cupti_held_by_another_tool_fails_every_launch)
{
    setenv("FAKE_CUPTI_BUSY", "1", 1);
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    ck_assert_status(launch_on(&axpy, S1, 0, 0, 4, 1), KS_ERR_UNSUPPORTED);
    ck_assert_message_has("cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    ck_assert_message_has("another tool (a profiler, compute-sanitizer) holds CUPTI");
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(the_calls_that_order_work_are_followed)
{
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    static const unsigned ids[] = {
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
        CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, CUPTI_DRIVER_TRACE_CBID_cuEventRecord,
        CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
        CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
        CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        ck_assert_msg(enabled(ids[i]), "callback %u is off", ids[i]);
    ck_assert(!enabled(CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes));
}
END_TEST

START_TEST(unordered_writers_fail_the_second_launch)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    ck_assert_status(launch_on(&axpy, S2, y, 0, 64, 20), KS_ERR_RACE);
    ck_assert_message_has("kernel 'axpy': races: kernel 'axpy' on stream 0x5002 (parameter y, writes bytes "
                          "[0, 256)) at app.c:20 and kernel 'axpy' on stream 0x5001 (parameter y, writes "
                          "bytes [0, 256)) at app.c:10 touch bytes [0, 256) of the allocation");
    ck_assert_message_has("both writing");
    ck_assert_int_eq(fake.launch_count(), 2);            /* a report, not a refusal */
    ck_assert_int_eq(ks_last_error()->line, 20);
}
END_TEST

/* With trace on too, the launch's line carries the report. */
START_TEST(a_report_reaches_the_trace)
{
    char path[] = "/tmp/kstub-races-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_RACES | KS_CHECK_TRACE), KS_OK);
    make_stream(S1, CU_STREAM_NON_BLOCKING);
    make_stream(S2, CU_STREAM_NON_BLOCKING);
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    ck_assert_status(launch_on(&axpy, S2, y, 0, 64, 20), KS_ERR_RACE);
    FILE *f = trace_lines(path, NULL);
    ck_assert_ptr_nonnull(f);
    char line[8192];
    int lines = 0, found = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (strstr(line, "\"status\":\"KS_ERR_RACE\"") && strstr(line, "races: kernel 'axpy' on stream 0x5002"))
            found++;
    }
    fclose(f);
    unlink(path);
    ck_assert_int_eq(lines, 2);
    ck_assert_int_eq(found, 1);
}
END_TEST

START_TEST(an_event_orders_them)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    CUevent e = (CUevent)(uintptr_t)0xe1;
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    cuEventRecord_params rec = {e, S1};
    emit(CUPTI_DRIVER_TRACE_CBID_cuEventRecord, NULL, &rec, CUDA_SUCCESS);
    cuStreamWaitEvent_params w = {S2, e, 0};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, NULL, &w, CUDA_SUCCESS);
    ck_assert_status(launch_on(&axpy, S2, y, 0, 64, 20), KS_OK);
    /* A failed record orders nothing: S1 never waited for S2's launch. */
    cuEventRecord_params rec2 = {e, S2};
    emit(CUPTI_DRIVER_TRACE_CBID_cuEventRecord, NULL, &rec2, CUDA_ERROR_INVALID_HANDLE);
    cuStreamWaitEvent_params w2 = {S1, e, 0};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, NULL, &w2, CUDA_SUCCESS);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 11), KS_ERR_RACE);
}
END_TEST

START_TEST(disjoint_extents_and_readers_are_not_reported)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long x = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, x, 32, 10), KS_OK);          /* y [0, 128), x read */
    ck_assert_status(launch_on(&axpy, S2, y + 128, x, 32, 20), KS_OK);    /* y [128, 256), x read */
}
END_TEST

START_TEST(without_a_hint_the_race_is_possible)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy_nohint, S1, y, 0, 32, 10), KS_OK);
    ck_assert_status(launch_on(&axpy_nohint, S2, y + 128, 0, 32, 20), KS_ERR_RACE);
    ck_assert_message_has("races: possibly: ");
    ck_assert_message_has("'// kstub:extent(y, COUNT)' on the kernel settles it");
}
END_TEST

START_TEST(an_async_copy_into_a_buffer_a_kernel_reads)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long x = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, x, 64, 10), KS_OK);
    float host[64] = {0};
    cuMemcpyHtoDAsync_v2_params c = {(CUdeviceptr)x, host, sizeof host, S2};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, NULL, &c, CUDA_SUCCESS);
    /* The next checked launch (on any stream) reports it. */
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 30), KS_ERR_RACE);
    ck_assert_message_has("races: possibly: cuMemcpyHtoDAsync_v2 on stream 0x5002 (parameter dst, writes bytes [0, 256)) "
                          "(call site not known) and kernel 'axpy' on stream 0x5001 (parameter x, reads bytes "
                          "[0, 256) up to the allocation's end) at app.c:10");
}
END_TEST

/* A launch that fails reports its own failure; the race waits for the next launch. */
START_TEST(a_failed_launch_keeps_the_report_for_the_next)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    float host[64] = {0};
    cuMemcpyHtoDAsync_v2_params c = {(CUdeviceptr)y, host, sizeof host, S2};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, NULL, &c, CUDA_SUCCESS);
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    fake.inject("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 30), KS_ERR_LAUNCH);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 31), KS_ERR_RACE);
    ck_assert_message_has("races: cuMemcpyHtoDAsync_v2 on stream 0x5002");
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 32), KS_OK);
}
END_TEST

START_TEST(a_free_on_another_stream_while_in_use)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    cuMemFreeAsync_params f = {(CUdeviceptr)y, S2};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, NULL, &f, CUDA_SUCCESS);
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 30), KS_ERR_RACE);
    ck_assert_message_has("races: cuMemFreeAsync of the allocation at");
    ck_assert_message_has("is not ordered after kernel 'axpy' on stream 0x5001 (parameter y, writes bytes "
                          "[0, 256)) at app.c:10, which uses it: a use after free");
}
END_TEST

/* cuMemFree waits for its context's work: a use on any stream of it is ordered. */
START_TEST(a_host_free_waits_for_its_context)
{
    turn_on();
    void *ctx = (void *)(uintptr_t)0xc0;
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    cuMemFree_v2_params f = {(CUdeviceptr)y};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, current_ctx(), &f, CUDA_SUCCESS);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 30), KS_OK);
    /* A use in another context is not waited for. */
    ck_assert_status(launch_on(&axpy, S2, z, 0, 64, 31), KS_ERR_RACE);   /* S1 and S2 unordered on z */
    cuMemFree_v2_params f2 = {(CUdeviceptr)z};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, ctx, &f2, CUDA_SUCCESS);
    unsigned long long w = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, w, 0, 64, 32), KS_ERR_RACE);
    ck_assert_message_has("races: cuMemFree_v2 of the allocation at");
    ck_assert_message_has("by the host");
}
END_TEST

/* Synchronous copies and memsets are work on the legacy default stream; the
 * host waits for a copy to host memory, not for a memset. */
START_TEST(synchronous_copies_and_memsets)
{
    turn_on();
    void *ctx = current_ctx();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, NULL, y, 0, 64, 10), KS_OK);          /* the legacy stream */
    float host[64];
    cuMemcpyDtoH_v2_params c = {host, (CUdeviceptr)y, sizeof host};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, ctx, &c, CUDA_SUCCESS);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 20), KS_OK);            /* the host saw it finish */
    cuMemsetD32_v2_params m = {(CUdeviceptr)y, 0, 64};
    emit(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, ctx, &m, CUDA_SUCCESS);    /* races with line 20 */
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, z, 0, 64, 30), KS_ERR_RACE);
    ck_assert_message_has("races: cuMemsetD32_v2 on the legacy default stream (parameter dst, writes bytes "
                          "[0, 256)) (call site not known) and kernel 'axpy' on stream 0x5001");
}
END_TEST

START_TEST(a_stream_synchronisation_orders_them)
{
    turn_on();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 10), KS_OK);
    cuStreamSynchronize_params sy = {S1};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, NULL, &sy, CUDA_SUCCESS);
    ck_assert_status(launch_on(&axpy, S2, y, 0, 64, 20), KS_OK);
    /* A query that found the stream busy observed nothing. */
    cuStreamQuery_params q = {S2};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, NULL, &q, CUDA_ERROR_NOT_READY);
    ck_assert_status(launch_on(&axpy, S1, y, 0, 64, 11), KS_ERR_RACE);
}
END_TEST

static Suite *races_cupti_suite(void)
{
    Suite *s = suite_create("races (CUPTI)");
    TCase *off = tcase_create("off");
    tcase_add_checked_fixture(off, setup_off, NULL);
    tcase_add_test(off, off_loads_nothing);
    suite_add_tcase(s, off);
    TCase *tc = tcase_create("races");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, missing_cupti_fails_every_launch);
    tcase_add_test(tc, cupti_held_by_another_tool_fails_every_launch);
    tcase_add_test(tc, the_calls_that_order_work_are_followed);
    tcase_add_test(tc, unordered_writers_fail_the_second_launch);
    tcase_add_test(tc, a_report_reaches_the_trace);
    tcase_add_test(tc, an_event_orders_them);
    tcase_add_test(tc, disjoint_extents_and_readers_are_not_reported);
    tcase_add_test(tc, without_a_hint_the_race_is_possible);
    tcase_add_test(tc, an_async_copy_into_a_buffer_a_kernel_reads);
    tcase_add_test(tc, a_failed_launch_keeps_the_report_for_the_next);
    tcase_add_test(tc, a_free_on_another_stream_while_in_use);
    tcase_add_test(tc, a_host_free_waits_for_its_context);
    tcase_add_test(tc, synchronous_copies_and_memsets);
    tcase_add_test(tc, a_stream_synchronisation_orders_them);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(races_cupti_suite(), CK_FORK);
}
