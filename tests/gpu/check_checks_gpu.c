/*
 * check_checks_gpu.c — the run-time checks (issue 22) on a real GPU: a
 * kernel writing out of bounds is named by the sync check as the one that
 * faulted; a host pointer, a freed pointer, a misaligned float4 * and a
 * buffer one element short under extents are each refused before the
 * launch; an NVTX range named after the kernel reaches an NVTX tool (the
 * injection library of the CPU suite); the trace of three launches reads
 * back; the pointers check's allocation cache gives the uncached check's
 * verdict across frees (cuMemFree, cudaFree), reallocations at one address, a
 * pool's reuse and release and VMM remaps, with the free watch and without
 * it (issue 45). Each case runs in a child process (a sticky fault ends a context;
 * the checks are chosen once per process). Hand-written descriptors: no
 * generator needed on the GPU machine. Without a driver it says so and passes.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "kstub.h"
#include "trace_lines.h"    /* trace_lines: the trace as kstub trace prints it */

#ifndef CK_FATBIN
#define CK_FATBIN "build/tests/gpu_checks/check_kernels.fatbin"
#endif
#ifndef NVTX_INJECT_PATH
#define NVTX_INJECT_PATH "build/tests/libnvtx_inject.so"
#endif

static ks_image image = KS_IMAGE_INIT("check_kernels.cu", NULL, 0, KS_IMAGE_NONE);
static const ks_extent_op n_extent[] = {{KS_EXTENT_PARAM, 1}};
static const ks_param_desc oob_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, NULL, 0, NULL},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
};
static const ks_param_desc scale_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, n_extent},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
};
static const ks_param_desc fill4_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "v", "float4 *", 16, 16, NULL, 0, NULL},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
};
static ks_kernel oob_write = KS_KERNEL_INIT(&image, "oob_write", "oob_write", 2, oob_p, 0);
static ks_kernel scale = KS_KERNEL_INIT(&image, "scale", "scale", 2, scale_p, 0);
static ks_kernel fill4 = KS_KERNEL_INIT(&image, "fill4", "fill4", 2, fill4_p, 0);

static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);

static int failures;
#define EXPECT(cond, ...)                                                     \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "  FAIL line %d: ", __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            failures++;                                                       \
        }                                                                     \
    } while (0)
#define EXPECT_STATUS(call, want)                                             \
    do {                                                                      \
        ks_status s_ = (call);                                                \
        EXPECT(s_ == (want), "%s: got %s, want %s: %s", #call, ks_status_name(s_), \
               ks_status_name(want), ks_last_error_message());                \
        printf("  %s -> %s: %s\n", #call, ks_status_name(s_), s_ ? ks_last_error_message() : "ok"); \
    } while (0)
#define HAS(text) EXPECT(strstr(ks_last_error_message(), (text)) != NULL, "message lacks \"%s\"", (text))

static ks_status run(ks_kernel *k, unsigned long long ptr, int n, int line)
{
    void *args[2] = {&ptr, &n};
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch_at(k, &l, args, "check_checks_gpu.c", line);
}

static unsigned long long alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    if (mem_alloc(&p, bytes) != CUDA_SUCCESS)
        return 0;
    return (unsigned long long)p;
}

static void sync_names_the_faulting_kernel(void)
{
    ks_checks_set(KS_CHECK_SYNC);
    unsigned long long y = alloc(4096);
    EXPECT_STATUS(run(&scale, y, 32, __LINE__), KS_OK);
    EXPECT_STATUS(run(&oob_write, y, 32, 77), KS_ERR_FAULT);
    HAS("kernel 'oob_write': faulted while running (grid (1, 1, 1), block (32, 1, 1)");
    HAS("CUDA_ERROR_ILLEGAL_ADDRESS");
    HAS("the CUDA context is now unusable");
    HAS("(called at check_checks_gpu.c:77)");
}

static void host_pointer_refused(void)
{
    float stack[64];
    ks_checks_set(KS_CHECK_POINTERS);
    EXPECT_STATUS(run(&scale, (uintptr_t)stack, 64, __LINE__), KS_ERR_POINTER);
    HAS("parameter y (float *): 0x");
    HAS("host stack memory, not device memory");
    float *heap = malloc(256);
    EXPECT_STATUS(run(&scale, (uintptr_t)heap, 64, __LINE__), KS_ERR_POINTER);
    HAS("pageable host memory");
    free(heap);
}

