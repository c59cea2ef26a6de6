/*
 * launch.c — ks_kernel_launch, the call every generated stub makes.
 *
 * The fast path, once the kernel is resolved, is: a few integer compares on
 * the configuration, one acquire load of the cached handle, one
 * cuLaunchKernel (cuLaunchKernelEx when attributes are set). No allocation,
 * no lock, no string handling; those happen only when something fails. With
 * the module fallback (drivers without cuLibrary*), one driver call more
 * picks the function of the launch's context from a short lock-free list:
 * cuStreamGetCtx for a stream the program made (a green context's, say, or
 * another context's than the current one), else cuCtxGetCurrent.
 */

#include "internal.h"

/* Limits that hold on every CUDA device (compute capability 5.0 and later);
 * the grid's x limit, KS__MAX_GRID_X, is in internal.h (query.c uses it too). */
#define KS__MAX_BLOCK_THREADS 1024u
#define KS__MAX_BLOCK_XY 1024u
#define KS__MAX_BLOCK_Z 64u
#define KS__MAX_GRID_YZ 65535u
/* Dynamic shared memory any kernel may use without opting in. */
#define KS__DEFAULT_SHARED (48u * 1024u)

/* Out of line so the fast path stays small; called only when a check failed. */
static ks_status config_error(const ks_kernel *k, const ks_launch *l)
    __attribute__((noinline, cold));
static ks_status config_error(const ks_kernel *k, const ks_launch *l)
{
    const char *name = ks__kernel_name(k);
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

/* Every limit in one pass, with no branch: x - 1 < N holds for 1 <= x <= N
 * (0 wraps), so the zero tests fold into the upper bounds; a block of
 * nonzero sides cannot have 0 threads. */
static inline int config_ok(const ks_kernel *k, const ks_launch *l)
{
    const ks_dim3 g = l->grid, b = l->block;
    /* 64-bit product: three 32-bit dimensions cannot overflow it. */
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    unsigned limit = k->max_threads - 1u < KS__MAX_BLOCK_THREADS ? k->max_threads : KS__MAX_BLOCK_THREADS;
    return (b.x - 1u < KS__MAX_BLOCK_XY) & (b.y - 1u < KS__MAX_BLOCK_XY) & (b.z - 1u < KS__MAX_BLOCK_Z) &
           (threads <= limit) & (g.x - 1u < KS__MAX_GRID_X) & (g.y - 1u < KS__MAX_GRID_YZ) &
           (g.z - 1u < KS__MAX_GRID_YZ);
}

/* Out of line: a launch asking for more than 48 KiB of dynamic shared memory
 * than the kernel was opted in to. Says which limit it hit. */
static ks_status shared_error(ks_kernel *k, const ks_launch *l) __attribute__((noinline, cold));
static ks_status shared_error(ks_kernel *k, const ks_launch *l)
{
    const char *name = ks__kernel_name(k);
    unsigned opted = __atomic_load_n(&k->ks__max_shared, __ATOMIC_RELAXED);
    CUdevice dev;
    int limit = 0;
    if (ks__driver_load(name) == KS_OK && ks__device_current(name, &dev) == KS_OK &&
        ks__device_shared_optin(dev, &limit) == KS_OK && limit > 0 && l->shared_bytes > (unsigned)limit)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "%u bytes of dynamic shared memory exceed the device's limit of %d bytes per block",
                         l->shared_bytes, limit);
    return ks__error(KS_ERR_INVALID_CONFIG, name,
                     "%u bytes of dynamic shared memory are more than the %u the kernel may use; "
                     "call ks_kernel_set_max_shared(kernel, %u) first",
                     l->shared_bytes, opted > KS__DEFAULT_SHARED ? opted : KS__DEFAULT_SHARED,
                     l->shared_bytes);
}

/* Every flag ks_launch_attrs may carry. */
#define KS__LAUNCH_FLAGS (KS_LAUNCH_COOPERATIVE | KS_LAUNCH_PDL | KS_LAUNCH_PRIORITY)

/* Attributes are checked before any driver call; this out-of-line part only
 * where launch_at's one test saw a cluster or an unknown flag. */
static ks_status check_attrs(const ks_kernel *k, const ks_launch *l) __attribute__((noinline));
static ks_status check_attrs(const ks_kernel *k, const ks_launch *l)
{
    const ks_launch_attrs *a = l->attrs;
    const char *name = ks__kernel_name(k);
    const ks_dim3 c = a->cluster, g = l->grid;
    if (a->flags & ~KS__LAUNCH_FLAGS)
        return ks__error(KS_ERR_INVALID_VALUE, name, "unknown launch attribute flags 0x%x",
                         a->flags & ~KS__LAUNCH_FLAGS);
    if (c.x == 0 && c.y == 0 && c.z == 0)
        return KS_OK;
    if (c.x == 0 || c.y == 0 || c.z == 0)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "cluster (%u, %u, %u) must have every dimension >= 1 (or all 0 for none)",
                         c.x, c.y, c.z);
    if (g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0)
        return ks__error(KS_ERR_INVALID_CONFIG, name,
                         "grid (%u, %u, %u) is not a whole number of clusters (%u, %u, %u)",
                         g.x, g.y, g.z, c.x, c.y, c.z);
    return KS_OK;
}

