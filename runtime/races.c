/*
 * races.c — the races check's happens-before core (races.h): vector clocks
 * over streams, the order the program's driver calls establish, accesses by
 * byte range per allocation, and the reports. Pure C: cupti.c feeds it.
 *
 * The model. Every stream is a component of the vector clocks; an operation
 * queued on a stream ticks its component, and its record keeps that epoch
 * (stream, tick). Operation B is ordered before a later operation A when A's
 * stream clock has B's stream component at or past B's tick. Clocks grow by
 * joins, one per way the program orders work:
 *   - a stream's own order (its component);
 *   - the host: what it saw finish (stream, event, context synchronisation,
 *     a successful query) is joined into the host clock, and every later
 *     command the host queues joins the host clock first. The host threads
 *     are one clock, since the check cannot see how they order each other:
 *     two threads' work is ordered once either has seen it finish, which can
 *     miss a race but never reports one the program orders;
 *   - events: a record copies the stream's clock, a wait joins it in;
 *   - the legacy default stream: a command on it joins the clocks of every
 *     blocking stream of its context, and a command on a blocking stream
 *     joins the legacy stream's clock (non-blocking streams join neither).
 *
 * Records the host has seen finish are dropped (everything later follows
 * them), and so is a record a later one of its own stream covers (same
 * bytes or more, a write if it was): any race with the old one is a race
 * with the new one. At most KS__HB_RECORDS records are kept per allocation;
 * beyond that the oldest go (counted in the reports).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "races.h"

#define KS__HB_RECORDS 1024      /* records per allocation kept at most */
#define KS__HB_QUEUE 64          /* reports waiting to be taken, at most */

typedef struct vclock {
    uint32_t *c;
    size_t n;
} vclock;

typedef struct stream {
    uint64_t key, ctx;
    ks__stream_kind kind;
    unsigned agent;              /* its component */
    int live;                    /* 0 once destroyed (its work still counts) */
    vclock vc;
} stream;

typedef struct event {
    uint64_t key;
    vclock vc;
} event;

typedef struct record {
    unsigned agent;
    uint32_t tick;
    uint64_t lo, hi;
    int write, possible;
    const char *what, *file, *param, *stream_name;
    int line;
    uint64_t stream;
} record;

typedef struct alloc {
    uint64_t base, size;
    record *r;
    size_t n, cap;
} alloc;

struct ks__hb {
    stream *s;
    size_t ns, scap;
    event *e;
    size_t ne, ecap;
    alloc *a;
    size_t na, acap;
    vclock host;
    unsigned agents;
    char *queue[KS__HB_QUEUE];
    size_t qhead, qn, dropped, found, lost_records;
    uint64_t *seen;              /* hashes of the pairs reported, open addressing */
    size_t nseen, seencap;
    ks__hb_busy_fn busy;         /* whether a stream is still busy, for the reports; or NULL */
    void *busy_user;
};

/* Grow *p (elements of \p size) to hold \p need; 0 or -1. */
static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
    void **p = pp;
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (q == NULL)
        return -1;
    memset((char *)q + *cap * size, 0, (n - *cap) * size);
    *p = q;
    *cap = n;
    return 0;
}

/* ---- vector clocks ---------------------------------------------------------------- */

static uint32_t vc_get(const vclock *v, unsigned i)
{
    return i < v->n ? v->c[i] : 0;
}

static int vc_size(vclock *v, size_t n)
{
    return grow(&v->c, &v->n, n, sizeof *v->c);
}

static void vc_join(vclock *dst, const vclock *src)
{
    size_t n = src->n;
    while (n > 0 && src->c[n - 1] == 0)
        n--;
    if (vc_size(dst, n) != 0)
        return;                  /* out of memory: fewer joins, so more reports, never fewer */
    for (size_t i = 0; i < n; i++)
        if (src->c[i] > dst->c[i])
            dst->c[i] = src->c[i];
}

static void vc_copy(vclock *dst, const vclock *src)
{
    if (dst->c)
        memset(dst->c, 0, dst->n * sizeof *dst->c);
    vc_join(dst, src);
}

/* ---- the state -------------------------------------------------------------------- */

ks__hb *ks__hb_new(void)
{
    return calloc(1, sizeof(ks__hb));
}

void ks__hb_delete(ks__hb *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->ns; i++)
        free(h->s[i].vc.c);
    for (size_t i = 0; i < h->ne; i++)
        free(h->e[i].vc.c);
    for (size_t i = 0; i < h->na; i++)
        free(h->a[i].r);
    for (size_t i = 0; i < h->qn; i++)
        free(h->queue[(h->qhead + i) % KS__HB_QUEUE]);
    free(h->s);
    free(h->e);
    free(h->a);
    free(h->host.c);
    free(h->seen);
    free(h);
}

