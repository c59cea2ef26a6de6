/*
 * graph.c — CUDA graphs: create, instantiate, launch, update and destroy
 * them, and the typed kernel nodes that the generated <kernel>_node and
 * <kernel>_node_set entry points add and update.
 *
 * The graph entry points are resolved once, at the first graph call, through
 * ks_driver_proc: cuGetProcAddress pinned to the CUDA version we compiled
 * against, as driver.c resolves the rest, so the versioned forms come back
 * (cuGraphAddKernelNode is _v2, whose CUDA_KERNEL_NODE_PARAMS has `kern` and
 * `ctx`; cuGraphExecUpdate is _v2, with a result record). A program that
 * never builds a graph never looks them up.
 *
 * A node launches the handle the stub launches, as the loader in use says
 * (ks__loader's node_target and node_is): with the context-independent
 * loader the CUkernel (the node parameters' `kern`, `ctx` NULL: the current
 * context), with the module fallback the current context's CUfunction. The
 * arguments come packed by the generated code, exactly as for the stub.
 *
 * Updating a node in an instance is on the replay path. A typed node
 * (<kernel>_node_t, ks_typed_node_add) carries the handle and context the
 * driver launches it with, read back once when it was added, and its type
 * says whose node it is: an update is the configuration check and one
 * cuGraphExecKernelNodeSetParams. An untyped node (ks_kernel_node_set) costs
 * one cuGraphKernelNodeGetParams more, to be sure the node launches this
 * kernel (the driver would swap the kernel of a node silently). No lock, no
 * allocation.
 */
#include <string.h>

#include "internal.h"

