/*
 * watch.c — the free watch: while the pointers or extents check is on, the
 * program's calls that can end an allocation or change what an address
 * means (frees, unmaps, context and module teardown, graph launches with
 * their free nodes, IPC and graphics unmaps, ...) are followed through
 * CUPTI's callbacks (cupti.c's one subscription, shared with the races
 * check), each bumping one process-wide generation at its entry and again
 * at its exit. pointers.c's allocation cache keeps with each allocation the
 * generation it read before asking the driver; while the generation is
 * still that one, nothing was freed since, and a hit needs no driver call.
 *
 * Soundness, in order: the callbacks are turned on, then the generation
 * bumped, then ks__watch_on set (release). A reader loads ks__watch_on, then
 * the generation (acquire both): an entry whose generation still matches was
 * asked while every call that could change its answer was followed.
 *
 * Once on, the watch stays on for the process, the pointers check turned off
 * or not, as the races check does: CUPTI, once loaded, slows every driver
 * call of the process whatever is subscribed (issue 45's measurement: a
 * launch still 1.19x after unsubscribing), so turning the callbacks off would
 * save nothing but a callback per free, and the cache stays sound throughout.
 *
 * Memory pools give memory back to the system later than its free: at a
 * stream, event or context synchronisation, or an allocation, once more than
 * the pool's release threshold is held. So once the program has used a pool
 * (an async allocation or free, a graph launch: graph memory is a pool's)
 * those calls bump the generation too.
 *
 * Both CUPTI domains are followed: the runtime's frees may reach the driver
 * without the driver's callbacks. Without CUPTI (not found, another tool
 * holds it: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, a callback
 * refused), or with KSTUB_CHECK_WATCH=0, the watch stays off for good and
 * the cache asks the driver one attribute per hit (pointers.c) — as correct,
 * only dearer. Nothing is reported: the check is the same either way.
 */
#include <pthread.h>
#include <string.h>

#include "internal.h"

uint64_t ks__watch_gen;
int ks__watch_on;
int ks__watch_asked;

#if !__has_include(<cupti.h>)
void ks__watch_start(void)
{
    __atomic_store_n(&ks__watch_asked, 1, __ATOMIC_RELAXED);
}
#else

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

/* What a followed call does to the generation. */
enum { FREES = 1, POOL_USE = 2, POOL_RELEASE = 4 };

#define D(id, what) {{KS__CUPTI_DRIVER, CUPTI_DRIVER_TRACE_CBID_##id, #id}, what}
#define R(id, what) {{KS__CUPTI_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_##id, #id}, what}

