/*
 * load.c — the slow path: preparing an image's bytes (embedded, read from a
 * file, or compiled with NVRTC), loading them (one context-independent
 * CUlibrary, or with the fallback one CUmodule per context), resolving a
 * kernel's handle with the load-time ABI check, unloading, and making a
 * context current for threads that have none.
 *
 * Everything here runs under one process-wide mutex; the launch fast path
 * never takes it. Results are published with release stores and read by the
 * fast path with acquire loads, so a thread that sees a handle also sees
 * everything written before it. Per-context lists only grow until unload,
 * which the caller must not run concurrently with launches (kstub.h).
 */
#include <stdint.h>
#include <stdlib.h>
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

/* ---- image sources ------------------------------------------------------------ */

#define KS__FATBIN_MAGIC 0xBA55ED50u
#define KS__JIT_LOG_BYTES 16384

static const char *source_name(const ks_image *img)
{
    return img->source ? img->source : "(unnamed)";
}

/* Cheap sanity checks so a wrong pointer gives a clear error, not a driver crash. */
static ks_status check_image(const ks_image *img, const char *kernel)
{
    const char *src = source_name(img);
    const unsigned char *p = img->data;
    if (p == NULL)
        return ks__error(KS_ERR_INVALID_IMAGE, kernel, "the %s image of '%s' has no data",
                         img->kind == KS_IMAGE_SOURCE ? "source" : "embedded", src);
    switch (img->kind) {
    case KS_IMAGE_PTX:
    case KS_IMAGE_SOURCE:
        /* size counts the bytes; the driver and NVRTC read up to the NUL. */
        if (img->size == 0 || memchr(p, '\0', img->size) == NULL)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the %s image of '%s' is not NUL-terminated within its %zu bytes",
                             img->kind == KS_IMAGE_PTX ? "PTX" : "source", src, img->size);
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

/* Only under load_lock: the image's state, created on first need. */
static ks__image_state *state_locked(ks_image *img, const char *kernel)
{
    ks__image_state *s = img->ks__state;
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL) {
            ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory loading '%s'", source_name(img));
            return NULL;
        }
        __atomic_store_n(&img->ks__state, (void *)s, __ATOMIC_RELEASE);
    }
    return s;
}

/* Forget what the last load was made from. */
static void unprepare(ks__image_state *s)
{
    free(s->owned);
    free(s->path);
    free(s->jit_log);
    s->owned = NULL;
    s->path = NULL;
    s->jit_log = NULL;
    s->bytes = NULL;
    s->nbytes = 0;
    s->origin = s->kind = KS_IMAGE_NONE;
    s->arch = s->from_cache = 0;
}

/* The device's compute capability as NVRTC spells it (90 for sm_90). */
static ks_status device_arch(const char *kernel, int *arch)
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

/* Only under load_lock: decide the bytes the driver gets (file, embedded, NVRTC). */
static ks_status prepare_locked(ks_image *img, ks__image_state *s, const char *kernel)
{
    if (s->bytes != NULL)
        return KS_OK;
    ks_status st;
    if (s->file != NULL || (img->kind == KS_IMAGE_NONE && img->data == NULL)) {
        void *bytes = NULL;
        size_t n = 0;
        st = ks__file_read(img, s->file, kernel, &bytes, &n, &s->path, &s->origin);
        if (st != KS_OK)
            return st;
        s->owned = bytes;
        s->bytes = bytes;
        s->nbytes = n;
    } else {
        st = check_image(img, kernel);
        if (st != KS_OK)
            return st;
        s->bytes = img->data;
        s->nbytes = img->size;
        s->origin = img->kind;
    }
    s->kind = s->origin;
    if (s->origin == KS_IMAGE_SOURCE) {
        int arch = 0;
        void *cubin = NULL;
        size_t n = 0;
        const char *name = s->path ? s->path : source_name(img);
        const char *base = strrchr(name, '/');
        st = device_arch(kernel, &arch);
        if (st == KS_OK)
            st = ks__nvrtc_compile(s->bytes, base ? base + 1 : name, s->nvrtc_options, s->nvrtc_noptions,
                                   arch, kernel, &cubin, &n, &s->from_cache);
        if (st != KS_OK) {
            unprepare(s);
            return st;
        }
        free(s->owned);
        s->owned = cubin;
        s->bytes = cubin;
        s->nbytes = n;
        s->kind = KS_IMAGE_CUBIN;
        s->arch = arch;
    }
    return KS_OK;
}

