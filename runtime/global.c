/*
 * global.c — device variables: the address of a __constant__, __device__
 * or __managed__ variable in each context, proven at resolution (the
 * driver's size for the symbol must be the size kstub computed), and the
 * copies the generated accessors make to and from it.
 *
 * The fast path of a copy is launch.c's: the current context (one driver
 * call), a lock-free walk of the variable's (context, address) list, one
 * copy. The first copy in a context resolves under the load lock, loading
 * the image through the loader (library.c: cuLibraryGetGlobal; module.c:
 * cuModuleGetGlobal) and remembering the variable in the image's state, so
 * ks_image_unload forgets its addresses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static inline const char *global_name(const ks_global *g)
{
    return g->name ? g->name : g->symbol;
}

static CUdeviceptr addr_find(const ks_global *g, CUcontext ctx)
{
    for (const ks__addr_node *n = __atomic_load_n((ks__addr_node *const *)&g->ks__addrs, __ATOMIC_ACQUIRE);
         n != NULL; n = n->next)
        if (n->ctx == ctx)
            return n->ptr;
    return 0;
}

/* The message prefix names a variable, not a kernel: "variable 'c_w': ...". */
#define KS__VAR_ERR(st, g, fmt, ...) \
    ks__error((st), NULL, "variable '%s': " fmt, global_name(g), __VA_ARGS__)

static ks_status check_global(const ks_global *g)
{
    if (g->image == NULL || g->symbol == NULL || g->elem_size == 0 || g->size == 0)
        return ks__error(KS_ERR_INVALID_VALUE, NULL,
                         "the variable's description lacks its image, symbol or size");
    if (g->desc_version != KS_DESC_VERSION)
        return KS__VAR_ERR(KS_ERR_VERSION, g, "its generated code has descriptor layout %u, this "
                           "libkstub %u: generate and compile it again", g->desc_version,
                           (unsigned)KS_DESC_VERSION);
    return ks__check_versions(g->image, NULL, global_name(g));
}

/* Only under the load lock: the address of \p g in \p ctx (the current context),
 * loading the image and proving the size. */
static ks_status resolve_locked(ks_global *g, CUcontext ctx, CUdeviceptr *out)
{
    const char *name = global_name(g);
    CUdeviceptr ptr = addr_find(g, ctx);
    if (ptr != 0) {
        *out = ptr;
        return KS_OK;
    }
    const ks__loader *L = ks__loader_get();
    ks_status st = ks__image_load_locked(L, g->image, L->per_context ? ctx : NULL, name);
    if (st != KS_OK)
        return st;
    size_t bytes = 0;
    CUresult r = L->global(g->image, ctx, g->symbol, &ptr, &bytes);
    if (r == CUDA_ERROR_NOT_FOUND)
        return ks__error_cu(KS_ERR_SYMBOL_NOT_FOUND, NULL, L->global_call, r,
                            "variable '%s': symbol '%s' is not in the image of '%s'%s", name,
                            g->symbol, ks__source_name(g->image),
                            (g->flags & KS_GLOBAL_CONST)
                                ? " (it is const: a compiler may fold a const variable into "
                                  "its uses and leave no symbol, and -rdc gives one a per-file "
                                  "prefix; or a stale image)"
                                : " (a static variable of an image built with -rdc has a "
                                  "per-file prefix; or a stale image)");
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, L->global_call, r, "variable '%s': looking up '%s'",
                            name, g->symbol);
    if (bytes != g->size)
        return ks__error(KS_ERR_ABI_MISMATCH, NULL,
                         "variable '%s': the accessors copy %zu bytes (%s) but the image's '%s' "
                         "has %zu (a stale image beside a regenerated header?)",
                         name, g->size, g->type ? g->type : "?", g->symbol, bytes);
    ks__image_state *s = g->image->ks__state;
    ks__addr_node *n = malloc(sizeof *n);
    ks_global **list = NULL;
    if (n != NULL && g->ks__addrs == NULL && s != NULL) {
        list = realloc(s->globals, (s->nglobals + 1) * sizeof *list);
        if (list != NULL)
            s->globals = list;
    }
    if (n == NULL || (g->ks__addrs == NULL && list == NULL)) {
        free(n);
        return ks__error(KS_ERR_NO_MEMORY, NULL, "variable '%s': out of memory", name);
    }
    if (g->ks__addrs == NULL)
        s->globals[s->nglobals++] = g;
    n->ctx = ctx;
    n->ptr = ptr;
    n->next = g->ks__addrs;
    __atomic_store_n((ks__addr_node **)&g->ks__addrs, n, __ATOMIC_RELEASE);
    *out = ptr;
    return KS_OK;
}