static void freed_pointer_refused(void)
{
    ks_checks_set(KS_CHECK_POINTERS);
    unsigned long long y = alloc(4096);
    EXPECT_STATUS(run(&scale, y, 64, __LINE__), KS_OK);
    mem_free((CUdeviceptr)y);
    EXPECT_STATUS(run(&scale, y, 64, __LINE__), KS_ERR_POINTER);
    HAS("parameter y (float *)");
    HAS("not a live CUDA allocation");
}

static void misaligned_float4_refused(void)
{
    ks_checks_set(KS_CHECK_POINTERS);
    unsigned long long v = alloc(4096);
    EXPECT_STATUS(run(&fill4, v + 16, 8, __LINE__), KS_OK);
    EXPECT_STATUS(run(&fill4, v + 4, 8, __LINE__), KS_ERR_POINTER);
    HAS("parameter v (float4 *)");
    HAS("is not 16-byte aligned");
}

static void one_element_short_refused(void)
{
    ks_checks_set(KS_CHECK_EXTENTS);
    unsigned long long y = alloc(999 * sizeof(float));
    EXPECT_STATUS(run(&scale, y, 999, __LINE__), KS_OK);
    EXPECT_STATUS(run(&scale, y, 1000, __LINE__), KS_ERR_EXTENT);
    HAS("must hold n = 1000 elements (4000 bytes)");
}

static void nvtx_range_reaches_the_tool(void)
{
    setenv("NVTX_INJECTION64_PATH", NVTX_INJECT_PATH, 1);
    void *inj = dlopen(NVTX_INJECT_PATH, RTLD_NOW | RTLD_GLOBAL);
    EXPECT(inj != NULL, "%s", dlerror());
    if (!inj)
        return;
    int (*pushes)(void) = (int (*)(void))(uintptr_t)dlsym(inj, "nvtx_inject_pushes");
    const char *(*name)(int) = (const char *(*)(int))(uintptr_t)dlsym(inj, "nvtx_inject_name");
    ks_checks_set(KS_CHECK_NVTX);
    unsigned long long y = alloc(4096);
    EXPECT_STATUS(run(&scale, y, 32, __LINE__), KS_OK);
    EXPECT(pushes() == 1, "%d NVTX ranges, want 1", pushes());
    EXPECT(name(0) && strcmp(name(0), "scale") == 0, "range named '%s'", name(0) ? name(0) : "(none)");
}

static void trace_of_three_launches_reads_back(void)
{
    char path[] = "/tmp/kstub-gpu-trace-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ks_trace_set_file(path);
    ks_checks_set(KS_CHECK_TRACE | KS_CHECK_SYNC);
    unsigned long long y = alloc(4096);
    for (int i = 0; i < 3; i++)
        EXPECT_STATUS(run(&scale, y + 16 * (unsigned)i, 100 + i, 200 + i), KS_OK);
    FILE *f = trace_lines(path, NULL);
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char want[160];
        snprintf(want, sizeof want, "\"site\":\"check_checks_gpu.c:%d\",\"status\":\"KS_OK\"", 200 + n);
        EXPECT(strstr(line, "\"kernel\":\"scale\",\"symbol\":\"scale\",\"grid\":[1,1,1],\"block\":[32,1,1]"),
               "line %d: %s", n + 1, line);
        EXPECT(strstr(line, want), "line %d lacks %s: %s", n + 1, want, line);
        /* The arguments' bytes rebuild the buffer: y then n, little-endian. */
        const char *b = strstr(line, "\"bytes\":\"");
        unsigned long long got_y = 0;
        for (int i = 0; b && i < 8; i++) {
            unsigned v;
            sscanf(b + 9 + 2 * i, "%2x", &v);
            got_y |= (unsigned long long)v << (8 * i);
        }
        EXPECT(got_y == y + 16 * (unsigned)n, "line %d: y 0x%llx", n + 1, got_y);
        snprintf(want, sizeof want, "\"value\":%d", 100 + n);
        EXPECT(strstr(line, want), "line %d lacks %s", n + 1, want);
        n++;
    }
    if (f)
        fclose(f);
    EXPECT(n == 3, "%d trace lines, want 3", n);
    unlink(path);
}

/* ---- the pointers check's allocation cache (issue 45) ------------------------------- */

/* libkstub's switch and the free watch's state and hits (the suite links the
 * static library, as bench/launch.c does). */