static stream *stream_find(ks__hb *h, uint64_t key)
{
    for (size_t i = h->ns; i-- > 0;)
        if (h->s[i].live && h->s[i].key == key)
            return &h->s[i];
    return NULL;
}

static stream *stream_add(ks__hb *h, uint64_t key, uint64_t ctx, ks__stream_kind kind)
{
    if (grow(&h->s, &h->scap, h->ns + 1, sizeof *h->s) != 0)
        return NULL;
    stream *s = &h->s[h->ns++];
    memset(s, 0, sizeof *s);
    s->key = key, s->ctx = ctx, s->kind = kind, s->live = 1;
    s->agent = h->agents++;
    return s;
}

void ks__hb_stream_create(ks__hb *h, uint64_t key, uint64_t ctx, ks__stream_kind kind)
{
    stream *old = stream_find(h, key);
    if (old)
        old->live = 0;           /* a destroy we did not see: the handle was reused */
    stream_add(h, key, ctx, kind);
}

void ks__hb_stream_destroy(ks__hb *h, uint64_t key)
{
    stream *s = stream_find(h, key);
    if (s)
        s->live = 0;
}

/* The stream an operation names, made on first sight with the op's kind. */
static stream *stream_of(ks__hb *h, const ks__hb_op *op)
{
    stream *s = stream_find(h, op->stream);
    return s ? s : stream_add(h, op->stream, op->ctx, op->kind);
}

/* A command is queued on \p s: it follows what the host has seen finish and,
 * by the legacy stream's rules, the other side's earlier work. */
static void enqueue(ks__hb *h, stream *s)
{
    vc_join(&s->vc, &h->host);
    for (size_t i = 0; i < h->ns; i++) {
        stream *t = &h->s[i];
        if (t == s || t->ctx != s->ctx)
            continue;
        if ((s->kind == KS__STREAM_LEGACY && t->kind == KS__STREAM_BLOCKING) ||
            (s->kind == KS__STREAM_BLOCKING && t->kind == KS__STREAM_LEGACY))
            vc_join(&s->vc, &t->vc);
    }
}

/* Tick \p s's component: the epoch of the command just queued. 0: out of memory. */
static uint32_t tick(stream *s)
{
    if (vc_size(&s->vc, s->agent + 1) != 0)
        return 0;
    return ++s->vc.c[s->agent];
}

static event *event_get(ks__hb *h, uint64_t key, int make)
{
    for (size_t i = 0; i < h->ne; i++)
        if (h->e[i].key == key)
            return &h->e[i];
    if (!make || grow(&h->e, &h->ecap, h->ne + 1, sizeof *h->e) != 0)
        return NULL;
    event *e = &h->e[h->ne++];
    memset(e, 0, sizeof *e);
    e->key = key;
    return e;
}

void ks__hb_event_record(ks__hb *h, uint64_t ev, const ks__hb_op *op)
{
    stream *s = stream_of(h, op);
    event *e = event_get(h, ev, 1);
    if (s == NULL || e == NULL)
        return;
    enqueue(h, s);
    vc_copy(&e->vc, &s->vc);
}

void ks__hb_stream_wait(ks__hb *h, const ks__hb_op *op, uint64_t ev)
{
    stream *s = stream_of(h, op);
    event *e = event_get(h, ev, 0);
    if (s == NULL || e == NULL)
        return;                  /* an event never recorded: the wait is no order */
    enqueue(h, s);
    vc_join(&s->vc, &e->vc);
}

void ks__hb_stream_sync(ks__hb *h, uint64_t key)
{
    stream *s = stream_find(h, key);
    if (s)
        vc_join(&h->host, &s->vc);
}

void ks__hb_event_sync(ks__hb *h, uint64_t ev)
{
    event *e = event_get(h, ev, 0);
    if (e)
        vc_join(&h->host, &e->vc);
}

void ks__hb_ctx_sync(ks__hb *h, uint64_t ctx)
{
    for (size_t i = 0; i < h->ns; i++)
        if (h->s[i].ctx == ctx)
            vc_join(&h->host, &h->s[i].vc);
}

/* ---- allocations and their records ----------------------------------------------- */

static alloc *alloc_get(ks__hb *h, uint64_t base, uint64_t size, int make)
{
    for (size_t i = 0; i < h->na; i++)
        if (h->a[i].base == base)
            return &h->a[i];
    if (!make || grow(&h->a, &h->acap, h->na + 1, sizeof *h->a) != 0)
        return NULL;
    alloc *a = &h->a[h->na++];
    memset(a, 0, sizeof *a);
    a->base = base, a->size = size;
    return a;
}

static void alloc_drop(ks__hb *h, alloc *a)
{
    free(a->r);
    *a = h->a[--h->na];
}

