/*
 * load.c — the slow path: loading an image, resolving a kernel's handle with
 * the load-time checks (descriptor version, ABI), and unloading. How an
 * image is loaded is the ks__loader's business (library.c: one
 * context-independent CUlibrary; module.c: one CUmodule per context); the
 * bytes it loads come from image.c, contexts from context.c.
 *
 * Everything here runs under one process-wide mutex, the load lock (image.c
 * owns it: what it guards is image state); the launch fast path never
 * takes it. Results are published with release stores and read by the
 * fast path with acquire loads, so a thread that sees a handle also sees
 * everything written before it. Per-context lists only grow until unload,
 * which the caller must not run concurrently with launches (kstub.h).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "symbol.h"

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

/* Only under the load lock: load \p img; a failed first load keeps nothing. */
static ks_status load_locked(const ks__loader *L, ks_image *img, CUcontext ctx, const char *kernel)
{
    return ks__image_load_locked(L, img, ctx, kernel);
}

ks_status ks__image_load_locked(const ks__loader *L, ks_image *img, CUcontext ctx, const char *kernel)
{
    ks_status st = L->load(img, ctx, kernel);
    if (st != KS_OK)
        ks__image_release_idle(img);
    return st;
}

/* Load the driver, then pick its loader and the context it loads into (the
 * current one, made current if need be; NULL for the library loader). */
static ks_status loader_and_context(const char *kernel, const ks__loader **L, CUcontext *ctx)
{
    *L = NULL;
    *ctx = NULL;
    /* KSTUB_CHECK is read here, where every kernel's driver is resolved:
     * before any launch can reach its check branch (check.c). */
    ks__checks_from_env();
    ks_status st = ks__driver_load(kernel);
    if (st != KS_OK)
        return st;
    *L = ks__loader_get();
    return (*L)->per_context ? ks__context_current(kernel, ctx) : KS_OK;
}

