/*
 * load.c — the slow path: loading an image into a CUlibrary, resolving a
 * kernel's CUkernel handle (with the load-time ABI check), unloading, and
 * making a context current for threads that have none.
 *
 * Everything here runs under one process-wide mutex; the launch fast path
 * never takes it. Results are published with release stores and read by the
 * fast path with acquire loads, so a thread that sees a handle also sees
 * everything written before it.
 */
#include <string.h>

#include "internal.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- contexts -------------------------------------------------------------- */

/* Separate from load_lock: the launch path reaches here without it, the load path with it. */
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

/* ---- images ------------------------------------------------------------------ */

#define KS__FATBIN_MAGIC 0xBA55ED50u
#define KS__JIT_LOG_BYTES 16384

/* Cheap sanity checks so a wrong pointer gives a clear error, not a driver crash. */
static ks_status check_image(const ks_image *img, const char *kernel)
{
    const char *src = img->source ? img->source : "(unnamed)";
    const unsigned char *p = img->data;
    if (img->kind == KS_IMAGE_NONE || p == NULL)
        return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                         "the image of '%s' has no embedded data (loading from disk is not supported yet)",
                         src);
    switch (img->kind) {
    case KS_IMAGE_PTX:
        /* size counts the bytes; the driver reads up to the NUL. */
        if (img->size == 0 || memchr(p, '\0', img->size) == NULL)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the PTX image of '%s' is not NUL-terminated within its %zu bytes",
                             src, img->size);
        return KS_OK;
    case KS_IMAGE_CUBIN:
        if (img->size < 4 || memcmp(p, "\x7f" "ELF", 4) != 0)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the cubin image of '%s' does not start with the ELF magic", src);
        return KS_OK;
    case KS_IMAGE_FATBIN:
        if (img->size < 4 ||
            ((unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24)
                != KS__FATBIN_MAGIC)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the fatbin image of '%s' does not start with the fatbin magic 0x%08X",
                             src, KS__FATBIN_MAGIC);
        return KS_OK;
    default:
        return ks__error(KS_ERR_INVALID_IMAGE, kernel, "the image of '%s' has unknown kind %d",
                         src, (int)img->kind);
    }
}

/* Only under load_lock. */
static ks_status load_locked(ks_image *img, const char *kernel)
{
    if (img->ks__library != NULL)
        return KS_OK;
    ks_status st = check_image(img, kernel);
    if (st != KS_OK)
        return st;

    /* One buffer suffices: loads are serialised by load_lock. */
    static char jit_log[KS__JIT_LOG_BYTES];
    jit_log[0] = '\0';
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {jit_log, (void *)(size_t)sizeof jit_log};

    CUlibrary lib = NULL;
    CUresult r = ks__cu.LibraryLoadData(&lib, img->data, opts, vals, 2, NULL, NULL, 0);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        st = ks__context_make_current(kernel);
        if (st == KS_ERR_NO_CONTEXT)
            return st;
        jit_log[0] = '\0';
        vals[1] = (void *)(size_t)sizeof jit_log;
        if (st == KS_OK)
            r = ks__cu.LibraryLoadData(&lib, img->data, opts, vals, 2, NULL, NULL, 0);
    }
    if (r != CUDA_SUCCESS) {
        jit_log[sizeof jit_log - 1] = '\0';
        ks__error_cu(KS_ERR_LOAD, kernel, "cuLibraryLoadData", r, "loading the image of '%s'",
                     img->source ? img->source : "(unnamed)");
        ks__error_log(jit_log);
        return KS_ERR_LOAD;
    }
    __atomic_store_n(&img->ks__library, (void *)lib, __ATOMIC_RELEASE);
    return KS_OK;
}

