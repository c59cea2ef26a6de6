/*
 * check_watch.c — the free watch (runtime/watch.c) on the CPU: the pointers
 * check's cache answered with no driver call while nothing was freed,
 * against the fake driver and the fake libcupti (tests/support/fake_cupti.c),
 * through which the fake driver's own frees (cuMemFree_v2, cuMemFreeAsync,
 * cuMemUnmap) call back as the real CUPTI's callbacks would. A hit after a
 * watched free asks again and sees the new allocation; a hit with none asks
 * nothing; a pool's release points count once a pool was used; the
 * runtime's frees count; a pointer outside the mapping it was asked in is
 * asked again; CUPTI missing, held by another tool or KSTUB_CHECK_WATCH=0:
 * the buffer-id revalidation, as correct; races and pointers on together
 * share one subscription, each with its callbacks; once on, the watch stays
 * on, so a free made while the check is off is seen. One forked process per
 * case.
 */
#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */
#include "testutil.h"           /* run_suite */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

#ifndef FAKE_CUPTI_PATH
#define FAKE_CUPTI_PATH "build/tests/libcupti_fake.so"
#endif

/* libkstub's own counters (internal names; the suite links libkstub.a). */
extern int ks__watch_on;
extern __thread unsigned long ks__pointers_watch_hits;
extern __thread unsigned long ks__pointers_quick_launches;

/* scale(float *y, int n): y must hold n elements (the extent hint). */
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry scale()\n{\n ret;\n}\n";
static ks_image image = KS_IMAGE_INIT("scale.cu", ptx, sizeof ptx, KS_IMAGE_PTX);
static const ks_extent_op y_extent[] = {{KS_EXTENT_PARAM, 1}};
static const ks_param_desc params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, y_extent, 0},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
};
static ks_kernel scale = KS_KERNEL_INIT(&image, "scale", "scale", 2, params, 0);
static const size_t offs[] = {0, 8}, sizes[] = {8, 4};

#define S1 ((CUstream)(uintptr_t)0x5001)
#define S2 ((CUstream)(uintptr_t)0x5002)

static void (*emit)(unsigned id, void *ctx, const void *params, int result);
static void (*emit_runtime)(unsigned id, const void *params);
static int (*enabled)(unsigned id);
static int (*subscribes)(void);

static ks_status launch_on(CUstream s, unsigned long long y, int n)
{
    void *args[2] = {&y, &n};
    ks_launch l = ks_launch_1d(1, 32);
    l.stream = s;
    return ks_kernel_launch(&scale, &l, args);
}

static ks_status launch(unsigned long long y, int n)
{
    return launch_on(NULL, y, n);
}

static void setup(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    unsetenv("KSTUB_CHECK_WATCH");
    unsetenv("FAKE_CUPTI_BUSY");
    setenv("KSTUB_CUPTI", FAKE_CUPTI_PATH, 1);
    fake_cuda_open();
    fake.set_params("scale", 2, offs, sizes);
}

/* The fake CUPTI's controls: loading it here is what libkstub's dlopen finds. */
static void cupti_controls(void)
{
    void *lib = dlopen(FAKE_CUPTI_PATH, RTLD_NOW);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    load_control(&emit, lib, "fake_cupti_emit");
    load_control(&emit_runtime, lib, "fake_cupti_emit_runtime");
    load_control(&enabled, lib, "fake_cupti_enabled");
    load_control(&subscribes, lib, "fake_cupti_subscribes");
}

/* The fake driver's own entry points, as the program would call them. */
static CUresult driver_free(unsigned long long p)
{
    void *fn;
    ck_assert_status(ks_driver_proc("cuMemFree", &fn), KS_OK);
    CUresult (*mem_free)(CUdeviceptr);
    memcpy(&mem_free, &fn, sizeof fn);
    return mem_free((CUdeviceptr)p);
}

static CUresult driver_free_async(unsigned long long p, CUstream s)
{
    void *fn;
    ck_assert_status(ks_driver_proc("cuMemFreeAsync", &fn), KS_OK);
    CUresult (*free_async)(CUdeviceptr, CUstream);
    memcpy(&free_async, &fn, sizeof fn);
    return free_async((CUdeviceptr)p, s);
}

static CUresult driver_unmap(unsigned long long p, size_t size)
{
    void *fn;
    ck_assert_status(ks_driver_proc("cuMemUnmap", &fn), KS_OK);
    CUresult (*unmap)(CUdeviceptr, size_t);
    memcpy(&unmap, &fn, sizeof fn);
    return unmap((CUdeviceptr)p, size);
}

