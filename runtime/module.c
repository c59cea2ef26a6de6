/*
 * module.c — the fallback loader, for drivers without cuLibrary* (or with
 * KSTUB_LOADER=module): one CUmodule per image and context, one CUfunction
 * per kernel and context, kept in lists that only grow until unload and are
 * read without a lock. Its entries in the ks__loader table; load.c calls
 * them under the load lock.
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

/* \p img's module in \p ctx (the current context), loading it if needed. */
static ks_status module_in(ks_image *img, CUcontext ctx, const char *kernel, CUmodule *out)
{
    ks__image_state *s = ks__image_state_get(img, kernel);
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
        return ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory loading '%s'", ks__source_name(img));
    ks_status st = ks__image_prepare(img, s, kernel);
    if (st != KS_OK) {
        free(node);
        return st;
    }
    CUjit_option opts[2];
    void *vals[2];
    unsigned nopts = ks__jit_options(s, opts, vals);
    CUmodule mod = NULL;
    CUresult r = ks__cu.ModuleLoadDataEx(&mod, s->bytes, nopts, opts, vals);
    if (r != CUDA_SUCCESS) {
        free(node);
        ks__load_failed(img, s, kernel, "cuModuleLoadDataEx", r);
        if (s->modules == NULL)
            ks__image_unprepare(s);
        return KS_ERR_LOAD;
    }
    node->ctx = ctx;
    node->module = mod;
    node->next = s->modules;
    __atomic_store_n(&s->modules, node, __ATOMIC_RELEASE);
    *out = mod;
    return KS_OK;
}

static ks_status module_load(ks_image *img, CUcontext ctx, const char *kernel)
{
    CUmodule mod;
    return module_in(img, ctx, kernel, &mod);
}

/* \p img's module in \p ctx, loaded already; NULL if none. */
static CUmodule module_of(const ks_image *img, CUcontext ctx)
{
    const ks__image_state *s = img->ks__state;
    for (const ks__module_node *m = s ? s->modules : NULL; m != NULL; m = m->next)
        if (m->ctx == ctx)
            return m->module;
    return NULL;
}

static CUresult module_lookup(ks_image *img, CUcontext ctx, const char *symbol, void **handle)
{
    CUmodule mod = module_of(img, ctx);
    CUfunction fn = NULL;
    CUresult r = ks__cu.ModuleGetFunction(&fn, mod, symbol);
    *handle = (void *)fn;
    return r;
}

/* A variable's address in \p ctx's module: cuModuleGetGlobal. */
static CUresult module_global(ks_image *img, CUcontext ctx, const char *symbol, CUdeviceptr *ptr,
                              size_t *bytes)
{
    return ks__cu.ModuleGetGlobal(ptr, bytes, module_of(img, ctx), symbol);
}

static CUresult module_count(void *mod, unsigned *n)
{
    return ks__cu.ModuleGetFunctionCount(n, (CUmodule)mod);
}

static CUresult module_enumerate(void *mod, void **all, unsigned n)
{
    return ks__cu.ModuleEnumerateFunctions((CUfunction *)all, n, (CUmodule)mod);
}

static CUresult module_list(ks_image *img, CUcontext ctx, void ***handles, unsigned *n, const char **call)
{
    return ks__image_list(module_of(img, ctx),
                          ks__cu.ModuleGetFunctionCount ? module_count : NULL, "cuModuleGetFunctionCount",
                          ks__cu.ModuleEnumerateFunctions ? module_enumerate : NULL, "cuModuleEnumerateFunctions",
                          handles, n, call);
}

static CUresult module_name(const void *handle, const char **name, const char **call)
{
    *call = "cuFuncGetName";
    if (ks__cu.FuncGetName == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    return ks__cu.FuncGetName(name, (CUfunction)(uintptr_t)handle);
}

static void *module_find(const ks_kernel *k, CUcontext ctx)
{
    return (void *)ks__function_find(k, ctx);
}

/* Remember the function for \p ctx; a shared-memory opt-in made in another context applies here too. */
static ks_status module_adopt(ks_kernel *k, CUcontext ctx, const char *kernel, void *handle)
{
    CUfunction fn = (CUfunction)handle;
    unsigned shared = __atomic_load_n(&k->ks__max_shared, __ATOMIC_RELAXED);
    if (shared != 0 && ks__cu.FuncSetAttribute != NULL) {
        CUresult r = ks__cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
        if (r != CUDA_SUCCESS)
            return ks__error_cu(KS_ERR_DRIVER, kernel, "cuFuncSetAttribute", r,
                                "opting '%s' in to %u bytes of dynamic shared memory", k->symbol, shared);
    }
    ks__function_node *node = malloc(sizeof *node);
    if (node == NULL)
        return ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory resolving '%s'", k->symbol);
    node->ctx = ctx;
    node->fn = fn;
    node->next = k->ks__functions;
    __atomic_store_n(&k->ks__functions, (void *)node, __ATOMIC_RELEASE);
    return KS_OK;
}

static int module_has_param_info(void)
{
    return ks__cu.FuncGetParamInfo != NULL;
}

static CUresult module_param_info(const void *handle, size_t i, size_t *off, size_t *size)
{
    return ks__cu.FuncGetParamInfo((CUfunction)(uintptr_t)handle, i, off, size);
}

/* NULL in *fn: not yet resolved in this context (load.c resolves it). */
static ks_status module_function(ks_kernel *k, CUcontext ctx, const char *kernel, CUfunction *fn)
{
    (void)kernel;
    *fn = ks__function_find(k, ctx);
    return KS_OK;
}

static CUresult module_set_max_shared(ks_kernel *k, CUfunction fn, CUdevice dev, int bytes, const char **call)
{
    (void)k, (void)dev;
    *call = "cuFuncSetAttribute";
    return ks__cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

static ks_status module_unload(ks_image *img)
{
    ks_status st = KS_OK;
    ks__image_state *s = img->ks__state;
    if (s == NULL)
        return KS_OK;
    ks__module_node *m = s->modules;
    __atomic_store_n(&s->modules, NULL, __ATOMIC_RELEASE);
    for (ks__module_node *next; m != NULL; m = next) {
        next = m->next;
        /* A module belongs to its context: unload it there. */
        int pushed;
        CUresult r = ks__context_enter(m->ctx, &pushed);
        if (r == CUDA_SUCCESS) {
            r = ks__cu.ModuleUnload(m->module);
            ks__context_leave(pushed);
        }
        if (r != CUDA_SUCCESS && st == KS_OK)
            st = ks__error_cu(KS_ERR_DRIVER, NULL, "cuModuleUnload", r,
                              "unloading the image of '%s'", ks__source_name(img));
        free(m);
    }
    return st;
}

/* A node launches this context's CUfunction (the graph is bound to it). */
static ks_status module_node_target(ks_kernel *k, CUDA_KERNEL_NODE_PARAMS *p, CUfunction fn, const char *kernel)
{
    (void)k, (void)kernel;
    p->func = fn;
    return KS_OK;
}

/* One of the kernel's per-context functions. */
static int module_node_is(const ks_kernel *k, const CUDA_KERNEL_NODE_PARAMS *q)
{
    for (const ks__function_node *f = __atomic_load_n((ks__function_node *const *)&k->ks__functions,
                                                      __ATOMIC_ACQUIRE);
         f != NULL; f = f->next)
        if (q->func != NULL && f->fn == q->func)
            return 1;
    return 0;
}

const ks__loader ks__module_loader = KS__LOADER_TABLE(module, 1, "cuModuleGetFunction", "cuFuncGetParamInfo", "cuModuleGetGlobal");