ks_status ks__launch_check(ks_kernel *k, const ks_launch *l)
{
    if (!config_ok(k, l))
        return config_error(k, l);
    if (l->shared_bytes > KS__DEFAULT_SHARED &&
        l->shared_bytes > __atomic_load_n(&k->ks__max_shared, __ATOMIC_RELAXED))
        return shared_error(k, l);
    return KS_OK;
}

static inline CUresult launch(void *handle, const ks_launch *l, void **args)
{
    /* A CUkernel is accepted wherever cuLaunchKernel takes a CUfunction. */
    return ks__cu.LaunchKernel((CUfunction)handle, l->grid.x, l->grid.y, l->grid.z,
                               l->block.x, l->block.y, l->block.z, l->shared_bytes,
                               l->stream, args, NULL);
}

/* cuLaunchKernelEx with the attributes on the stack. Only the entries used
 * are written, each whole (a compound literal zeroes the rest of its value,
 * as the hand-written call's memset does), and the configuration in one
 * initialiser. The flags' attributes each hold one int at the start of the
 * value union (.cooperative, .programmaticStreamSerializationAllowed and
 * .priority), so one loop over the set bits writes them all, each bit's
 * attribute id taken from a constant (no table in memory): fewer lines of
 * code and data than a store sequence per flag, which is what a launch pays
 * when the previous one evicted the caches (bench/cold.mk). */
#define KS__FLAG_IDS 0x080602u   /* byte i: the attribute id of flag bit i */
_Static_assert(KS_LAUNCH_COOPERATIVE == 1u << 0 && CU_LAUNCH_ATTRIBUTE_COOPERATIVE == 0x02 &&
               KS_LAUNCH_PDL == 1u << 1 && CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION == 0x06 &&
               KS_LAUNCH_PRIORITY == 1u << 2 && CU_LAUNCH_ATTRIBUTE_PRIORITY == 0x08,
               "KS__FLAG_IDS maps each KS_LAUNCH_* bit to its CUlaunchAttributeID");
static CUresult launch_ex(void *handle, const ks_launch *l, void **args)
{
    const ks_launch_attrs *a = l->attrs;
    CUlaunchAttribute at[4], *p = at;
    if (__builtin_expect(a->cluster.x != 0, 0))
        *p++ = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                                   .value.clusterDim = {a->cluster.x, a->cluster.y, a->cluster.z}};
    for (unsigned f = a->flags & KS__LAUNCH_FLAGS; f != 0; f &= f - 1) {
        unsigned bit = (unsigned)__builtin_ctz(f);
        *p++ = (CUlaunchAttribute){.id = (CUlaunchAttributeID)((KS__FLAG_IDS >> (8 * bit)) & 0xffu),
                                   .value.priority = bit == 2 ? a->priority : 1};
    }
    const CUlaunchConfig cfg = {
        .gridDimX = l->grid.x, .gridDimY = l->grid.y, .gridDimZ = l->grid.z,
        .blockDimX = l->block.x, .blockDimY = l->block.y, .blockDimZ = l->block.z,
        .sharedMemBytes = l->shared_bytes, .hStream = l->stream, .attrs = at,
        .numAttrs = (unsigned)(p - at),
    };
    /* Never NULL: ks__launch_ex_missing stands in on a driver without it. */
    return ks__cu.LaunchKernelEx(&cfg, (CUfunction)handle, args, NULL);
}

/* Only in the fallback's slow branch: resolve \p k in \p ctx, a stream's context,
 * with it pushed for the load (unless it is current) and popped after. */
static ks_status resolve_pushed(ks_kernel *k, CUcontext ctx, CUfunction *fn) __attribute__((noinline, cold));
static ks_status resolve_pushed(ks_kernel *k, CUcontext ctx, CUfunction *fn)
{
    int pushed;
    CUresult r = ks__context_enter(ctx, &pushed);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_NO_CONTEXT, ks__kernel_name(k), "cuCtxPushCurrent", r,
                            "making the launch stream's context current to load the image there");
    ks_status st = ks__kernel_resolve_in(k, ctx, fn);
    ks__context_leave(pushed);
    return st;
}

