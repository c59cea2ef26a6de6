/*
 * launch.c — ks_kernel_launch, the call every generated stub makes.
 *
 * The fast path, once the kernel is resolved, is: a few integer compares on
 * the configuration, one acquire load of the cached handle, one
 * cuLaunchKernel. No allocation, no lock, no string handling; those happen
 * only when something fails.
 */
#include "internal.h"

/* Limits that hold on every CUDA device (compute capability 5.0 and later). */
#define KS__MAX_BLOCK_THREADS 1024u
#define KS__MAX_BLOCK_XY 1024u
#define KS__MAX_BLOCK_Z 64u
#define KS__MAX_GRID_X 0x7fffffffu
#define KS__MAX_GRID_YZ 65535u

static const char *kernel_name(const ks_kernel *k)
{
    return k->name ? k->name : k->symbol;
}

/* Out of line so the fast path stays small; called only when a check failed. */
static ks_status config_error(const ks_kernel *k, const ks_launch *l)
    __attribute__((noinline, cold));
static ks_status config_error(const ks_kernel *k, const ks_launch *l)
{
    const char *name = kernel_name(k);
    const ks_dim3 g = l->grid, b = l->block;
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "grid (%u, %u, %u) and block (%u, %u, %u) must have every dimension >= 1",
                         g.x, g.y, g.z, b.x, b.y, b.z);
    if (threads > KS__MAX_BLOCK_THREADS)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "block (%u, %u, %u) has %llu threads; the limit is %u",
                         b.x, b.y, b.z, threads, KS__MAX_BLOCK_THREADS);
    if (k->max_threads != 0 && threads > k->max_threads)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "block (%u, %u, %u) has %llu threads but the kernel's __launch_bounds__ allows %u",
                         b.x, b.y, b.z, threads, k->max_threads);
    if (b.x > KS__MAX_BLOCK_XY || b.y > KS__MAX_BLOCK_XY || b.z > KS__MAX_BLOCK_Z)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "block (%u, %u, %u) exceeds the per-dimension limits (%u, %u, %u)",
                         b.x, b.y, b.z, KS__MAX_BLOCK_XY, KS__MAX_BLOCK_XY, KS__MAX_BLOCK_Z);
    return ks__error(KS_ERR_INVALID_CONFIG, name,
                     "grid (%u, %u, %u) exceeds the limits (%u, %u, %u)",
                     g.x, g.y, g.z, KS__MAX_GRID_X, KS__MAX_GRID_YZ, KS__MAX_GRID_YZ);
}

static int config_ok(const ks_kernel *k, const ks_launch *l)
{
    const ks_dim3 g = l->grid, b = l->block;
    /* 64-bit product: three 32-bit dimensions cannot overflow it. */
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    unsigned long long limit = k->max_threads ? k->max_threads : KS__MAX_BLOCK_THREADS;
    if (limit > KS__MAX_BLOCK_THREADS)
        limit = KS__MAX_BLOCK_THREADS;
    return threads != 0 && threads <= limit &&
           b.x <= KS__MAX_BLOCK_XY && b.y <= KS__MAX_BLOCK_XY && b.z <= KS__MAX_BLOCK_Z &&
           g.x != 0 && g.y != 0 && g.z != 0 &&
           g.x <= KS__MAX_GRID_X && g.y <= KS__MAX_GRID_YZ && g.z <= KS__MAX_GRID_YZ;
}

static CUresult launch(void *handle, const ks_launch *l, void **args)
{
    /* A CUkernel is accepted wherever cuLaunchKernel takes a CUfunction. */
    return ks__cu.LaunchKernel((CUfunction)handle, l->grid.x, l->grid.y, l->grid.z,
                               l->block.x, l->block.y, l->block.z, l->shared_bytes,
                               l->stream, args, NULL);
}

KS__API ks_status ks_kernel_launch(ks_kernel *k, const ks_launch *l, void **args)
{
    if (k == NULL || l == NULL || (args == NULL && k->nparams != 0))
        return ks__error(KS_ERR_INVALID_VALUE, k ? kernel_name(k) : NULL,
                         "ks_kernel_launch: %s is NULL",
                         k == NULL ? "the kernel" : l == NULL ? "the launch configuration"
                                                              : "the argument array");
    if (!config_ok(k, l))
        return config_error(k, l);
    if (l->attrs != NULL)
        /* Where cuLaunchKernelEx support will go. */
        return ks__error(KS_ERR_UNSUPPORTED, kernel_name(k),
                         "launch attributes arrive with cuLaunchKernelEx support");

    void *handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    if (__builtin_expect(handle == NULL, 0)) {
        ks_status st = ks_kernel_resolve(k);
        if (st != KS_OK)
            return st;
        handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    }

    CUresult r = launch(handle, l, args);
    if (__builtin_expect(r == CUDA_SUCCESS, 1))
        return KS_OK;
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        /* Checking the context on every launch would cost a driver call;
         * instead a thread without one learns it here, once. */
        ks_status st = ks__context_make_current(kernel_name(k));
        if (st == KS_ERR_NO_CONTEXT)
            return st;
        if (st == KS_OK) {
            r = launch(handle, l, args);
            if (r == CUDA_SUCCESS)
                return KS_OK;
        }
    }
    return ks__error_cu(KS_ERR_LAUNCH, kernel_name(k), "cuLaunchKernel", r, NULL);
}