extern int ks__pointers_cache;
extern int ks__watch_on;
extern __thread unsigned long ks__pointers_watch_hits;

#define DRV(name, var)                                                         \
    do {                                                                       \
        void *p_;                                                              \
        if (ks_driver_proc(name, &p_) != KS_OK) {                              \
            EXPECT(0, "%s: %s", name, ks_last_error_message());                \
            return;                                                            \
        }                                                                      \
        memcpy(&(var), &p_, sizeof p_);                                        \
    } while (0)

static __typeof__(&cuPointerGetAttribute) get_attr;

static unsigned long long attr_of(unsigned long long p, CUpointer_attribute a)
{
    unsigned long long v = 0;
    if (get_attr(&v, a, (CUdeviceptr)p) != CUDA_SUCCESS)
        return ~0ull;
    return v;
}

/* One launch with the cache warm (a hit, if the cache would hit) against the same
 * launch with the cache off: the verdicts must agree. Returns the status. */
static ks_status agree(const char *what, unsigned long long y, int n)
{
    ks_status on = run(&scale, y, n, __LINE__);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ks_last_error_message());
    ks__pointers_cache = 0;
    ks_status off = run(&scale, y, n, __LINE__);
    ks__pointers_cache = 1;
    EXPECT(on == off, "%s: cached %s (%s) but uncached %s (%s)", what, ks_status_name(on), msg,
           ks_status_name(off), ks_last_error_message());
    printf("  %s: %s (buffer id %llu, range size %llu)\n", what, ks_status_name(on),
           attr_of(y, CU_POINTER_ATTRIBUTE_BUFFER_ID), attr_of(y, CU_POINTER_ATTRIBUTE_RANGE_SIZE));
    return on;
}

/* Frees through the runtime (cudaFree), which the free watch follows in the
 * runtime's domain too: libcudart opened here (the suite does not link it);
 * without one, said and skipped. */
static void runtime_frees(void)
{
    char name[64];
    snprintf(name, sizeof name, "libcudart.so.%d", CUDA_VERSION / 1000);
    void *rt = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (rt == NULL)
        rt = dlopen("/usr/local/cuda/lib64/libcudart.so", RTLD_NOW | RTLD_LOCAL);
    int (*rt_malloc)(void **, size_t) = NULL;
    int (*rt_free)(void *) = NULL;
    void *p1 = rt ? dlsym(rt, "cudaMalloc") : NULL, *p2 = rt ? dlsym(rt, "cudaFree") : NULL;
    if (p1 == NULL || p2 == NULL) {
        printf("  cudaMalloc/cudaFree: skipped (no libcudart: %s)\n", rt ? "no symbols" : dlerror());
        return;
    }
    memcpy(&rt_malloc, &p1, sizeof p1);
    memcpy(&rt_free, &p2, sizeof p2);
    void *a = NULL, *b = NULL, *extra[8] = {0};
    EXPECT(rt_malloc(&a, 4096) == 0, "cudaMalloc");
    agree("cudaMalloc, first", (uintptr_t)a, 1024);
    agree("cudaMalloc, cached", (uintptr_t)a, 1024);
    rt_free(a);
    int k = 0;
    for (; k < 8 && rt_malloc(&b, 1024) == 0 && b != a; k++)
        extra[k] = b;
    printf("  cudaMalloc reallocation %s the same address\n", b == a ? "at" : "not at");
    agree("cudaFree, reallocated smaller", (uintptr_t)b, 1024);
    agree("cudaFree, reallocated smaller, fits", (uintptr_t)b, 256);
    rt_free(b);
    for (int i = 0; i < k; i++)
        rt_free(extra[i]);
}

/* The cache's verdicts equal the uncached check's across frees, reallocations at the
 * same address (cuMemFree and cudaFree), a pool's reuse and release, VMM unmaps and
 * remaps and a pointer into the unmapped part of a reservation. The kernel touches
 * y[0..31] only, so a check that passes more than is mapped cannot fault the
 * context; the unmapped pointer comes last, where a fault would end nothing else.
 * Run twice: with the free watch (CUPTI's callbacks: a hit asks the driver nothing)
 * and without it (KSTUB_CHECK_WATCH=0: a hit asks the buffer id). */
