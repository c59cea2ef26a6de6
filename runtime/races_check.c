/*
 * races_check.c — the races check (KS_CHECK_RACES): libcupti loaded only while it
 * is on, the one subscription's callbacks (cupti.c) for the driver calls that order work
 * across streams or touch memory, what they say fed to the happens-before
 * core (races.c), and the check around kstub's own launches (the ks__check):
 * before a launch it works out the bytes each pointer argument may touch
 * (the extent hint's, else up to the allocation's end: "possible"), writes
 * through a pointer to non-const and reads through a pointer to const;
 * the launch's own callback records them in order with the program's other
 * calls; after the launch a report found since the last one is its status.
 *
 * CUPTI is loaded and subscribed by cupti.c, whose one subscription the
 * pointers check's free watch (watch.c) shares. With KSTUB_CHECK naming races, it is loaded when libkstub is (a
 * constructor), so that streams and events the program creates before its
 * first launch are seen; ks_checks_set loads it when it turns races on.
 * When it cannot be loaded or subscribed (another tool holds it), every
 * launch fails saying why: nothing is checked half-way.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* cupti.h: the callback API and the driver calls' parameter structs (its
 * activity header has enumerators past int's range: -Wpedantic's business). */
#include "internal.h"
#include "races.h"

#if !__has_include(<cupti.h>)
/* A toolkit without CUPTI's headers (they ship apart, e.g. cuda-cupti-dev):
 * libkstub still builds, and the races check says why it cannot run. */
void ks__races_start(void)
{
}

static ks_status races_before(const ks__checked *c)
{
    return ks__error(KS_ERR_UNSUPPORTED, ks__kernel_name(c->k), "not launched: the races check needs CUPTI, "
                     "but this libkstub was built without cupti.h (install CUPTI's headers and rebuild)");
}

static ks_status races_after(const ks__checked *c, ks_status st)
{
    (void)c;
    return st;
}

const ks__check ks__check_races = {races_before, races_after};
#else

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

/* ---- the state: one lock over the core, CUPTI once ----------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ks__hb *hb;                         /* under lock */
/* 1: subscribed; -1: failed (why says why). Written under start_lock, which is
 * never held with lock: CUPTI may make driver calls while subscribing. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;
static char why[512];

/* cuStreamQuery, for whether a report's earlier side was still at work. */
static CUresult (*stream_query)(CUstream);
/* Set while this thread makes a driver call of the check's own: its callback is not the program's. */
static __thread int own_call;

/* What a kstub launch on this thread may touch, waiting for the launch's callback. */
#define KS__RACES_PTRS 64
static __thread struct {
    int armed;
    ks__hb_op op;
    ks__hb_access acc[KS__RACES_PTRS];
    unsigned n;
} pending;

/* ---- streams as the core knows them --------------------------------------------------- */

/* The core's key, kind and name of \p s as a call in \p ctx names it (\p ptsz: a
 * per-thread-default-stream variant of the call, where NULL is that stream). */
static void stream_of(ks__hb_op *op, CUstream s, CUcontext ctx, int ptsz)
{
    uintptr_t v = (uintptr_t)s;
    op->ctx = (uint64_t)(uintptr_t)ctx;
    op->kind = KS__STREAM_BLOCKING;
    op->stream_name = NULL;
    op->stream = v;
    if (v == (uintptr_t)CU_STREAM_PER_THREAD || (v == 0 && ptsz)) {
        op->stream = (1ull << 62) ^ (uint64_t)pthread_self() ^ op->ctx;
        op->stream_name = "a per-thread default stream";
    } else if (v == 0 || v == (uintptr_t)CU_STREAM_LEGACY) {
        op->stream = (1ull << 63) ^ op->ctx;
        op->kind = KS__STREAM_LEGACY;
        op->stream_name = "the legacy default stream";
    }
}

