/*
 * internal.h — what the runtime's files share and nothing outside sees:
 * the resolved driver entry points, the error setters and the load lock.
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
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*LibraryLoadData)(CUlibrary *library, const void *code,
                                CUjit_option *jit_options, void **jit_values, unsigned int njit,
                                CUlibraryOption *lib_options, void **lib_values, unsigned int nlib);
    CUresult (*LibraryUnload)(CUlibrary library);
    CUresult (*LibraryGetKernel)(CUkernel *kernel, CUlibrary library, const char *name);
    CUresult (*LaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shared_bytes, CUstream stream, void **params, void **extra);
    /* optional: CUDA 12.4+ (the load-time ABI check is skipped without it) */
    CUresult (*KernelGetParamInfo)(CUkernel kernel, size_t index, size_t *offset, size_t *size);
    /* optional: not used yet; kept for launch-bounds queries */
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction f);
    CUresult (*KernelGetAttribute)(int *value, CUfunction_attribute attr, CUkernel kernel, CUdevice dev);
    int version;                    /* cuDriverGetVersion, e.g. 13000 */
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

#endif /* KS_INTERNAL_H */