KS__API ks_status ks_image_load(ks_image *img)
{
    if (img == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_load: image is NULL");
    if (__atomic_load_n(&img->ks__library, __ATOMIC_ACQUIRE) != NULL)
        return KS_OK;
    ks_status st = ks__driver_load(NULL);
    if (st != KS_OK)
        return st;
    pthread_mutex_lock(&load_lock);
    st = load_locked(img, NULL);
    pthread_mutex_unlock(&load_lock);
    return st;
}

/* ---- kernels ----------------------------------------------------------------- */

/*
 * Compare the parameter layout the driver reports for the loaded kernel with
 * the one the stub packs. A mismatch means the stub would write arguments
 * where the kernel does not read them.
 */
static ks_status check_abi(const ks_kernel *k, CUkernel kern, const char *name)
{
    if (ks__cu.KernelGetParamInfo == NULL)
        return KS_OK;           /* driver older than CUDA 12.4: nothing to compare against */
    const char *hint = "(a stale image beside a regenerated header?)";
    /* Ask one past the stub's count to learn whether the image has more. */
    for (unsigned i = 0; i <= k->nparams; i++) {
        size_t off = 0, size = 0;
        CUresult r = ks__cu.KernelGetParamInfo(kern, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) {
            if (i == k->nparams)
                return KS_OK;
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "the loaded kernel '%s' has %u parameters but the stub packs %u %s",
                             k->symbol, i, k->nparams, hint);
        }
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, name, "cuKernelGetParamInfo", r,
                                "checking parameter %u of '%s'", i, k->symbol);
        if (i == k->nparams)
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "the loaded kernel '%s' has more than the %u parameters the stub packs %s",
                             k->symbol, k->nparams, hint);
        const ks_param_desc *want = &k->params[i];
        if (off != want->offset || size != want->size)
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "parameter %u: the stub packs offset %u size %u but the loaded kernel "
                             "'%s' has offset %zu size %zu %s",
                             i, want->offset, want->size, k->symbol, off, size, hint);
    }
    return KS_OK;
}

/* Only under load_lock. */
static ks_status resolve_locked(ks_kernel *k, const char *name)
{
    if (k->ks__handle != NULL)
        return KS_OK;
    ks_image *img = k->image;
    ks_status st = load_locked(img, name);
    if (st != KS_OK)
        return st;

    CUkernel kern = NULL;
    CUresult r = ks__cu.LibraryGetKernel(&kern, (CUlibrary)img->ks__library, k->symbol);
    if (r == CUDA_ERROR_NOT_FOUND)
        return ks__error_cu(KS_ERR_SYMBOL_NOT_FOUND, name, "cuLibraryGetKernel", r,
                            "symbol '%s' is not in the image of '%s'", k->symbol,
                            img->source ? img->source : "(unnamed)");
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuLibraryGetKernel", r,
                            "looking up symbol '%s'", k->symbol);

    st = check_abi(k, kern, name);
    if (st != KS_OK)
        return st;              /* not published: every launch reports it again */

    k->ks__next = img->ks__kernels;
    img->ks__kernels = k;
    __atomic_store_n(&k->ks__handle, (void *)kern, __ATOMIC_RELEASE);
    return KS_OK;
}

KS__API ks_status ks_kernel_resolve(ks_kernel *k)
{
    if (k == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_kernel_resolve: kernel is NULL");
    if (__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE) != NULL)
        return KS_OK;
    const char *name = k->name ? k->name : k->symbol;
    if (k->image == NULL || k->symbol == NULL || (k->nparams != 0 && k->params == NULL))
        return ks__error(KS_ERR_INVALID_VALUE, name,
                         "the kernel description lacks its image, symbol or parameter list");
    ks_status st = ks__driver_load(name);
    if (st != KS_OK)
        return st;
    pthread_mutex_lock(&load_lock);
    st = resolve_locked(k, name);
    pthread_mutex_unlock(&load_lock);
    return st;
}

KS__API ks_status ks_image_unload(ks_image *img)
{
    if (img == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_unload: image is NULL");
    ks_status st = KS_OK;
    pthread_mutex_lock(&load_lock);
    /* Forget the handles first: whatever the driver says, they are dead. */
    for (ks_kernel *k = img->ks__kernels, *next; k != NULL; k = next) {
        next = k->ks__next;
        __atomic_store_n(&k->ks__handle, NULL, __ATOMIC_RELEASE);
        k->ks__next = NULL;
    }
    img->ks__kernels = NULL;
    CUlibrary lib = (CUlibrary)img->ks__library;
    if (lib != NULL) {
        __atomic_store_n(&img->ks__library, NULL, __ATOMIC_RELEASE);
        CUresult r = ks__cu.LibraryUnload(lib);
        if (r != CUDA_SUCCESS)
            st = ks__error_cu(KS_ERR_DRIVER, NULL, "cuLibraryUnload", r, "unloading the image of '%s'",
                              img->source ? img->source : "(unnamed)");
    }
    pthread_mutex_unlock(&load_lock);
    return st;
}
