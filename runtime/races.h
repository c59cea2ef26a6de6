/*
 * races.h — the races check's happens-before core (races.c): the order the
 * program's own driver calls establish between streams, kept as vector
 * clocks (one component per stream, as ThreadSanitizer keeps one per
 * thread), and the accesses of kernels, copies and memsets to allocations by
 * byte range. It reports two accesses to overlapping bytes, at least one a
 * write, that nothing orders, and frees not ordered after a use.
 *
 * Pure C: no driver, no CUPTI, no lock (the caller serialises every call).
 * cupti.c feeds it what CUPTI's callbacks see; tests/runtime/check_races.c
 * feeds it recorded call sequences directly.
 *
 * Strings passed in (names, parameters, call sites) are kept by pointer and
 * must outlive the core: they are the generated descriptors' literals and
 * __FILE__, or the driver calls' names.
 */
#ifndef KS_RACES_H
#define KS_RACES_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks__hb ks__hb;

/* How a stream orders against the context's legacy default stream. */
typedef enum ks__stream_kind {
    KS__STREAM_BLOCKING = 0,     /* cuStreamCreate(.., CU_STREAM_DEFAULT), a per-thread default stream */
    KS__STREAM_NONBLOCKING = 1,  /* CU_STREAM_NON_BLOCKING: no implicit order with the legacy stream */
    KS__STREAM_LEGACY = 2        /* the legacy default stream (NULL, CU_STREAM_LEGACY) of a context */
} ks__stream_kind;

/* An operation on a stream: a kernel, an async copy or memset, an async free. */
typedef struct ks__hb_op {
    const char *what;            /* "kernel 'saxpy'", "cuMemcpyHtoDAsync", ... */
    const char *file;            /* call site, or NULL when not known */
    int line;
    uint64_t stream;             /* the stream's key (cupti.c: its handle, or a made-up key for defaults) */
    uint64_t ctx;                /* its context, which groups blocking streams with their legacy stream */
    ks__stream_kind kind;        /* used when the stream was not seen created */
    const char *stream_name;     /* "the legacy default stream" and the like; NULL: "stream 0x.." */
} ks__hb_op;

/* One range an operation may touch. */
typedef struct ks__hb_access {
    uint64_t base, size;         /* the allocation */
    uint64_t lo, hi;             /* the bytes [lo, hi) that may be touched, absolute */
    int write;                   /* 1: may write; 0: only reads */
    int possible;                /* the range is conservative (pointer to the allocation's end) */
    const char *param;           /* the parameter ("dst", "src" for copies) */
} ks__hb_access;

ks__hb *ks__hb_new(void);
void ks__hb_delete(ks__hb *h);

/* cuStreamCreate and the like: \p key orders as \p kind in \p ctx. */
void ks__hb_stream_create(ks__hb *h, uint64_t key, uint64_t ctx, ks__stream_kind kind);
/* cuStreamDestroy: the key may be reused; work already queued keeps its place. */
void ks__hb_stream_destroy(ks__hb *h, uint64_t key);

/* cuEventRecord(event, op->stream): the event stands for the stream's work so far. */
void ks__hb_event_record(ks__hb *h, uint64_t event, const ks__hb_op *op);
/* cuStreamWaitEvent(op->stream, event): later work on the stream follows the event's. */
void ks__hb_stream_wait(ks__hb *h, const ks__hb_op *op, uint64_t event);

/* The host saw work finish: cuStreamSynchronize or a successful cuStreamQuery of
 * \p stream; cuEventSynchronize or a successful cuEventQuery of \p event;
 * cuCtxSynchronize of \p ctx. Whatever the host issues later follows it. */
void ks__hb_stream_sync(ks__hb *h, uint64_t stream);
void ks__hb_event_sync(ks__hb *h, uint64_t event);
void ks__hb_ctx_sync(ks__hb *h, uint64_t ctx);

/* A kernel, copy or memset queued on op->stream touching \p n ranges. */
void ks__hb_op_issue(ks__hb *h, const ks__hb_op *op, const ks__hb_access *acc, unsigned n);

/* A free of the allocation at \p base: on op->stream (cuMemFreeAsync) when \p async,
 * else by the host (cuMemFree). Every use must be ordered before it. */
void ks__hb_free(ks__hb *h, const ks__hb_op *op, uint64_t base, int async);
/* A new allocation [base, base + size): forget anything recorded of the bytes before. */
void ks__hb_alloc(ks__hb *h, uint64_t base, uint64_t size);

/* Whether \p stream has work still running now: 1 yes, 0 no (all it was given
 * has finished), -1 not known. Asked only while a report is written, to say
 * whether the earlier side could have overlapped the later in this run. */
typedef int (*ks__hb_busy_fn)(void *user, uint64_t stream);
void ks__hb_set_busy(ks__hb *h, ks__hb_busy_fn busy, void *user);

/* Reports found and not yet taken; take the oldest into \p buf (1), or 0 when none. */
size_t ks__hb_pending(const ks__hb *h);
int ks__hb_take(ks__hb *h, char *buf, size_t cap);
/* Reports found in all (taken or not, repeats of one pair counted once). */
size_t ks__hb_found(const ks__hb *h);

#endif /* KS_RACES_H */