/* The slow path of addr(): check, load the driver, find the context, resolve. */
static ks_status addr_slow(ks_global *g, CUdeviceptr *out) __attribute__((noinline, cold));
static ks_status addr_slow(ks_global *g, CUdeviceptr *out)
{
    const char *name = global_name(g);
    ks_status st = check_global(g);
    if (st == KS_OK)
        st = ks__driver_load(name);
    CUcontext ctx = NULL;
    if (st == KS_OK)
        st = ks__context_current(name, &ctx);
    if (st != KS_OK)
        return st;
    pthread_mutex_lock(&ks__load_lock);
    st = resolve_locked(g, ctx, out);
    pthread_mutex_unlock(&ks__load_lock);
    return st;
}

/* \p g's address in the calling thread's context. */
static inline ks_status addr(ks_global *g, CUdeviceptr *out)
{
    if (__builtin_expect(__atomic_load_n(&g->ks__addrs, __ATOMIC_ACQUIRE) != NULL, 1)) {
        CUcontext ctx = NULL;
        if (ks__cu.CtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != NULL &&
            (*out = addr_find(g, ctx)) != 0)
            return KS_OK;
    }
    return addr_slow(g, out);
}

/* KS_OK when [first, first + count) lies inside \p g and \p p is given. */
static ks_status check_range(const ks_global *g, const char *call, size_t first, const void *p, size_t count)
{
    if (g == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "%s: the variable is NULL", call);
    if (count > g->count || first > g->count - count)
        return ks__error(KS_ERR_INVALID_VALUE, NULL,
                         "variable '%s': %s of elements [%zu, %zu + %zu) is outside its %zu "
                         "elements (%s); nothing copied",
                         global_name(g), call, first, first, count, g->count, g->type ? g->type : "?");
    if (p == NULL && count != 0)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "variable '%s': %s: the host pointer is NULL",
                         global_name(g), call);
    return KS_OK;
}

static ks_status site(ks_status st, const char *file, int line)
{
    if (st != KS_OK)
        ks__error_site(file, line);
    return st;
}

/* What a copy does before its driver call: the range, the address (resolving
 * on first use) and, when checks are on, the host pointer and the trace.
 * KS_OK with *dst the address of element \p first; else the status to
 * return (KS_OK with *dst 0: nothing to copy). */
static ks_status copy_prepare_slow(ks_global *g, const char *op, size_t first, const void *p, size_t count,
                                   ks_stream stream, const char *file, int line, CUdeviceptr *dst)
    __attribute__((noinline, cold));
static ks_status copy_prepare_slow(ks_global *g, const char *op, size_t first, const void *p, size_t count,
                                   ks_stream stream, const char *file, int line, CUdeviceptr *dst)
{
    *dst = 0;
    ks_status st = check_range(g, op, first, p, count);
    CUdeviceptr base = 0;
    if (st == KS_OK)
        st = addr(g, &base);
    if (st != KS_OK || count == 0)
        return site(st, file, line);
    if (__builtin_expect(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) != 0, 0)) {
        st = ks__global_check_host(g, op, p, count * g->elem_size);
        if (st != KS_OK)
            return site(st, file, line);
        ks__global_trace(g, op, first, count, stream, file, line);
    }
    *dst = base + first * g->elem_size;
    return KS_OK;
}


/* copy_prepare_slow's answer for the usual copy (elements inside the
 * variable, a host pointer, its address known in the current context, no
 * check on) in a few contiguous lines of code (a real copy evicts the
 * caches: bench/cold.mk); anything else, copy_prepare_slow, which asks it
 * all again in the order that picks the error. */