/* The graph entry points, each with the type of the version CUDA_VERSION names. */
static struct graph_entries {
    CUresult (*Create)(CUgraph *graph, unsigned int flags);
    CUresult (*Destroy)(CUgraph graph);
    CUresult (*Instantiate)(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
    CUresult (*ExecDestroy)(CUgraphExec exec);
    CUresult (*Launch)(CUgraphExec exec, CUstream stream);
    CUresult (*ExecUpdate)(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info);
    CUresult (*AddKernelNode)(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                              const CUDA_KERNEL_NODE_PARAMS *params);
    CUresult (*KernelNodeGetParams)(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *params);
    CUresult (*ExecKernelNodeSetParams)(CUgraphExec exec, CUgraphNode node,
                                        const CUDA_KERNEL_NODE_PARAMS *params);
    /* Optional (CUDA 12.3+), only for messages: NULL when the driver lacks them. */
    CUresult (*KernelGetName)(const char **name, CUkernel kernel);
    CUresult (*FuncGetName)(const char **name, CUfunction fn);
    /* Optional, for ks_global_node_add: NULL when the driver lacks it. */
    CUresult (*AddMemcpyNode)(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                              const CUDA_MEMCPY3D *copy, CUcontext ctx);
} gr;

static pthread_once_t gr_once = PTHREAD_ONCE_INIT;
static int gr_ready;                    /* 1 once every entry point was found; read with acquire */
static const char *gr_missing;          /* otherwise the first one the driver lacks */

static void graph_resolve(void)
{
    static const struct { const char *name; size_t offset; } entries[] = {
#define ENTRY(field, name) {name, offsetof(struct graph_entries, field)}
        ENTRY(Create, "cuGraphCreate"),
        ENTRY(Destroy, "cuGraphDestroy"),
        ENTRY(Instantiate, "cuGraphInstantiateWithFlags"),
        ENTRY(ExecDestroy, "cuGraphExecDestroy"),
        ENTRY(Launch, "cuGraphLaunch"),
        ENTRY(ExecUpdate, "cuGraphExecUpdate"),
        ENTRY(AddKernelNode, "cuGraphAddKernelNode"),
        ENTRY(KernelNodeGetParams, "cuGraphKernelNodeGetParams"),
        ENTRY(ExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams"),
#undef ENTRY
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = NULL;
        if (ks_driver_proc(entries[i].name, &fn) != KS_OK || fn == NULL) {
            gr_missing = entries[i].name;
            memset(&gr, 0, sizeof gr);
            return;
        }
        /* Object to function pointer, as dlsym's results are: memcpy says so without a warning. */
        memcpy((char *)&gr + entries[i].offset, &fn, sizeof fn);
    }
    void *fn = NULL;
    if (ks_driver_proc("cuKernelGetName", &fn) == KS_OK)
        memcpy(&gr.KernelGetName, &fn, sizeof fn);
    fn = NULL;
    if (ks_driver_proc("cuFuncGetName", &fn) == KS_OK)
        memcpy(&gr.FuncGetName, &fn, sizeof fn);
    fn = NULL;
    if (ks_driver_proc("cuGraphAddMemcpyNode", &fn) == KS_OK)
        memcpy(&gr.AddMemcpyNode, &fn, sizeof fn);
    __atomic_store_n(&gr_ready, 1, __ATOMIC_RELEASE);
}

/* The driver and its graph entry points, loaded once: KS_OK, or the error set. */
static ks_status graph_driver(const char *kernel)
{
    if (__builtin_expect(__atomic_load_n(&gr_ready, __ATOMIC_ACQUIRE), 1))
        return KS_OK;
    ks_status st = ks__driver_load(kernel);
    if (st != KS_OK)
        return st;
    pthread_once(&gr_once, graph_resolve);
    if (__atomic_load_n(&gr_ready, __ATOMIC_ACQUIRE))
        return KS_OK;
    return ks__error(KS_ERR_UNSUPPORTED, kernel,
                     "the CUDA driver (driver API version %d) lacks %s; kstub's graphs need a driver "
                     "for CUDA 12.0 or newer",
                     ks__cu.version, gr_missing ? gr_missing : "its graph entry points");
}

/*
 * Make a driver call; when it fails with CUDA_ERROR_INVALID_CONTEXT on a
 * thread without a context, make device 0's primary context current (as a
 * launch does) and call again. Leaves the result in r; returns from the
 * caller with KS_ERR_NO_CONTEXT when no context can be made current.
 */
#define GRAPH_CALL(r, kernel, call)                                    \
    do {                                                               \
        (r) = (call);                                                  \
        if ((r) == CUDA_ERROR_INVALID_CONTEXT) {                       \
            ks_status ctx_st_ = ks__context_make_current(kernel);      \
            if (ctx_st_ == KS_ERR_NO_CONTEXT)                          \
                return ctx_st_;                                        \
            if (ctx_st_ == KS_OK)                                      \
                (r) = (call);                                          \
        }                                                              \
    } while (0)

KS__API ks_status ks_graph_create(ks_graph *graph)
{
    if (graph == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_graph_create: the result pointer is NULL");
    *graph = NULL;
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUgraph g = NULL;
    CUresult r;
    GRAPH_CALL(r, NULL, gr.Create(&g, 0));
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphCreate", r, NULL);
    *graph = g;
    return KS_OK;
}

KS__API ks_status ks_graph_destroy(ks_graph graph)
{
    if (graph == NULL)
        return KS_OK;
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUresult r = gr.Destroy(graph);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphDestroy", r, NULL);
    return KS_OK;
}

KS__API ks_status ks_graph_instantiate(ks_graph graph, ks_graph_exec *exec)
{
    if (graph == NULL || exec == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_graph_instantiate: %s is NULL",
                         graph == NULL ? "the graph" : "the result pointer");
    *exec = NULL;
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUgraphExec e = NULL;
    CUresult r;
    GRAPH_CALL(r, NULL, gr.Instantiate(&e, graph, 0));
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphInstantiateWithFlags", r, NULL);
    *exec = e;
    return KS_OK;
}

KS__API ks_status ks_graph_exec_destroy(ks_graph_exec exec)
{
    if (exec == NULL)
        return KS_OK;
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUresult r = gr.ExecDestroy(exec);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphExecDestroy", r, NULL);
    return KS_OK;
}

KS__API ks_status ks_graph_launch(ks_graph_exec exec, ks_stream stream)
{
    if (exec == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_graph_launch: the graph instance is NULL");
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUresult r;
    GRAPH_CALL(r, NULL, gr.Launch(exec, stream));
    if (__builtin_expect(r == CUDA_SUCCESS, 1))
        return KS_OK;
    return ks__error_cu(KS_ERR_LAUNCH, NULL, "cuGraphLaunch", r, NULL);
}

static const char *update_result_name(CUgraphExecUpdateResult result)
{
    switch (result) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "success";
    case CU_GRAPH_EXEC_UPDATE_ERROR: return "an invalid value";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "the topology changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "a node's type changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "a kernel node's function changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "a node's parameters changed in a way that cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "a node cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE: return "a kernel node's function changed in an unsupported way";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "a node's attributes changed in a way that cannot be updated";
    }
    return "an unknown reason";
}

/* The symbol of the kernel kernel node \p node launches, for a message; NULL
 * when it is not a kernel node or the driver cannot name it. */
static const char *node_symbol(CUgraphNode node)
{
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    const char *name = NULL;
    if (node == NULL || gr.KernelNodeGetParams(node, &q) != CUDA_SUCCESS)
        return NULL;
    if (q.kern != NULL && gr.KernelGetName != NULL && gr.KernelGetName(&name, q.kern) == CUDA_SUCCESS)
        return name;
    if (q.func != NULL && gr.FuncGetName != NULL && gr.FuncGetName(&name, q.func) == CUDA_SUCCESS)
        return name;
    return NULL;
}

KS__API ks_status ks_graph_exec_update(ks_graph_exec exec, ks_graph graph)
{
    if (exec == NULL || graph == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_graph_exec_update: %s is NULL",
                         exec == NULL ? "the graph instance" : "the graph");
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CUresult r;
    GRAPH_CALL(r, NULL, gr.ExecUpdate(exec, graph, &info));
    if (r == CUDA_SUCCESS)
        return KS_OK;
    if (r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
        /* The kernel at the node that differs, when it is a kernel node the driver can name. */
        const char *sym = node_symbol(info.errorNode);
        return ks__error_cu(KS_ERR_GRAPH_MISMATCH, NULL, "cuGraphExecUpdate", r,
                            "the graph does not match the instance: %s (result %d, node %p%s%s%s); "
                            "the instance is unchanged",
                            update_result_name(info.result), (int)info.result, (void *)info.errorNode,
                            sym ? ", a node of kernel '" : "", sym ? sym : "", sym ? "'" : "");
    }
    return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphExecUpdate", r, NULL);
}

/* What adding and updating a node check first, the same as a launch. */
static ks_status node_check(ks_kernel *k, const void *target, const ks_launch *l, void **args,
                            const char *what)
{
    if (k == NULL || target == NULL || l == NULL || (args == NULL && k->nparams != 0))
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL, "%s: %s is NULL", what,
                         k == NULL ? "the kernel" : target == NULL ? "the graph or node"
                         : l == NULL ? "the launch configuration" : "the argument array");
    if (l->attrs != NULL)
        return ks__error(KS_ERR_UNSUPPORTED, ks__kernel_name(k),
                         "%s: launch attributes are not taken for graph nodes (launch.attrs must be "
                         "NULL); set them on the node with cuGraphKernelNodeSetAttribute",
                         what);
    return ks__launch_check(k, l);
}

static void node_params(CUDA_KERNEL_NODE_PARAMS *p, const ks_launch *l, void **args)
{
    memset(p, 0, sizeof *p);
    p->gridDimX = l->grid.x, p->gridDimY = l->grid.y, p->gridDimZ = l->grid.z;
    p->blockDimX = l->block.x, p->blockDimY = l->block.y, p->blockDimZ = l->block.z;
    p->sharedMemBytes = l->shared_bytes;
    p->kernelParams = args;
}

KS__API ks_status ks_kernel_node_add(ks_kernel *k, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                                     const ks_launch *l, void **args, ks_graph_node *node)
{
    if (node == NULL || (deps == NULL && ndeps != 0))
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL, "ks_kernel_node_add: %s",
                         node == NULL ? "the result pointer is NULL"
                                      : "the dependencies are NULL but their count is not 0");
    *node = NULL;
    ks_status st = node_check(k, graph, l, args, "ks_kernel_node_add");
    if (st != KS_OK)
        return st;
    const char *name = ks__kernel_name(k);
    CUDA_KERNEL_NODE_PARAMS p;
    node_params(&p, l, args);
    if (__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE) == NULL && (st = ks_kernel_resolve(k)) != KS_OK)
        return st;
    /* A per-context loader's node launches this context's CUfunction (the
     * graph is bound to it), resolved here so that loaders call nothing above them. */
    const ks__loader *L = ks__loader_get();
    CUfunction fn = NULL;
    CUdevice dev;
    if (L->per_context && (st = ks__kernel_function(k, &fn, &dev)) != KS_OK)
        return st;
    if ((st = L->node_target(k, &p, fn, name)) != KS_OK)
        return st;
    if ((st = graph_driver(name)) != KS_OK)
        return st;
    CUgraphNode n = NULL;
    CUresult r;
    GRAPH_CALL(r, name, gr.AddKernelNode(&n, graph, deps, ndeps, &p));
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuGraphAddKernelNode", r,
                            "adding a node of grid (%u, %u, %u), block (%u, %u, %u) after %zu node(s)",
                            l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, ndeps);
    *node = n;
    return KS_OK;
}

