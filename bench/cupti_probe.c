/* cupti_probe.c — what a CUPTI subscriber that watches only the calls that free memory costs
 * every other driver call (a launch, a pointer query), and which of the CUDA runtime's frees
 * reach the driver-API callbacks (issue 45: the pointers check's free watch;
 * results/cupti_probe.md). Phases, in order: no subscriber yet, then subscribed with the free
 * calls' callbacks on, the same launches timed in each phase of one process (the order matters:
 * a driver once instrumented may stay so).
 * Build: gcc -O2 bench/cupti_probe.c -I$CUDA/include -I$CUDA/extras/CUPTI/include \
 *            -L$CUDA/lib64 -lcudart -lcuda -ldl (libcupti is dlopened: CUPTI_LIB names it) */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); printf("%s: %s line %d\n", #x, s, __LINE__); exit(1); } } while (0)
#define UK(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s = "?"; if (GetResultString) GetResultString(r_, &s); printf("%s: %s line %d\n", #x, s, __LINE__); exit(1); } } while (0)

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p0, .param .u64 p1, .param .u32 n)\n{\n ret;\n}\n";

static volatile unsigned long long gen;            /* what the watch would bump */
static unsigned long long seen_driver[1024], seen_runtime[1024];

static void CUPTIAPI cb(void *u, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
    (void)u; (void)data;
    __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL);
    if (id < 1024)
        (dom == CUPTI_CB_DOMAIN_DRIVER_API ? seen_driver : seen_runtime)[id]++;
}

static const CUpti_CallbackId driver_frees[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo,
    CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy, CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree,
    CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload,
    CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload, CUPTI_DRIVER_TRACE_CBID_cuIpcCloseMemHandle,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGraphMemTrim, CUPTI_DRIVER_TRACE_CBID_cuGraphicsUnmapResources,
    CUPTI_DRIVER_TRACE_CBID_cuGraphicsUnregisterResource,
};
static const CUpti_CallbackId runtime_frees[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
};
#define COUNT(a) (sizeof a / sizeof a[0])

/* libcupti is opened at the first subscription, so phase 0 runs in a process without it. */
static CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
static CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
static CUptiResult (*GetResultString)(CUptiResult, const char **);
#define cuptiSubscribe Subscribe
#define cuptiUnsubscribe Unsubscribe
#define cuptiEnableCallback EnableCallback
#define cuptiGetResultString GetResultString
static void open_cupti(void)
{
    if (Subscribe)
        return;
    void *h = dlopen(getenv("CUPTI_LIB") ? getenv("CUPTI_LIB") : "libcupti.so", RTLD_NOW);
    if (!h) { printf("dlopen libcupti: %s\n", dlerror()); exit(1); }
    *(void **)&Subscribe = dlsym(h, "cuptiSubscribe");
    *(void **)&Unsubscribe = dlsym(h, "cuptiUnsubscribe");
    *(void **)&EnableCallback = dlsym(h, "cuptiEnableCallback");
    *(void **)&GetResultString = dlsym(h, "cuptiGetResultString");
}