/* Driver calls about pointers so far: full queries and one-attribute revalidations. */
#define FULL() fake.calls("cuPointerGetAttributes")
#define ONE() fake.calls("cuPointerGetAttribute")

/* ---- the watch on ---------------------------------------------------------------- */

/* The first launch asks everything; later ones, the middle of the allocation
 * included, ask the driver nothing about the pointer, nor the context's device. */
START_TEST(a_hit_with_no_free_asks_nothing)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    ck_assert_int_eq(ks__watch_on, 1);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    int devices = fake.calls("cuCtxGetDevice");
    for (int i = 0; i < 4; i++)
        ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y + 32, 8), KS_OK);
    ck_assert_status(launch(y + 32, 9), KS_ERR_EXTENT);    /* judged by the cached range */
    ck_assert_message_has("allocation (0x");
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(ONE(), 0);
    ck_assert_int_eq(fake.calls("cuCtxGetDevice"), devices);
    ck_assert_uint_eq(ks__pointers_watch_hits, 6);
    /* A synchronisation before any pool was used frees nothing: still no question. */
    cuStreamSynchronize_params sy = {S1};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, NULL, &sy, CUDA_SUCCESS);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(fake.launch_count(), 7);
}
END_TEST

/* cuMemFree, then a smaller allocation at the same address: asked again, its size counts. */
START_TEST(a_watched_free_is_asked_again)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(driver_free(y), CUDA_SUCCESS);
    ck_assert_status(launch(y, 16), KS_ERR_POINTER);        /* freed: nothing there */
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("32 bytes)");
    ck_assert_status(launch(y, 8), KS_OK);
    ck_assert_int_eq(ONE(), 1);                              /* the free's: gone */
    /* And another device's memory at the same address, freed and made while cached. */
    ck_assert_int_eq(driver_free(y), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 64, CU_MEMORYTYPE_DEVICE, 1), y);
    ck_assert_status(launch(y, 16), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 1; device 0 (the launch's) has no peer access to it");
}
END_TEST

/* cuMemFreeAsync and pool reuse at the same address; then, a pool having been
 * used, a synchronisation (where a pool gives memory back) is a free too. */
START_TEST(an_async_free_and_the_pools_release_points)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long z = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(S1, y, 16), KS_OK);
    ck_assert_int_eq(driver_free_async(y, S1), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 16, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch_on(S1, y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("16 bytes)");
    ck_assert_status(launch_on(S1, z, 16), KS_OK);
    ck_assert_status(launch_on(S1, z, 16), KS_OK);
    int asked = FULL() + ONE();
    cuStreamSynchronize_params sy = {S1};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, NULL, &sy, CUDA_SUCCESS);
    ck_assert_status(launch_on(S1, z, 16), KS_OK);
    ck_assert_int_eq(FULL() + ONE(), asked + 1);              /* asked again once */
    ck_assert_status(launch_on(S1, z, 16), KS_OK);
    ck_assert_int_eq(FULL() + ONE(), asked + 1);
}
END_TEST

/* cuMemUnmap, and another device's memory mapped at the same address and size. */
START_TEST(an_unmap_is_asked_again)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(driver_unmap(y, 64), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 64, CU_MEMORYTYPE_DEVICE, 1), y);
    ck_assert_status(launch(y, 16), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 1");
}
END_TEST

/* A free the runtime makes (cudaFree), seen in the runtime's domain alone. */
START_TEST(a_runtime_free_is_seen)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    fake.free(y);                               /* no driver callback: as the runtime's own path */
    void *p = (void *)(uintptr_t)y;
    cudaFree_v3020_params f = {p};
    emit_runtime(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &f);
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("32 bytes)");
}
END_TEST

/* A reservation mapped in part: the entry answers inside the mapping the
 * pointer was asked in; a pointer past it is asked in full. */
START_TEST(outside_the_mapping_asked_again)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    fake.mapping(y, y, 32);
    ck_assert_status(launch(y, 1), KS_OK);
    ck_assert_status(launch(y + 16, 1), KS_OK);
    ck_assert_int_eq(FULL() + ONE(), 1);
    ck_assert_status(launch(y + 40, 1), KS_OK);
    ck_assert_int_eq(FULL(), 2);
    ck_assert_int_eq(ONE(), 0);
    ck_assert_status(launch(y + 16, 1), KS_OK);
    ck_assert_int_eq(FULL() + ONE(), 2);
}
END_TEST

/* Once on, the watch stays on (CUPTI's cost stays with the process anyway):
 * a free made while the check is off is seen when it is on again. */