KS__API ks_status ks_kernel_node_set(ks_kernel *k, ks_graph_exec exec, ks_graph_node node,
                                     const ks_launch *l, void **args)
{
    ks_status st = node_check(k, node, l, args, "ks_kernel_node_set");
    if (st != KS_OK)
        return st;
    const char *name = ks__kernel_name(k);
    if (exec == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, name, "ks_kernel_node_set: the graph instance is NULL");
    if (__builtin_expect(__atomic_load_n(&k->ks__handle, __ATOMIC_ACQUIRE) == NULL, 0) &&
        (st = ks_kernel_resolve(k)) != KS_OK)
        return st;
    if ((st = graph_driver(name)) != KS_OK)
        return st;
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    CUresult r = gr.KernelNodeGetParams(node, &q);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_GRAPH_MISMATCH, name, "cuGraphKernelNodeGetParams", r,
                            "node %p is not a kernel node; nothing was updated", (void *)node);
    if (!ks__loader_get()->node_is(k, &q)) {
        const char *other = node_symbol(node);
        return ks__error(KS_ERR_GRAPH_MISMATCH, name,
                         "node %p launches another kernel than '%s' (cuGraphKernelNodeGetParams: "
                         "'%s'); nothing was updated",
                         (void *)node, k->symbol, other ? other : "unnamed");
    }
    CUDA_KERNEL_NODE_PARAMS p;
    node_params(&p, l, args);
    /* The node keeps its own kernel handle and context, whichever the loader set
     * (the driver ignores ctx when func is set). */
    p.kern = q.kern, p.func = q.func, p.ctx = q.ctx;
    r = gr.ExecKernelNodeSetParams(exec, node, &p);
    if (__builtin_expect(r == CUDA_SUCCESS, 1))
        return KS_OK;
    return ks__error_cu(KS_ERR_DRIVER, name, "cuGraphExecKernelNodeSetParams", r,
                        "updating node %p (a node not in this instance, or a change the driver cannot "
                        "make in place)",
                        (void *)node);
}