static inline ks_status copy_prepare(ks_global *g, const char *op, size_t first, const void *p, size_t count,
                                     ks_stream stream, const char *file, int line, CUdeviceptr *dst)
{
    CUcontext ctx = NULL;
    CUdeviceptr base;
    if (__builtin_expect(g != NULL && p != NULL && count != 0 && count <= g->count && first <= g->count - count &&
                         __atomic_load_n(&g->ks__addrs, __ATOMIC_ACQUIRE) != NULL &&
                         __atomic_load_n(&ks__checks, __ATOMIC_RELAXED) == 0 &&
                         ks__cu.CtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != NULL &&
                         (base = addr_find(g, ctx)) != 0, 1)) {
        *dst = base + first * g->elem_size;
        return KS_OK;
    }
    return copy_prepare_slow(g, op, first, p, count, stream, file, line, dst);
}

static ks_status copy_failed(const ks_global *g, const char *call, CUresult r, const char *what, size_t count,
                             const char *file, int line) __attribute__((noinline, cold));
static ks_status copy_failed(const ks_global *g, const char *call, CUresult r, const char *what, size_t count,
                             const char *file, int line)
{
    return site(ks__error_cu(KS_ERR_DRIVER, NULL, call, r, "variable '%s': %s %zu elements", global_name(g),
                             what, count),
                file, line);
}

KS__API ks_status ks_global_write_at(ks_global *g, size_t first, const void *src, size_t count,
                                     ks_stream stream, const char *file, int line)
{
    CUdeviceptr dst;
    ks_status st = copy_prepare(g, "write", first, src, count, stream, file, line, &dst);
    if (st != KS_OK || dst == 0)
        return st;
    CUresult r = ks__cu.MemcpyHtoDAsync(dst, src, count * g->elem_size, (CUstream)stream);
    if (__builtin_expect(r != CUDA_SUCCESS, 0))
        return copy_failed(g, "cuMemcpyHtoDAsync", r, "writing", count, file, line);
    return KS_OK;
}

KS__API ks_status ks_global_write(ks_global *g, size_t first, const void *src, size_t count, ks_stream stream)
{
    return ks_global_write_at(g, first, src, count, stream, NULL, 0);
}

KS__API ks_status ks_global_read_at(ks_global *g, size_t first, void *dst, size_t count,
                                    ks_stream stream, const char *file, int line)
{
    CUdeviceptr src;
    ks_status st = copy_prepare(g, "read", first, dst, count, stream, file, line, &src);
    if (st != KS_OK || src == 0)
        return st;
    CUresult r = ks__cu.MemcpyDtoHAsync(dst, src, count * g->elem_size, (CUstream)stream);
    if (__builtin_expect(r != CUDA_SUCCESS, 0))
        return copy_failed(g, "cuMemcpyDtoHAsync", r, "reading", count, file, line);
    if (ks__cu.StreamSynchronize != NULL && (r = ks__cu.StreamSynchronize((CUstream)stream)) != CUDA_SUCCESS)
        return copy_failed(g, "cuStreamSynchronize", r, "reading", count, file, line);
    return KS_OK;
}

KS__API ks_status ks_global_read(ks_global *g, size_t first, void *dst, size_t count, ks_stream stream)
{
    return ks_global_read_at(g, first, dst, count, stream, NULL, 0);
}

KS__API ks_status ks_global_address(ks_global *g, void **address)
{
    if (address == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_global_address: the result pointer is NULL");
    *address = NULL;
    if (g == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_global_address: the variable is NULL");
    CUdeviceptr p = 0;
    ks_status st = addr(g, &p);
    if (st == KS_OK)
        *address = (void *)(uintptr_t)p;
    return st;
}

ks_status ks__global_range(ks_global *g, size_t first, const void *src, size_t count, CUdeviceptr *dst)
{
    ks_status st = check_range(g, "write", first, src, count);
    CUdeviceptr base = 0;
    if (st == KS_OK)
        st = addr(g, &base);
    if (st == KS_OK && __builtin_expect(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) != 0, 0))
        st = ks__global_check_host(g, "node", src, count * g->elem_size);
    if (st == KS_OK)
        *dst = base + first * g->elem_size;
    return st;
}