KS__API ks_status ks_image_load(ks_image *img)
{
    if (img == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_load: image is NULL");
    if (__atomic_load_n(&img->ks__library, __ATOMIC_ACQUIRE) != NULL)
        return KS_OK;
    const ks__loader *L;
    CUcontext ctx;
    ks_status st = ks__check_versions(img, NULL, NULL);
    if (st == KS_OK)
        st = loader_and_context(NULL, &L, &ctx);
    if (st != KS_OK)
        return st;
    pthread_mutex_lock(&ks__load_lock);
    st = load_locked(L, img, ctx, NULL);
    pthread_mutex_unlock(&ks__load_lock);
    return st;
}

/* ---- kernels ----------------------------------------------------------------- */

/*
 * Compare the parameter layout the driver reports for the loaded kernel with
 * the one the stub packs. A mismatch means the stub would write arguments
 * where the kernel does not read them.
 */
static ks_status check_abi(const ks__loader *L, const ks_kernel *k, const void *handle, const char *name)
{
    if (!L->has_param_info())
        return KS_OK;           /* driver older than CUDA 12.4: nothing to compare against */
    const char *hint = "(a stale image beside a regenerated header?)";
    int offsets_comparable = 1;
    /* Ask one past the stub's count to learn whether the image has more. */
    for (unsigned i = 0; i <= k->nparams; i++) {
        size_t off = 0, size = 0;
        CUresult r = L->param_info(handle, i, &off, &size);
        /* The query needs a context; a thread without one gets device 0's
         * primary context, as a launch would (seen on an H200, driver 580). */
        if (r == CUDA_ERROR_INVALID_CONTEXT && ks__context_make_current(name) == KS_OK)
            r = L->param_info(handle, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) {
            if (i == k->nparams)
                return KS_OK;
            return ks__error(KS_ERR_ABI_MISMATCH, name,
                             "the loaded kernel '%s' has %u parameters but the stub packs %u %s",
                             k->symbol, i, k->nparams, hint);
        }
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, name, L->param_info_call, r,
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
        ks__load_failed(k->image, s, name, call, r);
        return KS_ERR_LOAD;
    }
    if (r == CUDA_ERROR_NOT_FOUND)
        return ks__error_cu(KS_ERR_SYMBOL_NOT_FOUND, name, call, r,
                            "symbol '%s' is not in the image of '%s'", k->symbol, ks__source_name(k->image));
    return ks__error_cu(KS_ERR_DRIVER, name, call, r, "looking up symbol '%s'", k->symbol);
}

/* Only under the load lock: the one kernel of \p k's image that \p k's
 * symbol pattern (symbol.h) matches, from the image's own kernel list. Two
 * that match are refused with both names: launching either could be wrong. */
static ks_status lookup_listed(const ks__loader *L, const ks_kernel *k, CUcontext ctx, const char *name,
                               void **handle)
{
    void **all = NULL;
    unsigned n = 0;
    const char *call = NULL;
    CUresult r = L->list(k->image, ctx, &all, &n, &call);
    const char *found = NULL, *other_file = NULL;
    ks_status st = KS_OK;
    for (unsigned i = 0; r == CUDA_SUCCESS && st == KS_OK && i < n; i++) {
        const char *sym = NULL;
        r = L->name(all[i], &sym, &call);
        if (r != CUDA_SUCCESS || sym == NULL)
            continue;
        if (!ks__symbol_match(k->symbol, sym, 0)) {
            if (other_file == NULL && ks__symbol_match(k->symbol, sym, 1))
                other_file = sym;
        } else if (found != NULL) {
            st = ks__error(KS_ERR_SYMBOL_AMBIGUOUS, name,
                           "both '%s' and '%s' in the image of '%s' match '%s' (internal linkage: "
                           "matched without the part that differs per compilation); build the image "
                           "from files of different names", found, sym, ks__source_name(k->image), k->symbol);
        } else {
            found = sym;
            *handle = all[i];
        }
    }
    free(all);
    if (st != KS_OK)
        return st;
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return ks__error(KS_ERR_UNSUPPORTED, name, "the CUDA driver lacks %s, which finding '%s' needs "
                         "(internal linkage: its name differs per compilation; CUDA 12.4 or newer)",
                         call, k->symbol);
    if (r != CUDA_SUCCESS)
        return lookup_failed(k, name, call, r);
    if (found == NULL) {
        if (other_file != NULL)
            return ks__error(KS_ERR_SYMBOL_NOT_FOUND, name, "no kernel in the image of '%s' matches '%s'; "
                             "'%s' would but names another file (was the image compiled from a file "
                             "of another name?)", ks__source_name(k->image), k->symbol, other_file);
        return ks__error(KS_ERR_SYMBOL_NOT_FOUND, name, "no kernel in the image of '%s' matches '%s' "
                         "(internal linkage: matched without the part that differs per compilation)",
                         ks__source_name(k->image), k->symbol);
    }
    return KS_OK;
}

/* Only under the load lock: \p k's handle by its symbol, or for a pattern by
 * the plain name it has in a whole-program image, else from the image's list. */
static ks_status lookup(const ks__loader *L, const ks_kernel *k, CUcontext ctx, const char *name,
                        void **handle)
{
    const char *plain = ks__symbol_plain(k->symbol);
    if (plain != NULL) {
        CUresult r = L->lookup(k->image, ctx, plain, handle);
        if (r == CUDA_SUCCESS)
            return KS_OK;
        if (r != CUDA_ERROR_NOT_FOUND || plain == k->symbol)
            return lookup_failed(k, name, L->lookup_call, r);
    }
    return lookup_listed(L, k, ctx, name, handle);
}

/* Only under the load lock: \p k's handle in \p ctx (the current context; NULL
 * for the library loader), loading its image and checking it as needed. */
static ks_status resolve_locked(ks_kernel *k, CUcontext ctx, const char *name, void **out)
{
    const ks__loader *L = ks__loader_get();
    void *handle = L->find(k, ctx);
    if (handle != NULL) {
        *out = handle;
        return KS_OK;
    }
    ks_status st = load_locked(L, k->image, ctx, name);
    if (st != KS_OK)
        return st;
    st = lookup(L, k, ctx, name, &handle);
    if (st != KS_OK)
        return st;
    st = check_abi(L, k, handle, name);
    if (st == KS_OK)
        st = L->adopt(k, ctx, name, handle);
    if (st != KS_OK)
        return st;              /* not published: every launch reports it again */
    if (k->ks__handle == NULL) {
        /* Remember k for unload, then publish its handle. */
        k->ks__next = k->image->ks__kernels;
        k->image->ks__kernels = k;
        __atomic_store_n(&k->ks__handle, handle, __ATOMIC_RELEASE);
    }
    *out = handle;
    return KS_OK;
}

static ks_status check_kernel(const ks_kernel *k, const char *name)
{
    if (k->image == NULL || k->symbol == NULL || (k->nparams != 0 && k->params == NULL))
        return ks__error(KS_ERR_INVALID_VALUE, name,
                         "the kernel description lacks its image, symbol or parameter list");
    return ks__check_versions(k->image, k, name);
}

ks_status ks__kernel_resolve_in(ks_kernel *k, CUcontext ctx, CUfunction *fn)
{
    void *handle = NULL;
    pthread_mutex_lock(&ks__load_lock);
    ks_status st = resolve_locked(k, ctx, ks__kernel_name(k), &handle);
    pthread_mutex_unlock(&ks__load_lock);
    *fn = (CUfunction)handle;
    return st;
}

KS__API ks_status ks_kernel_resolve(ks_kernel *k)
{
    if (k == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_kernel_resolve: kernel is NULL");
    const char *name = ks__kernel_name(k);
    void *handle = __atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE);
    /* A handle means the driver is loaded; with the library loader it is the answer. */
    if (handle != NULL && !ks__loader_get()->per_context)
        return KS_OK;
    const ks__loader *L;
    CUcontext ctx;
    ks_status st = check_kernel(k, name);
    if (st == KS_OK)
        st = loader_and_context(name, &L, &ctx);
    if (st != KS_OK)
        return st;
    if (L->find(k, ctx) != NULL)
        return KS_OK;
    CUfunction fn;
    return ks__kernel_resolve_in(k, ctx, &fn);
}

ks_status ks__kernel_resolve_on(ks_kernel *k, CUstream stream)
{
    /* Only the module fallback cares where: a CUkernel serves every context. */
    CUcontext sctx = NULL;
    if (ks__stream_is_own(stream) && ks__driver_load(ks__kernel_name(k)) == KS_OK &&
        ks__loader_get()->per_context)
        sctx = ks__stream_context(stream);
    int pushed;
    CUresult r = ks__context_enter(sctx, &pushed);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_NO_CONTEXT, ks__kernel_name(k), "cuCtxPushCurrent", r,
                            "making the launch stream's context current to load the image there");
    ks_status st = ks_kernel_resolve(k);
    ks__context_leave(pushed);
    return st;
}

