/*
 * internal.h — what the runtime's files share and nothing outside sees:
 * the resolved driver entry points, the error setters, the per-image state,
 * and the entry points between load.c, file.c, nvrtc.c, cache.c, launch.c
 * and query.c.
 * Internal names carry the "ks__" prefix; everything here is hidden by
 * -fvisibility=hidden except what is marked KS__API.
 */
#ifndef KS_INTERNAL_H
#define KS_INTERNAL_H

#include <pthread.h>
#include <cuda.h>
#include "kstub.h"

/* The library is built with -fvisibility=hidden; this marks the public API. */
#define KS__API __attribute__((visibility("default")))

#define KS__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* ---- driver.c ------------------------------------------------------------ */

/*
 * Driver entry points, resolved once by ks__driver_load() through
 * cuGetProcAddress for the CUDA_VERSION we compiled against. The optional
 * ones are NULL when the driver lacks them.
 */
typedef struct ks__driver {
    CUresult (*Init)(unsigned int flags);
    CUresult (*GetErrorName)(CUresult error, const char **str);
    CUresult (*GetErrorString)(CUresult error, const char **str);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxGetDevice)(CUdevice *device);
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*LaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shared_bytes, CUstream stream, void **params, void **extra);
    /* context-independent loading (CUDA 12.0+): all three, or the module fallback */
    CUresult (*LibraryLoadData)(CUlibrary *library, const void *code,
                                CUjit_option *jit_options, void **jit_values, unsigned int njit,
                                CUlibraryOption *lib_options, void **lib_values, unsigned int nlib);
    CUresult (*LibraryUnload)(CUlibrary library);
    CUresult (*LibraryGetKernel)(CUkernel *kernel, CUlibrary library, const char *name);
    /* the module fallback: one CUmodule per context */
    CUresult (*ModuleLoadDataEx)(CUmodule *module, const void *image, unsigned int n,
                                 CUjit_option *options, void **values);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
    CUresult (*CtxPushCurrent)(CUcontext ctx);
    CUresult (*CtxPopCurrent)(CUcontext *ctx);
    /* optional: CUDA 12.4+ (the load-time ABI check is skipped without them) */
    CUresult (*KernelGetParamInfo)(CUkernel kernel, size_t index, size_t *offset, size_t *size);
    CUresult (*FuncGetParamInfo)(CUfunction fn, size_t index, size_t *offset, size_t *size);
    /* optional: launch attributes, queries, occupancy, shared-memory opt-in */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
    CUresult (*KernelGetFunction)(CUfunction *fn, CUkernel kernel);
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction f);
    CUresult (*KernelGetAttribute)(int *value, CUfunction_attribute attr, CUkernel kernel, CUdevice dev);
    CUresult (*FuncSetAttribute)(CUfunction f, CUfunction_attribute attr, int value);
    CUresult (*KernelSetAttribute)(CUfunction_attribute attr, int value, CUkernel kernel, CUdevice dev);
    CUresult (*OccupancyMaxPotentialBlockSize)(int *min_grid, int *block, CUfunction f,
                                               CUoccupancyB2DSize smem_fn, size_t smem, int limit);
    int version;                    /* cuDriverGetVersion, e.g. 13000 */
    int use_library;                /* 1: cuLibrary*; 0: per-context cuModule* (the fallback) */
} ks__driver;

/* Filled once by ks__driver_load(); read-only afterwards. */
extern ks__driver ks__cu;

/*
 * Load libcuda and call cuInit(0), once per process (later calls are cheap).
 * On failure sets this thread's error (naming \p kernel, which may be NULL)
 * and returns KS_ERR_NO_DRIVER or KS_ERR_DRIVER, the same on every call.
 */
ks_status ks__driver_load(const char *kernel);

/* ---- status.c ------------------------------------------------------------ */

/*
 * Record a failure in this thread's ks_error and return \p status.
 * message = "kernel '<kernel>': <detail>" (the prefix only when kernel != NULL).
 */
ks_status ks__error(ks_status status, const char *kernel, const char *fmt, ...) KS__PRINTF(3, 4);

/*
 * Record a failed driver call: message =
 * "kernel '<kernel>': [<detail>: ]<call> failed: <CUDA_ERROR_…> (<driver text>)".
 * \p fmt may be NULL for no detail.
 */
ks_status ks__error_cu(ks_status status, const char *kernel, const char *call, CUresult result,
                       const char *fmt, ...) KS__PRINTF(5, 6);

/* Record a failed NVRTC call: like ks__error_cu, named by nvrtcGetErrorString (\p text). */
ks_status ks__error_nvrtc(ks_status status, const char *kernel, const char *call, int result,
                          const char *text, const char *fmt, ...) KS__PRINTF(6, 7);

