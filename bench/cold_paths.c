/*
 * cold_paths.c — one launch path of libkstub, or its raw driver floor, run
 * N times against the cold fake driver (build/tests/libcuda_cold.so: every
 * launch and copy entry point evicts the caches first, tests/support/fake_cold.h),
 * for bench/cold.py, which runs it under cachegrind for two values of N and
 * reports each path's last-level cache misses per call (code and data) over
 * its floor's: the cache lines the path touches per call, which a real
 * driver's launch makes miss again on every call (issue 45).
 *
 *   KSTUB_LIBCUDA=build/tests/libcuda_cold.so [KSTUB_CUPTI=build/tests/libcupti_fake.so] \
 *       cold_paths PATH N        PATH: one of `cold_paths -l`
 *
 * Reported, never asserted: a CPU emulation of the cold-cache cost, not a
 * GPU measurement (bench/README.md, docs/performance.md).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bench_kernels.kstub.h"

/* libkstub's own counter (an internal name; this program links libkstub.a). */
extern __thread unsigned long ks__pointers_watch_hits;

#define STREAM ((ks_stream)(uintptr_t)0x5001)    /* a user stream, as the fake driver takes any */

static struct {
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
} cu;

static struct {
    float a;
    const float *x;
    float *y;
    int n;
    long long m;
    BenchParams params;
    CUfunction args_fn, struct_fn;   /* the kernels' handles (CUkernel), as libkstub launches them */
    float table[16];
    CUdeviceptr table_addr;
    ks_launch_attrs prio;
} g;

static int raw_args(CUstream s)
{
    void *args[5] = {&g.a, &g.x, &g.y, &g.n, &g.m};
    return cu.LaunchKernel(g.args_fn, 1, 1, 1, 32, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS;
}
static int raw_user(void) { return raw_args((CUstream)STREAM); }
static int raw_default(void) { return raw_args(NULL); }

static int raw_struct(void)
{
    void *args[2] = {&g.params, &g.y};
    return cu.LaunchKernel(g.struct_fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)STREAM, args, NULL) != CUDA_SUCCESS;
}

/* bench/launch.c's raw_launch_ex_on: one attribute (priority 0), built per call. */
static int raw_ex(void)
{
    CUlaunchAttribute at[1];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    at[0].value.priority = 0;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 1, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = 32, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = (CUstream)STREAM;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    void *args[5] = {&g.a, &g.x, &g.y, &g.n, &g.m};
    return cu.LaunchKernelEx(&cfg, g.args_fn, args, NULL) != CUDA_SUCCESS;
}

static int raw_memcpy(void)
{
    return cu.MemcpyHtoDAsync(g.table_addr, g.table, sizeof g.table, (CUstream)STREAM) != CUDA_SUCCESS;
}

static int stub_on(ks_launch l)
{
    return bench_args(l, g.a, g.x, g.y, g.n, g.m) != KS_OK;
}
static int stub_user(void) { return stub_on(ks_launch_on(ks_launch_1d(1, 32), STREAM)); }
static int stub_default(void) { return stub_on(ks_launch_1d(1, 32)); }
static int stub_attr(void) { return stub_on(ks_launch_with(ks_launch_on(ks_launch_1d(1, 32), STREAM), &g.prio)); }
static int stub_struct(void)
{
    return bench_struct(ks_launch_on(ks_launch_1d(1, 32), STREAM), g.params, g.y) != KS_OK;
}
static int global_set(void) { return bench_table_set(g.table, STREAM) != KS_OK; }

static const struct path {
    const char *name, *floor, *what;
    int (*run)(void);
    unsigned checks;
} paths[] = {
    {"raw_user", NULL, "cuLaunchKernel of bench_args on a user stream (the floor)", raw_user, 0},
    {"raw_default", NULL, "cuLaunchKernel of bench_args on the default stream (the floor)", raw_default, 0},
    {"raw_struct", NULL, "cuLaunchKernel of bench_struct on a user stream (the floor)", raw_struct, 0},
    {"raw_ex", NULL, "cuLaunchKernelEx of bench_args, one attribute (the floor)", raw_ex, 0},
    {"raw_memcpy", NULL, "cuMemcpyHtoDAsync of 64 bytes (the floor)", raw_memcpy, 0},
    {"stub_user", "raw_user", "bench_args on a user stream", stub_user, 0},
    {"stub_default", "raw_default", "bench_args on the default stream", stub_default, 0},
    {"stub_struct", "raw_struct", "bench_struct on a user stream", stub_struct, 0},
    {"stub_attr", "raw_ex", "bench_args with one attribute (priority)", stub_attr, 0},
    {"stub_pointers", "raw_user", "bench_args, KS_CHECK_POINTERS (the free watch)", stub_user,
     KS_CHECK_POINTERS},
    {"stub_extents", "raw_user", "bench_args, KS_CHECK_EXTENTS (the free watch)", stub_user,
     KS_CHECK_EXTENTS},
    {"global_set", "raw_memcpy", "bench_table_set, 64 bytes on a user stream", global_set, 0},
};
#define NPATHS (sizeof paths / sizeof paths[0])