START_TEST(a_free_while_off_is_seen)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(ks_checks_set(0), KS_OK);
    ck_assert_int_eq(ks__watch_on, 1);
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2));
    ck_assert_int_eq(driver_free(y), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("32 bytes)");
    ck_assert_int_eq(subscribes(), 1);
}
END_TEST

/* KSTUB_CHECK turns the watch on at the first checked launch. */
START_TEST(kstub_check_turns_it_on)
{
    setenv("KSTUB_CHECK", "extents", 1);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(ks__watch_on, 1);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(FULL() + ONE(), 1);
    ck_assert_int_eq(driver_free(y), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
}
END_TEST

/* Threads launching on their own allocations while another frees others: every
 * launch passes (make check-watch under TSan: tests/runtime/watch.mk). */
static void *launcher(void *arg)
{
    unsigned long long y = (unsigned long long)(uintptr_t)arg;
    for (int i = 0; i < 200; i++)
        if (launch(y, 16) != KS_OK)
            return (void *)1;
    return NULL;
}

START_TEST(frees_on_another_thread)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
        ck_assert_int_eq(pthread_create(&t[i], NULL, launcher, (void *)(uintptr_t)y), 0);
    }
    for (int i = 0; i < 20; i++) {
        unsigned long long z = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
        if (z == 0)
            break;                   /* the fake's table is full */
        ck_assert_int_eq(driver_free(z), CUDA_SUCCESS);
    }
    for (int i = 0; i < 3; i++) {
        void *ret;
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_ptr_null(ret);
    }
}
END_TEST

/* ---- without the watch: the buffer id, as correct -------------------------------- */

/* Each way the watch cannot be had: a hit asks the buffer id, and a free the
 * watch never saw (and a smaller allocation at the same address) is caught. */
static void falls_back(void)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);   /* silently */
    ck_assert_int_eq(ks__watch_on, 0);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(ONE(), 1);
    ck_assert_int_eq(driver_free(y), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("32 bytes)");
    ck_assert_uint_eq(ks__pointers_watch_hits, 0);
}

START_TEST(cupti_held_by_another_tool_falls_back)
{
    setenv("FAKE_CUPTI_BUSY", "1", 1);
    falls_back();
}
END_TEST

START_TEST(cupti_missing_falls_back)
{
    setenv("KSTUB_CUPTI", "/nonexistent/libcupti.so", 1);
    falls_back();
}
END_TEST

START_TEST(opted_out_loads_nothing)
{
    setenv("KSTUB_CHECK_WATCH", "0", 1);
    falls_back();
    ck_assert_msg(dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_NOLOAD) == NULL, "CUPTI was loaded");
}
END_TEST

/* ---- with the races check ------------------------------------------------------------ */

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

static void make_streams(void)
{
    CUstream s1 = S1, s2 = S2;
    cuStreamCreate_params p1 = {&s1, CU_STREAM_NON_BLOCKING}, p2 = {&s2, CU_STREAM_NON_BLOCKING};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, current_ctx(), &p1, CUDA_SUCCESS);
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, current_ctx(), &p2, CUDA_SUCCESS);
}

/* Both checks on, in either order: one subscription, a race still reported,
 * a hit still free, a free seen by the watch. */
static void both_on(unsigned first)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(first), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_RACES | KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    ck_assert_int_eq(subscribes(), 1);
    ck_assert_int_eq(ks__watch_on, 1);
    make_streams();
    unsigned long long y = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(S1, y, 64), KS_OK);
    ck_assert_status(launch_on(S2, y, 64), KS_ERR_RACE);
    ck_assert_message_has("races: kernel 'scale' on stream 0x5002");
    ck_assert_uint_ge(ks__pointers_watch_hits, 1);
    ck_assert_int_eq(ONE(), 0);
    /* A free seen by both: the watch asks again. */
    unsigned long long z = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_on(S1, z, 64), KS_OK);
    cuStreamSynchronize_params sy = {S1};
    emit(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, current_ctx(), &sy, CUDA_SUCCESS);
    ck_assert_int_eq(driver_free(z), CUDA_SUCCESS);
    ck_assert_uint_eq(fake.alloc_at(z, 32, CU_MEMORYTYPE_DEVICE, 0), z);
    ck_assert_status(launch_on(S1, z, 64), KS_ERR_EXTENT);
    /* Pointers off: both keep their callbacks, on the one subscription. */
    ck_assert_status(ks_checks_set(KS_CHECK_RACES), KS_OK);
    ck_assert_int_eq(ks__watch_on, 1);
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemUnmap));
    ck_assert_int_eq(subscribes(), 1);
}

START_TEST(races_then_pointers_share_one_subscription)
{
    both_on(KS_CHECK_RACES);
}
END_TEST