void ks__hb_alloc(ks__hb *h, uint64_t base, uint64_t size)
{
    for (size_t i = h->na; i-- > 0;)
        if (h->a[i].base < base + size && base < h->a[i].base + h->a[i].size)
            alloc_drop(h, &h->a[i]);
}

/* ---- reports ---------------------------------------------------------------------- */

void ks__hb_set_busy(ks__hb *h, ks__hb_busy_fn busy, void *user)
{
    h->busy = busy, h->busy_user = user;
}

/* What this run says of the earlier side \p b being still at work when the later came. */
static const char *in_this_run(ks__hb *h, const record *b)
{
    int busy = h->busy ? h->busy(h->busy_user, b->stream) : -1;
    if (busy == 0)
        return "in this run they did not overlap in time (the earlier one's stream had finished its "
               "work), but nothing makes another run wait";
    if (busy == 1)
        return "in this run they may have overlapped in time (the earlier one's stream was still busy)";
    return "whether they overlapped in time in this run is not known";
}

static void report_push(ks__hb *h, char *text)
{
    if (text == NULL)
        return;
    if (h->qn == KS__HB_QUEUE) {
        free(text);
        h->dropped++;
        return;
    }
    h->queue[(h->qhead + h->qn++) % KS__HB_QUEUE] = text;
}

/* 1 the first time this pair of (operation, site, parameter) is seen. */
static int first_time(ks__hb *h, const record *b, const record *a)
{
    uint64_t x = 1469598103934665603ull;
    const void *parts[] = {a->what, a->file, a->param, b->what, b->file, b->param};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        x = (x ^ (uint64_t)(uintptr_t)parts[i]) * 1099511628211ull;
    x = (x ^ (uint64_t)(unsigned)a->line) * 1099511628211ull;
    x = (x ^ ((uint64_t)(unsigned)b->line << 32)) * 1099511628211ull;
    x |= 1;
    if (h->nseen * 2 >= h->seencap) {
        size_t cap = h->seencap ? h->seencap * 2 : 64;
        uint64_t *t = calloc(cap, sizeof *t);
        if (t == NULL)
            return 1;
        for (size_t i = 0; i < h->seencap; i++)
            if (h->seen[i]) {
                size_t j = h->seen[i] & (cap - 1);
                while (t[j])
                    j = (j + 1) & (cap - 1);
                t[j] = h->seen[i];
            }
        free(h->seen);
        h->seen = t, h->seencap = cap;
    }
    size_t j = x & (h->seencap - 1);
    while (h->seen[j]) {
        if (h->seen[j] == x)
            return 0;
        j = (j + 1) & (h->seencap - 1);
    }
    h->seen[j] = x;
    h->nseen++;
    return 1;
}

/* "kernel 'k' on stream 0x.. (parameter y, writes bytes [0, 64)) at f.c:3" */
static void describe(char *buf, size_t cap, const record *r, const alloc *a)
{
    char site[300], where[64];
    if (r->file)
        snprintf(site, sizeof site, "at %s:%d", r->file, r->line);
    else
        snprintf(site, sizeof site, "(call site not known)");
    if (r->stream_name == NULL)
        snprintf(where, sizeof where, "stream 0x%" PRIx64, r->stream);
    if (r->param)
        snprintf(buf, cap, "%s on %s (parameter %s, %s bytes [%" PRIu64 ", %" PRIu64 ")%s) %s", r->what,
                 r->stream_name ? r->stream_name : where, r->param, r->write ? "writes" : "reads",
                 r->lo - a->base, r->hi - a->base, r->possible ? " up to the allocation's end" : "", site);
    else
        snprintf(buf, cap, "%s on %s %s", r->what, r->stream_name ? r->stream_name : where, site);
}