static void cache_agrees(void)
{
    DRV("cuPointerGetAttribute", get_attr);
    unsigned long long y = alloc(4096);
    agree("cuMemAlloc, first", y, 1024);
    agree("cuMemAlloc, cached", y, 1024);
    agree("cuMemAlloc, middle", y + 2048, 512);
    agree("cuMemAlloc, middle, one too many", y + 2048, 513);
    mem_free((CUdeviceptr)y);
    agree("freed", y, 32);
    unsigned long long z = 0, extra[8] = {0};
    int k = 0;
    for (; k < 8 && (z = alloc(1024)) != y; k++)
        extra[k] = z;
    printf("  reallocation %s the same address\n", z == y ? "at" : "not at");
    agree("reallocated smaller", z, 1024);
    agree("reallocated smaller, fits", z, 256);
    for (int i = 0; i < k; i++)
        mem_free((CUdeviceptr)extra[i]);
    runtime_frees();

    /* A memory pool's allocations (cuMemAllocAsync on the legacy stream). */
    __typeof__(&cuMemAllocAsync) alloc_async;
    __typeof__(&cuMemFreeAsync) free_async;
    __typeof__(&cuStreamSynchronize) stream_sync;
    DRV("cuMemAllocAsync", alloc_async);
    DRV("cuMemFreeAsync", free_async);
    DRV("cuStreamSynchronize", stream_sync);
    CUdeviceptr pa = 0, pb = 0;
    EXPECT(alloc_async(&pa, 4096, NULL) == CUDA_SUCCESS && stream_sync(NULL) == CUDA_SUCCESS, "cuMemAllocAsync");
    agree("pool, first", pa, 1024);
    agree("pool, cached", pa, 1024);
    free_async(pa, NULL);
    stream_sync(NULL);
    EXPECT(alloc_async(&pb, 1024, NULL) == CUDA_SUCCESS && stream_sync(NULL) == CUDA_SUCCESS, "cuMemAllocAsync");
    printf("  pool reallocation %s the same address\n", pa == pb ? "at" : "not at");
    agree("pool, reallocated smaller", pa, 1024);
    agree("pool, reallocated smaller, cached", pa, 256);
    free_async(pb, NULL);
    /* Freed to the pool, then given back at a synchronisation (release threshold 0). */
    agree("pool, freed, before a synchronisation", pb, 32);
    stream_sync(NULL);
    agree("pool, freed, after a synchronisation", pb, 32);

    /* Memory mapped by the program: 2 granules, then 1 at the same address. */
    __typeof__(&cuMemGetAllocationGranularity) granularity;
    __typeof__(&cuMemAddressReserve) reserve;
    __typeof__(&cuMemAddressFree) unreserve;
    __typeof__(&cuMemCreate) create;
    __typeof__(&cuMemRelease) release;
    __typeof__(&cuMemMap) map;
    __typeof__(&cuMemUnmap) unmap;
    __typeof__(&cuMemSetAccess) set_access;
    DRV("cuMemGetAllocationGranularity", granularity);
    DRV("cuMemAddressReserve", reserve);
    DRV("cuMemAddressFree", unreserve);
    DRV("cuMemCreate", create);
    DRV("cuMemRelease", release);
    DRV("cuMemMap", map);
    DRV("cuMemUnmap", unmap);
    DRV("cuMemSetAccess", set_access);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    size_t gran = 0;
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h1, h2;
    if (granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
        reserve(&va, 4 * gran, 0, 0, 0) != CUDA_SUCCESS || create(&h1, 2 * gran, &prop, 0) != CUDA_SUCCESS ||
        map(va, 2 * gran, 0, h1, 0) != CUDA_SUCCESS || set_access(va, 2 * gran, &acc, 1) != CUDA_SUCCESS) {
        EXPECT(0, "setting up a VMM mapping");
        return;
    }
    int two = (int)(2 * gran / sizeof(float)), one = (int)(gran / sizeof(float));
    agree("VMM, 2 granules", va, two);
    agree("VMM, 2 granules, cached", va, two);
    unsigned long long id1 = attr_of(va, CU_POINTER_ATTRIBUTE_BUFFER_ID);
    unmap(va, 2 * gran);
    release(h1);
    EXPECT(create(&h2, gran, &prop, 0) == CUDA_SUCCESS && map(va, gran, 0, h2, 0) == CUDA_SUCCESS &&
               set_access(va, gran, &acc, 1) == CUDA_SUCCESS, "remapping one granule");
    EXPECT(attr_of(va, CU_POINTER_ATTRIBUTE_BUFFER_ID) != id1,
           "a new mapping at the same address kept buffer id %llu: the cache would judge it by the old one", id1);
    agree("VMM, remapped to 1 granule, 2 asked", va, two);
    agree("VMM, remapped to 1 granule, 1 asked", va, one);
    agree("VMM, remapped to 1 granule, 1 asked, cached", va, one);
    /* Last: a granule of the reservation that nothing is mapped at. */
    agree("VMM, an unmapped granule of the reservation", va + 2 * gran, 1);
    unmap(va, gran);
    release(h2);
    unreserve(va, 4 * gran);
}

