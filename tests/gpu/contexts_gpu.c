/*
 * contexts_gpu.c — issue 45 on a GPU: the generated stubs of
 * tests/gpu/globals_kernels.cu used with contexts other than the primary one.
 *
 *   - A green context with part of the device's SMs (cuDevSmResourceSplitByCount,
 *     cuGreenCtxCreate, cuCtxFromGreenCtx made current, cuGreenCtxStreamCreate):
 *     fir launched on its stream against a __constant__ table and a __device__
 *     struct written there through their accessors, checked against the CPU;
 *     then, back in the primary context, its own table and a fir there agree
 *     with each other (whether the two contexts share the variables is the
 *     driver's answer, printed); then fir on the green stream from a thread
 *     with no current context, and nothing made current by it.
 *   - Another device's memory under KSTUB_CHECK=pointers: refused before
 *     cuCtxEnablePeerAccess (naming both devices), accepted and right after,
 *     refused again after cuCtxDisablePeerAccess. Needs two devices that can
 *     reach each other; a driver that does not answer
 *     CU_POINTER_ATTRIBUTE_ACCESS_FLAGS gets the documented fallback instead.
 *
 * Each part prints a "skipped (...)" line where the driver or the machine
 * lacks what it needs (no cuGreenCtxCreate, CUDA_ERROR_NOT_SUPPORTED, one
 * device, no peer access) and passes. `make gpu-check-contexts` runs it with
 * the library loader and with KSTUB_LOADER=module; without a CUDA driver it
 * prints "gpu-contexts: no CUDA driver (...); skipped" and exits 0.
 */
#include "globals_kernels.kstub.h"

#define GPU_CHECK_RETURN_STATUS   /* the cases return 1 at their first failure */
#include "gpu_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 4545u;

/* The loader in use, as KSTUB_LOADER chose it. */
static const char *loader_name(void)
{
    const char *l = getenv("KSTUB_LOADER");
    return l && l[0] ? l : "library";
}
static CUdevice dev0;
static CUcontext primary0;

/* A driver entry point through libkstub (as the runtime resolves it); 0, or 1 when missing. */
#define PROC(var, name)                                                 \
    do {                                                                \
        void *p_ = NULL;                                                \
        if (ks_driver_proc(name, &p_) != KS_OK)                         \
            return 1;                                                   \
        memcpy(&(var), &p_, sizeof p_);                                 \
    } while (0)

static struct {
    PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
    PFN_cuCtxPushCurrent_v4000 CtxPushCurrent;
    PFN_cuCtxPopCurrent_v4000 CtxPopCurrent;
    PFN_cuDeviceGetCount_v2000 DeviceGetCount;
    PFN_cuDeviceCanAccessPeer_v4000 DeviceCanAccessPeer;
    PFN_cuCtxEnablePeerAccess_v4000 CtxEnablePeerAccess;
    PFN_cuCtxDisablePeerAccess_v4000 CtxDisablePeerAccess;
    PFN_cuPointerGetAttribute_v4000 PointerGetAttribute;
    PFN_cuPointerGetAttributes_v7000 PointerGetAttributes;
    PFN_cuDeviceGetDevResource_v12040 DeviceGetDevResource;
    PFN_cuDevSmResourceSplitByCount_v12040 DevSmResourceSplitByCount;
    PFN_cuDevResourceGenerateDesc_v12040 DevResourceGenerateDesc;
    PFN_cuGreenCtxCreate_v12040 GreenCtxCreate;
    PFN_cuGreenCtxDestroy_v12040 GreenCtxDestroy;
    PFN_cuCtxFromGreenCtx_v12040 CtxFromGreenCtx;
    PFN_cuGreenCtxStreamCreate_v12050 GreenCtxStreamCreate;
    PFN_cuGreenCtxGetDevResource_v12040 GreenCtxGetDevResource;
} drv;

static int load_common(void)
{
    PROC(drv.CtxGetCurrent, "cuCtxGetCurrent");
    PROC(drv.CtxPushCurrent, "cuCtxPushCurrent");
    PROC(drv.CtxPopCurrent, "cuCtxPopCurrent");
    PROC(drv.DeviceGetCount, "cuDeviceGetCount");
    PROC(drv.DeviceCanAccessPeer, "cuDeviceCanAccessPeer");
    PROC(drv.CtxEnablePeerAccess, "cuCtxEnablePeerAccess");
    PROC(drv.CtxDisablePeerAccess, "cuCtxDisablePeerAccess");
    PROC(drv.PointerGetAttribute, "cuPointerGetAttribute");
    PROC(drv.PointerGetAttributes, "cuPointerGetAttributes");
    return 0;
}