START_TEST(pointers_then_races_share_one_subscription)
{
    both_on(KS_CHECK_POINTERS);
}
END_TEST

START_TEST(the_watch_alone_follows_frees_only)
{
    cupti_controls();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuMemUnmap));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2));
    ck_assert(enabled(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch));
    ck_assert(!enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));     /* launches pay no callback */
    ck_assert(!enabled(CUPTI_DRIVER_TRACE_CBID_cuEventRecord));
    ck_assert(!enabled(CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes));
}
END_TEST

/* ---- the checked launch's quick path (launch.c, pointers.c) ------------------------- */

/* trio(const double *a, float *b, int *c, int n): b holds n * 2 (a hint of
 * three steps), c holds n (one step), a has none. */
static const ks_extent_op b_extent[] = {{KS_EXTENT_PARAM, 3}, {KS_EXTENT_CONST, 2}, {KS_EXTENT_MUL, 0}};
static const ks_extent_op c_extent[] = {{KS_EXTENT_PARAM, 3}};
static const ks_param_desc trio_params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "a", "const double *", 8, 8, NULL, 0, NULL, 1},
    {8, 8, 8, KS_PARAM_POINTER, "b", "float *", 4, 4, "n * 2", 3, b_extent, 0},
    {16, 8, 8, KS_PARAM_POINTER, "c", "int *", 4, 4, "n", 1, c_extent, 0},
    {24, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
};
static ks_kernel trio = KS_KERNEL_INIT(&image, "trio", "trio", 4, trio_params, 0);

typedef struct trio_verdict {
    ks_status st;
    char message[512];
} trio_verdict;

static trio_verdict trio_launch(unsigned checks, int ctx, unsigned long long a, unsigned long long b,
                              unsigned long long c, int n)
{
    static const size_t trio_offs[] = {0, 8, 16, 24}, trio_sizes[] = {8, 8, 8, 4};
    fake.set_params("trio", 4, trio_offs, trio_sizes);
    fake.set_context(ctx);
    ck_assert_status(ks_checks_set(checks), KS_OK);
    void *args[4] = {&a, &b, &c, &n};
    ks_launch l = ks_launch_1d(1, 32);
    trio_verdict v;
    v.st = ks_kernel_launch_at(&trio, &l, args, "app.c", 42);
    snprintf(v.message, sizeof v.message, "%s", v.st == KS_OK ? "" : ks_last_error_message());
    return v;
}

/* Every verdict of the pointers and extents checks with the watch's cache
 * answering (the quick path: no hook) is the verdict of the same launch
 * through the hooks (NVTX on as well, with no tool attached, which changes
 * nothing else): the same status and message, the call site named, in each
 * context; the quick path is taken for every launch that passes from the
 * cache and for none that is refused. */
START_TEST(the_quick_path_decides_as_the_hooks_do)
{
    cupti_controls();
    unsigned long long A = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0), B = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long C = fake.alloc(32, CU_MEMORYTYPE_DEVICE, 0), M = fake.alloc(64, CU_MEMORYTYPE_UNIFIED, 0);
    unsigned long long H = fake.alloc(64, CU_MEMORYTYPE_HOST, 0), D1 = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    const struct { unsigned long long a, b, c; int n, ctx, ok; } cases[] = {
        {A, B, C, 8, 0, 1},          {A, B, C, 9, 0, 0},         /* b: n * 2 floats past its end */
        {A, B + 4, C, 8, 0, 0},      {A, B, C + 4, 7, 0, 1},     /* c's last element exactly at the end */
        {A, B, C + 4, 8, 0, 0},      {A + 4, B, C, 1, 0, 0},     /* a misaligned for double */
        {A + 56, B, C, 1, 0, 1},     {D1, B, C, 1, 0, 0},        /* another device's memory, no peer access */
        {M, M + 32, M, 4, 0, 1},     {H, B, C, 1, 0, 1},         /* managed; mapped host memory */
        {0, 0, 0, 5, 0, 1},          {A, B, C, -1, 0, 0},        /* NULLs pass; a negative extent */
        {A, B, C, 0x40000000, 0, 0}, {A, B, C, 8, 1, 1},         /* another context of device 0 */
        {A, B, C, 8, 2, 0},          {D1, 0, 0, 1, 2, 1},        /* a context of device 1 */
        {A, B, C, 8, 0, 1},
    };
    const unsigned sets[] = {KS_CHECK_POINTERS, KS_CHECK_EXTENTS, KS_CHECK_POINTERS | KS_CHECK_EXTENTS};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            unsigned long long a = cases[i].a, b = cases[i].b, c = cases[i].c;
            int n = cases[i].n, ctx = cases[i].ctx;
            trio_verdict hooks = trio_launch(sets[s] | KS_CHECK_NVTX, ctx, a, b, c, n);
            for (int again = 0; again < 2; again++) {      /* asked (or not), then from the cache */
                unsigned long quick = ks__pointers_quick_launches;
                trio_verdict v = trio_launch(sets[s], ctx, a, b, c, n);
                ck_assert_msg(v.st == hooks.st && strcmp(v.message, hooks.message) == 0,
                              "checks 0x%x, case %zu: %s \"%s\", through the hooks %s \"%s\"", sets[s], i,
                              ks_status_name(v.st), v.message, ks_status_name(hooks.st), hooks.message);
                if (v.st != KS_OK)
                    ck_assert_msg(strstr(v.message, "(called at app.c:42)") != NULL, "%s", v.message);
                if (again)
                    ck_assert_uint_eq(ks__pointers_quick_launches - quick, v.st == KS_OK);
            }
            /* The pointers check alone looks at every pointer: each case says whether it passes. */
            if (sets[s] & KS_CHECK_POINTERS && sets[s] & KS_CHECK_EXTENTS)
                ck_assert_msg((hooks.st == KS_OK) == cases[i].ok, "case %zu: %s", i, hooks.message);
        }
}
END_TEST