/* The allocation holding device address \p p: 0, or -1 when it is none the driver knows. */
static int range_of(CUdeviceptr p, uint64_t *base, uint64_t *size)
{
    if (p == 0 || ks__cu.PointerGetAttributes == NULL)
        return -1;
    unsigned long long start = 0, bytes = 0;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&start, &bytes};
    if (ks__cu.PointerGetAttributes(2, attrs, data, p) != CUDA_SUCCESS || bytes == 0)
        return -1;
    *base = start, *size = bytes;
    return 0;
}

/* An access of \p bytes at \p p (clamped to its allocation), if p is device memory. */
static unsigned access_at(ks__hb_access *a, CUdeviceptr p, size_t bytes, int write, const char *param)
{
    uint64_t base, size;
    if (bytes == 0 || range_of(p, &base, &size) != 0)
        return 0;
    uint64_t end = base + size;
    a->base = base, a->size = size, a->lo = p;
    a->hi = bytes > end - p ? end : p + bytes;
    a->write = write, a->possible = 0, a->param = param;
    return 1;
}

/* ---- the callbacks: the program's driver calls ---------------------------------------- */

typedef enum what_kind {
    W_LAUNCH, W_LAUNCH_EX, W_COPY, W_SET, W_FREE, W_FREE_ASYNC, W_ALLOC, W_ALLOC_ASYNC, W_STREAM_CREATE,
    W_STREAM_DESTROY, W_RECORD, W_WAIT, W_STREAM_SYNC, W_STREAM_QUERY, W_EVENT_SYNC, W_EVENT_QUERY, W_CTX_SYNC,
    W_TRIM
} what_kind;

/* One driver call the check follows; the offsets are into its parameter struct. */
typedef struct call {
    CUpti_CallbackId cbid;
    const char *name;
    what_kind kind;
    int ptsz;                    /* NULL is the per-thread default stream */
    int stream;                  /* offset of its CUstream, -1: the legacy stream (synchronous) */
    int dst, src, bytes;         /* copies: device addresses (-1: a host side) and the count;
                                  * memsets: dst and the count of elements of `src` bytes */
    int host_waits;              /* a synchronous copy the host waits for */
} call;

