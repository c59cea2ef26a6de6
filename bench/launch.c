/*
 * launch.c — benchmark question 1: CPU time per launch.
 *
 * The same tiny kernel is launched, in the same process and the same run, by
 * every way a C program can launch it: cuLaunchKernel and cuLaunchKernelEx
 * written by hand, the kstub stub (user stream, default stream, launch
 * attributes) and nvcc's <<<>>> on the runtime API (launch_rt.cu). Two
 * kernels: bench_args (a few scalar and pointer arguments) and bench_struct
 * (a struct by value).
 *
 * Method: a round runs one batch of BATCH launches per variant, the variants
 * interleaved (in a new shuffled order each round, bench_order). Before each batch
 * every stream is synchronised, so the launch queue starts empty and cannot
 * fill; only the launch loop is timed (CLOCK_MONOTONIC). Reported per variant:
 * the median, 10th and 90th percentile of ns/launch over the rounds, and the
 * ratio to raw cuLaunchKernel as the median of the per-round ratios (paired:
 * both numbers come from the same round), and for the stubs the same paired
 * ratio against their like-for-like raw call (same handle type, stream,
 * launch entry point).
 *
 *   launch_bench [-R | -W] [-r ROUNDS] [-b BATCH] [-o OUTDIR]
 *
 * writes OUTDIR/launch_raw.csv (every batch) and OUTDIR/launch_summary.csv,
 * and prints the summary. Without a CUDA driver it says so and exits 0.
 *
 * -R measures the races check (issue 45) in a process of its own, since
 * CUPTI, once loaded, slows every driver call of the process: raw
 * cuLaunchKernel and the stub with no check (both under CUPTI) against the
 * stub with races on; files launch_races_*.csv. Its cost against a launch
 * without CUPTI is this run's races row over the plain run's stub row.
 *
 * -W measures the pointers and extents checks with their free watch (issue
 * 45: CUPTI's callbacks on every free, so a cache hit asks the driver
 * nothing) in a process of its own, for the same reason: raw cuLaunchKernel
 * and the stub with no check under CUPTI, the checks with the watch, with
 * the watch off (the buffer-id query a hit) and with no cache; files
 * launch_watch_*.csv. The plain run keeps the watch off (KSTUB_CHECK_WATCH=0:
 * no CUPTI in that process), so its pointers and extents rows are the
 * buffer-id query's; the watch's cost against a launch without CUPTI is this
 * run's row over the plain run's raw CUkernel row.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_kernels.kstub.h"
#include "launch_rt.h"

#define GRID 1u
#define BLOCK 32u
#define NELEM 32

enum { K_ARGS, K_STRUCT, NKERNELS };
static const char *const kernel_names[NKERNELS] = {"bench_args", "bench_struct"};

/* ---- the driver, as hand-written code would hold it ------------------------------ */

static struct {
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDeviceGetName_v2000 DeviceGetName;
    PFN_cuDriverGetVersion_v2020 DriverGetVersion;
    PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuMemAlloc_v3020 MemAlloc;
    PFN_cuMemsetD8_v3020 MemsetD8;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    PFN_cuModuleLoadData_v2000 ModuleLoadData;
    PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
    PFN_cuLibraryLoadData_v12000 LibraryLoadData;
    PFN_cuLibraryGetKernel_v12000 LibraryGetKernel;
    PFN_cuLaunchKernel_v4000 LaunchKernel;
    PFN_cuLaunchKernelEx_v11060 LaunchKernelEx;
    PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
    PFN_cuCtxGetId_v12000 CtxGetId;
    PFN_cuKernelGetFunction_v12000 KernelGetFunction;
} cu;

/* What every variant launches with. */
static struct {
    CUstream stream;             /* a user stream (blocking, like cudaStreamCreate's) */
    CUfunction fn[NKERNELS];     /* from cuModuleLoadData: the classic hand-written way */
    CUkernel kn[NKERNELS];       /* from cuLibraryLoadData: what libkstub launches */
    float a;
    float *x, *y;
    int n;
    long long m;
    BenchParams params;          /* kstub's C mirror of the kernel's struct */
    int have_rt;                 /* the runtime API initialised */
} g;