/* ---- loading: a CUlibrary, or a CUmodule per context --------------------------- */

static ks_status load_failed(const ks_image *img, ks__image_state *s, const char *kernel, const char *call,
                             CUresult r)
{
    ks__error_cu(KS_ERR_LOAD, kernel, call, r, "loading the image of '%s'", source_name(img));
    if (s->jit_log != NULL) {
        s->jit_log[KS__JIT_LOG_BYTES - 1] = '\0';
        ks__error_log(s->jit_log);
    }
    return KS_ERR_LOAD;
}

/* The JIT options: the image's own log buffer (made here), and its size. */
static unsigned jit_options(ks__image_state *s, CUjit_option opts[2], void *vals[2])
{
    if (s->jit_log == NULL && (s->jit_log = malloc(KS__JIT_LOG_BYTES)) == NULL)
        return 0;               /* no log then; the load itself may still work */
    s->jit_log[0] = '\0';
    opts[0] = CU_JIT_ERROR_LOG_BUFFER;
    vals[0] = s->jit_log;
    opts[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    vals[1] = (void *)(size_t)KS__JIT_LOG_BYTES;
    return 2;
}

/* Errors that mean the image (not the call) is bad: with lazy loading they
 * arrive at the kernel's look-up instead of the load. */
static int is_image_error(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
        return 1;
    default:
        return 0;
    }
}

/* Only under load_lock. */
static ks_status library_load_locked(ks_image *img, const char *kernel)
{
    if (img->ks__library != NULL)
        return KS_OK;
    ks__image_state *s = state_locked(img, kernel);
    if (s == NULL)
        return KS_ERR_NO_MEMORY;
    ks_status st = prepare_locked(img, s, kernel);
    if (st != KS_OK)
        return st;

    CUjit_option opts[2];
    void *vals[2];
    unsigned nopts = jit_options(s, opts, vals);

    CUlibrary lib = NULL;
    CUresult r = ks__cu.LibraryLoadData(&lib, s->bytes, opts, vals, nopts, NULL, NULL, 0);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        st = ks__context_make_current(kernel);
        if (st == KS_ERR_NO_CONTEXT) {
            unprepare(s);
            return st;
        }
        nopts = jit_options(s, opts, vals);
        if (st == KS_OK)
            r = ks__cu.LibraryLoadData(&lib, s->bytes, opts, vals, nopts, NULL, NULL, 0);
    }
    if (r != CUDA_SUCCESS) {
        load_failed(img, s, kernel, "cuLibraryLoadData", r);
        unprepare(s);
        return KS_ERR_LOAD;
    }
    __atomic_store_n(&img->ks__library, (void *)lib, __ATOMIC_RELEASE);
    return KS_OK;
}