/* The green context calls (CUDA 12.4+, the stream call 12.5+); 1 when the driver lacks one. */
static int load_green(const char **missing)
{
#define GREEN(field, name) *missing = name; PROC(drv.field, name);
    GREEN(DeviceGetDevResource, "cuDeviceGetDevResource")
    GREEN(DevSmResourceSplitByCount, "cuDevSmResourceSplitByCount")
    GREEN(DevResourceGenerateDesc, "cuDevResourceGenerateDesc")
    GREEN(GreenCtxCreate, "cuGreenCtxCreate")
    GREEN(GreenCtxDestroy, "cuGreenCtxDestroy")
    GREEN(CtxFromGreenCtx, "cuCtxFromGreenCtx")
    GREEN(GreenCtxStreamCreate, "cuGreenCtxStreamCreate")
    GREEN(GreenCtxGetDevResource, "cuGreenCtxGetDevResource")
#undef GREEN
    *missing = NULL;
    return 0;
}

/* ---- fir, its inputs and its CPU reference ------------------------------------------------- */

enum { N = 20000 };

typedef struct fir_case {
    float taps[16];
    Params p;
    float in[N + 15];
    CUdeviceptr din, dout;       /* made in the primary context: green contexts share its memory */
} fir_case;

static void fir_inputs(fir_case *f, float scale, double bias)
{
    for (int k = 0; k < 16; k++)
        f->taps[k] = scale * gpu_frand(&rng);
    for (int i = 0; i < N + 15; i++)
        f->in[i] = gpu_frand(&rng);
    memset(&f->p, 0, sizeof f->p);
    f->p.gain = 1.25f;
    f->p.taps = 16;
    f->p.bias = bias;
}

/* The largest difference between dout and fir over \p taps and \p p (read in the current context). */
static int fir_error(const fir_case *f, const float *taps, const Params *p, double *err)
{
    static float out[N];
    CU(cu.MemcpyDtoH(out, f->dout, sizeof out));
    *err = 0;
    for (int i = 0; i < N; i++) {
        double acc = 0;
        for (int k = 0; k < p->taps; k++)
            acc += (double)taps[k] * f->in[i + k];
        *err = fmax(*err, fabs((double)out[i] - (p->gain * acc + p->bias)));
    }
    return 0;
}

/* fir on \p stream, output poisoned first; synchronised with the stream. */
static int fir_on(fir_case *f, CUstream stream)
{
    CU(cu.MemsetD8(f->dout, 0xff, (size_t)N * sizeof(float)));   /* NaN */
    CU(cu.StreamSynchronize(NULL));       /* the memset is the legacy stream's; \p stream may not wait */
    KS(fir(ks_launch_on(ks_launch_1d((N + 255) / 256, 256), (ks_stream)stream), DEV(const float, f->din),
           DEV(float, f->dout), N));
    CU(cu.StreamSynchronize(stream));
    return 0;
}

/* ---- green contexts ------------------------------------------------------------------------- */

/* A skip, not a failure: the driver or device has no green contexts. */
static int green_unsupported(const char *call, CUresult r)
{
    printf("  skipped (%s returned %s: no green contexts here)\n", call, gpu_cu_name(r));
    return 0;
}