#define OFF(T, f) (int)offsetof(T, f)
#define C_ASYNC(id, T, d, s, ptsz) \
    {CUPTI_DRIVER_TRACE_CBID_##id, #id, W_COPY, ptsz, OFF(T, hStream), d, s, OFF(T, ByteCount), 0}
#define C_SYNC(id, T, d, s, waits) \
    {CUPTI_DRIVER_TRACE_CBID_##id, #id, W_COPY, 0, -1, d, s, OFF(T, ByteCount), waits}
#define S_ASYNC(id, T, size, ptsz) \
    {CUPTI_DRIVER_TRACE_CBID_##id, #id, W_SET, ptsz, OFF(T, hStream), OFF(T, dstDevice), size, OFF(T, N), 0}
#define S_SYNC(id, T, size) \
    {CUPTI_DRIVER_TRACE_CBID_##id, #id, W_SET, 0, -1, OFF(T, dstDevice), size, OFF(T, N), 0}
#define ON_STREAM(id, kind, T, f, ptsz) {CUPTI_DRIVER_TRACE_CBID_##id, #id, kind, ptsz, OFF(T, f), -1, -1, -1, 0}
#define PLAIN(id, kind) {CUPTI_DRIVER_TRACE_CBID_##id, #id, kind, 0, -1, -1, -1, -1, 0}

static const call calls[] = {
    ON_STREAM(cuLaunchKernel, W_LAUNCH, cuLaunchKernel_params, hStream, 0),
    ON_STREAM(cuLaunchKernel_ptsz, W_LAUNCH, cuLaunchKernel_ptsz_params, hStream, 1),
    ON_STREAM(cuLaunchCooperativeKernel, W_LAUNCH, cuLaunchCooperativeKernel_params, hStream, 0),
    ON_STREAM(cuLaunchCooperativeKernel_ptsz, W_LAUNCH, cuLaunchCooperativeKernel_ptsz_params, hStream, 1),
    PLAIN(cuLaunchKernelEx, W_LAUNCH_EX),
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", W_LAUNCH_EX, 1, -1, -1, -1, -1, 0},
    C_ASYNC(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_params, OFF(cuMemcpyHtoDAsync_v2_params, dstDevice), -1, 0),
    C_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2_ptsz_params,
            OFF(cuMemcpyHtoDAsync_v2_ptsz_params, dstDevice), -1, 1),
    C_ASYNC(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_params, -1, OFF(cuMemcpyDtoHAsync_v2_params, srcDevice), 0),
    C_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2_ptsz_params, -1,
            OFF(cuMemcpyDtoHAsync_v2_ptsz_params, srcDevice), 1),
    C_ASYNC(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_params, OFF(cuMemcpyDtoDAsync_v2_params, dstDevice),
            OFF(cuMemcpyDtoDAsync_v2_params, srcDevice), 0),
    C_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2_ptsz_params,
            OFF(cuMemcpyDtoDAsync_v2_ptsz_params, dstDevice), OFF(cuMemcpyDtoDAsync_v2_ptsz_params, srcDevice), 1),
    C_ASYNC(cuMemcpyAsync, cuMemcpyAsync_params, OFF(cuMemcpyAsync_params, dst), OFF(cuMemcpyAsync_params, src), 0),
    C_ASYNC(cuMemcpyAsync_ptsz, cuMemcpyAsync_ptsz_params, OFF(cuMemcpyAsync_ptsz_params, dst),
            OFF(cuMemcpyAsync_ptsz_params, src), 1),
    C_SYNC(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_params, OFF(cuMemcpyHtoD_v2_params, dstDevice), -1, 0),
    C_SYNC(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_params, -1, OFF(cuMemcpyDtoH_v2_params, srcDevice), 1),
    C_SYNC(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_params, OFF(cuMemcpyDtoD_v2_params, dstDevice),
           OFF(cuMemcpyDtoD_v2_params, srcDevice), 0),
    C_SYNC(cuMemcpy, cuMemcpy_params, OFF(cuMemcpy_params, dst), OFF(cuMemcpy_params, src), 0),
    S_ASYNC(cuMemsetD8Async, cuMemsetD8Async_params, 1, 0),
    S_ASYNC(cuMemsetD16Async, cuMemsetD16Async_params, 2, 0),
    S_ASYNC(cuMemsetD32Async, cuMemsetD32Async_params, 4, 0),
    S_ASYNC(cuMemsetD8Async_ptsz, cuMemsetD8Async_ptsz_params, 1, 1),
    S_ASYNC(cuMemsetD16Async_ptsz, cuMemsetD16Async_ptsz_params, 2, 1),
    S_ASYNC(cuMemsetD32Async_ptsz, cuMemsetD32Async_ptsz_params, 4, 1),
    S_SYNC(cuMemsetD8_v2, cuMemsetD8_v2_params, 1),
    S_SYNC(cuMemsetD16_v2, cuMemsetD16_v2_params, 2),
    S_SYNC(cuMemsetD32_v2, cuMemsetD32_v2_params, 4),
    PLAIN(cuMemFree_v2, W_FREE),
    ON_STREAM(cuMemFreeAsync, W_FREE_ASYNC, cuMemFreeAsync_params, hStream, 0),
    ON_STREAM(cuMemFreeAsync_ptsz, W_FREE_ASYNC, cuMemFreeAsync_ptsz_params, hStream, 1),
    PLAIN(cuMemAlloc_v2, W_ALLOC),
    PLAIN(cuMemAllocManaged, W_ALLOC),
    ON_STREAM(cuMemAllocAsync, W_ALLOC_ASYNC, cuMemAllocAsync_params, hStream, 0),
    ON_STREAM(cuMemAllocAsync_ptsz, W_ALLOC_ASYNC, cuMemAllocAsync_ptsz_params, hStream, 1),
    PLAIN(cuMemPoolTrimTo, W_TRIM),
    PLAIN(cuStreamCreate, W_STREAM_CREATE),
    PLAIN(cuStreamCreateWithPriority, W_STREAM_CREATE),
    ON_STREAM(cuStreamDestroy_v2, W_STREAM_DESTROY, cuStreamDestroy_v2_params, hStream, 0),
    ON_STREAM(cuEventRecord, W_RECORD, cuEventRecord_params, hStream, 0),
    ON_STREAM(cuEventRecord_ptsz, W_RECORD, cuEventRecord_ptsz_params, hStream, 1),
    ON_STREAM(cuEventRecordWithFlags, W_RECORD, cuEventRecordWithFlags_params, hStream, 0),
    ON_STREAM(cuEventRecordWithFlags_ptsz, W_RECORD, cuEventRecordWithFlags_ptsz_params, hStream, 1),
    ON_STREAM(cuStreamWaitEvent, W_WAIT, cuStreamWaitEvent_params, hStream, 0),
    ON_STREAM(cuStreamWaitEvent_ptsz, W_WAIT, cuStreamWaitEvent_ptsz_params, hStream, 1),
    ON_STREAM(cuStreamSynchronize, W_STREAM_SYNC, cuStreamSynchronize_params, hStream, 0),
    ON_STREAM(cuStreamSynchronize_ptsz, W_STREAM_SYNC, cuStreamSynchronize_ptsz_params, hStream, 1),
    ON_STREAM(cuStreamQuery, W_STREAM_QUERY, cuStreamQuery_params, hStream, 0),
    ON_STREAM(cuStreamQuery_ptsz, W_STREAM_QUERY, cuStreamQuery_ptsz_params, hStream, 1),
    PLAIN(cuEventSynchronize, W_EVENT_SYNC),
    PLAIN(cuEventQuery, W_EVENT_QUERY),
    PLAIN(cuCtxSynchronize, W_CTX_SYNC),
    PLAIN(cuCtxSynchronize_v2, W_CTX_SYNC),
};
#define NCALLS (sizeof calls / sizeof calls[0])

static const call *call_find(CUpti_CallbackId cbid)
{
    for (size_t i = 0; i < NCALLS; i++)
        if (calls[i].cbid == cbid)
            return &calls[i];
    return NULL;
}

static CUstream stream_at(const call *c, const void *p)
{
    CUstream s = NULL;
    if (c->stream >= 0)
        memcpy(&s, (const char *)p + c->stream, sizeof s);
    return s;
}

static uint64_t word_at(const void *p, int off)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

/* What a driver call means for the order and the memory (lock held). */
static void follow(const call *c, const CUpti_CallbackData *d)
{
    const void *p = d->functionParams;
    ks__hb_op op = {c->name, NULL, 0, 0, 0, KS__STREAM_BLOCKING, NULL};
    stream_of(&op, stream_at(c, p), d->context, c->ptsz);
    ks__hb_access acc[2];
    unsigned n = 0;
    switch (c->kind) {
    case W_LAUNCH_EX: {
        const cuLaunchKernelEx_params *q = p;
        stream_of(&op, q->config ? q->config->hStream : NULL, d->context, c->ptsz);
    } /* fall through */
    case W_LAUNCH:
        if (pending.armed) {         /* kstub's own launch: the bytes it may touch */
            pending.armed = 0;
            pending.op.stream = op.stream, pending.op.ctx = op.ctx;
            pending.op.kind = op.kind, pending.op.stream_name = op.stream_name;
            ks__hb_op_issue(hb, &pending.op, pending.acc, pending.n);
        } else {
            op.what = d->symbolName ? "a kernel launched without kstub" : c->name;
            ks__hb_op_issue(hb, &op, NULL, 0);   /* a raw launch still orders its stream */
        }
        return;
    case W_COPY:
    case W_SET: {
        size_t count = (size_t)word_at(p, c->bytes);
        if (c->kind == W_SET)
            count *= (size_t)c->src;
        if (c->dst >= 0)
            n += access_at(&acc[n], (CUdeviceptr)word_at(p, c->dst), count, 1, "dst");
        if (c->kind == W_COPY && c->src >= 0)
            n += access_at(&acc[n], (CUdeviceptr)word_at(p, c->src), count, 0, "src");
        ks__hb_op_issue(hb, &op, acc, n);
        if (c->host_waits)
            ks__hb_stream_sync(hb, op.stream);
        return;
    }
    case W_FREE:
        /* cuMemFree waits for the context's work first (CUDA's programming guide:
         * cudaMalloc and cudaFree synchronise all streams), so only another
         * context's unordered use can be freed under it. */
        ks__hb_ctx_sync(hb, op.ctx);
        ks__hb_free(hb, &op, word_at(p, 0), 0);
        return;
    case W_FREE_ASYNC:
        ks__hb_free(hb, &op, word_at(p, 0), 1);
        return;
    case W_ALLOC:
    case W_ALLOC_ASYNC: {
        CUdeviceptr *where = (CUdeviceptr *)(uintptr_t)word_at(p, 0);
        if (where)
            ks__hb_alloc(hb, *where, word_at(p, sizeof(void *)));
        return;
    }
    case W_STREAM_CREATE: {
        CUstream *made = (CUstream *)(uintptr_t)word_at(p, 0);
        unsigned flags;
        memcpy(&flags, (const char *)p + sizeof(void *), sizeof flags);
        if (made)
            ks__hb_stream_create(hb, (uint64_t)(uintptr_t)*made, op.ctx,
                                 flags & CU_STREAM_NON_BLOCKING ? KS__STREAM_NONBLOCKING : KS__STREAM_BLOCKING);
        return;
    }
    case W_STREAM_DESTROY:
        ks__hb_stream_destroy(hb, op.stream);
        return;
    case W_RECORD:
        ks__hb_event_record(hb, word_at(p, 0), &op);
        return;
    case W_WAIT: {
        const cuStreamWaitEvent_params *q = p;
        ks__hb_stream_wait(hb, &op, (uint64_t)(uintptr_t)q->hEvent);
        return;
    }
    case W_STREAM_SYNC:
    case W_STREAM_QUERY:
        ks__hb_stream_sync(hb, op.stream);
        return;
    case W_EVENT_SYNC:
    case W_EVENT_QUERY:
        ks__hb_event_sync(hb, word_at(p, 0));
        return;
    case W_CTX_SYNC:
        ks__hb_ctx_sync(hb, op.ctx);
        return;
    case W_TRIM:
        return;                      /* frees were checked when made (cuMemFreeAsync) */
    }
}

/* The subscription's callbacks for this check (cupti.c hands over only those asked for). */
static void callback(int domain, unsigned cbid, const void *data)
{
    const CUpti_CallbackData *d = data;
    if (own_call || domain != CUPTI_CB_DOMAIN_DRIVER_API || d->callbackSite != CUPTI_API_EXIT)
        return;
    const call *c = call_find(cbid);
    if (c == NULL)
        return;
    CUresult r = d->functionReturnValue ? *(const CUresult *)d->functionReturnValue : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
        if (c->kind == W_LAUNCH || c->kind == W_LAUNCH_EX)
            pending.armed = 0;       /* the launch failed: nothing was queued */
        return;                      /* a failed call (or a query of unfinished work) orders nothing */
    }
    /* A copy's ranges are asked of the driver: the program may copy before
     * libkstub has loaded it (its own first launch). */
    if ((c->kind == W_COPY || c->kind == W_SET) && ks__cu.PointerGetAttributes == NULL)
        ks__driver_load(NULL);
    pthread_mutex_lock(&lock);
    if (hb)
        follow(c, d);
    pthread_mutex_unlock(&lock);
}