/* Only under load_lock: \p img's module in \p ctx (the current context), loading it if needed. */
static ks_status module_load_locked(ks_image *img, CUcontext ctx, const char *kernel, CUmodule *out)
{
    ks__image_state *s = state_locked(img, kernel);
    if (s == NULL)
        return KS_ERR_NO_MEMORY;
    for (ks__module_node *m = s->modules; m != NULL; m = m->next) {
        if (m->ctx == ctx) {
            *out = m->module;
            return KS_OK;
        }
    }
    ks__module_node *node = malloc(sizeof *node);
    if (node == NULL)
        return ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory loading '%s'", source_name(img));
    ks_status st = prepare_locked(img, s, kernel);
    if (st != KS_OK) {
        free(node);
        return st;
    }
    CUjit_option opts[2];
    void *vals[2];
    unsigned nopts = jit_options(s, opts, vals);
    CUmodule mod = NULL;
    CUresult r = ks__cu.ModuleLoadDataEx(&mod, s->bytes, nopts, opts, vals);
    if (r != CUDA_SUCCESS) {
        free(node);
        load_failed(img, s, kernel, "cuModuleLoadDataEx", r);
        if (s->modules == NULL)
            unprepare(s);
        return KS_ERR_LOAD;
    }
    node->ctx = ctx;
    node->module = mod;
    node->next = s->modules;
    __atomic_store_n(&s->modules, node, __ATOMIC_RELEASE);
    *out = mod;
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
    CUcontext ctx = NULL;
    if (!ks__cu.use_library && (st = ks__context_current(NULL, &ctx)) != KS_OK)
        return st;
    pthread_mutex_lock(&load_lock);
    CUmodule mod;
    st = ks__cu.use_library ? library_load_locked(img, NULL) : module_load_locked(img, ctx, NULL, &mod);
    pthread_mutex_unlock(&load_lock);
    return st;
}

/* ---- kernels ----------------------------------------------------------------- */

static CUresult param_info(const void *handle, size_t i, size_t *off, size_t *size)
{
    if (ks__cu.use_library)
        return ks__cu.KernelGetParamInfo((CUkernel)(uintptr_t)handle, i, off, size);
    return ks__cu.FuncGetParamInfo((CUfunction)(uintptr_t)handle, i, off, size);
}

/*
 * Compare the parameter layout the driver reports for the loaded kernel with
 * the one the stub packs. A mismatch means the stub would write arguments
 * where the kernel does not read them.
 */
static ks_status check_abi(const ks_kernel *k, const void *handle, const char *name)
{
    if (ks__cu.use_library ? ks__cu.KernelGetParamInfo == NULL : ks__cu.FuncGetParamInfo == NULL)
        return KS_OK;           /* driver older than CUDA 12.4: nothing to compare against */
    const char *call = ks__cu.use_library ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo";
    const char *hint = "(a stale image beside a regenerated header?)";
    int offsets_comparable = 1;
    /* Ask one past the stub's count to learn whether the image has more. */
    for (unsigned i = 0; i <= k->nparams; i++) {
        size_t off = 0, size = 0;
        CUresult r = param_info(handle, i, &off, &size);
        /* The query needs a context; a thread without one gets device 0's
         * primary context, as a launch would (seen on an H200, driver 580). */
        if (r == CUDA_ERROR_INVALID_CONTEXT && ks__context_make_current(name) == KS_OK)
            r = param_info(handle, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) {
            if (i == k->nparams)
                return KS_OK;
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "the loaded kernel '%s' has %u parameters but the stub packs %u %s",
                             k->symbol, i, k->nparams, hint);
        }
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, name, call, r,
                                "checking parameter %u of '%s'", i, k->symbol);
        if (i == k->nparams)
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "the loaded kernel '%s' has more than the %u parameters the stub packs %s",
                             k->symbol, k->nparams, hint);
        const ks_param_desc *want = &k->params[i];
        /* The driver reports offsets from where it puts the parameter
         * buffer, which is 16-byte aligned: from a parameter aligned more
         * strictly than that on (a 128-byte aligned CUtensorMap, say), its
         * offsets may differ from the PTX layout the stub records. The
         * arguments are passed by pointer, so what must agree is each size. */
        if (want->align > 16)
            offsets_comparable = 0;
        if (size != want->size || (offsets_comparable && off != want->offset))
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "parameter %u: the stub packs offset %u size %u but the loaded kernel "
                             "'%s' has offset %zu size %zu %s",
                             i, want->offset, want->size, k->symbol, off, size, hint);
    }
    return KS_OK;
}

