/*
 * query.c — what an application asks about a kernel: its attributes, a
 * shared-memory opt-in, and an occupancy-based 1-D launch configuration
 * (with ks_kernel_launch_n, what the generated <kernel>_n entry points call).
 */
#include <string.h>

#include "internal.h"

static ks_status func_attr(const ks_kernel *k, CUfunction fn, CUfunction_attribute attr, int *value,
                           const char *what)
{
    CUresult r = ks__cu.FuncGetAttribute(value, attr, fn);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, ks__kernel_name(k), "cuFuncGetAttribute", r, "reading %s", what);
    return KS_OK;
}

KS__API ks_status ks_kernel_info(ks_kernel *k, ks_kernel_attrs *out)
{
    if (k == NULL || out == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL, "ks_kernel_info: %s is NULL",
                         k == NULL ? "the kernel" : "the result");
    memset(out, 0, sizeof *out);
    CUfunction fn;
    CUdevice dev;
    ks_status st = ks__kernel_function(k, &fn, &dev);
    if (st != KS_OK)
        return st;
    if (ks__cu.FuncGetAttribute == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, ks__kernel_name(k), "the CUDA driver lacks cuFuncGetAttribute");
    static const struct { CUfunction_attribute attr; size_t offset; const char *what; } rows[] = {
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(ks_kernel_attrs, max_threads_per_block), "max threads"},
        {CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(ks_kernel_attrs, num_regs), "registers"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(ks_kernel_attrs, shared_static_bytes), "static shared memory"},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, offsetof(ks_kernel_attrs, max_dynamic_shared_bytes),
         "dynamic shared memory limit"},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, offsetof(ks_kernel_attrs, const_bytes), "constant memory"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(ks_kernel_attrs, local_bytes), "local memory"},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, offsetof(ks_kernel_attrs, ptx_version), "PTX version"},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, offsetof(ks_kernel_attrs, binary_version), "binary version"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int v = 0;
        st = func_attr(k, fn, rows[i].attr, &v, rows[i].what);
        if (st != KS_OK) {
            memset(out, 0, sizeof *out);
            return st;
        }
        memcpy((char *)out + rows[i].offset, &v, sizeof v);
    }
    return KS_OK;
}

KS__API ks_status ks_kernel_set_max_shared(ks_kernel *k, unsigned bytes)
{
    if (k == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_kernel_set_max_shared: kernel is NULL");
    const char *name = ks__kernel_name(k);
    CUfunction fn;
    CUdevice dev;
    ks_status st = ks__kernel_function(k, &fn, &dev);
    if (st != KS_OK)
        return st;
    int limit = 0, fixed = 0;
    st = ks__device_shared_optin(dev, &limit);
    if (st == KS_OK && ks__cu.FuncGetAttribute != NULL)
        st = func_attr(k, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &fixed, "static shared memory");
    if (st != KS_OK)
        return st;
    if ((unsigned long long)bytes + (unsigned)fixed > (unsigned long long)(unsigned)limit)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "%u bytes of dynamic shared memory (and the kernel's %d static) exceed the "
                         "device's limit of %d bytes per block",
                         bytes, fixed, limit);
    if (ks__cu.FuncSetAttribute == NULL && (ks__loader_get()->per_context || ks__cu.KernelSetAttribute == NULL))
        return ks__error(KS_ERR_UNSUPPORTED, name, "the CUDA driver lacks cuFuncSetAttribute");
    const char *call;
    CUresult r = ks__loader_get()->set_max_shared(k, fn, dev, (int)bytes, &call);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, call, r,
                            "opting '%s' in to %u bytes of dynamic shared memory", k->symbol, bytes);
    __atomic_store_n(&k->ks__max_shared, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&k->ks__occupancy, 0ull, __ATOMIC_RELAXED);
    return KS_OK;
}

/*
 * The occupancy cache, one 64-bit word so it is read and written whole:
 * bit 63 valid, bits 48-58 the block size, bits 32-47 the device, bits
 * 0-31 the dynamic shared memory it was computed for.
 */