KS__API ks_status ks_typed_node_add(ks_kernel *k, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                                    const ks_launch *l, void **args, ks_graph_node *node,
                                    ks_node_target *target)
{
    if (target == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, k ? ks__kernel_name(k) : NULL,
                         "ks_typed_node_add: the node handle is NULL");
    memset(target, 0, sizeof *target);
    ks_status st = ks_kernel_node_add(k, graph, deps, ndeps, l, args, node);
    if (st != KS_OK)
        return st;
    /* What the driver made of the node (the context NULL stood for, the
     * module fallback's function): updates hand back exactly this. */
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    CUresult r = gr.KernelNodeGetParams(*node, &q);
    if (r != CUDA_SUCCESS || (q.kern == NULL && q.func == NULL))
        return ks__error_cu(KS_ERR_DRIVER, ks__kernel_name(k), "cuGraphKernelNodeGetParams", r,
                            "reading back the node just added (%p); it is in the graph, but its "
                            "handle cannot be updated", (void *)*node);
    target->ks__kern = (void *)q.kern;
    target->ks__func = (void *)q.func;
    target->ks__ctx = (void *)q.ctx;
    target->ks__grid = l->grid;
    target->ks__block = l->block;
    target->ks__shared = l->shared_bytes;
    return KS_OK;
}