static ks_status lookup_failed(const ks_kernel *k, const char *name, const char *call, CUresult r)
{
    ks__image_state *s = k->image->ks__state;
    if (is_image_error(r) && s != NULL) {
        /* Lazy loading (CUDA_MODULE_LOADING=LAZY, the default since 12.2)
         * defers the JIT to here; its log, if any, is in the image's buffer. */
        load_failed(k->image, s, name, call, r);
        return KS_ERR_LOAD;
    }
    if (r == CUDA_ERROR_NOT_FOUND)
        return ks__error_cu(KS_ERR_SYMBOL_NOT_FOUND, name, call, r,
                            "symbol '%s' is not in the image of '%s'", k->symbol, source_name(k->image));
    return ks__error_cu(KS_ERR_DRIVER, name, call, r, "looking up symbol '%s'", k->symbol);
}

/* Only under load_lock: remember \p k for unload and publish its handle. */
static void publish_locked(ks_kernel *k, void *handle)
{
    k->ks__next = k->image->ks__kernels;
    k->image->ks__kernels = k;
    __atomic_store_n(&k->ks__handle, handle, __ATOMIC_RELEASE);
}

/* Only under load_lock (library mode). */
static ks_status resolve_locked(ks_kernel *k, const char *name)
{
    if (k->ks__handle != NULL)
        return KS_OK;
    ks_image *img = k->image;
    ks_status st = library_load_locked(img, name);
    if (st != KS_OK)
        return st;

    CUkernel kern = NULL;
    CUresult r = ks__cu.LibraryGetKernel(&kern, (CUlibrary)img->ks__library, k->symbol);
    if (r != CUDA_SUCCESS)
        return lookup_failed(k, name, "cuLibraryGetKernel", r);
    st = check_abi(k, kern, name);
    if (st != KS_OK)
        return st;              /* not published: every launch reports it again */
    publish_locked(k, (void *)kern);
    return KS_OK;
}

/* Only under load_lock (module mode): \p k's function in \p ctx, the current context. */
static ks_status resolve_in_locked(ks_kernel *k, CUcontext ctx, const char *name, CUfunction *out)
{
    CUfunction fn = ks__function_find(k, ctx);
    if (fn != NULL) {
        *out = fn;
        return KS_OK;
    }
    CUmodule mod;
    ks_status st = module_load_locked(k->image, ctx, name, &mod);
    if (st != KS_OK)
        return st;
    CUresult r = ks__cu.ModuleGetFunction(&fn, mod, k->symbol);
    if (r != CUDA_SUCCESS)
        return lookup_failed(k, name, "cuModuleGetFunction", r);
    st = check_abi(k, fn, name);
    if (st != KS_OK)
        return st;
    /* A shared-memory opt-in made in another context applies here too. */
    unsigned shared = __atomic_load_n(&k->ks__max_shared, __ATOMIC_RELAXED);
    if (shared != 0 && ks__cu.FuncSetAttribute != NULL) {
        r = ks__cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, name, "cuFuncSetAttribute", r,
                                "opting '%s' in to %u bytes of dynamic shared memory", k->symbol, shared);
    }
    ks__function_node *node = malloc(sizeof *node);
    if (node == NULL)
        return ks__error(KS_ERR_NO_MEMORY, name, "out of memory resolving '%s'", k->symbol);
    node->ctx = ctx;
    node->fn = fn;
    node->next = k->ks__functions;
    __atomic_store_n(&k->ks__functions, (void *)node, __ATOMIC_RELEASE);
    if (k->ks__handle == NULL)
        publish_locked(k, (void *)fn);
    *out = fn;
    return KS_OK;
}

static ks_status check_kernel(const ks_kernel *k, const char *name)
{
    if (k->image == NULL || k->symbol == NULL || (k->nparams != 0 && k->params == NULL))
        return ks__error(KS_ERR_INVALID_VALUE, name,
                         "the kernel description lacks its image, symbol or parameter list");
    return KS_OK;
}