/* The fallback's per-context function: out of line, off the library path. A
 * kernel runs in its stream's context, so a stream the program made picks the
 * function of that context (cuStreamGetCtx, instead of cuCtxGetCurrent: one
 * driver call either way); the default streams, the current context's. */
static ks_status module_function(ks_kernel *k, CUstream stream, void **handle) __attribute__((noinline));
static ks_status module_function(ks_kernel *k, CUstream stream, void **handle)
{
    CUcontext ctx = ks__stream_is_own(stream) ? ks__stream_context(stream) : NULL;
    int of_stream = ctx != NULL;
    if (!of_stream) {
        CUresult r = ks__cu.CtxGetCurrent(&ctx);
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_NO_CONTEXT, ks__kernel_name(k), "cuCtxGetCurrent", r, NULL);
    }
    CUfunction fn = ctx ? ks__function_find(k, ctx) : NULL;
    if (__builtin_expect(fn == NULL, 0)) {
        ks_status st = KS_OK;
        if (of_stream)
            st = resolve_pushed(k, ctx, &fn);
        else if ((st = ctx ? KS_OK : ks__context_current(ks__kernel_name(k), &ctx)) == KS_OK &&
                 (fn = ks__function_find(k, ctx)) == NULL)
            st = ks__kernel_resolve_in(k, ctx, &fn);
        if (st != KS_OK)
            return st;
    }
    *handle = (void *)fn;
    return KS_OK;
}

/* A launch the driver refused: the retries a missing context allows, else
 * the error. Out of line, so the launch path keeps no frame for it. */
static ks_status launch_failed(ks_kernel *k, const ks_launch *l, void **args, void *handle, CUresult r)
    __attribute__((noinline, cold));
static ks_status launch_failed(ks_kernel *k, const ks_launch *l, void **args, void *handle, CUresult r)
{
    const char *call = l->attrs == NULL ? "cuLaunchKernel" : "cuLaunchKernelEx";
    if (l->attrs != NULL && ks__cu.LaunchKernelEx == ks__launch_ex_missing)
        return ks__error(KS_ERR_UNSUPPORTED, ks__kernel_name(k),
                         "launch attributes need cuLaunchKernelEx (a driver for CUDA 12.0 or newer)");
    if (r == CUDA_ERROR_INVALID_CONTEXT && ks__stream_is_own(l->stream)) {
        /* A CUfunction on a stream of a context that is not current (the module
         * fallback, from a thread with none): launch with the stream's pushed. */
        int pushed;
        if (ks__context_enter(ks__stream_context(l->stream), &pushed) == CUDA_SUCCESS && pushed) {
            r = l->attrs == NULL ? launch(handle, l, args) : launch_ex(handle, l, args);
            ks__context_leave(pushed);
            if (r == CUDA_SUCCESS)
                return KS_OK;
        }
    }
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        /* Checking the context on every launch would cost a driver call;
         * instead a thread without one learns it here, once. */
        ks_status st = ks__context_make_current(ks__kernel_name(k));
        if (st == KS_ERR_NO_CONTEXT)
            return st;
        if (st == KS_OK) {
            r = l->attrs == NULL ? launch(handle, l, args) : launch_ex(handle, l, args);
            if (r == CUDA_SUCCESS)
                return KS_OK;
        }
    }
    return ks__error_cu(KS_ERR_LAUNCH, ks__kernel_name(k), call, r, NULL);
}

/* The launch itself, once the configuration is checked and the handle known:
 * inlined into launch_at, so a launch that succeeds is the driver call and
 * one compare. */
static inline ks_status launch_now(ks_kernel *k, const ks_launch *l, void **args, void *handle)
{
    CUresult r = l->attrs == NULL ? launch(handle, l, args) : launch_ex(handle, l, args);
    if (__builtin_expect(r == CUDA_SUCCESS, 1))
        return KS_OK;
    return launch_failed(k, l, args, handle, r);
}

ks_status ks__launch_handle(ks_kernel *k, const ks_launch *l, void **args, void *handle)
{
    return launch_now(k, l, args, handle);
}

/*
 * The checked launch, the slow branch when any check is on. When pointers
 * and extents are the only checks on and the free watch's cache answers for
 * every pointer (pointers.c), the launch and nothing else: no hook, no
 * table, no error text but the call site's. Else check.c's before hooks,
 * the launch, its after hooks (check.c never launches).
 */
static ks_status launch_checked(ks_kernel *k, const ks_launch *l, void **args, void *handle,
                                const char *file, int line) __attribute__((noinline, cold));