static int green_context(void)
{
    const char *missing = NULL;
    if (load_green(&missing)) {
        printf("  skipped (the driver has no %s)\n", missing);
        return 0;
    }
    CUdevResource all, part, rest;
    memset(&all, 0, sizeof all);
    CUresult r = drv.DeviceGetDevResource(dev0, &all, CU_DEV_RESOURCE_TYPE_SM);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return green_unsupported("cuDeviceGetDevResource", r);
    EXPECT(r == CUDA_SUCCESS, "cuDeviceGetDevResource: %s", gpu_cu_name(r));
    unsigned groups = 1, want = all.sm.smCount / 2;
    if (want < all.sm.minSmPartitionSize)
        want = all.sm.minSmPartitionSize;
    r = drv.DevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, want);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return green_unsupported("cuDevSmResourceSplitByCount", r);
    EXPECT(r == CUDA_SUCCESS && groups == 1, "cuDevSmResourceSplitByCount(%u SMs of %u): %s, %u groups", want,
           all.sm.smCount, gpu_cu_name(r), groups);
    CUdevResourceDesc desc;
    CU(drv.DevResourceGenerateDesc(&desc, &part, 1));
    CUgreenCtx green;
    r = drv.GreenCtxCreate(&green, desc, dev0, CU_GREEN_CTX_DEFAULT_STREAM);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return green_unsupported("cuGreenCtxCreate", r);
    EXPECT(r == CUDA_SUCCESS, "cuGreenCtxCreate: %s", gpu_cu_name(r));
    CUcontext gctx;
    CUstream gs;
    CU(drv.CtxFromGreenCtx(&gctx, green));
    CU(drv.GreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
    CUdevResource mine;
    CU(drv.GreenCtxGetDevResource(green, &mine, CU_DEV_RESOURCE_TYPE_SM));
    printf("  green context %p with %u of the device's %u SMs\n", (void *)gctx, mine.sm.smCount, all.sm.smCount);
    EXPECT(mine.sm.smCount < all.sm.smCount, "the green context has every SM");

    static fir_case f;
    fir_inputs(&f, 1.0f, 0.5);
    float green_taps[16];
    Params green_p = f.p;
    for (int k = 0; k < 16; k++)
        green_taps[k] = -2.0f * gpu_frand(&rng);
    green_p.bias = -3.0;
    CU(cu.MemAlloc(&f.din, sizeof f.in));
    CU(cu.MemAlloc(&f.dout, (size_t)N * sizeof(float)));
    CU(cu.MemcpyHtoD(f.din, f.in, sizeof f.in));

    /* The primary context: its table, fir on the legacy stream. */
    double err;
    KS(c_taps_set(f.taps, NULL));
    KS(g_params_set(f.p, NULL));
    if (fir_on(&f, NULL) || fir_error(&f, f.taps, &f.p, &err))
        return 1;
    EXPECT(err <= 1e-4, "primary context: max error %g", err);

    /* The green context current: its table written on its stream, fir on its stream. */
    CU(cu.CtxSetCurrent(gctx));
    KS(c_taps_set(green_taps, (ks_stream)gs));
    KS(g_params_set(green_p, (ks_stream)gs));
    if (fir_on(&f, gs) || fir_error(&f, green_taps, &green_p, &err))
        return 1;
    EXPECT(err <= 1e-4, "green context: max error %g", err);
    printf("  fir on the green context's stream, its c_taps and g_params: max error %.2g\n", err);
    float back[16];
    KS(c_taps_get(back, (ks_stream)gs));
    EXPECT(memcmp(back, green_taps, sizeof back) == 0, "the green context's c_taps read back differs");

    /* Back in the primary context: what it sees, and a fir there, agree. */
    CU(cu.CtxSetCurrent(primary0));
    Params pb;
    KS(c_taps_get(back, NULL));
    KS(g_params_get(&pb, NULL));
    int shared = memcmp(back, green_taps, sizeof back) == 0;
    EXPECT(shared || memcmp(back, f.taps, sizeof back) == 0,
           "the primary context's c_taps is neither its own nor the green context's");
    if (fir_on(&f, NULL) || fir_error(&f, back, &pb, &err))
        return 1;
    EXPECT(err <= 1e-4, "primary context after the green one: max error %g", err);
    printf("  the primary context %s the green context's variables (%s loader); fir there agrees\n",
           shared ? "shares" : "keeps its own, apart from", loader_name());

    /* No context current: a launch on the green stream runs in the green context. */
    CU(cu.CtxSetCurrent(gctx));                   /* what the green context holds now */
    KS(c_taps_get(green_taps, (ks_stream)gs));
    KS(g_params_get(&green_p, (ks_stream)gs));
    CU(cu.MemsetD8(f.dout, 0xff, (size_t)N * sizeof(float)));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.CtxSetCurrent(NULL));
    ks_status st = fir(ks_launch_on(ks_launch_1d((N + 255) / 256, 256), (ks_stream)gs), DEV(const float, f.din),
                       DEV(float, f.dout), N);
    CUcontext now = (CUcontext)1;
    CU(drv.CtxGetCurrent(&now));
    CU(cu.CtxSetCurrent(gctx));
    EXPECT(st == KS_OK, "fir on the green stream with no context current: %s: %s", ks_status_name(st),
           ks_last_error_message());
    EXPECT(now == NULL, "the launch made a context current (%p)", (void *)now);
    CU(cu.StreamSynchronize(gs));
    CU(cu.CtxSetCurrent(primary0));
    if (fir_error(&f, green_taps, &green_p, &err))
        return 1;
    EXPECT(err <= 1e-4, "green stream, no context current: max error %g", err);
    printf("  fir on the green stream from a thread with no context: max error %.2g, none made current\n", err);

    cu.MemFree(f.din);
    cu.MemFree(f.dout);
    CU(cu.CtxSetCurrent(gctx));
    CU(cu.StreamDestroy(gs));
    CU(cu.CtxSetCurrent(primary0));
    CU(drv.GreenCtxDestroy(green));
    return 0;
}

/* ---- another device's memory under the pointers check -------------------------------------- */