static const struct followed {
    ks__cupti_id id;
    unsigned what;
} followed[] = {
    /* Frees and unmaps of memory a pointer can name. */
    D(cuMemFree, FREES), D(cuMemFree_v2, FREES), D(cuMemFreeHost, FREES), D(cuMemHostUnregister, FREES),
    D(cuMemFreeAsync, FREES | POOL_USE), D(cuMemFreeAsync_ptsz, FREES | POOL_USE),
    D(cuMemPoolTrimTo, FREES), D(cuMemPoolDestroy, FREES),
    D(cuMemRelease, FREES), D(cuMemUnmap, FREES), D(cuMemAddressFree, FREES),
    D(cuMemMap, FREES), D(cuMemSetAccess, FREES),                /* what a reserved range holds */
    D(cuIpcCloseMemHandle, FREES), D(cuDestroyExternalMemory, FREES),
    D(cuGraphicsUnmapResources, FREES), D(cuGraphicsUnmapResources_ptsz, FREES),
    D(cuGraphicsUnregisterResource, FREES),
    /* Contexts and what they own (a module's or library's globals). */
    D(cuCtxDestroy, FREES), D(cuCtxDestroy_v2, FREES), D(cuGreenCtxDestroy, FREES),
    D(cuDevicePrimaryCtxRelease, FREES), D(cuDevicePrimaryCtxRelease_v2, FREES),
    D(cuDevicePrimaryCtxReset, FREES), D(cuDevicePrimaryCtxReset_v2, FREES),
    D(cuModuleUnload, FREES), D(cuLibraryUnload, FREES),
    /* Graphs: free nodes run at launch; an instance's allocations end with it. */
    D(cuGraphLaunch, FREES | POOL_USE), D(cuGraphLaunch_ptsz, FREES | POOL_USE),
    D(cuGraphExecDestroy, FREES), D(cuDeviceGraphMemTrim, FREES),
    /* Pools: allocations from them, and where they give memory back. */
    D(cuMemAllocAsync, POOL_USE | POOL_RELEASE), D(cuMemAllocAsync_ptsz, POOL_USE | POOL_RELEASE),
    D(cuMemAllocFromPoolAsync, POOL_USE | POOL_RELEASE), D(cuMemAllocFromPoolAsync_ptsz, POOL_USE | POOL_RELEASE),
    D(cuStreamSynchronize, POOL_RELEASE), D(cuStreamSynchronize_ptsz, POOL_RELEASE),
    D(cuEventSynchronize, POOL_RELEASE), D(cuCtxSynchronize, POOL_RELEASE), D(cuCtxSynchronize_v2, POOL_RELEASE),
    D(cuStreamDestroy, POOL_RELEASE), D(cuStreamDestroy_v2, POOL_RELEASE),
    D(cuMemAlloc_v2, POOL_RELEASE), D(cuMemAllocManaged, POOL_RELEASE), D(cuMemAllocPitch_v2, POOL_RELEASE),
    D(cuMemAllocHost_v2, POOL_RELEASE), D(cuMemHostAlloc, POOL_RELEASE), D(cuMemCreate, POOL_RELEASE),
    /* The runtime's own, in case its calls do not pass through the driver's callbacks. */
    R(cudaFree_v3020, FREES), R(cudaFreeHost_v3020, FREES), R(cudaHostUnregister_v4000, FREES),
    R(cudaFreeAsync_v11020, FREES | POOL_USE), R(cudaFreeAsync_ptsz_v11020, FREES | POOL_USE),
    R(cudaMemPoolTrimTo_v11020, FREES), R(cudaMemPoolDestroy_v11020, FREES),
    R(cudaDeviceReset_v3020, FREES), R(cudaThreadExit_v3020, FREES),
    R(cudaIpcCloseMemHandle_v4010, FREES), R(cudaDestroyExternalMemory_v10000, FREES),
    R(cudaGraphicsUnmapResources_v3020, FREES), R(cudaGraphicsUnregisterResource_v3020, FREES),
    R(cudaLibraryUnload_v12060, FREES),
    R(cudaGraphLaunch_v10000, FREES | POOL_USE), R(cudaGraphLaunch_ptsz_v10000, FREES | POOL_USE),
    R(cudaGraphExecDestroy_v10000, FREES), R(cudaDeviceGraphMemTrim_v11040, FREES),
    R(cudaMallocAsync_v11020, POOL_USE | POOL_RELEASE), R(cudaMallocAsync_ptsz_v11020, POOL_USE | POOL_RELEASE),
    R(cudaMallocFromPoolAsync_v11020, POOL_USE | POOL_RELEASE),
    R(cudaMallocFromPoolAsync_ptsz_v11020, POOL_USE | POOL_RELEASE),
    R(cudaStreamSynchronize_v3020, POOL_RELEASE), R(cudaStreamSynchronize_ptsz_v7000, POOL_RELEASE),
    R(cudaEventSynchronize_v3020, POOL_RELEASE), R(cudaDeviceSynchronize_v3020, POOL_RELEASE),
    R(cudaThreadSynchronize_v3020, POOL_RELEASE), R(cudaStreamDestroy_v5050, POOL_RELEASE),
    R(cudaMalloc_v3020, POOL_RELEASE), R(cudaMallocManaged_v6000, POOL_RELEASE),
    R(cudaMallocHost_v3020, POOL_RELEASE), R(cudaHostAlloc_v3020, POOL_RELEASE),
};
#define NFOLLOWED (sizeof followed / sizeof followed[0])

static ks__cupti_id ids[NFOLLOWED];
/* Per domain and callback id, what it does (0: not followed); filled before any is on. */
static unsigned char what[2][1024];
/* The program has used a memory pool: its releases bump the generation too. */
static int pools_used;

static void bump(void)
{
    __atomic_add_fetch(&ks__watch_gen, 1, __ATOMIC_SEQ_CST);
}

/* At a followed call's entry and again at its exit (any thread, any outcome). */
static void on_call(int domain, unsigned cbid, const void *data)
{
    (void)data;
    if ((domain != KS__CUPTI_DRIVER && domain != KS__CUPTI_RUNTIME) || cbid >= sizeof what[0])
        return;
    unsigned w = what[domain - 1][cbid];
    if (w & POOL_USE)
        __atomic_store_n(&pools_used, 1, __ATOMIC_SEQ_CST);
    if ((w & FREES) || ((w & POOL_RELEASE) && __atomic_load_n(&pools_used, __ATOMIC_SEQ_CST)))
        bump();
}

/* 0 never asked, 1 on, -1 off for good. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state;

static int opted_out(void)
{
    const char *v = ks__getenv("KSTUB_CHECK_WATCH");
    return v != NULL && strcmp(v, "0") == 0;
}

void ks__watch_start(void)
{
    pthread_mutex_lock(&lock);
    if (state == 0 && opted_out())
        state = -1;
    if (state == 0) {
        for (size_t i = 0; i < NFOLLOWED; i++) {
            ids[i] = followed[i].id;
            if (ids[i].cbid < sizeof what[0])
                what[ids[i].domain - 1][ids[i].cbid] = (unsigned char)followed[i].what;
        }
        char why[512];
        if (ks__cupti_want(KS__CUPTI_WATCH, on_call, ids, NFOLLOWED, 1, why, sizeof why) == 0) {
            bump();
            __atomic_store_n(&ks__watch_on, 1, __ATOMIC_RELEASE);
            state = 1;
        } else {
            /* Not subscribed, or some callbacks on and one refused: those off
             * again (the generation is not trusted either way). */
            ks__cupti_want(KS__CUPTI_WATCH, on_call, ids, NFOLLOWED, 0, why, sizeof why);
            state = -1;
        }
    }
    __atomic_store_n(&ks__watch_asked, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

#endif /* __has_include(<cupti.h>) */