#define OCC_VALID (1ull << 63)
static unsigned long long occ_pack(unsigned block, CUdevice dev, unsigned shared)
{
    return OCC_VALID | (unsigned long long)block << 48 | (unsigned long long)(unsigned)dev << 32 | shared;
}

KS__API ks_status ks_launch_config_1d(ks_kernel *k, size_t n, unsigned shared_bytes, ks_launch *out)
{
    if (k == NULL || out == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL, "ks_launch_config_1d: %s is NULL",
                         k == NULL ? "the kernel" : "the result");
    const char *name = ks__kernel_name(k);
    if (n == 0)
        return ks__error(KS_ERR_INVALID_VALUE, name, "ks_launch_config_1d: n is 0 (nothing to launch)");
    ks_status st = ks__driver_load(name);
    if (st != KS_OK)
        return st;

    unsigned block = 0;
    CUdevice dev;
    unsigned long long cached = __atomic_load_n(&k->ks__occupancy, __ATOMIC_RELAXED);
    if (cached != 0) {
        /* One driver call when a context is current; the full path otherwise. */
        if (ks__cu.CtxGetDevice(&dev) != CUDA_SUCCESS && (st = ks__device_current(name, &dev)) != KS_OK)
            return st;
        if (dev >= 0 && dev <= 0xffff && (cached & 0xffffffffull) == shared_bytes &&
            (cached >> 32 & 0xffff) == (unsigned)dev)
            block = (unsigned)(cached >> 48 & 0x7ff);
    }
    if (block == 0) {
        CUfunction fn;
        st = ks__kernel_function(k, &fn, &dev);
        if (st != KS_OK)
            return st;
        if (ks__cu.OccupancyMaxPotentialBlockSize == NULL)
            return ks__error(KS_ERR_UNSUPPORTED, name, "the CUDA driver lacks cuOccupancyMaxPotentialBlockSize");
        int min_grid = 0, best = 0;
        CUresult r = ks__cu.OccupancyMaxPotentialBlockSize(&min_grid, &best, fn, NULL, shared_bytes,
                                                           (int)k->max_threads);
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, name, "cuOccupancyMaxPotentialBlockSize", r,
                                "with %u bytes of dynamic shared memory", shared_bytes);
        if (best <= 0)
            return ks__error(KS_ERR_INVALID_CONFIG, name,
                             "no block size fits %u bytes of dynamic shared memory", shared_bytes);
        block = (unsigned)best;
        if (k->max_threads != 0 && block > k->max_threads)
            block = k->max_threads;
        if (block > 1024)
            block = 1024;
        if (dev >= 0 && dev <= 0xffff)
            __atomic_store_n(&k->ks__occupancy, occ_pack(block, dev, shared_bytes), __ATOMIC_RELAXED);
    }
    size_t grid = n / block + (n % block != 0);
    if (grid > KS__MAX_GRID_X)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "n = %zu needs %zu blocks of %u threads; the grid limit is %u", n, grid, block,
                         KS__MAX_GRID_X);
    *out = ks_launch_1d((unsigned)grid, block);
    out->shared_bytes = shared_bytes;
    return KS_OK;
}

KS__API ks_status ks_kernel_launch_n(ks_kernel *k, size_t n, unsigned shared_bytes, ks_stream stream,
                                     void **args)
{
    return ks_kernel_launch_n_at(k, n, shared_bytes, stream, args, NULL, 0);
}

KS__API ks_status ks_kernel_launch_n_at(ks_kernel *k, size_t n, unsigned shared_bytes, ks_stream stream,
                                        void **args, const char *file, int line)
{
    if (k == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_kernel_launch_n: kernel is NULL");
    if (n == 0)
        return KS_OK;
    ks_launch l;
    ks_status st = ks_launch_config_1d(k, n, shared_bytes, &l);
    if (st != KS_OK)
        return st;
    l.stream = stream;
    return ks_kernel_launch_at(k, &l, args, file, line);
}