static size_t hint(char *buf, size_t cap, const record *r)
{
    if (!r->possible || r->param == NULL)
        return 0;
    int n = snprintf(buf, cap, "; %s has no extent hint for %s, so its range was taken to the "
                     "allocation's end: '// kstub:extent(%s, COUNT)' on the kernel settles it",
                     r->what, r->param, r->param);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

static void report_conflict(ks__hb *h, const alloc *a, const record *b, const record *n)
{
    h->found++;
    char *text = malloc(2048), db[600], dn[600], hb[300] = "", hn[300] = "";
    if (text == NULL)
        return;
    describe(db, sizeof db, b, a);
    describe(dn, sizeof dn, n, a);
    hint(hb, sizeof hb, b);
    hint(hn, sizeof hn, n);
    uint64_t lo = b->lo > n->lo ? b->lo : n->lo, hi = b->hi < n->hi ? b->hi : n->hi;
    snprintf(text, 2048,
             "races: %s%s and %s touch bytes [%" PRIu64 ", %" PRIu64 ") of the allocation at 0x%" PRIx64
             " (%" PRIu64 " bytes), %s, and nothing the program does orders them (no stream order, "
             "event wait or synchronisation between them); %s%s%s",
             b->possible || n->possible ? "possibly: " : "", dn, db, lo - a->base, hi - a->base, a->base,
             a->size, b->write && n->write ? "both writing" : "one writing", in_this_run(h, b), hn, hb);
    report_push(h, text);
}

static void report_free(ks__hb *h, const alloc *a, const record *use, const ks__hb_op *op, int async)
{
    h->found++;
    char *text = malloc(2048), du[600], site[300], where[64];
    if (text == NULL)
        return;
    describe(du, sizeof du, use, a);
    if (op->file)
        snprintf(site, sizeof site, "at %s:%d", op->file, op->line);
    else
        snprintf(site, sizeof site, "(call site not known)");
    snprintf(where, sizeof where, "stream 0x%" PRIx64, op->stream);
    snprintf(text, 2048,
             "races: %s of the allocation at 0x%" PRIx64 " (%" PRIu64 " bytes) %s%s %s is not ordered "
             "after %s, which uses it: a use after free (order the free after the use with an event "
             "wait or a synchronisation); %s",
             op->what, a->base, a->size, async ? "on " : "by the host",
             async ? (op->stream_name ? op->stream_name : where) : "", site, du, in_this_run(h, use));
    report_push(h, text);
}

size_t ks__hb_pending(const ks__hb *h)
{
    return h->qn;
}

size_t ks__hb_found(const ks__hb *h)
{
    return h->found;
}

int ks__hb_take(ks__hb *h, char *buf, size_t cap)
{
    if (h->qn == 0)
        return 0;
    char *t = h->queue[h->qhead];
    h->qhead = (h->qhead + 1) % KS__HB_QUEUE;
    h->qn--;
    if (h->dropped && h->qn == 0)
        snprintf(buf, cap, "%s (and %zu more reports not kept)", t, h->dropped), h->dropped = 0;
    else
        snprintf(buf, cap, "%s", t);
    free(t);
    return 1;
}

/* ---- operations ------------------------------------------------------------------- */

/* Whether record \p r is ordered before what \p vc stands for. */
static int ordered(const record *r, const vclock *vc)
{
    return vc_get(vc, r->agent) >= r->tick;
}

/* Drop the records the host has seen finish: everything later follows them. */
static void prune_seen(ks__hb *h, alloc *a)
{
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (!ordered(&a->r[i], &h->host))
            a->r[k++] = a->r[i];
    a->n = k;
}

static void access_one(ks__hb *h, const stream *s, uint32_t t, const ks__hb_op *op, const ks__hb_access *x)
{
    if (x->hi <= x->lo)
        return;
    alloc *a = alloc_get(h, x->base, x->size, 1);
    if (a == NULL)
        return;
    record n = {s->agent, t, x->lo, x->hi, x->write, x->possible, op->what, op->file, x->param,
                op->stream_name, op->line, op->stream};
    prune_seen(h, a);
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        record *b = &a->r[i];
        if (b->lo < n.hi && n.lo < b->hi && (b->write || n.write) && !ordered(b, &s->vc) &&
            first_time(h, b, &n))
            report_conflict(h, a, b, &n);
        /* Covered by the new record of its own stream: drop it. */
        if (b->agent == n.agent && n.lo <= b->lo && b->hi <= n.hi && (n.write || !b->write))
            continue;
        a->r[k++] = *b;
    }
    a->n = k;
    if (a->n == KS__HB_RECORDS) {
        memmove(a->r, a->r + 1, (a->n - 1) * sizeof *a->r);
        a->n--;
        h->lost_records++;
    }
    if (grow(&a->r, &a->cap, a->n + 1, sizeof *a->r) == 0)
        a->r[a->n++] = n;
}

void ks__hb_op_issue(ks__hb *h, const ks__hb_op *op, const ks__hb_access *acc, unsigned n)
{
    stream *s = stream_of(h, op);
    if (s == NULL)
        return;
    enqueue(h, s);
    uint32_t t = tick(s);
    if (t == 0)
        return;
    for (unsigned i = 0; i < n; i++)
        access_one(h, s, t, op, &acc[i]);
}

void ks__hb_free(ks__hb *h, const ks__hb_op *op, uint64_t base, int async)
{
    const vclock *vc = &h->host;
    if (async) {
        stream *s = stream_of(h, op);
        if (s == NULL)
            return;
        enqueue(h, s);
        vc = &s->vc;
    }
    alloc *a = alloc_get(h, base, 0, 0);
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++)
        if (!ordered(&a->r[i], vc)) {
            record f = {0, 0, 0, 0, 1, 0, op->what, op->file, NULL, NULL, op->line, op->stream};
            if (first_time(h, &a->r[i], &f))
                report_free(h, a, &a->r[i], op, async);
        }
    alloc_drop(h, a);
}
