/*
 * context.c — contexts and devices: making device 0's primary context
 * current for threads that have none, a stream's context, the current
 * device, its compute capability and its shared-memory opt-in limit
 * (cached per device).
 *
 * Both the launch path (launch.c) and the slow paths (load.c, query.c) come
 * here; nothing here calls back into them. ks__context_enter/_leave are the
 * one "push a context, do X, pop" of the runtime.
 */
#include "internal.h"

/* Separate from the load lock: the launch path reaches here without it, the load path with it. */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary;       /* device 0's primary context, retained once, never released */

ks_status ks__context_make_current(const char *kernel)
{
    CUcontext current = NULL;
    CUresult r = ks__cu.CtxGetCurrent(&current);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuCtxGetCurrent", r, NULL);
    /* The caller's own context is unusable (destroyed, say): replacing it
     * behind their back would hide their bug, so let them see the failure. */
    if (current != NULL)
        return KS_ERR_DRIVER;

    pthread_mutex_lock(&ctx_lock);
    CUcontext ctx = primary;
    if (ctx == NULL) {
        CUdevice dev;
        r = ks__cu.DeviceGet(&dev, 0);
        if (r == CUDA_SUCCESS) {
            r = ks__cu.DevicePrimaryCtxRetain(&ctx, dev);
            if (r == CUDA_SUCCESS)
                primary = ctx;
            else
                ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuDevicePrimaryCtxRetain", r,
                             "no context is current and device 0's primary context is unavailable");
        } else {
            ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuDeviceGet", r,
                         "no context is current and there is no device 0");
        }
    }
    pthread_mutex_unlock(&ctx_lock);
    if (ctx == NULL)
        return KS_ERR_NO_CONTEXT;

    r = ks__cu.CtxSetCurrent(ctx);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuCtxSetCurrent", r,
                            "making device 0's primary context current");
    return KS_OK;
}

ks_status ks__context_current(const char *kernel, CUcontext *ctx)
{
    *ctx = NULL;
    CUresult r = ks__cu.CtxGetCurrent(ctx);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuCtxGetCurrent", r, NULL);
    if (*ctx != NULL)
        return KS_OK;
    ks_status st = ks__context_make_current(kernel);
    if (st != KS_OK)
        return st == KS_ERR_DRIVER ? ks__error(KS_ERR_NO_CONTEXT, kernel, "no context is current") : st;
    r = ks__cu.CtxGetCurrent(ctx);
    if (r != CUDA_SUCCESS || *ctx == NULL)
        return ks__error_cu(KS_ERR_NO_CONTEXT, kernel, "cuCtxGetCurrent", r,
                            "device 0's primary context did not become current");
    return KS_OK;
}

CUcontext ks__stream_context(CUstream s)
{
    CUcontext ctx = NULL;
    if (!ks__stream_is_own(s) || ks__cu.StreamGetCtx == NULL || ks__cu.StreamGetCtx(s, &ctx) != CUDA_SUCCESS)
        return NULL;
    return ctx;
}

/* The one place that pushes a context for a call and pops it after (load.c,
 * launch.c, module.c and pointers.c all come here). Asking first whether it
 * is current already saves the push and pop where it is, the common case. */
CUresult ks__context_enter(CUcontext ctx, int *pushed)
{
    *pushed = 0;
    CUcontext current = NULL;
    if (ctx == NULL || (ks__cu.CtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx))
        return CUDA_SUCCESS;
    if (ks__cu.CtxPushCurrent == NULL || ks__cu.CtxPopCurrent == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = ks__cu.CtxPushCurrent(ctx);
    *pushed = r == CUDA_SUCCESS;
    return r;
}

void ks__context_leave(int pushed)
{
    CUcontext popped;
    if (pushed)
        ks__cu.CtxPopCurrent(&popped);
}

ks_status ks__device_current(const char *kernel, CUdevice *dev)
{
    CUcontext ctx;
    ks_status st = ks__context_current(kernel, &ctx);
    if (st != KS_OK)
        return st;
    CUresult r = ks__cu.CtxGetDevice(dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, kernel, "cuCtxGetDevice", r, NULL);
    return KS_OK;
}

ks_status ks__device_arch(const char *kernel, int *arch)
{
    CUdevice dev;
    ks_status st = ks__device_current(kernel, &dev);
    if (st != KS_OK)
        return st;
    int major = 0, minor = 0;
    CUresult r = ks__cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (r == CUDA_SUCCESS)
        r = ks__cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, kernel, "cuDeviceGetAttribute", r,
                            "reading the device's compute capability");
    *arch = 10 * major + minor;
    return KS_OK;
}

#define KS__MAX_DEVICES 64

/* 0: not asked yet. Racing writers store the same value. */
static int optin_cache[KS__MAX_DEVICES];

ks_status ks__device_shared_optin(CUdevice dev, int *bytes)
{
    int cached = dev >= 0 && dev < KS__MAX_DEVICES ? __atomic_load_n(&optin_cache[dev], __ATOMIC_RELAXED) : 0;
    if (cached > 0) {
        *bytes = cached;
        return KS_OK;
    }
    CUresult r = ks__cu.DeviceGetAttribute(bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuDeviceGetAttribute", r,
                            "reading device %d's shared memory limit", (int)dev);
    if (dev >= 0 && dev < KS__MAX_DEVICES)
        __atomic_store_n(&optin_cache[dev], *bytes, __ATOMIC_RELAXED);
    return KS_OK;
}