/* A pointer the cache answers, then one it does not (another device's
 * memory): the hooks decide, each hit counted once; and a refused launch of
 * a kernel whose pointers pass names the call site as every checked launch's. */
START_TEST(the_quick_path_gives_way_whole)
{
    cupti_controls();
    unsigned long long A = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0), B = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long C = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0), D1 = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(trio_launch(KS_CHECK_POINTERS, 0, A, B, C, 1).st, KS_OK);
    ck_assert_status(trio_launch(KS_CHECK_POINTERS, 0, A, D1, C, 1).st, KS_ERR_POINTER);
    unsigned long hits = ks__pointers_watch_hits, quick = ks__pointers_quick_launches;
    trio_verdict v = trio_launch(KS_CHECK_POINTERS, 0, A, D1, C, 1);
    ck_assert_status(v.st, KS_ERR_POINTER);
    ck_assert_uint_eq(ks__pointers_watch_hits - hits, 2);   /* a and D1 from the cache; c never reached */
    ck_assert_uint_eq(ks__pointers_quick_launches, quick);
    int asked = FULL() + ONE();
    fake.inject("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
    v = trio_launch(KS_CHECK_POINTERS, 0, A, B, C, 1);
    ck_assert_status(v.st, KS_ERR_LAUNCH);
    ck_assert_msg(strstr(v.message, "(called at app.c:42)") != NULL, "%s", v.message);
    ck_assert_uint_eq(ks__pointers_quick_launches, quick + 1);
    ck_assert_int_eq(FULL() + ONE(), asked);
}
END_TEST

static Suite *watch_suite(void)
{
    Suite *s = suite_create("free watch");
    TCase *on = tcase_create("watch on");
    tcase_add_checked_fixture(on, setup, NULL);
    tcase_add_test(on, a_hit_with_no_free_asks_nothing);
    tcase_add_test(on, a_watched_free_is_asked_again);
    tcase_add_test(on, an_async_free_and_the_pools_release_points);
    tcase_add_test(on, an_unmap_is_asked_again);
    tcase_add_test(on, a_runtime_free_is_seen);
    tcase_add_test(on, outside_the_mapping_asked_again);
    tcase_add_test(on, a_free_while_off_is_seen);
    tcase_add_test(on, kstub_check_turns_it_on);
    tcase_add_test(on, frees_on_another_thread);
    tcase_add_test(on, the_quick_path_decides_as_the_hooks_do);
    tcase_add_test(on, the_quick_path_gives_way_whole);
    suite_add_tcase(s, on);
    TCase *off = tcase_create("fallback");
    tcase_add_checked_fixture(off, setup, NULL);
    tcase_add_test(off, cupti_held_by_another_tool_falls_back);
    tcase_add_test(off, cupti_missing_falls_back);
    tcase_add_test(off, opted_out_loads_nothing);
    suite_add_tcase(s, off);
    TCase *races = tcase_create("with races");
    tcase_add_checked_fixture(races, setup, NULL);
    tcase_add_test(races, races_then_pointers_share_one_subscription);
    tcase_add_test(races, pointers_then_races_share_one_subscription);
    tcase_add_test(races, the_watch_alone_follows_frees_only);
    suite_add_tcase(s, races);
    return s;
}

int main(void)
{
    return run_suite(watch_suite(), CK_FORK);
}