/* ---- the variants: each runs one batch of `count` launches ------------------------ */

typedef int (*batch_fn)(int kernel, unsigned count);

/* cuLaunchKernel written by hand: the argument array built at the call, as usual. */
static int raw_launch_on(CUfunction f, int kernel, unsigned count, CUstream s)
{
    if (kernel == K_ARGS) {
        for (unsigned i = 0; i < count; i++) {
            void *args[5] = {&g.a, &g.x, &g.y, &g.n, &g.m};
            if (cu.LaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS)
                return 1;
        }
    } else {
        for (unsigned i = 0; i < count; i++) {
            void *args[2] = {&g.params, &g.y};
            if (cu.LaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS)
                return 1;
        }
    }
    return 0;
}

static int raw_launch(int kernel, unsigned count)
{
    return raw_launch_on(g.fn[kernel], kernel, count, g.stream);
}

static int raw_launch_kernel_handle(int kernel, unsigned count)
{
    return raw_launch_on((CUfunction)g.kn[kernel], kernel, count, g.stream);
}

/*
 * Issue 23's question, asked of the driver alone: would libkstub save the
 * CUkernel premium by launching the current context's CUfunction
 * (cuKernelGetFunction), cached per context? What such a fast path must do
 * per launch: cuCtxGetCurrent, and, to be sound when a context is destroyed
 * and another made at the same address (or the primary context reset),
 * cuCtxGetId; a compare against the cached key; then the CUfunction launch.
 * Measured with the key by handle only (unsound, the lower bound) and by
 * context ID (what libkstub would need).
 */
static struct {
    CUcontext ctx;
    unsigned long long id;
    CUfunction fn[NKERNELS];
} cache;

static CUfunction cached_function(int kernel, int by_id)
{
    CUcontext ctx = NULL;
    if (cu.CtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return NULL;
    if (by_id) {
        unsigned long long id = 0;
        if (cu.CtxGetId(ctx, &id) != CUDA_SUCCESS)
            return NULL;
        if (__builtin_expect(id == cache.id && cache.fn[kernel] != NULL, 1))
            return cache.fn[kernel];
        cache.id = id;
    } else if (__builtin_expect(ctx == cache.ctx && cache.fn[kernel] != NULL, 1)) {
        return cache.fn[kernel];
    }
    cache.ctx = ctx;
    return cu.KernelGetFunction(&cache.fn[kernel], g.kn[kernel]) == CUDA_SUCCESS ? cache.fn[kernel] : NULL;
}

static int cached_launch(int kernel, unsigned count, int by_id)
{
    if (kernel == K_ARGS) {
        for (unsigned i = 0; i < count; i++) {
            void *args[5] = {&g.a, &g.x, &g.y, &g.n, &g.m};
            CUfunction f = cached_function(kernel, by_id);
            if (f == NULL || cu.LaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, g.stream, args, NULL) != CUDA_SUCCESS)
                return 1;
        }
    } else {
        for (unsigned i = 0; i < count; i++) {
            void *args[2] = {&g.params, &g.y};
            CUfunction f = cached_function(kernel, by_id);
            if (f == NULL || cu.LaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, g.stream, args, NULL) != CUDA_SUCCESS)
                return 1;
        }
    }
    return 0;
}

static int raw_cached_by_handle(int kernel, unsigned count) { return cached_launch(kernel, count, 0); }
static int raw_cached_by_id(int kernel, unsigned count) { return cached_launch(kernel, count, 1); }

static int raw_launch_default(int kernel, unsigned count)
{
    return raw_launch_on(g.fn[kernel], kernel, count, NULL);
}

static int raw_launch_kernel_handle_default(int kernel, unsigned count)
{
    return raw_launch_on((CUfunction)g.kn[kernel], kernel, count, NULL);
}

/* cuLaunchKernelEx with one attribute (priority 0), the same one the kstub
 * attributes variant sets, so the two compare like for like (with the
 * CUkernel libkstub launches: raw_launch_ex_kernel_handle). */