static const char *kernel_name(const ks_kernel *k)
{
    return k->name ? k->name : k->symbol;
}

ks_status ks__kernel_resolve_in(ks_kernel *k, CUcontext ctx, CUfunction *fn)
{
    const char *name = kernel_name(k);
    pthread_mutex_lock(&load_lock);
    ks_status st = resolve_in_locked(k, ctx, name, fn);
    pthread_mutex_unlock(&load_lock);
    return st;
}

KS__API ks_status ks_kernel_resolve(ks_kernel *k)
{
    if (k == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_kernel_resolve: kernel is NULL");
    const char *name = kernel_name(k);
    void *handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    if (handle != NULL && ks__cu.use_library)
        return KS_OK;
    ks_status st = check_kernel(k, name);
    if (st == KS_OK)
        st = ks__driver_load(name);
    if (st != KS_OK)
        return st;
    if (ks__cu.use_library) {
        pthread_mutex_lock(&load_lock);
        st = resolve_locked(k, name);
        pthread_mutex_unlock(&load_lock);
        return st;
    }
    CUcontext ctx;
    CUfunction fn;
    st = ks__context_current(name, &ctx);
    if (st == KS_OK && ks__function_find(k, ctx) == NULL)
        st = ks__kernel_resolve_in(k, ctx, &fn);
    return st;
}

ks_status ks__kernel_function(ks_kernel *k, CUfunction *fn, CUdevice *dev)
{
    const char *name = kernel_name(k);
    ks_status st = ks_kernel_resolve(k);
    CUcontext ctx = NULL;
    if (st == KS_OK)
        st = ks__context_current(name, &ctx);
    if (st != KS_OK)
        return st;
    CUresult r = ks__cu.CtxGetDevice(dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuCtxGetDevice", r, NULL);
    if (!ks__cu.use_library) {
        *fn = ks__function_find(k, ctx);
        return *fn != NULL ? KS_OK : ks__kernel_resolve_in(k, ctx, fn);
    }
    if (ks__cu.KernelGetFunction == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, name, "the CUDA driver lacks cuKernelGetFunction");
    r = ks__cu.KernelGetFunction(fn, (CUkernel)__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE));
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuKernelGetFunction", r,
                            "getting '%s' for the current context", k->symbol);
    return KS_OK;
}

/* ---- unloading, configuration, queries ---------------------------------------- */

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
        ks__function_node *fn = k->ks__functions;
        __atomic_store_n(&k->ks__functions, NULL, __ATOMIC_RELEASE);
        while (fn != NULL) {
            ks__function_node *after = fn->next;
            free(fn);
            fn = after;
        }
        __atomic_store_n(&k->ks__occupancy, 0ull, __ATOMIC_RELAXED);
        k->ks__next = NULL;
    }
    img->ks__kernels = NULL;
    CUlibrary lib = (CUlibrary)img->ks__library;
    if (lib != NULL) {
        __atomic_store_n(&img->ks__library, NULL, __ATOMIC_RELEASE);
        CUresult r = ks__cu.LibraryUnload(lib);
        if (r != CUDA_SUCCESS)
            st = ks__error_cu(KS_ERR_DRIVER, NULL, "cuLibraryUnload", r, "unloading the image of '%s'",
                              source_name(img));
    }
    ks__image_state *s = img->ks__state;
    if (s != NULL) {
        ks__module_node *m = s->modules;
        __atomic_store_n(&s->modules, NULL, __ATOMIC_RELEASE);
        for (ks__module_node *next; m != NULL; m = next) {
            next = m->next;
            /* A module belongs to its context: unload it there. */
            CUcontext popped;
            CUresult r = ks__cu.CtxPushCurrent(m->ctx);
            if (r == CUDA_SUCCESS) {
                r = ks__cu.ModuleUnload(m->module);
                ks__cu.CtxPopCurrent(&popped);
            }
            if (r != CUDA_SUCCESS && st == KS_OK)
                st = ks__error_cu(KS_ERR_DRIVER, NULL, "cuModuleUnload", r,
                                  "unloading the image of '%s'", source_name(img));
            free(m);
        }
        unprepare(s);
    }
    pthread_mutex_unlock(&load_lock);
    return st;
}