/* Attach a JIT/NVRTC log to the error just recorded (its first line joins the message). */
void ks__error_log(const char *log);

/* ---- load.c -------------------------------------------------------------- */

/*
 * Called after a driver call returned CUDA_ERROR_INVALID_CONTEXT. When this
 * thread has no current context, make device 0's primary context (retained
 * once per process, never released) current and return KS_OK: retry the call.
 * KS_ERR_NO_CONTEXT (error set): no primary context could be made current.
 * KS_ERR_DRIVER (error untouched): the thread has a context of its own, so
 * the caller reports its failed call as it is. Callable with or without the
 * load lock held.
 */
ks_status ks__context_make_current(const char *kernel);

/* The calling thread's context, making device 0's primary one current if it has none. */
ks_status ks__context_current(const char *kernel, CUcontext *ctx);

/* The current context's device (a context is made current as above). */
ks_status ks__device_current(const char *kernel, CUdevice *dev);

/* The per-context module and function lists of the fallback loader. */
typedef struct ks__module_node {
    CUcontext ctx;
    CUmodule module;
    struct ks__module_node *next;
} ks__module_node;

typedef struct ks__function_node {
    CUcontext ctx;
    CUfunction fn;
    struct ks__function_node *next;  /* published with a release store; never unlinked until unload */
} ks__function_node;

/* What ks_image.ks__state points to; created on first need, under the load lock. */
typedef struct ks__image_state {
    char *file;                  /* ks_image_set_file's path, or NULL */
    char **nvrtc_options;        /* ks_image_set_nvrtc_options's copies */
    unsigned nvrtc_noptions;
    /* what the last load was made from (freed by unload) */
    const void *bytes;           /* the image handed to the driver */
    size_t nbytes;
    void *owned;                 /* bytes, when read from a file or compiled; else NULL */
    char *path;                  /* the file read, or NULL */
    ks_image_kind origin, kind;
    int arch, from_cache;
    char *jit_log;               /* the JIT error log buffer, alive as long as the loaded image:
                                  * with lazy loading the driver JITs (and logs) after the load call */
    ks__module_node *modules;    /* the fallback: one module per context; read with acquire */
} ks__image_state;

/*
 * The CUfunction of \p kernel in the current context (resolving it, and
 * making a context current, as needed), and that context's device.
 */
ks_status ks__kernel_function(ks_kernel *kernel, CUfunction *fn, CUdevice *dev);

/* The fallback's slow path: resolve \p kernel in \p ctx (the current one). */
ks_status ks__kernel_resolve_in(ks_kernel *kernel, CUcontext ctx, CUfunction *fn);

/* Looks up \p ctx in \p kernel's function list without a lock; NULL if absent. */
static inline CUfunction ks__function_find(const ks_kernel *k, CUcontext ctx)
{
    for (const ks__function_node *n = __atomic_load_n((ks__function_node *const *)&k->ks__functions,
                                                      __ATOMIC_ACQUIRE);
         n != NULL; n = n->next)
        if (n->ctx == ctx)
            return n->fn;
    return NULL;
}

/* ---- query.c ------------------------------------------------------------ */

/* The most shared memory a block may opt in to on \p dev, cached per device. */
ks_status ks__device_shared_optin(CUdevice dev, int *bytes);

/* ---- file.c -------------------------------------------------------------- */

/*
 * Find and read the image file of \p img: \p name as ks_image_set_file gave
 * it, or (NULL) the names made from img->source. On success *bytes (malloc'd,
 * NUL-terminated beyond *n), *n, *path (malloc'd) and *kind are set.
 */
ks_status ks__file_read(const ks_image *img, const char *name, const char *kernel,
                        void **bytes, size_t *n, char **path, ks_image_kind *kind);

/* ---- nvrtc.c ------------------------------------------------------------- */

/*
 * Compile the CUDA source \p src (named \p name in messages) with \p opts for
 * sm_<arch>, through the disk cache. On success *cubin is malloc'd.
 */
ks_status ks__nvrtc_compile(const char *src, const char *name, char *const *opts, unsigned nopts,
                            int arch, const char *kernel, void **cubin, size_t *n, int *from_cache);

/* ---- cache.c ------------------------------------------------------------- */

/* The cache directory to use now (malloc'd; created 0700 if need be), or NULL: no cache. */
char *ks__cache_dir(void);
/* A verified entry for \p key (malloc'd into *data), or 0 when there is none usable. */
int ks__cache_get(const char *dir, const unsigned char key[32], void **data, size_t *n);
/* Store an entry (best effort: a cache that cannot be written is no error). */
void ks__cache_put(const char *dir, const unsigned char key[32], const void *data, size_t n);

#endif /* KS_INTERNAL_H */