ks_status ks__kernel_function(ks_kernel *k, CUfunction *fn, CUdevice *dev)
{
    const char *name = ks__kernel_name(k);
    ks_status st = ks_kernel_resolve(k);
    CUcontext ctx = NULL;
    if (st == KS_OK)
        st = ks__context_current(name, &ctx);
    if (st != KS_OK)
        return st;
    CUresult r = ks__cu.CtxGetDevice(dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuCtxGetDevice", r, NULL);
    st = ks__loader_get()->function(k, ctx, name, fn);
    if (st == KS_OK && *fn == NULL)              /* the module loader: not yet in this context */
        st = ks__kernel_resolve_in(k, ctx, fn);
    return st;
}

/* ---- unloading --------------------------------------------------------- */

KS__API ks_status ks_image_unload(ks_image *img)
{
    if (img == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_unload: image is NULL");
    pthread_mutex_lock(&ks__load_lock);
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
    ks__globals_forget(img);
    ks_status st = ks__loader_get()->unload(img);
    ks__image_state *s = img->ks__state;
    if (s != NULL)
        ks__image_unprepare(s);
    /* What load allocated goes too; the configuration stays for the next load. */
    ks__image_release_idle(img);
    pthread_mutex_unlock(&ks__load_lock);
    return st;
}
