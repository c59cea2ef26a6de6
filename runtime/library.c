/*
 * library.c — the context-independent loader (CUDA 12.0+): one CUlibrary
 * per image, one CUkernel per kernel, valid in every context. Its entries
 * in the ks__loader table; load.c calls them under the load lock.
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

static ks_status library_load(ks_image *img, CUcontext ctx, const char *kernel)
{
    (void)ctx;
    if (img->ks__library != NULL)
        return KS_OK;
    ks__image_state *s = ks__image_state_get(img, kernel);
    if (s == NULL)
        return KS_ERR_NO_MEMORY;
    ks_status st = ks__image_prepare(img, s, kernel);
    if (st != KS_OK)
        return st;

    CUjit_option opts[2];
    void *vals[2];
    unsigned nopts = ks__jit_options(s, opts, vals);

    CUlibrary lib = NULL;
    CUresult r = ks__cu.LibraryLoadData(&lib, s->bytes, opts, vals, nopts, NULL, NULL, 0);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        st = ks__context_make_current(kernel);
        if (st == KS_ERR_NO_CONTEXT) {
            ks__image_unprepare(s);
            return st;
        }
        nopts = ks__jit_options(s, opts, vals);
        if (st == KS_OK)
            r = ks__cu.LibraryLoadData(&lib, s->bytes, opts, vals, nopts, NULL, NULL, 0);
    }
    if (r != CUDA_SUCCESS) {
        ks__load_failed(img, s, kernel, "cuLibraryLoadData", r);
        ks__image_unprepare(s);
        return KS_ERR_LOAD;
    }
    __atomic_store_n(&img->ks__library, (void *)lib, __ATOMIC_RELEASE);
    return KS_OK;
}

static CUresult library_lookup(ks_image *img, CUcontext ctx, const char *symbol, void **handle)
{
    (void)ctx;
    CUkernel kern = NULL;
    CUresult r = ks__cu.LibraryGetKernel(&kern, (CUlibrary)img->ks__library, symbol);
    *handle = (void *)kern;
    return r;
}

/* A variable's address in the current context: cuLibraryGetGlobal. */
static CUresult library_global(ks_image *img, CUcontext ctx, const char *symbol, CUdeviceptr *ptr,
                               size_t *bytes)
{
    (void)ctx;
    return ks__cu.LibraryGetGlobal(ptr, bytes, (CUlibrary)img->ks__library, symbol);
}

static CUresult library_count(void *lib, unsigned *n)
{
    return ks__cu.LibraryGetKernelCount(n, (CUlibrary)lib);
}

static CUresult library_enumerate(void *lib, void **all, unsigned n)
{
    return ks__cu.LibraryEnumerateKernels((CUkernel *)all, n, (CUlibrary)lib);
}

static CUresult library_list(ks_image *img, CUcontext ctx, void ***handles, unsigned *n, const char **call)
{
    (void)ctx;
    return ks__image_list(img->ks__library,
                          ks__cu.LibraryGetKernelCount ? library_count : NULL, "cuLibraryGetKernelCount",
                          ks__cu.LibraryEnumerateKernels ? library_enumerate : NULL, "cuLibraryEnumerateKernels",
                          handles, n, call);
}

static CUresult library_name(const void *handle, const char **name, const char **call)
{
    *call = "cuKernelGetName";
    if (ks__cu.KernelGetName == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    return ks__cu.KernelGetName(name, (CUkernel)(uintptr_t)handle);
}

static void *library_find(const ks_kernel *k, CUcontext ctx)
{
    (void)ctx;
    return __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
}

static ks_status library_adopt(ks_kernel *k, CUcontext ctx, const char *kernel, void *handle)
{
    (void)k, (void)ctx, (void)kernel, (void)handle;
    return KS_OK;               /* the one handle is published by load.c */
}

static int library_has_param_info(void)
{
    return ks__cu.KernelGetParamInfo != NULL;
}

static CUresult library_param_info(const void *handle, size_t i, size_t *off, size_t *size)
{
    return ks__cu.KernelGetParamInfo((CUkernel)(uintptr_t)handle, i, off, size);
}

static ks_status library_function(ks_kernel *k, CUcontext ctx, const char *kernel, CUfunction *fn)
{
    (void)ctx;
    if (ks__cu.KernelGetFunction == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, kernel, "the CUDA driver lacks cuKernelGetFunction");
    CUresult r = ks__cu.KernelGetFunction(fn, (CUkernel)__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE));
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, kernel, "cuKernelGetFunction", r,
                            "getting '%s' for the current context", k->symbol);
    return KS_OK;
}

static CUresult library_set_max_shared(ks_kernel *k, CUfunction fn, CUdevice dev, int bytes, const char **call)
{
    if (ks__cu.KernelSetAttribute != NULL) {
        *call = "cuKernelSetAttribute";
        return ks__cu.KernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes,
                                         (CUkernel)__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE), dev);
    }
    *call = "cuFuncSetAttribute";
    return ks__cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

static ks_status library_unload(ks_image *img)
{
    CUlibrary lib = (CUlibrary)img->ks__library;
    if (lib == NULL)
        return KS_OK;
    __atomic_store_n(&img->ks__library, NULL, __ATOMIC_RELEASE);
    CUresult r = ks__cu.LibraryUnload(lib);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuLibraryUnload", r, "unloading the image of '%s'",
                            ks__source_name(img));
    return KS_OK;
}

/* A node launches the one CUkernel; ctx NULL: the context current at launch. */
static ks_status library_node_target(ks_kernel *k, CUDA_KERNEL_NODE_PARAMS *p, CUfunction fn, const char *kernel)
{
    (void)fn, (void)kernel;
    p->kern = (CUkernel)__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    return KS_OK;
}

static int library_node_is(const ks_kernel *k, const CUDA_KERNEL_NODE_PARAMS *q)
{
    void *handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    return handle != NULL && (void *)q->kern == handle;
}

const ks__loader ks__library_loader = KS__LOADER_TABLE(library, 0, "cuLibraryGetKernel", "cuKernelGetParamInfo", "cuLibraryGetGlobal");