static void *control(void *lib, const char *name)
{
    void *fn = dlsym(lib, name);
    if (fn == NULL) {
        fprintf(stderr, "cold_paths: %s is not in KSTUB_LIBCUDA (the fake driver is needed)\n", name);
        exit(2);
    }
    return fn;
}

static void proc(const char *name, void *out)
{
    void *fn;
    KS_CHECK(ks_driver_proc(name, &fn));
    memcpy(out, &fn, sizeof fn);
}

/* The fake driver told of the kernels, the variable and two allocations; everything resolved. */
static void setup(void)
{
    const char *driver = getenv("KSTUB_LIBCUDA");
    void *lib = driver ? dlopen(driver, RTLD_NOW) : NULL;
    if (lib == NULL) {
        fprintf(stderr, "cold_paths: set KSTUB_LIBCUDA to build/tests/libcuda_cold.so\n");
        exit(2);
    }
    void (*set_params)(const char *, unsigned, const size_t *, const size_t *);
    unsigned long long (*alloc)(size_t, int, int);
    void (*set_global)(const char *, size_t);
    *(void **)&set_params = control(lib, "fake_cuda_set_params");
    *(void **)&alloc = control(lib, "fake_cuda_alloc");
    *(void **)&set_global = control(lib, "fake_cuda_set_global");
    static const size_t args_off[] = {0, 8, 16, 24, 32}, args_size[] = {4, 8, 8, 4, 8};
    static const size_t struct_off[] = {0, 24}, struct_size[] = {24, 8};
    set_params("bench_args", 5, args_off, args_size);
    set_params("bench_struct", 2, struct_off, struct_size);
    set_global("bench_table", sizeof g.table);

    proc("cuLaunchKernel", &cu.LaunchKernel);
    proc("cuLaunchKernelEx", &cu.LaunchKernelEx);
    proc("cuMemcpyHtoDAsync", &cu.MemcpyHtoDAsync);
    g.a = 2.0f, g.n = 256, g.m = 7;
    g.x = (const float *)(uintptr_t)alloc(1024 * sizeof(float), CU_MEMORYTYPE_DEVICE, 0);
    g.y = (float *)(uintptr_t)alloc(1024 * sizeof(float), CU_MEMORYTYPE_DEVICE, 0);
    g.params = (BenchParams){1.0f, 256, 0.5, g.x};
    g.prio = ks_launch_attrs_priority(ks_launch_attrs_none(), 0);
    KS_CHECK(ks_kernel_resolve(&bench_args_kernel));
    KS_CHECK(ks_kernel_resolve(&bench_struct_kernel));
    g.args_fn = (CUfunction)bench_args_kernel.ks__handle;
    g.struct_fn = (CUfunction)bench_struct_kernel.ks__handle;
    float *addr;
    KS_CHECK(bench_table_address(&addr));
    g.table_addr = (CUdeviceptr)(uintptr_t)addr;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "-l") == 0) {
        for (size_t i = 0; i < NPATHS; i++)
            printf("%s %s %s\n", paths[i].name, paths[i].floor ? paths[i].floor : "-", paths[i].what);
        return 0;
    }
    const struct path *p = NULL;
    for (size_t i = 0; argc == 3 && i < NPATHS; i++)
        if (strcmp(argv[1], paths[i].name) == 0)
            p = &paths[i];
    long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    if (p == NULL || n < 0) {
        fprintf(stderr, "usage: cold_paths PATH N | cold_paths -l\n");
        return 2;
    }
    setup();
    if (p->checks)
        KS_CHECK(ks_checks_set(p->checks));
    /* Warm: the first checked call starts the cache; every lazy step is done. */
    for (int i = 0; i < 3; i++)
        if (p->run()) {
            fprintf(stderr, "cold_paths: %s failed: %s\n", p->name, ks_last_error_message());
            return 1;
        }
    unsigned long hits = ks__pointers_watch_hits;
    for (long i = 0; i < n; i++)
        if (p->run()) {
            fprintf(stderr, "cold_paths: %s failed: %s\n", p->name, ks_last_error_message());
            return 1;
        }
    if (p->checks)
        printf("cold_paths: %s: %lu of %ld calls answered by the free watch\n", p->name,
               ks__pointers_watch_hits - hits, n);
    return 0;
}