KS__API ks_status ks_typed_node_set(ks_kernel *k, ks_graph_exec exec, ks_graph_node node,
                                    const ks_node_target *t, const ks_launch *l, void **args)
{
    ks_launch added;
    if (__builtin_expect(l == NULL, 0) && t != NULL) {
        memset(&added, 0, sizeof added);
        added.grid = t->ks__grid, added.block = t->ks__block, added.shared_bytes = t->ks__shared;
        l = &added;
    }
    ks_status st = node_check(k, node, l, args, "ks_typed_node_set");
    if (__builtin_expect(st != KS_OK, 0))
        return st;
    if (__builtin_expect(exec == NULL || t == NULL || (t->ks__kern == NULL && t->ks__func == NULL), 0))
        return ks__error(KS_ERR_INVALID_VALUE, ks__kernel_name(k), "ks_typed_node_set: %s",
                         exec == NULL ? "the graph instance is NULL"
                         : t == NULL  ? "the node handle is NULL"
                                      : "the node handle was never filled by its _node call");
    if ((st = graph_driver(ks__kernel_name(k))) != KS_OK)
        return st;
    CUDA_KERNEL_NODE_PARAMS p;
    node_params(&p, l, args);
    p.kern = (CUkernel)t->ks__kern, p.func = (CUfunction)t->ks__func, p.ctx = (CUcontext)t->ks__ctx;
    CUresult r = gr.ExecKernelNodeSetParams(exec, node, &p);
    if (__builtin_expect(r == CUDA_SUCCESS, 1))
        return KS_OK;
    return ks__error_cu(KS_ERR_DRIVER, ks__kernel_name(k), "cuGraphExecKernelNodeSetParams", r,
                        "updating node %p (a node not in this instance, or a change the driver cannot "
                        "make in place)",
                        (void *)node);
}

/* ---- device variables --------------------------------------------------------- */

KS__API ks_status ks_global_node_add(ks_global *g, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                                     size_t first, const void *src, size_t count, ks_graph_node *node)
{
    if (node == NULL || graph == NULL || (ndeps != 0 && deps == NULL) || g == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_global_node_add: the variable, graph, "
                         "node pointer or dependency list is NULL");
    *node = NULL;
    const char *name = g->name ? g->name : g->symbol;
    ks_status st = graph_driver(NULL);
    if (st != KS_OK)
        return st;
    if (gr.AddMemcpyNode == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, NULL, "variable '%s': the CUDA driver lacks "
                         "cuGraphAddMemcpyNode", name);
    CUdeviceptr dst = 0;
    CUcontext ctx = NULL;
    st = ks__global_range(g, first, src, count, &dst);
    if (st == KS_OK)
        st = ks__context_current(name, &ctx);
    if (st != KS_OK)
        return st;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst;
    c.WidthInBytes = count * g->elem_size;
    c.Height = 1;
    c.Depth = 1;
    CUresult r = gr.AddMemcpyNode((CUgraphNode *)node, (CUgraph)graph, (const CUgraphNode *)deps, ndeps, &c, ctx);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, NULL, "cuGraphAddMemcpyNode", r,
                            "variable '%s': a node writing %zu elements", name, count);
    return KS_OK;
}