/* The core's question while it writes a report (lock held): is the stream with
 * key \p key still at work? One cuStreamQuery, not followed as the program's. */
static int stream_busy(void *user, uint64_t key)
{
    (void)user;
    if (stream_query == NULL) {
        void *fn = NULL;
        if (ks_driver_proc("cuStreamQuery", &fn) != KS_OK || fn == NULL)
            return -1;
        memcpy(&stream_query, &fn, sizeof fn);
    }
    CUcontext ctx = NULL;
    if (ks__cu.CtxGetCurrent == NULL || ks__cu.CtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return -1;
    CUstream s = (CUstream)(uintptr_t)key;
    ks__hb_op here = {NULL, NULL, 0, 0, 0, KS__STREAM_BLOCKING, NULL};
    if (key >> 62) {             /* a default stream: only this thread's, in this context, can be asked */
        stream_of(&here, CU_STREAM_LEGACY, ctx, 0);
        s = CU_STREAM_LEGACY;
        if (here.stream != key) {
            stream_of(&here, CU_STREAM_PER_THREAD, ctx, 0);
            s = CU_STREAM_PER_THREAD;
            if (here.stream != key)
                return -1;
        }
    }
    own_call = 1;
    CUresult r = stream_query(s);
    own_call = 0;
    return r == CUDA_SUCCESS ? 0 : r == CUDA_ERROR_NOT_READY ? 1 : -1;
}

/* ---- starting: the one CUPTI subscription (cupti.c) ------------------------------------ */

/* Under start_lock: the core made and set up, this check's callbacks on, the
 * core published (under lock) only once every one is on; 0 or -1 with why set. */
static int subscribe_once(void)
{
    static ks__cupti_id ids[NCALLS];
    for (size_t i = 0; i < NCALLS; i++)
        ids[i] = (ks__cupti_id){KS__CUPTI_DRIVER, (unsigned)calls[i].cbid, calls[i].name};
    ks__hb *made = ks__hb_new();
    if (made == NULL) {
        snprintf(why, sizeof why, "out of memory");
        return -1;
    }
    ks__hb_set_busy(made, stream_busy, NULL);
    if (ks__cupti_want(KS__CUPTI_RACES, callback, ids, NCALLS, 1, why, sizeof why) != 0) {
        /* Some callbacks may be on: off again (the watch may keep the subscription). */
        char ignored[64];
        ks__cupti_want(KS__CUPTI_RACES, callback, ids, NCALLS, 0, ignored, sizeof ignored);
        ks__hb_delete(made);     /* never published */
        return -1;               /* stay failed */
    }
    pthread_mutex_lock(&lock);
    hb = made;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Under start_lock: subscribe_once, once; the answer is published when known. */
static int start_locked(void)
{
    if (started)
        return started > 0 ? 0 : -1;
    int r = subscribe_once();
    __atomic_store_n(&started, r == 0 ? 1 : -1, __ATOMIC_RELEASE);
    return r;
}

/* 0 once subscribed (loading and subscribing the first time), else -1 with why set. */
static int start(void)
{
    int s = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
    if (s != 0)
        return s > 0 ? 0 : -1;
    pthread_mutex_lock(&start_lock);
    int r = start_locked();
    pthread_mutex_unlock(&start_lock);
    return r;
}

void ks__races_start(void)
{
    start();
}

/* KSTUB_CHECK names races: load CUPTI now, before the program's first driver
 * call. Only the word is looked for (the words are check.c's to parse, at the
 * first launch, which also refuses a misspelled one). */
__attribute__((constructor)) static void races_at_load(void)
{
    const char *p = ks__getenv("KSTUB_CHECK");
    while (p && *p) {
        size_t n = strcspn(p, ", \t");
        if (n == 5 && strncmp(p, "races", 5) == 0) {
            ks__races_start();
            return;
        }
        p += n;
        p += strspn(p, ", \t");
    }
}

/* ---- the check around kstub's launches ---------------------------------------------------- */

/* "kernel 'name'", made once per kernel: the core keeps it by pointer. */
static const char *kernel_what(const ks_kernel *k)
{
    static struct { const ks_kernel *k; char *text; } *names;
    static size_t n, cap;
    for (size_t i = 0; i < n; i++)
        if (names[i].k == k)
            return names[i].text;
    if (n == cap) {
        size_t c = cap ? cap * 2 : 16;
        void *q = realloc(names, c * sizeof *names);
        if (q == NULL)
            return "a kernel";
        names = q, cap = c;
    }
    size_t len = strlen(ks__kernel_name(k)) + 16;
    char *t = malloc(len);
    if (t == NULL)
        return "a kernel";
    snprintf(t, len, "kernel '%s'", ks__kernel_name(k));
    names[n].k = k, names[n].text = t;
    return names[n++].text;
}

static ks_status races_before(const ks__checked *c)
{
    const ks_kernel *k = c->k;
    const char *name = ks__kernel_name(k);
    int ok = start() == 0;
    const char *what = NULL;
    if (ok) {
        pthread_mutex_lock(&lock);
        what = kernel_what(k);
        pthread_mutex_unlock(&lock);
    }
    if (!ok)
        return ks__error(KS_ERR_UNSUPPORTED, name, "not launched: the races check needs CUPTI: %s", why);
    if (ks__cu.PointerGetAttributes == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, name,
                         "the races check needs cuPointerGetAttributes, which the driver lacks");
    ks__hb_op op = {what, c->file, c->line, 0, 0, KS__STREAM_BLOCKING, NULL};
    pending.op = op;
    pending.n = 0;
    for (unsigned i = 0; i < k->nparams && pending.n < KS__RACES_PTRS; i++) {
        const ks_param_desc *d = &k->params[i];
        if (d->kind != KS_PARAM_POINTER)
            continue;
        CUdeviceptr p;
        memcpy(&p, c->args[i], sizeof p);
        uint64_t base, size;
        if (range_of(p, &base, &size) != 0)
            continue;                /* not device memory: the pointers check's business */
        ks__hb_access *a = &pending.acc[pending.n];
        a->base = base, a->size = size, a->lo = p, a->hi = base + size;
        a->write = !d->readonly, a->possible = 1, a->param = d->name ? d->name : "(unnamed)";
        long long count;
        if (d->nextent > 0 && d->pointee_size > 0 && ks__extent_count(c, d, &count) == KS_OK) {
            unsigned long long bytes;
            if (!__builtin_mul_overflow((unsigned long long)count, d->pointee_size, &bytes) &&
                bytes <= a->hi - p)
                a->hi = p + bytes;
            a->possible = 0;
        }
        pending.n++;
    }
    pending.armed = 1;
    return KS_OK;
}

static ks_status races_after(const ks__checked *c, ks_status st)
{
    char text[1024];
    pthread_mutex_lock(&lock);
    if (pending.armed && st == KS_OK && hb) {
        /* No callback came for it (it always does with CUPTI's driver domain on):
         * record it now, on the launch's own stream. */
        CUcontext ctx = NULL;
        if (ks__cu.CtxGetCurrent)
            ks__cu.CtxGetCurrent(&ctx);
        stream_of(&pending.op, (CUstream)c->l->stream, ctx, 0);
        ks__hb_op_issue(hb, &pending.op, pending.acc, pending.n);
    }
    pending.armed = 0;
    /* A launch that failed reports that; the races wait for the next one. */
    int found = st == KS_OK && hb && ks__hb_take(hb, text, sizeof text);
    size_t more = hb ? ks__hb_pending(hb) : 0;
    pthread_mutex_unlock(&lock);
    if (!found)
        return st;
    if (more)
        return ks__error(KS_ERR_RACE, ks__kernel_name(c->k), "%s (%zu more reports come with the next "
                         "checked launches)", text, more);
    return ks__error(KS_ERR_RACE, ks__kernel_name(c->k), "%s", text);
}

const ks__check ks__check_races = {races_before, races_after};

#endif /* __has_include(<cupti.h>) */