static int raw_launch_ex_on(CUfunction f, int kernel, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        CUlaunchAttribute at[1];
        memset(at, 0, sizeof at);
        at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        at[0].value.priority = 0;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = GRID, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = BLOCK, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.sharedMemBytes = 0;
        cfg.hStream = g.stream;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        CUresult r;
        if (kernel == K_ARGS) {
            void *args[5] = {&g.a, &g.x, &g.y, &g.n, &g.m};
            r = cu.LaunchKernelEx(&cfg, f, args, NULL);
        } else {
            void *args[2] = {&g.params, &g.y};
            r = cu.LaunchKernelEx(&cfg, f, args, NULL);
        }
        if (r != CUDA_SUCCESS)
            return 1;
    }
    return 0;
}

static int raw_launch_ex(int kernel, unsigned count)
{
    return raw_launch_ex_on(g.fn[kernel], kernel, count);
}

static int raw_launch_ex_kernel_handle(int kernel, unsigned count)
{
    return raw_launch_ex_on((CUfunction)g.kn[kernel], kernel, count);
}

/* The kstub stub, as an application calls it. */
static int stub_launch_with(int kernel, unsigned count, ks_launch l)
{
    if (kernel == K_ARGS) {
        for (unsigned i = 0; i < count; i++)
            if (bench_args(l, g.a, g.x, g.y, g.n, g.m) != KS_OK)
                return 1;
    } else {
        for (unsigned i = 0; i < count; i++)
            if (bench_struct(l, g.params, g.y) != KS_OK)
                return 1;
    }
    return 0;
}

static int stub_user(int kernel, unsigned count)
{
    return stub_launch_with(kernel, count, ks_launch_on(ks_launch_1d(GRID, BLOCK), g.stream));
}

static int stub_default(int kernel, unsigned count)
{
    return stub_launch_with(kernel, count, ks_launch_1d(GRID, BLOCK));
}

static int stub_attrs(int kernel, unsigned count)
{
    ks_launch_attrs at = ks_launch_attrs_priority(ks_launch_attrs_none(), 0);
    ks_launch l = ks_launch_with(ks_launch_on(ks_launch_1d(GRID, BLOCK), g.stream), &at);
    return stub_launch_with(kernel, count, l);
}

/* The stub with one run-time check on (issue 22): what each check costs per launch. */
static int stub_checked(int kernel, unsigned count, unsigned check)
{
    if (ks_checks_set(check) != KS_OK)
        return 1;
    int rc = stub_user(kernel, count);
    ks_checks_set(0);
    return rc;
}
static int stub_check_sync(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_SYNC); }
static int stub_check_pointers(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_POINTERS); }
static int stub_check_extents(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_EXTENTS); }
static int stub_check_nvtx(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_NVTX); }
static int stub_check_trace(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_TRACE); }
static int stub_check_races(int kernel, unsigned count) { return stub_checked(kernel, count, KS_CHECK_RACES); }

/* The pointers check without its allocation cache (issue 45): libkstub's
 * internal switch, reachable because the bench links the static library. */
extern int ks__pointers_cache;
static int stub_check_pointers_nocache(int kernel, unsigned count)
{
    ks__pointers_cache = 0;
    int rc = stub_checked(kernel, count, KS_CHECK_POINTERS);
    ks__pointers_cache = 1;
    return rc;
}

/* -W: the pointers check with the free watch's word cleared for the batch, as
 * when CUPTI could not be had: each hit asks the buffer id (libkstub's
 * internal word; what the watch vouched for is asked again after). */
extern int ks__watch_on;
static int stub_check_pointers_watch_off(int kernel, unsigned count)
{
    int was = __atomic_load_n(&ks__watch_on, __ATOMIC_ACQUIRE);
    __atomic_store_n(&ks__watch_on, 0, __ATOMIC_RELEASE);
    int rc = stub_checked(kernel, count, KS_CHECK_POINTERS);
    __atomic_store_n(&ks__watch_on, was, __ATOMIC_RELEASE);
    return rc;
}

/* A template's one C name (issue 23): bench_fill's _Generic over its two
 * instances, against the instance's own stub, both the C macro form. The
 * kernel argument only says which instance: bench_args -> float, bench_struct -> int. */