static ks_status launch_checked(ks_kernel *k, const ks_launch *l, void **args, void *handle,
                                const char *file, int line)
{
    unsigned checks = __atomic_load_n(&ks__checks, __ATOMIC_RELAXED);
    if (!(checks & ~(unsigned)(KS_CHECK_POINTERS | KS_CHECK_EXTENTS)) && ks__pointers_quick(k, args, checks)) {
        ks_status st = launch_now(k, l, args, handle);
        if (st != KS_OK)
            ks__error_site(file, line);
        return st;
    }
    ks__checked c = {k, l, args, handle, file, line, 0};
    size_t ran;
    ks_status st = ks__checks_before(&c, &ran);
    if (st == KS_OK)
        st = ks__launch_handle(k, l, args, handle);
    return ks__checks_after(&c, ran, st);
}

/* Every launch but the usual one: a NULL argument, a configuration that may
 * be refused, more than 48 KiB of dynamic shared memory, a cluster or an
 * unknown attribute flag, a kernel not yet resolved, the module fallback.
 * Out of line, so the usual launch's code is a few contiguous
 * lines (a real launch evicts the caches: each line misses again per call). */
static ks_status launch_slow(ks_kernel *k, const ks_launch *l, void **args, const char *file, int line)
    __attribute__((noinline, cold));
static ks_status launch_slow(ks_kernel *k, const ks_launch *l, void **args, const char *file, int line)
{
    if (k == NULL || l == NULL || (args == NULL && k->nparams != 0))
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL,
                         "ks_kernel_launch: %s is NULL",
                         k == NULL ? "the kernel" : l == NULL ? "the launch configuration"
                                                              : "the argument array");
    if (!config_ok(k, l))
        return config_error(k, l);
    if (__builtin_expect(l->shared_bytes > KS__DEFAULT_SHARED, 0) &&
        l->shared_bytes > __atomic_load_n(&k->ks__max_shared, __ATOMIC_RELAXED))
        return shared_error(k, l);
    /* One test for the usual attributes (known flags, no cluster); the rest out of line. */
    const ks_launch_attrs *a = l->attrs;
    if (a != NULL && __builtin_expect(((a->flags & ~KS__LAUNCH_FLAGS) | a->cluster.x | a->cluster.y | a->cluster.z) != 0, 0)) {
        ks_status st = check_attrs(k, l);
        if (st != KS_OK)
            return st;
    }

    void *handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    if (__builtin_expect(handle == NULL, 0)) {
        /* A misspelled KSTUB_CHECK is reported before the driver is
         * needed: no driver, no image, must not hide it. */
        ks_status st = ks__checks_refuse(k, file, line);
        if (st != KS_OK)
            return st;
        st = ks__kernel_resolve_on(k, l->stream);
        if (st != KS_OK)
            return st;
        handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    }
    /* The driver is loaded once a handle exists, so ks__cu is readable. */
    if (__builtin_expect(!ks__cu.use_library, 0)) {
        ks_status st = module_function(k, l->stream, &handle);
        if (st != KS_OK)
            return st;
    }
    /* The one branch the run-time checks cost when they are off (check.c). */
    if (__builtin_expect(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) != 0, 0))
        return launch_checked(k, l, args, handle, file, line);
    return launch_now(k, l, args, handle);
}


/* The usual launch: a resolved kernel through cuLibrary, a configuration
 * within every limit, at most 48 KiB of dynamic shared memory, attributes
 * without a cluster (then the checks, if on); anything else is launch_slow's (which tests
 * all of it again, in the order that picks the error to report). */
static inline __attribute__((always_inline)) ks_status launch_at(ks_kernel *k, const ks_launch *l, void **args,
                                                                 const char *file, int line)
{
    void *handle;
    const ks_launch_attrs *a;
    if (__builtin_expect(k == NULL || l == NULL || (args == NULL && k->nparams != 0) || !config_ok(k, l) ||
                         l->shared_bytes > KS__DEFAULT_SHARED ||
                         ((a = l->attrs) != NULL &&
                          ((a->flags & ~KS__LAUNCH_FLAGS) | a->cluster.x | a->cluster.y | a->cluster.z) != 0) ||
                         (handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE)) == NULL ||
                         !ks__cu.use_library, 0))
        return launch_slow(k, l, args, file, line);
    /* The one branch the run-time checks cost when they are off (check.c). */
    if (__builtin_expect(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) != 0, 0))
        return launch_checked(k, l, args, handle, file, line);
    return launch_now(k, l, args, handle);
}

/* Aligned to a cache line: the usual launch's code (launch_at, inlined) spans
 * as few lines as its length allows. */
KS__API __attribute__((aligned(64))) ks_status ks_kernel_launch(ks_kernel *k, const ks_launch *l, void **args)
{
    return launch_at(k, l, args, NULL, 0);
}

KS__API __attribute__((aligned(64))) ks_status ks_kernel_launch_at(ks_kernel *k, const ks_launch *l, void **args,
                                                                   const char *file, int line)
{
    return launch_at(k, l, args, file, line);
}
