/*
 * driver.c — finds libcuda at run time and resolves its entry points.
 *
 * libkstub does not link against libcuda, so programs built with it start
 * (and can report a clear error) on machines without a driver. Every entry
 * point comes from cuGetProcAddress for the CUDA_VERSION we compiled against,
 * never from dlsym of the documented name: cuda.h maps many names to
 * versioned symbols (cuMemAlloc -> cuMemAlloc_v2), and dlsym of the plain
 * name returns a legacy entry point with different behaviour.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Environment override of the driver's path, for unusual installs and tests. */
#define KS__DRIVER_ENV "KSTUB_LIBCUDA"
#define KS__DRIVER_DEFAULT "libcuda.so.1"
/* "module": use the per-context module loader even where cuLibrary* exists. */
#define KS__LOADER_ENV "KSTUB_LOADER"

/* The driver table and the check switches (internal.h): one line holds
 * what a launch reads of both. */
ks__hot_words ks__hot __attribute__((aligned(64)));

typedef CUresult (*get_proc_v2_fn)(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                   CUdriverProcAddressQueryResult *status);
typedef CUresult (*get_proc_v1_fn)(const char *symbol, void **pfn, int version, cuuint64_t flags);

/* The outcome of the one-time load, replayed into each caller's error. */
static struct {
    ks_status status;
    const char *call;           /* failing driver call, or NULL */
    CUresult result;
    char detail[512];
} load_result;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static get_proc_v2_fn get_proc_v2;
static get_proc_v1_fn get_proc_v1;

/* NULL when the driver lacks \p name (or offers it only for a newer CUDA). */
static void *resolve_at(const char *name, int version)
{
    void *pfn = NULL;
    CUresult r;
    if (get_proc_v2) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        r = get_proc_v2(name, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
        if (found != CU_GET_PROC_ADDRESS_SUCCESS)
            pfn = NULL;
    } else {
        r = get_proc_v1(name, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT);
    }
    return r == CUDA_SUCCESS ? pfn : NULL;
}

CUresult ks__launch_ex_missing(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    (void)config, (void)f, (void)params, (void)extra;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static void *resolve(const char *name)
{
    return resolve_at(name, CUDA_VERSION);
}

static void fail(ks_status status, const char *call, CUresult result, const char *fmt, ...)
    KS__PRINTF(4, 5);
static void fail(ks_status status, const char *call, CUresult result, const char *fmt, ...)
{
    load_result.status = status;
    load_result.call = call;
    load_result.result = result;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_result.detail, sizeof load_result.detail, fmt, ap);
    va_end(ap);
}

/* The driver's own name and text of a result, each NULL where the driver
 * lacks the entry point or does not know the code: status.c asks through
 * this (registered when the driver is resolved), never reading ks__cu. */
static int cu_names(int result, const char **name, const char **text)
{
    *name = *text = NULL;
    if (ks__cu.GetErrorName == NULL || ks__cu.GetErrorName((CUresult)result, name) != CUDA_SUCCESS)
        *name = NULL;
    if (ks__cu.GetErrorString == NULL || ks__cu.GetErrorString((CUresult)result, text) != CUDA_SUCCESS)
        *text = NULL;
    return 0;
}