static int fill_direct(int kernel, unsigned count)
{
    ks_launch l = ks_launch_on(ks_launch_1d(GRID, BLOCK), g.stream);
    for (unsigned i = 0; i < count; i++)
        if ((kernel == K_ARGS ? bench_fill_float(l, g.y, g.a, g.n) : bench_fill_int(l, (int *)g.y, g.n, g.n)) != KS_OK)
            return 1;
    return 0;
}

static int fill_generic(int kernel, unsigned count)
{
    ks_launch l = ks_launch_on(ks_launch_1d(GRID, BLOCK), g.stream);
    for (unsigned i = 0; i < count; i++)
        if ((kernel == K_ARGS ? bench_fill(l, g.y, g.a, g.n) : bench_fill(l, (int *)g.y, g.n, g.n)) != KS_OK)
            return 1;
    return 0;
}

static int rt_launch(int kernel, unsigned count)
{
    if (kernel == K_ARGS)
        return rt_args_batch(count, g.stream, GRID, BLOCK, g.a, g.x, g.y, g.n, g.m) != 0;
    return rt_struct_batch(count, g.stream, GRID, BLOCK, &g.params, g.y) != 0;
}

typedef struct variant {
    const char *id;              /* a short name for the CSV files */
    const char *label;           /* for tables */
    batch_fn run;
    int needs_rt;                /* needs the runtime API */
    int pair;                    /* index of the like-for-like raw variant, or -1 */
} variant;

/* The first is the reference every ratio is taken against. */
static const variant variants_all[] = {
    {"raw_cuLaunchKernel", "raw cuLaunchKernel (CUfunction, user stream)", raw_launch, 0, -1},
    {"raw_cuLaunchKernel_CUkernel", "raw cuLaunchKernel (CUkernel, user stream)", raw_launch_kernel_handle, 0, -1},
    {"raw_cuLaunchKernel_default", "raw cuLaunchKernel (CUfunction, default stream)", raw_launch_default, 0, -1},
    {"raw_cuLaunchKernelEx", "raw cuLaunchKernelEx (1 attribute, user stream)", raw_launch_ex, 0, -1},
    /* libkstub launches a CUkernel; on the default stream; through cuLaunchKernelEx. */
    {"kstub_user_stream", "kstub stub, user stream", stub_user, 0, 1},
    /* Paired with the raw call of the same CUkernel (the last two rows); the
     * CUfunction rows above (2, 3) were their pairs before issue 45, which put
     * the CUkernel's own premium into the stub's ratio. */
    {"kstub_default_stream", "kstub stub, default stream", stub_default, 0, 17},
    {"kstub_attrs", "kstub stub + ks_launch_attrs (priority, cuLaunchKernelEx)", stub_attrs, 0, 18},
    {"nvcc_triple_chevron", "nvcc <<<>>> (runtime API, user stream)", rt_launch, 1, -1},
    /* Each run-time check on its own (KSTUB_CHECK); the trace goes to a file (a record stored into its shared mapping). */
    {"kstub_check_sync", "kstub stub, check sync (waits for each kernel)", stub_check_sync, 0, 1},
    /* The pointers and extents checks with their cache but no free watch (this process loads no
     * CUPTI): a hit asks the driver the buffer id (1 attribute a pointer); -W has the watch. */
    {"kstub_check_pointers", "kstub stub, check pointers, watch off (buffer-id query)",
     stub_check_pointers, 0, 1},
    {"kstub_check_extents", "kstub stub, check extents, watch off (bench_args: y holds n)", stub_check_extents, 0, 1},
    {"kstub_check_nvtx", "kstub stub, check nvtx (no tool attached)", stub_check_nvtx, 0, 1},
    {"kstub_check_trace", "kstub stub, check trace (to a file)", stub_check_trace, 0, 1},
    /* Issue 23: the CUfunction of the current context, cached, by the driver alone (ratio: against raw
     * CUfunction; paired: against raw CUkernel, what it would replace). */
    {"raw_cached_function_by_handle", "cuCtxGetCurrent + cached CUfunction (key: handle; unsound)",
     raw_cached_by_handle, 0, 1},
    {"raw_cached_function_by_id", "cuCtxGetCurrent + cuCtxGetId + cached CUfunction (sound key)",
     raw_cached_by_id, 0, 1},
    /* Issue 23: a template's one C name against the instance's stub (bench_fill<float> for bench_args,
     * <int> for bench_struct; the pair is the direct stub, not raw). */
    {"kstub_fill_direct", "kstub stub bench_fill_float / _int (the instance, macro form)", fill_direct, 0, 1},
    {"kstub_fill_generic", "bench_fill (_Generic over the instances)", fill_generic, 0, 15 /* kstub_fill_direct */},
    /* 17, 18: the like-for-like raw calls of the default-stream and attributes stubs (issue 45). */
    {"raw_cuLaunchKernel_CUkernel_default", "raw cuLaunchKernel (CUkernel, default stream)",
     raw_launch_kernel_handle_default, 0, -1},
    {"raw_cuLaunchKernelEx_CUkernel", "raw cuLaunchKernelEx (CUkernel, 1 attribute, user stream)",
     raw_launch_ex_kernel_handle, 0, -1},
    /* 19: the pointers check asking all seven attributes every time (before issue 45's cache). */
    {"kstub_check_pointers_nocache", "kstub stub, check pointers, no allocation cache",
     stub_check_pointers_nocache, 0, 1},
};
enum { NVARIANTS = sizeof variants_all / sizeof variants_all[0] };