static void cache_agrees_with_no_cache(void)
{
    ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS);
    EXPECT(ks__watch_on == 1, "the free watch is off: CUPTI could not be loaded or subscribed "
           "(KSTUB_CUPTI names libcupti; is a profiler holding it?)");
    cache_agrees();
}

static void buffer_id_cache_agrees_with_no_cache(void)
{
    setenv("KSTUB_CHECK_WATCH", "0", 1);
    ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS);
    EXPECT(ks__watch_on == 0, "KSTUB_CHECK_WATCH=0 left the free watch on");
    cache_agrees();
}

static const struct { const char *name; void (*fn)(void); } cases[] = {
    {"sync_names_the_faulting_kernel", sync_names_the_faulting_kernel},
    {"host_pointer_refused", host_pointer_refused},
    {"freed_pointer_refused", freed_pointer_refused},
    {"misaligned_float4_refused", misaligned_float4_refused},
    {"one_element_short_refused", one_element_short_refused},
    {"nvtx_range_reaches_the_tool", nvtx_range_reaches_the_tool},
    {"trace_of_three_launches_reads_back", trace_of_three_launches_reads_back},
    {"cache_agrees_with_no_cache", cache_agrees_with_no_cache},
    {"buffer_id_cache_agrees_with_no_cache", buffer_id_cache_agrees_with_no_cache},
};

/* The device's primary context, current on this thread (cuMemAlloc needs one). */
static int make_context_current(void)
{
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    void *p;
    if (ks_driver_proc("cuDeviceGet", &p) != KS_OK)
        return -1;
    memcpy(&device_get, &p, sizeof p);
    if (ks_driver_proc("cuDevicePrimaryCtxRetain", &p) != KS_OK)
        return -1;
    memcpy(&retain, &p, sizeof p);
    if (ks_driver_proc("cuCtxSetCurrent", &p) != KS_OK)
        return -1;
    memcpy(&set_current, &p, sizeof p);
    CUdevice dev;
    CUcontext ctx;
    if (device_get(&dev, 0) != CUDA_SUCCESS || retain(&ctx, dev) != CUDA_SUCCESS ||
        set_current(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "  cannot make device 0's primary context current\n");
        return -1;
    }
    return 0;
}

int main(void)
{
    /* The parent only looks for the driver: CUDA initialised before fork()
     * cannot be used in the child (CUDA_ERROR_NOT_INITIALIZED), so each
     * child initialises it itself. */
    void *lib = dlopen(getenv("KSTUB_LIBCUDA") ? getenv("KSTUB_LIBCUDA") : "libcuda.so.1",
                       RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        printf("gpu-check-checks: skipped (no CUDA driver: %s)\n", dlerror());
        return 0;
    }
    dlclose(lib);
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            void *p;
            if (ks_driver_proc("cuMemAlloc", &p) != KS_OK) {
                fprintf(stderr, "  no driver: %s\n", ks_last_error_message());
                _exit(1);
            }
            memcpy(&mem_alloc, &p, sizeof p);
            ks_driver_proc("cuMemFree", &p);
            memcpy(&mem_free, &p, sizeof p);
            if (make_context_current() != 0)
                _exit(1);
            if (ks_image_set_file(&image, CK_FATBIN) != KS_OK || ks_image_load(&image) != KS_OK) {
                fprintf(stderr, "  cannot load %s: %s\n", CK_FATBIN, ks_last_error_message());
                _exit(1);
            }
            printf("%s\n", cases[i].name);
            cases[i].fn();
            fflush(stdout);
            _exit(failures ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        printf("%s: %s\n", ok ? "PASS" : "FAIL", cases[i].name);
        bad += !ok;
    }
    printf("gpu-check-checks: %d of %zu cases failed\n", bad, sizeof cases / sizeof cases[0]);
    return bad ? 1 : 0;
}