static CUpti_SubscriberHandle sub;
static int subscribed;
static void watch(int on, int runtime_too)
{
    if (!on) {
        if (subscribed)
            UK(cuptiUnsubscribe(sub));
        subscribed = 0;
        return;
    }
    open_cupti();
    subscribed = 1;
    UK(cuptiSubscribe(&sub, cb, NULL));
    for (size_t i = 0; i < COUNT(driver_frees); i++)
        UK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_frees[i]));
    if (runtime_too)
        for (size_t i = 0; i < COUNT(runtime_frees); i++)
            UK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_frees[i]));
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 60, batch = 1000;
    CK(cuInit(0));
    CUdevice d; CK(cuDeviceGet(&d, 0));
    CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
    CUmodule m; CK(cuModuleLoadData(&m, ptx));
    CUfunction f; CK(cuModuleGetFunction(&f, m, "k"));
    CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, y; CK(cuMemAlloc(&x, 4096)); CK(cuMemAlloc(&y, 4096));
    unsigned n = 32;
    void *args[] = {&x, &y, &n};
    /* Phases, in this order, in one process: 0 CUPTI never subscribed yet; 1 subscribed with the
     * driver frees' callbacks on; 2 + the runtime frees'; 3 unsubscribed again; 4 subscribed with
     * the launch's own callback on as well (what the races check enables). */
    const char *names[] = {"before any subscriber", "subscribed, driver frees watched",
                           "subscribed, driver + runtime frees watched", "unsubscribed again",
                           "subscribed, frees + cuLaunchKernel watched"};
    double launch[5][4096], query[5][4096];
    if (rounds > 4096) rounds = 4096;
    /* argv[2]: the phases to run, e.g. "1" (subscribe first, then time) for one process per phase */
    const char *which = argc > 2 ? argv[2] : "01234";
    for (int v = 0; v < 5; v++) {
        if (!strchr(which, '0' + v)) {
            launch[v][0] = -1;
            continue;
        }
        if (v == 1) watch(1, 0);
        if (v == 2) { watch(0, 0); watch(1, 1); }
        if (v == 3) watch(0, 0);
        if (v == 4) { watch(1, 0); UK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)); }
        for (int r = 0; r < rounds; r++) {
            CK(cuStreamSynchronize(s));
            double t0 = now();
            for (int i = 0; i < batch; i++)
                CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
            launch[v][r] = (now() - t0) / batch;
            CK(cuStreamSynchronize(s));
            unsigned long long id;
            t0 = now();
            for (int i = 0; i < batch * 20; i++)
                cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, y);
            query[v][r] = (now() - t0) / (batch * 20);
        }
    }
    watch(0, 0);
    double base = 0;
    for (int v = 0; v < 5; v++) {
        if (launch[v][0] < 0)
            continue;
        qsort(launch[v], rounds, sizeof(double), cmp); qsort(query[v], rounds, sizeof(double), cmp);
        if (base == 0) base = launch[v][rounds / 2];
        printf("| %s | %.0f | %.0f - %.0f | %.3f | %.1f |\n", names[v], launch[v][rounds / 2], launch[v][rounds / 10],
               launch[v][rounds * 9 / 10], launch[v][rounds / 2] / base, query[v][rounds / 2]);
    }
    if (argc > 2)
        return 0;
    /* Which of the runtime's frees reach the driver's callbacks? */
    watch(1, 1);
    memset(seen_driver, 0, sizeof seen_driver); memset(seen_runtime, 0, sizeof seen_runtime);
    void *p; cudaMalloc(&p, 1 << 20); cudaFree(p);
    printf("cudaFree: runtime cudaFree %llu, driver cuMemFree_v2 %llu\n",
           seen_runtime[CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020], seen_driver[CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2]);
    cudaStream_t rs; cudaStreamCreate(&rs);
    cudaMallocAsync(&p, 1 << 20, rs); cudaFreeAsync(p, rs); cudaStreamSynchronize(rs);
    printf("cudaFreeAsync: runtime %llu, driver cuMemFreeAsync %llu / _ptsz %llu\n",
           seen_runtime[CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020], seen_driver[CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync],
           seen_driver[CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz]);
    cudaMallocHost(&p, 1 << 20); cudaFreeHost(p);
    printf("cudaFreeHost: runtime %llu, driver cuMemFreeHost %llu\n",
           seen_runtime[CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020], seen_driver[CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost]);
    cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0); cudaMemPoolTrimTo(pool, 0);
    printf("cudaMemPoolTrimTo: driver cuMemPoolTrimTo %llu\n", seen_driver[CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo]);
    /* What a free costs with the watch on and off. */
    double t0 = now();
    for (int i = 0; i < 2000; i++) { CUdeviceptr q; CK(cuMemAlloc(&q, 4096)); CK(cuMemFree(q)); }
    double on = (now() - t0) / 2000;
    watch(0, 0);
    t0 = now();
    for (int i = 0; i < 2000; i++) { CUdeviceptr q; CK(cuMemAlloc(&q, 4096)); CK(cuMemFree(q)); }
    printf("cuMemAlloc + cuMemFree: %.0f ns watched, %.0f ns not\n", on, (now() - t0) / 2000);
    return 0;
}