/* -R: the races check, CUPTI loaded for the whole process (so every row pays its callbacks). */
static const variant races_variants[] = {
    {"raw_cuLaunchKernel_cupti", "raw cuLaunchKernel (CUfunction, user stream), CUPTI loaded", raw_launch, 0, -1},
    {"raw_cuLaunchKernel_CUkernel_cupti", "raw cuLaunchKernel (CUkernel, user stream), CUPTI loaded",
     raw_launch_kernel_handle, 0, -1},
    {"kstub_user_stream_cupti", "kstub stub, user stream, no check, CUPTI loaded", stub_user, 0, 1},
    {"kstub_check_races", "kstub stub, check races (CUPTI's callbacks, the clocks)", stub_check_races, 0, 2},
};
enum { NRACES_VARIANTS = sizeof races_variants / sizeof races_variants[0] };

/* -W: the free watch, CUPTI loaded and its free callbacks on for the whole process. */
static const variant watch_variants[] = {
    {"raw_cuLaunchKernel_watch", "raw cuLaunchKernel (CUfunction, user stream), CUPTI held by the watch",
     raw_launch, 0, -1},
    {"raw_cuLaunchKernel_CUkernel_watch", "raw cuLaunchKernel (CUkernel, user stream), CUPTI held by the watch",
     raw_launch_kernel_handle, 0, -1},
    {"kstub_user_stream_watch", "kstub stub, user stream, no check, CUPTI held by the watch", stub_user, 0, 1},
    {"kstub_check_pointers_watch", "kstub stub, check pointers (free watch: no driver call a hit)",
     stub_check_pointers, 0, 1},
    {"kstub_check_extents_watch", "kstub stub, check extents (free watch)", stub_check_extents, 0, 1},
    {"kstub_check_pointers_watch_off", "kstub stub, check pointers, watch off (buffer-id query), CUPTI loaded",
     stub_check_pointers_watch_off, 0, 1},
    {"kstub_check_pointers_nocache_watch", "kstub stub, check pointers, no allocation cache, CUPTI loaded",
     stub_check_pointers_nocache, 0, 1},
};
enum { NWATCH_VARIANTS = sizeof watch_variants / sizeof watch_variants[0] };
_Static_assert((int)NWATCH_VARIANTS <= (int)NVARIANTS && (int)NRACES_VARIANTS <= (int)NVARIANTS,
               "ns[][] holds every mode's rows");

/* Which process this is: the plain run, -R or -W. */
enum { MODE_PLAIN, MODE_RACES, MODE_WATCH };
static const char *const mode_prefix[] = {"launch", "launch_races", "launch_watch"};