static void load_driver(void)
{
    /* Results are named from the entry points as far as they are resolved. */
    ks__status_cu_namer(cu_names);
    const char *path = ks__getenv(KS__DRIVER_ENV);
    if (path == NULL || path[0] == '\0')
        path = KS__DRIVER_DEFAULT;

    /* Never dlclose'd: handles and entry points live as long as the process. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        fail(KS_ERR_NO_DRIVER, NULL, CUDA_SUCCESS, "cannot load the CUDA driver '%s': %s",
             path, why ? why : "unknown dlopen error");
        return;
    }
    /* dlsym is right for cuGetProcAddress itself: it is how the driver is
     * entered. Object-to-function pointer conversion is what dlsym means on
     * POSIX; memcpy says so without a -Wpedantic warning. */
    void *p = dlsym(lib, "cuGetProcAddress_v2");
    memcpy(&get_proc_v2, &p, sizeof p);
    if (get_proc_v2 == NULL) {
        p = dlsym(lib, "cuGetProcAddress");
        memcpy(&get_proc_v1, &p, sizeof p);
    }
    if (get_proc_v2 == NULL && get_proc_v1 == NULL) {
        fail(KS_ERR_NO_DRIVER, NULL, CUDA_SUCCESS,
             "the CUDA driver '%s' lacks cuGetProcAddress (a driver for CUDA 11.3 or newer is needed)",
             path);
        return;
    }

#define KS__RESOLVE(field, name)                                  \
    do {                                                          \
        void *p_ = resolve(name);                                 \
        memcpy(&ks__cu.field, &p_, sizeof p_);                    \
    } while (0)
    KS__RESOLVE(Init, "cuInit");
    KS__RESOLVE(GetErrorName, "cuGetErrorName");
    KS__RESOLVE(GetErrorString, "cuGetErrorString");
    KS__RESOLVE(DriverGetVersion, "cuDriverGetVersion");
    KS__RESOLVE(CtxGetCurrent, "cuCtxGetCurrent");
    KS__RESOLVE(CtxSetCurrent, "cuCtxSetCurrent");
    /* Pinned to its one-argument form: for CUDA 13.0 the name means
     * cuCtxGetDevice_v2(CUdevice *, CUcontext) (cudaTypedefs.h's
     * PFN_cuCtxGetDevice_v13000). Its sibling cuCtxSynchronize, taken by name
     * for 13.0 and called without the context, failed on an H200 with
     * CUDA_ERROR_CONTEXT_IS_DESTROYED. */
    void *get_device = resolve_at("cuCtxGetDevice", 12000);
    memcpy(&ks__cu.CtxGetDevice, &get_device, sizeof get_device);
    /* Pinned too: for CUDA 12.5 and later the name means cuStreamGetCtx_v2, which
     * also returns the green context (PFN_cuStreamGetCtx_v12050); the two-argument
     * form returns the CUcontext a green stream's work runs in (cuCtxFromGreenCtx's). */
    void *stream_ctx = resolve_at("cuStreamGetCtx", 12000);
    memcpy(&ks__cu.StreamGetCtx, &stream_ctx, sizeof stream_ctx);
    KS__RESOLVE(DeviceGet, "cuDeviceGet");
    KS__RESOLVE(DeviceGetAttribute, "cuDeviceGetAttribute");
    KS__RESOLVE(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    KS__RESOLVE(LaunchKernel, "cuLaunchKernel");
    KS__RESOLVE(LibraryLoadData, "cuLibraryLoadData");
    KS__RESOLVE(LibraryUnload, "cuLibraryUnload");
    KS__RESOLVE(LibraryGetKernel, "cuLibraryGetKernel");
    KS__RESOLVE(ModuleLoadDataEx, "cuModuleLoadDataEx");
    KS__RESOLVE(ModuleUnload, "cuModuleUnload");
    KS__RESOLVE(ModuleGetFunction, "cuModuleGetFunction");
    KS__RESOLVE(LibraryGetKernelCount, "cuLibraryGetKernelCount");
    KS__RESOLVE(LibraryEnumerateKernels, "cuLibraryEnumerateKernels");
    KS__RESOLVE(KernelGetName, "cuKernelGetName");
    KS__RESOLVE(ModuleGetFunctionCount, "cuModuleGetFunctionCount");
    KS__RESOLVE(ModuleEnumerateFunctions, "cuModuleEnumerateFunctions");
    KS__RESOLVE(FuncGetName, "cuFuncGetName");
    KS__RESOLVE(CtxPushCurrent, "cuCtxPushCurrent");
    KS__RESOLVE(CtxPopCurrent, "cuCtxPopCurrent");
    KS__RESOLVE(LibraryGetGlobal, "cuLibraryGetGlobal");
    KS__RESOLVE(ModuleGetGlobal, "cuModuleGetGlobal");
    KS__RESOLVE(MemcpyHtoDAsync, "cuMemcpyHtoDAsync");
    KS__RESOLVE(MemcpyDtoHAsync, "cuMemcpyDtoHAsync");
    KS__RESOLVE(KernelGetParamInfo, "cuKernelGetParamInfo");
    KS__RESOLVE(FuncGetParamInfo, "cuFuncGetParamInfo");
    KS__RESOLVE(LaunchKernelEx, "cuLaunchKernelEx");
    KS__RESOLVE(KernelGetFunction, "cuKernelGetFunction");
    KS__RESOLVE(FuncGetAttribute, "cuFuncGetAttribute");
    KS__RESOLVE(KernelGetAttribute, "cuKernelGetAttribute");
    KS__RESOLVE(FuncSetAttribute, "cuFuncSetAttribute");
    KS__RESOLVE(KernelSetAttribute, "cuKernelSetAttribute");
    KS__RESOLVE(OccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize");
    KS__RESOLVE(StreamSynchronize, "cuStreamSynchronize");
    KS__RESOLVE(PointerGetAttributes, "cuPointerGetAttributes");
    KS__RESOLVE(PointerGetAttribute, "cuPointerGetAttribute");
    KS__RESOLVE(DeviceCanAccessPeer, "cuDeviceCanAccessPeer");
#undef KS__RESOLVE
    /* Before CUDA 12.0 there is no cuLaunchKernelEx: a stand-in that fails
     * takes its place, so the launch path calls it with no NULL test. */
    if (ks__cu.LaunchKernelEx == NULL)
        ks__cu.LaunchKernelEx = ks__launch_ex_missing;

    if (ks__cu.DriverGetVersion && ks__cu.DriverGetVersion(&ks__cu.version) != CUDA_SUCCESS)
        ks__cu.version = 0;

    static const struct { const char *name; size_t offset; } required[] = {
        {"cuInit", offsetof(ks__driver, Init)},
        {"cuGetErrorName", offsetof(ks__driver, GetErrorName)},
        {"cuGetErrorString", offsetof(ks__driver, GetErrorString)},
        {"cuDriverGetVersion", offsetof(ks__driver, DriverGetVersion)},
        {"cuCtxGetCurrent", offsetof(ks__driver, CtxGetCurrent)},
        {"cuCtxSetCurrent", offsetof(ks__driver, CtxSetCurrent)},
        {"cuCtxGetDevice", offsetof(ks__driver, CtxGetDevice)},
        {"cuDeviceGet", offsetof(ks__driver, DeviceGet)},
        {"cuDeviceGetAttribute", offsetof(ks__driver, DeviceGetAttribute)},
        {"cuDevicePrimaryCtxRetain", offsetof(ks__driver, DevicePrimaryCtxRetain)},
        {"cuLaunchKernel", offsetof(ks__driver, LaunchKernel)},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        void *fn;
        memcpy(&fn, (const char *)&ks__cu + required[i].offset, sizeof fn);
        if (fn == NULL) {
            fail(KS_ERR_NO_DRIVER, NULL, CUDA_SUCCESS,
                 "the CUDA driver '%s' (driver API version %d) lacks %s; "
                 "libkstub needs a driver for CUDA 11.3 or newer",
                 path, ks__cu.version, required[i].name);
            /* Leave nothing half-resolved behind for the fast paths to call. */
            memset(&ks__cu, 0, sizeof ks__cu);
            return;
        }
    }

    /* Context-independent loading where the driver has it (CUDA 12.0+), else
     * one module per context. KSTUB_LOADER=module forces the fallback, so it
     * can be tested on a current driver. */
    const char *loader = ks__getenv(KS__LOADER_ENV);
    int want_module = loader != NULL && strcmp(loader, "module") == 0;
    if (loader != NULL && loader[0] != '\0' && !want_module && strcmp(loader, "library") != 0) {
        /* A misspelled choice is refused at first use, as a misspelled
         * KSTUB_CHECK is, never taken silently for the default. */
        char word[320];
        ks__escape_word(word, sizeof word, loader, 64);
        fail(KS_ERR_INVALID_VALUE, NULL, CUDA_SUCCESS,
             KS__LOADER_ENV " names an unknown loader '%s' (known: library, module)", word);
        memset(&ks__cu, 0, sizeof ks__cu);
        return;
    }
    ks__cu.use_library = !want_module && ks__cu.LibraryLoadData && ks__cu.LibraryUnload &&
                         ks__cu.LibraryGetKernel;
    if (!ks__cu.use_library && !(ks__cu.ModuleLoadDataEx && ks__cu.ModuleUnload &&
                                 ks__cu.ModuleGetFunction && ks__cu.CtxPushCurrent &&
                                 ks__cu.CtxPopCurrent)) {
        fail(KS_ERR_NO_DRIVER, NULL, CUDA_SUCCESS,
             "the CUDA driver '%s' (driver API version %d) lacks both cuLibraryLoadData and "
             "cuModuleLoadDataEx; libkstub cannot load images with it",
             path, ks__cu.version);
        memset(&ks__cu, 0, sizeof ks__cu);
        return;
    }

    CUresult r = ks__cu.Init(0);
    if (r != CUDA_SUCCESS) {
        fail(KS_ERR_DRIVER, "cuInit", r, "initialising the CUDA driver '%s'", path);
        return;
    }
    load_result.status = KS_OK;
}

ks_status ks__driver_load(const char *kernel)
{
    pthread_once(&load_once, load_driver);
    if (load_result.status == KS_OK)
        return KS_OK;
    if (load_result.call)
        return ks__error_cu(load_result.status, kernel, load_result.call, load_result.result,
                            "%s", load_result.detail);
    return ks__error(load_result.status, kernel, "%s", load_result.detail);
}

KS__API ks_status ks_driver_proc(const char *name, void **fn)
{
    if (name == NULL || fn == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_driver_proc: %s is NULL",
                         name == NULL ? "the name" : "the result pointer");
    *fn = NULL;
    ks_status st = ks__driver_load(NULL);
    if (st != KS_OK)
        return st;
    *fn = resolve(name);
    if (*fn == NULL)
        return ks__error(KS_ERR_SYMBOL_NOT_FOUND, NULL,
                         "the CUDA driver (driver API version %d) has no entry point '%s' for CUDA %d",
                         ks__cu.version, name, CUDA_VERSION);
    return KS_OK;
}