static int peer_memory(void)
{
    int count = 0;
    CU(drv.DeviceGetCount(&count));
    if (count < 2) {
        printf("  skipped (%d device visible: peer access needs two)\n", count);
        return 0;
    }
    CUdevice dev1;
    CU(cu.DeviceGet(&dev1, 1));
    int can = 0;
    CU(drv.DeviceCanAccessPeer(&can, dev0, dev1));
    if (!can) {
        printf("  skipped (device 0 cannot reach device 1's memory: cuDeviceCanAccessPeer says no)\n");
        return 0;
    }
    CUcontext ctx1;
    CU(cu.DevicePrimaryCtxRetain(&ctx1, dev1));
    enum { n = 4096 };
    static float y[n], out[n];
    for (int i = 0; i < n; i++)
        y[i] = gpu_frand(&rng);
    CUdeviceptr d1;
    CU(drv.CtxPushCurrent(ctx1));
    CU(cu.MemAlloc(&d1, sizeof y));
    CU(cu.MemcpyHtoD(d1, y, sizeof y));
    CUcontext popped;
    CU(drv.CtxPopCurrent(&popped));

    /* Does the driver answer the access flags, asked as the runtime asks (cuPointerGetAttributes,
     * then cuPointerGetAttribute)? Else the check falls back, as documented. */
    unsigned flags = 0xffu, flags1 = 0xffu;
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_ACCESS_FLAGS;
    void *data = &flags;
    CUresult r = drv.PointerGetAttributes(1, &attr, &data, d1);
    CUresult r1 = drv.PointerGetAttribute(&flags1, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, d1);
    int answers = r == CUDA_SUCCESS || r1 == CUDA_SUCCESS;
    printf("  ACCESS_FLAGS of device 1's memory from device 0: cuPointerGetAttributes %s (%u), "
           "cuPointerGetAttribute %s (%u)\n", gpu_cu_name(r), flags, gpu_cu_name(r1), flags1);
    KS(s_scale_set(2.0f, NULL));
    KS(ks_checks_set(KS_CHECK_POINTERS));
    ks_launch l = ks_launch_1d((n + 255) / 256, 256);
    ks_status st;
    if (answers) {
        st = scale_offset(l, DEV(float, d1), n);
        EXPECT(st == KS_ERR_POINTER, "before cuCtxEnablePeerAccess: %s (%s)", ks_status_name(st),
               ks_last_error_message());
        EXPECT(strstr(ks_last_error_message(),
                      "is memory of device 1; device 0 (the launch's) has no peer access to it") != NULL,
               "message: %s", ks_last_error_message());
        printf("  refused before cuCtxEnablePeerAccess: %s\n", ks_last_error_message());
    } else {
        /* The fallback would pass it, and the kernel would fault: not launched. */
        printf("  the driver does not answer the access flags: the check falls back to "
               "cuDeviceCanAccessPeer (not launched before cuCtxEnablePeerAccess)\n");
    }
    r = drv.CtxEnablePeerAccess(ctx1, 0);
    EXPECT(r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "cuCtxEnablePeerAccess: %s",
           gpu_cu_name(r));
    CU(cu.MemcpyHtoD(d1, y, sizeof y));
    KS(scale_offset(l, DEV(float, d1), n));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(out, d1, sizeof out));
    double err = 0;
    for (int i = 0; i < n; i++)
        err = fmax(err, fabs((double)out[i] - (2.0 * y[i] + 7.0)));
    EXPECT(err < 1e-4, "scale_offset on device 1's memory: max error %g", err);
    printf("  accepted after cuCtxEnablePeerAccess; scale_offset on device 1's memory: max error %.2g\n", err);
    CU(drv.CtxDisablePeerAccess(ctx1));
    if (answers) {
        st = scale_offset(l, DEV(float, d1), n);
        EXPECT(st == KS_ERR_POINTER, "after cuCtxDisablePeerAccess: %s", ks_status_name(st));
        printf("  refused again after cuCtxDisablePeerAccess\n");
    }
    KS(ks_checks_set(0));
    CU(drv.CtxPushCurrent(ctx1));
    CU(cu.MemFree(d1));
    CU(drv.CtxPopCurrent(&popped));
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int start = gpu_start("gpu-contexts", &dev0, &primary0, NULL, 0);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    if (load_common()) {
        printf("gpu-contexts: driver entry points missing: %s\n", ks_last_error_message());
        return 1;
    }
    printf("gpu-contexts: %s loader\n", loader_name());
    gpu_run_case("a green context: fir on its stream, its variables, no context current", green_context);
    gpu_run_case("device 1's memory under the pointers check, before and after peer access", peer_memory);
    return gpu_report("gpu-contexts");
}