/* ---- setup --------------------------------------------------------------------------- */

static void load_driver(void)
{
    BENCH_PROC(cu.DeviceGet, "cuDeviceGet");
    BENCH_PROC(cu.DeviceGetName, "cuDeviceGetName");
    BENCH_PROC(cu.DriverGetVersion, "cuDriverGetVersion");
    BENCH_PROC(cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BENCH_PROC(cu.CtxSetCurrent, "cuCtxSetCurrent");
    BENCH_PROC(cu.MemAlloc, "cuMemAlloc");
    BENCH_PROC(cu.MemsetD8, "cuMemsetD8");
    BENCH_PROC(cu.StreamCreate, "cuStreamCreate");
    BENCH_PROC(cu.StreamSynchronize, "cuStreamSynchronize");
    BENCH_PROC(cu.ModuleLoadData, "cuModuleLoadData");
    BENCH_PROC(cu.ModuleGetFunction, "cuModuleGetFunction");
    BENCH_PROC(cu.LibraryLoadData, "cuLibraryLoadData");
    BENCH_PROC(cu.LibraryGetKernel, "cuLibraryGetKernel");
    BENCH_PROC(cu.LaunchKernel, "cuLaunchKernel");
    BENCH_PROC(cu.LaunchKernelEx, "cuLaunchKernelEx");
    BENCH_PROC(cu.CtxGetCurrent, "cuCtxGetCurrent");
    BENCH_PROC(cu.CtxGetId, "cuCtxGetId");
    BENCH_PROC(cu.KernelGetFunction, "cuKernelGetFunction");
}

static void sync_all(void)
{
    CU_CHECK(cu.StreamSynchronize(g.stream));
    CU_CHECK(cu.StreamSynchronize(NULL));
}

/* The check-trace variant's trace file (a regular one), removed at exit. */
static char trace_path[] = "/tmp/kstub-bench-trace.XXXXXX";

static void remove_trace(void)
{
    unlink(trace_path);
}

static void setup(FILE *meta, int mode)
{
    CUdevice dev;
    CUcontext ctx;
    char name[256];
    int drv = 0;
    CU_CHECK(cu.DeviceGet(&dev, 0));
    CU_CHECK(cu.DeviceGetName(name, sizeof name, dev));
    CU_CHECK(cu.DriverGetVersion(&drv));
    /* Device 0's primary context: the one libkstub and the runtime both use. */
    CU_CHECK(cu.DevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cu.CtxSetCurrent(ctx));
    if (mode == MODE_RACES) {
        /* CUPTI loaded and subscribed before the stream is made, as a program would do it. */
        KS_CHECK(ks_checks_set(KS_CHECK_RACES));
        KS_CHECK(ks_checks_set(0));
    }
    if (mode == MODE_WATCH) {
        /* The watch starts with the pointers check and stays on for the process. */
        KS_CHECK(ks_checks_set(KS_CHECK_POINTERS));
        KS_CHECK(ks_checks_set(0));
        if (!__atomic_load_n(&ks__watch_on, __ATOMIC_ACQUIRE)) {
            fprintf(stderr, "launch: -W: the free watch is off (CUPTI could not be loaded or subscribed; "
                            "KSTUB_CUPTI names libcupti)\n");
            exit(1);
        }
    }
    CU_CHECK(cu.StreamCreate(&g.stream, CU_STREAM_DEFAULT));

    /* The raw variants load the very image the stubs embed. */
    const void *image = bench_kernels_kstub_image.data;
    CUmodule mod;
    CUlibrary lib;
    CU_CHECK(cu.ModuleLoadData(&mod, image));
    CU_CHECK(cu.LibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    for (int k = 0; k < NKERNELS; k++) {
        CU_CHECK(cu.ModuleGetFunction(&g.fn[k], mod, kernel_names[k]));
        CU_CHECK(cu.LibraryGetKernel(&g.kn[k], lib, kernel_names[k]));
    }
    KS_CHECK(ks_image_load(&bench_kernels_kstub_image));
    /* The trace goes to a regular file (libkstub refuses to trace into
     * anything else, /dev/null included), removed at exit. */
    int trace_fd = mkstemp(trace_path);
    if (trace_fd < 0) {
        perror("launch: mkstemp");
        exit(1);
    }
    close(trace_fd);
    atexit(remove_trace);
    KS_CHECK(ks_trace_set_file(trace_path));

    CUdeviceptr dx, dy;
    CU_CHECK(cu.MemAlloc(&dx, NELEM * sizeof(float)));
    CU_CHECK(cu.MemAlloc(&dy, NELEM * sizeof(float)));
    CU_CHECK(cu.MemsetD8(dx, 0, NELEM * sizeof(float)));
    CU_CHECK(cu.MemsetD8(dy, 0, NELEM * sizeof(float)));
    g.a = 1.5f;
    g.x = (float *)(uintptr_t)dx;
    g.y = (float *)(uintptr_t)dy;
    g.n = NELEM;
    g.m = 1;
    g.params.scale = 2.0f;
    g.params.n = NELEM;
    g.params.bias = 0.5;
    g.params.x = g.x;

    char rtmsg[256] = "";
    int rt = rt_init(rtmsg, sizeof rtmsg);
    g.have_rt = rt == 0;
    if (g.have_rt && rt_params_size() != sizeof(BenchParams)) {
        fprintf(stderr, "launch: BenchParams is %zu bytes in C++ but %zu in kstub's mirror\n",
                rt_params_size(), sizeof(BenchParams));
        exit(1);
    }
    printf("launch: %s, driver CUDA %d.%d, %s\n", name, drv / 1000, drv % 1000 / 10,
           g.have_rt ? rtmsg : "runtime API unavailable");
    if (!g.have_rt)
        printf("launch: skipping the <<<>>> variant: %s\n", rtmsg);
    if (meta) {
        fprintf(meta, "device=%s\ndriver_cuda=%d.%d\nruntime=%s\n", name, drv / 1000,
                drv % 1000 / 10, g.have_rt ? rtmsg : "unavailable");
    }
}

/* ---- main ------------------------------------------------------------------------------- */

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    return f;
}

int main(int argc, char **argv)
{
    int rounds = 50;
    unsigned batch = 1000;
    const char *outdir = ".";
    int opt, mode = MODE_PLAIN;
    while ((opt = getopt(argc, argv, "RWr:b:o:")) != -1) {
        switch (opt) {
        case 'R': mode = MODE_RACES; break;
        case 'W': mode = MODE_WATCH; break;
        case 'r': rounds = atoi(optarg); break;
        case 'b': batch = (unsigned)atoi(optarg); break;
        case 'o': outdir = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-R | -W] [-r ROUNDS] [-b BATCH] [-o OUTDIR]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || batch < 1) {
        fprintf(stderr, "launch: ROUNDS and BATCH must be >= 1\n");
        return 2;
    }

    /* The plain run loads no CUPTI: its pointers rows have no free watch (-W's do). */
    if (mode == MODE_PLAIN)
        setenv("KSTUB_CHECK_WATCH", "0", 1);
    bench_require_driver("launch");
    load_driver();
    const variant *variants = mode == MODE_RACES ? races_variants : mode == MODE_WATCH ? watch_variants : variants_all;
    const int nv = mode == MODE_RACES ? (int)NRACES_VARIANTS : mode == MODE_WATCH ? (int)NWATCH_VARIANTS
                                                                                 : (int)NVARIANTS;
    char file[128];
    snprintf(file, sizeof file, "%s_meta.txt", mode_prefix[mode]);
    FILE *meta = open_out(outdir, file);
    setup(meta, mode);
    fprintf(meta, "rounds=%d\nbatch=%u\ngrid=%u\nblock=%u\n", rounds, batch, GRID, BLOCK);
    fclose(meta);

    /* ns per launch, [kernel][variant][round]; NaN-free: skipped variants stay unused. */
    static double *ns[NKERNELS][NVARIANTS];
    for (int k = 0; k < NKERNELS; k++)
        for (int v = 0; v < nv; v++)
            if ((ns[k][v] = calloc((size_t)rounds, sizeof(double))) == NULL)
                return 1;

    /* Warm-up: every variant a few times (first launches, lazy loading, caches). */
    for (int w = 0; w < 3; w++)
        for (int k = 0; k < NKERNELS; k++)
            for (int v = 0; v < nv; v++) {
                if (variants[v].needs_rt && !g.have_rt)
                    continue;
                if (variants[v].run(k, batch) != 0) {
                    fprintf(stderr, "launch: %s of %s failed in warm-up: %s\n", variants[v].id,
                            kernel_names[k], ks_last_error_message());
                    return 1;
                }
                sync_all();
            }

    snprintf(file, sizeof file, "%s_raw.csv", mode_prefix[mode]);
    FILE *raw = open_out(outdir, file);
    fprintf(raw, "kernel,variant,round,ns_per_launch\n");
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < NKERNELS; k++) {
            int order[NVARIANTS];
            bench_order(order, nv, r * NKERNELS + k);
            for (int i = 0; i < nv; i++) {
                int v = order[i];
                if (variants[v].needs_rt && !g.have_rt)
                    continue;
                sync_all();
                uint64_t t0 = bench_now_ns();
                int failed = variants[v].run(k, batch);
                uint64_t t1 = bench_now_ns();
                if (failed) {
                    fprintf(stderr, "launch: %s of %s failed: %s\n", variants[v].id,
                            kernel_names[k], ks_last_error_message());
                    return 1;
                }
                ns[k][v][r] = (double)(t1 - t0) / batch;
                fprintf(raw, "%s,%s,%d,%.1f\n", kernel_names[k], variants[v].id, r, ns[k][v][r]);
            }
        }
        if ((r + 1) % 10 == 0 || r + 1 == rounds) {
            printf("launch: round %d of %d\n", r + 1, rounds);
            fflush(stdout);
        }
    }
    sync_all();
    fclose(raw);

    snprintf(file, sizeof file, "%s_summary.csv", mode_prefix[mode]);
    FILE *sum = open_out(outdir, file);
    fprintf(sum, "kernel,variant,label,median_ns,p10_ns,p90_ns,ratio,pair_variant,pair_ratio,rounds\n");
    double *ratio = calloc((size_t)rounds, sizeof(double));
    if (ratio == NULL)
        return 1;
    for (int k = 0; k < NKERNELS; k++) {
        printf("\n%s: ns/launch over %d rounds of %u launches\n", kernel_names[k], rounds, batch);
        printf("  %-58s %9s %9s %9s %8s %8s\n", "variant", "median", "p10", "p90", "ratio", "paired");
        for (int v = 0; v < nv; v++) {
            if (variants[v].needs_rt && !g.have_rt)
                continue;
            for (int r = 0; r < rounds; r++)
                ratio[r] = ns[k][v][r] / ns[k][0][r];
            double med = bench_median(ns[k][v], (size_t)rounds);
            double p10 = bench_quantile(ns[k][v], (size_t)rounds, 0.1);
            double p90 = bench_quantile(ns[k][v], (size_t)rounds, 0.9);
            double rat = bench_median(ratio, (size_t)rounds);
            int pv = variants[v].pair;
            double prat = 0.0;
            if (pv >= 0) {
                for (int r = 0; r < rounds; r++)
                    ratio[r] = ns[k][v][r] / ns[k][pv][r];
                prat = bench_median(ratio, (size_t)rounds);
            }
            printf("  %-58s %9.1f %9.1f %9.1f %8.3f %8.3f\n", variants[v].label, med, p10, p90, rat, prat);
            fprintf(sum, "%s,%s,\"%s\",%.1f,%.1f,%.1f,%.4f,%s,%.4f,%d\n", kernel_names[k],
                    variants[v].id, variants[v].label, med, p10, p90, rat,
                    pv >= 0 ? variants[pv].id : "", prat, rounds);
        }
    }
    fclose(sum);
    free(ratio);
    for (int k = 0; k < NKERNELS; k++)
        for (int v = 0; v < nv; v++)
            free(ns[k][v]);
    return 0;
}