static char *copy_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

KS__API ks_status ks_image_set_file(ks_image *img, const char *path)
{
    if (img == NULL || (path != NULL && path[0] == '\0'))
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_file: %s",
                         img == NULL ? "image is NULL" : "empty path");
    char *copy = copy_string(path);
    if (path != NULL && copy == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_image_set_file: out of memory");
    pthread_mutex_lock(&load_lock);
    ks__image_state *s = state_locked(img, NULL);
    if (s != NULL) {
        free(s->file);
        s->file = copy;
        /* The bytes of an image not loaded anywhere are not kept for later. */
        if (img->ks__library == NULL && s->modules == NULL)
            unprepare(s);
    }
    pthread_mutex_unlock(&load_lock);
    if (s == NULL)
        free(copy);
    return s ? KS_OK : KS_ERR_NO_MEMORY;
}

KS__API ks_status ks_image_set_nvrtc_options(ks_image *img, const char *const *options, unsigned n)
{
    if (img == NULL || (n != 0 && options == NULL))
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_nvrtc_options: %s is NULL",
                         img == NULL ? "the image" : "the option array");
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    int ok = n == 0 || copy != NULL;
    for (unsigned i = 0; ok && i < n; i++) {
        if (options[i] == NULL) {
            for (unsigned j = 0; j < i; j++)
                free(copy[j]);
            free(copy);
            return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_nvrtc_options: option %u is NULL", i);
        }
        ok = (copy[i] = strdup(options[i])) != NULL;
    }
    pthread_mutex_lock(&load_lock);
    ks__image_state *s = ok ? state_locked(img, NULL) : NULL;
    if (s != NULL) {
        char **old = s->nvrtc_options;
        unsigned nold = s->nvrtc_noptions;
        s->nvrtc_options = copy;
        s->nvrtc_noptions = n;
        copy = old;
        n = nold;
        if (img->ks__library == NULL && s->modules == NULL)
            unprepare(s);
    }
    pthread_mutex_unlock(&load_lock);
    for (unsigned i = 0; copy != NULL && i < n; i++)
        free(copy[i]);
    free(copy);
    if (s == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_image_set_nvrtc_options: out of memory");
    return KS_OK;
}

KS__API int ks_image_is_loaded(const ks_image *img)
{
    if (img == NULL)
        return 0;
    if (__atomic_load_n(&img->ks__library, __ATOMIC_ACQUIRE) != NULL)
        return 1;
    const ks__image_state *s = __atomic_load_n((ks__image_state *const *)&img->ks__state, __ATOMIC_ACQUIRE);
    if (s == NULL)
        return 0;
    const ks__module_node *m = __atomic_load_n(&s->modules, __ATOMIC_ACQUIRE);
    CUcontext ctx = NULL;
    if (m == NULL || ks__cu.CtxGetCurrent == NULL || ks__cu.CtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return 0;
    for (; m != NULL; m = m->next)
        if (m->ctx == ctx)
            return 1;
    return 0;
}

KS__API ks_status ks_image_info_get(const ks_image *img, ks_image_info *out)
{
    if (img == NULL || out == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_info_get: %s is NULL",
                         img == NULL ? "the image" : "the result");
    memset(out, 0, sizeof *out);
    out->loaded = ks_image_is_loaded(img);
    pthread_mutex_lock(&load_lock);
    const ks__image_state *s = img->ks__state;
    if (out->loaded && s != NULL) {
        out->origin = s->origin;
        out->kind = s->kind;
        out->path = s->path;
        out->arch = s->arch;
        out->from_cache = s->from_cache;
        out->library = img->ks__library != NULL;
    }
    pthread_mutex_unlock(&load_lock);
    return KS_OK;
}
