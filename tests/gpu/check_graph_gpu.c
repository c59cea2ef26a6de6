/*
 * check_graph_gpu.c — typed CUDA graphs on a real device: a graph built from
 * the generated <kernel>_node entry points of several kernels in kernels/
 * (scalars, a struct by value, halves, template instantiations) and one node
 * the application adds through the driver (a memset), compared with the same
 * work done by one-by-one stub launches.
 *
 * A plain C program like check_gpu.c: one line per case, then
 * "gpu-check-graph: N passed, M failed"; exit status 1 when any case failed.
 * Without a CUDA driver it prints "gpu-check-graph: no CUDA driver (...);
 * skipped" and exits 0.
 *
 * What it covers:
 *   - build, instantiate, replay on the legacy, per-thread and a user stream:
 *     every output byte equal to the stubs' (both poisoned first), and the
 *     echoed arguments and the memset equal to what was sent;
 *   - a node launches the very handle the stub launches;
 *   - <kernel>_node_set on every kstub node between replays (new arguments
 *     and configurations), results equal to the stubs' with the new arguments;
 *   - 1,000 replays, each after node_set with other arguments and another
 *     launch configuration, each result checked, the streams taken in turn;
 *   - ks_graph_exec_update with a graph of the same shape; a smaller graph, a
 *     node of another kernel and the application's memset node refused.
 *
 * No -lcuda: the driver calls the test makes itself come from ks_driver_proc().
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"   /* the driver, device 0, EXPECT/REQUIRE, DEV, POISON */
#include "records.kstub.h"
#include "scalars.kstub.h"
#include "templates.kstub.h"
#include "vector_ops.kstub.h"

/* ---- driver functions the test calls itself ----------------------------------- */

static CUcontext the_ctx;

/* ---- a small harness, as check_gpu.c's ----------------------------------------- */

static int n_passed, n_failed;

#define EXPECT_STATUS(call, want, text)                                 \
    do {                                                                \
        ks_status s_ = (call);                                          \
        EXPECT(s_ == (want), "%s returned %s (%s), expected %s", #call, \
               ks_status_name(s_), ks_last_error_message(), ks_status_name(want)); \
        EXPECT(strstr(ks_last_error_message(), (text)) != NULL,         \
               "%s: the message lacks \"%s\": %s", #call, (text), ks_last_error_message()); \
    } while (0)

/* ---- the work: buffers, arguments ------------------------------------------------ */

enum { N = 4096 + 13, BLOCK = 256 };

/* kernels/scalars.cu's struct Echo, field for field (check_gpu.c checks the layout). */
struct echo_fields {
    bool b; char c; signed char sc; unsigned char uc;
    short s; unsigned short us; int i; unsigned int u;
    long l; unsigned long ul; long long ll; unsigned long long ull;
    float f; double d;
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; size_t sz; ptrdiff_t pd; intptr_t ip; uintptr_t up;
    unsigned short flags;
};
_Static_assert(sizeof(struct echo_fields) == 136, "sizeof differs from kernels/scalars.cu's struct Echo");

#define ECHO_FIELDS(X)                                                                  \
    X(b) X(c) X(sc) X(uc) X(s) X(us) X(i) X(u) X(l) X(ul) X(ll) X(ull) X(f) X(d)        \
    X(i8) X(u8) X(i16) X(u16) X(i32) X(u32) X(i64) X(u64) X(sz) X(pd) X(ip) X(up) X(flags)
#define ECHO_ARG(field) , a->echo.field

/* One set of device buffers: the graph writes one, the stubs another. */
typedef struct bufs {
    CUdeviceptr ints, fx, fy, fz, hx, hy, words, echo, params, halves;
} bufs;

#define OUT_BYTES 96                 /* echo_params' and echo_halves' output */

/* Every argument the kernels take, and each one's launch size. */
typedef struct args {
    int fill_value;
    uint32_t fill_n;                 /* fill_int's n: the tail keeps what it had */
    float axpy_a, saxpy_a, haxpy_a;
    unsigned word;                   /* the application's memset */
    struct echo_fields echo;
    rec_Params p;
    rec_Mode mode;
    rec_Axis axis;
    ks_half h;
    ks_half2 h2;
    ks_bfloat16 bf;
    ks_bfloat162 bf2;
    float check;
} args;

static args make_args(int r)
{
    args a;
    memset(&a, 0, sizeof a);
    a.fill_value = 1000 + 7 * r;
    a.fill_n = (uint32_t)(N - (r % 7) * 97);
    a.axpy_a = 1.0f + 0.125f * (float)(r % 5);
    a.saxpy_a = -0.5f + 0.25f * (float)(r % 3);
    a.haxpy_a = 0.75f + 0.25f * (float)(r % 2);
    a.word = 0x01020304u + (unsigned)r;
    a.echo.b = r % 2; a.echo.c = (char)('a' + r % 26); a.echo.sc = (signed char)(-r % 128);
    a.echo.uc = (unsigned char)(200 + r % 50); a.echo.s = (short)(-1000 - r); a.echo.us = (unsigned short)(60000 + r % 5000);
    a.echo.i = -r * 1001; a.echo.u = 4000000000u - (unsigned)r; a.echo.l = -((long)r << 33);
    a.echo.ul = (unsigned long)r << 40; a.echo.ll = -(long long)r * 3; a.echo.ull = ~(unsigned long long)r;
    a.echo.f = 0.5f + (float)r; a.echo.d = -1.0 / (r + 3); a.echo.i8 = (int8_t)(r % 100 - 50);
    a.echo.u8 = (uint8_t)r; a.echo.i16 = (int16_t)(-r); a.echo.u16 = (uint16_t)(r * 3);
    a.echo.i32 = r * -77; a.echo.u32 = (uint32_t)r * 77u; a.echo.i64 = (int64_t)r << 35;
    a.echo.u64 = (uint64_t)r * r; a.echo.sz = (size_t)r + 1; a.echo.pd = -(ptrdiff_t)r;
    a.echo.ip = (intptr_t)r * 5; a.echo.up = (uintptr_t)r * 9; a.echo.flags = (unsigned short)(r ^ 0x5a5a);
    a.p.scale = 0.5f * (float)r;
    a.p.inner.tag = (char)('A' + r % 26);
    a.p.inner.weight = 1.0 + r;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            a.p.grid[i][j] = r * 10 + i * 3 + j;
    a.p.mode = r % 2 ? rec_Mode_Exact : rec_Mode_Careful;
    a.p.dir.x = 1.0f, a.p.dir.y = (float)-r, a.p.dir.z = 0.25f;
    a.p.bits.i = 0x3f800000 + r;
    a.p.enabled = r % 3 == 0;
    a.mode = rec_Mode_Fast;
    a.axis = r % 3 == 0 ? rec_Axis_X : r % 3 == 1 ? rec_Axis_Y : rec_Axis_Z;
    a.h = ks_half_from_float((float)(r % 100) - 50.0f);
    a.h2 = ks_half2_make(0.5f * (float)(r % 8), -2.0f);
    a.bf = ks_bfloat16_from_float(3.0f + (float)r);
    a.bf2 = ks_bfloat162_make(-1.0f, (float)(r % 10));
    a.check = 1.0f / (float)(r + 1);
    return a;
}

static unsigned blocks(size_t items, size_t per_block)
{
    return (unsigned)((items + per_block - 1) / per_block);
}

/* The nodes of one graph, in the order the stubs make the same calls. */
typedef struct nodes {
    ks_graph_node words;             /* the application's memset */
    fill_int_node_t fill;
    tmpl_axpy_float_4_node_t axpy;
    saxpy_node_t saxpy;
    haxpy_node_t haxpy;
    echo_scalars_node_t echo;
    echo_params_node_t params;
    echo_halves_node_t halves;
} nodes;

#define TRY(call)                                                       \
    do {                                                                \
        ks_status t_ = (call);                                          \
        if (t_ != KS_OK)                                                \
            return t_;                                                  \
    } while (0)

/* The graph: memset (the application's, through the driver) and fill_int at
 * the roots; axpy<float, 4> -> saxpy; haxpy; echo_scalars after the memset;
 * echo_params after fill_int and echo_scalars; echo_halves after haxpy. */
static ks_status build(ks_graph g, const bufs *d, const args *a, nodes *n)
{
    CUDA_MEMSET_NODE_PARAMS m;
    memset(&m, 0, sizeof m);
    m.dst = d->words, m.value = a->word, m.elementSize = 4, m.width = N, m.height = 1, m.pitch = 0;
    CUresult r = cu.GraphAddMemsetNode(&n->words, g, NULL, 0, &m, the_ctx);
    if (r != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "cuGraphAddMemsetNode failed: %s", gpu_cu_name(r));
        return KS_ERR_DRIVER;
    }
    TRY(fill_int_node(g, NULL, 0, &n->fill, ks_launch_1d(blocks(a->fill_n, BLOCK), BLOCK), DEV(int, d->ints),
                      a->fill_value, a->fill_n));
    TRY(tmpl_axpy_float_4_node(g, NULL, 0, &n->axpy, ks_launch_1d(blocks(N, 4 * BLOCK), BLOCK), a->axpy_a,
                               DEV(const float, d->fx), DEV(float, d->fy), (int64_t)N));
    TRY(saxpy_node(g, &n->axpy.node, 1, &n->saxpy, ks_launch_1d(blocks(N, BLOCK), BLOCK), a->saxpy_a,
                   DEV(const float, d->fy), DEV(float, d->fz), (size_t)N));
    TRY(haxpy_node(g, NULL, 0, &n->haxpy, ks_launch_1d(blocks(N, BLOCK), BLOCK), N, a->haxpy_a,
                   DEV(const ks_half, d->hx), DEV(ks_half, d->hy)));
    /* (f)(...): the plain function where ECHO_FIELDS writes the arguments (the
     * C macro form counts them before it expands). */
    TRY((echo_scalars_node)(g, &n->words, 1, &n->echo, ks_launch_1d(1, 1), DEV(struct Echo, d->echo)
                          ECHO_FIELDS(ECHO_ARG)));
    ks_graph_node two[2] = {n->fill.node, n->echo.node};
    TRY(echo_params_node(g, two, 2, &n->params, ks_launch_1d(1, 1), DEV(unsigned char, d->params), a->p, a->mode,
                         a->axis));
    TRY(echo_halves_node(g, &n->haxpy.node, 1, &n->halves, ks_launch_1d(1, 1), DEV(unsigned char, d->halves), a->h,
                         a->h2, a->bf, a->bf2, a->check));
    return KS_OK;
}

/* New arguments (and fill's new size) for every kstub node of instance \p e. */
static ks_status set_all(ks_graph_exec e, const nodes *n, const bufs *d, const args *a)
{
    TRY(fill_int_node_set(e, n->fill, ks_launch_1d(blocks(a->fill_n, BLOCK), BLOCK), DEV(int, d->ints),
                          a->fill_value, a->fill_n));
    TRY(tmpl_axpy_float_4_node_set(e, n->axpy, ks_launch_1d(blocks(N, 4 * BLOCK), BLOCK), a->axpy_a,
                                   DEV(const float, d->fx), DEV(float, d->fy), (int64_t)N));
    TRY(saxpy_node_set(e, n->saxpy, ks_launch_1d(blocks(N, BLOCK), BLOCK), a->saxpy_a, DEV(const float, d->fy),
                       DEV(float, d->fz), (size_t)N));
    TRY(haxpy_node_set(e, n->haxpy, ks_launch_1d(blocks(N, BLOCK), BLOCK), N, a->haxpy_a,
                       DEV(const ks_half, d->hx), DEV(ks_half, d->hy)));
    TRY((echo_scalars_node_set)(e, n->echo, ks_launch_1d(1, 1), DEV(struct Echo, d->echo) ECHO_FIELDS(ECHO_ARG)));
    TRY(echo_params_node_set(e, n->params, ks_launch_1d(1, 1), DEV(unsigned char, d->params), a->p, a->mode,
                             a->axis));
    TRY(echo_halves_node_set(e, n->halves, ks_launch_1d(1, 1), DEV(unsigned char, d->halves), a->h, a->h2, a->bf,
                             a->bf2, a->check));
    return KS_OK;
}

/* The same work, one stub launch at a time, on \p s (the memset first, done). */
static ks_status stubs(CUstream s, const bufs *d, const args *a)
{
    if (cu.MemsetD32(d->words, a->word, N) != CUDA_SUCCESS || cu.StreamSynchronize(NULL) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "cuMemsetD32 failed");
        return KS_ERR_DRIVER;
    }
    TRY(fill_int(ks_launch_on(ks_launch_1d(blocks(a->fill_n, BLOCK), BLOCK), s), DEV(int, d->ints), a->fill_value,
                 a->fill_n));
    TRY(tmpl_axpy_float_4(ks_launch_on(ks_launch_1d(blocks(N, 4 * BLOCK), BLOCK), s), a->axpy_a,
                          DEV(const float, d->fx), DEV(float, d->fy), (int64_t)N));
    TRY(saxpy(ks_launch_on(ks_launch_1d(blocks(N, BLOCK), BLOCK), s), a->saxpy_a, DEV(const float, d->fy),
              DEV(float, d->fz), (size_t)N));
    TRY(haxpy(ks_launch_on(ks_launch_1d(blocks(N, BLOCK), BLOCK), s), N, a->haxpy_a, DEV(const ks_half, d->hx),
              DEV(ks_half, d->hy)));
    TRY((echo_scalars)(ks_launch_on(ks_launch_1d(1, 1), s), DEV(struct Echo, d->echo) ECHO_FIELDS(ECHO_ARG)));
    TRY(echo_params(ks_launch_on(ks_launch_1d(1, 1), s), DEV(unsigned char, d->params), a->p, a->mode, a->axis));
    TRY(echo_halves(ks_launch_on(ks_launch_1d(1, 1), s), DEV(unsigned char, d->halves), a->h, a->h2, a->bf, a->bf2,
                    a->check));
    return KS_OK;
}

/* ---- memory -------------------------------------------------------------------------- */

static float host_fx[N], host_fy[N], host_fz[N];
static uint16_t host_hx[N], host_hy[N];

static int alloc_set(bufs *d)
{
    struct { CUdeviceptr *slot; size_t bytes; } all[] = {
        {&d->ints, N * 4}, {&d->fx, N * 4}, {&d->fy, N * 4}, {&d->fz, N * 4}, {&d->hx, N * 2},
        {&d->hy, N * 2}, {&d->words, N * 4}, {&d->echo, sizeof(struct echo_fields)},
        {&d->params, OUT_BYTES}, {&d->halves, OUT_BYTES},
    };
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        CUresult r = cu.MemAlloc(all[i].slot, all[i].bytes);
        if (r != CUDA_SUCCESS) {
            gpu_fail_at(__FILE__, __LINE__, "cuMemAlloc(%zu) failed: %s", all[i].bytes, gpu_cu_name(r));
            return 0;
        }
    }
    return 1;
}

static void free_set(bufs *d)
{
    CUdeviceptr all[] = {d->ints, d->fx, d->fy, d->fz, d->hx, d->hy, d->words, d->echo, d->params, d->halves};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            cu.MemFree(all[i]);
    memset(d, 0, sizeof *d);
}

/* The inputs uploaded, every output poisoned, all of it done when this returns. */
static int reset_set(const bufs *d)
{
    CUresult r;
    if ((r = cu.MemcpyHtoD(d->fx, host_fx, sizeof host_fx)) != CUDA_SUCCESS ||
        (r = cu.MemcpyHtoD(d->fy, host_fy, sizeof host_fy)) != CUDA_SUCCESS ||
        (r = cu.MemcpyHtoD(d->fz, host_fz, sizeof host_fz)) != CUDA_SUCCESS ||
        (r = cu.MemcpyHtoD(d->hx, host_hx, sizeof host_hx)) != CUDA_SUCCESS ||
        (r = cu.MemcpyHtoD(d->hy, host_hy, sizeof host_hy)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d->ints, POISON, N * 4)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d->words, POISON, N * 4)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d->echo, POISON, sizeof(struct echo_fields))) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d->params, POISON, OUT_BYTES)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d->halves, POISON, OUT_BYTES)) != CUDA_SUCCESS ||
        (r = cu.StreamSynchronize(NULL)) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "resetting the buffers failed: %s", gpu_cu_name(r));
        return 0;
    }
    return 1;
}

/* Every buffer of \p a byte for byte equal to \p b's. */
static void same_results(const char *what, const bufs *a, const bufs *b)
{
    static unsigned char ha[N * 4], hb[N * 4];
    const struct { const char *name; CUdeviceptr x, y; size_t bytes; } all[] = {
        {"fill_int's ints", a->ints, b->ints, N * 4}, {"axpy's y", a->fy, b->fy, N * 4},
        {"saxpy's z", a->fz, b->fz, N * 4}, {"haxpy's y", a->hy, b->hy, N * 2},
        {"the memset's words", a->words, b->words, N * 4},
        {"echo_scalars' out", a->echo, b->echo, sizeof(struct echo_fields)},
        {"echo_params' out", a->params, b->params, 88}, {"echo_halves' out", a->halves, b->halves, 36},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        CUresult r1 = cu.MemcpyDtoH(ha, all[i].x, all[i].bytes), r2 = cu.MemcpyDtoH(hb, all[i].y, all[i].bytes);
        if (r1 != CUDA_SUCCESS || r2 != CUDA_SUCCESS) {
            gpu_fail_at(__FILE__, __LINE__, "%s: download failed: %s", what, gpu_cu_name(r1 != CUDA_SUCCESS ? r1 : r2));
            return;
        }
        for (size_t j = 0; j < all[i].bytes; j++)
            if (ha[j] != hb[j]) {
                gpu_fail_at(__FILE__, __LINE__, "%s: %s differs at byte %zu: graph 0x%02x, stubs 0x%02x", what, all[i].name, j,
                        ha[j], hb[j]);
                break;
            }
    }
}

/* What the kernels must have written into \p d for arguments \p a: the
 * echoes, the memset, and the ints: \p model when not NULL, else fill_int's
 * value below fill_n. */
static void expected_results(const char *what, const bufs *d, const args *a, const int *model)
{
    static int ints[N];
    static unsigned words[N];
    struct echo_fields echo;
    unsigned char params[OUT_BYTES], halves[OUT_BYTES];
    if (cu.MemcpyDtoH(ints, d->ints, sizeof ints) != CUDA_SUCCESS ||
        cu.MemcpyDtoH(words, d->words, sizeof words) != CUDA_SUCCESS ||
        cu.MemcpyDtoH(&echo, d->echo, sizeof echo) != CUDA_SUCCESS ||
        cu.MemcpyDtoH(params, d->params, sizeof params) != CUDA_SUCCESS ||
        cu.MemcpyDtoH(halves, d->halves, sizeof halves) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "%s: download failed", what);
        return;
    }
    for (int i = 0; i < N; i++) {
        int want = model ? model[i] : (uint32_t)i < a->fill_n ? a->fill_value : ints[i];
        if (ints[i] != want) {
            gpu_fail_at(__FILE__, __LINE__, "%s: ints[%d] is %d, not %d (fill_n %u)", what, i, ints[i], want, a->fill_n);
            break;
        }
        if (words[i] != a->word) {
            gpu_fail_at(__FILE__, __LINE__, "%s: the memset's word %d is 0x%x, not 0x%x", what, i, words[i], a->word);
            break;
        }
    }
#define CMP(field)                                                                      \
    EXPECT(memcmp(&echo.field, &a->echo.field, sizeof echo.field) == 0, "%s: echo_scalars' %s differs", what, #field);
    ECHO_FIELDS(CMP)
#undef CMP
    /* Field by field: a struct passed or returned by value need not keep
     * its padding bytes, and the kernel copies the padding back too. */
    rec_Params q;
    memcpy(&q, params, sizeof q);
#define SAME_FIELD(f)                                                                        \
    EXPECT(memcmp(&q.f, &a->p.f, sizeof q.f) == 0, "%s: echo_params' struct differs in %s", what, #f);
    SAME_FIELD(scale) SAME_FIELD(inner.tag) SAME_FIELD(inner.weight) SAME_FIELD(grid)
    SAME_FIELD(mode) SAME_FIELD(dir) SAME_FIELD(bits) SAME_FIELD(enabled)
#undef SAME_FIELD
    EXPECT(memcmp(params + 80, &a->mode, 1) == 0 && memcmp(params + 84, &a->axis, 4) == 0,
           "%s: echo_params' enums differ", what);
    EXPECT(memcmp(halves, &a->h, 2) == 0 && memcmp(halves + 4, &a->h2, 4) == 0 && memcmp(halves + 8, &a->bf, 2) == 0 &&
               memcmp(halves + 12, &a->bf2, 4) == 0 && memcmp(halves + 32, &a->check, 4) == 0,
           "%s: echo_halves' halves differ", what);
}

/* ---- cases -------------------------------------------------------------------------------- */

static CUstream user_stream;
static bufs G, S;                      /* the graph's buffers, the stubs' */

static ks_status sync_stream(CUstream s)
{
    CUresult r = cu.StreamSynchronize(s);
    if (r != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "cuStreamSynchronize failed: %s", gpu_cu_name(r));
        return KS_ERR_DRIVER;
    }
    return KS_OK;
}

/* A graph of \p a's arguments over G, built and instantiated; 0 on failure (reported). */
static int make_graph(ks_graph *g, ks_graph_exec *e, nodes *n, const args *a)
{
    *g = NULL;
    if (e != NULL)
        *e = NULL;
    ks_status st = ks_graph_create(g);
    if (st == KS_OK)
        st = build(*g, &G, a, n);
    if (st == KS_OK && e != NULL)
        st = ks_graph_instantiate(*g, e);
    if (st != KS_OK) {
        gpu_fail_at(__FILE__, __LINE__, "building the graph: %s: %s", ks_status_name(st), ks_last_error_message());
        ks_graph_destroy(*g);
        *g = NULL;
        return 0;
    }
    return 1;
}

/* Both sets reset; the instance replayed on \p s over G, the stubs of \p a over S; compared. */
static void replay_and_compare(const char *what, ks_graph_exec e, CUstream s, const args *a)
{
    if (!reset_set(&G) || !reset_set(&S))
        return;
    ks_status st = ks_graph_launch(e, s);
    EXPECT(st == KS_OK, "%s: ks_graph_launch: %s", what, ks_last_error_message());
    st = stubs(s, &S, a);
    EXPECT(st == KS_OK, "%s: stubs: %s", what, ks_last_error_message());
    if (sync_stream(s) != KS_OK)
        return;
    same_results(what, &G, &S);
    expected_results(what, &G, a, NULL);
}

/* Built, replayed on \p s, equal to the stubs; every node updated in place, equal again. */
static void case_build_and_update(CUstream s)
{
    ks_graph g;
    ks_graph_exec e;
    nodes n;
    args a0 = make_args(0);
    if (!make_graph(&g, &e, &n, &a0))
        return;
    replay_and_compare("first replay", e, s, &a0);
    /* The node launches the stub's own handle (the CUkernel; a CUfunction
     * with KSTUB_LOADER=module). */
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    CUresult r = cu.GraphKernelNodeGetParams(n.saxpy.node, &q);
    EXPECT(r == CUDA_SUCCESS, "cuGraphKernelNodeGetParams: %s", gpu_cu_name(r));
    if (r == CUDA_SUCCESS && q.func == NULL)
        EXPECT((void *)q.kern == saxpy_kernel.ks__handle, "the saxpy node's CUkernel %p is not the stub's %p",
               (void *)q.kern, saxpy_kernel.ks__handle);
    /* The typed handle holds what the driver reports, read back once at add. */
    if (r == CUDA_SUCCESS)
        EXPECT((void *)q.kern == n.saxpy.ks__target.ks__kern && (void *)q.func == n.saxpy.ks__target.ks__func &&
                   (void *)q.ctx == n.saxpy.ks__target.ks__ctx,
               "saxpy_node_t holds kern %p func %p ctx %p, the driver %p %p %p", n.saxpy.ks__target.ks__kern,
               n.saxpy.ks__target.ks__func, n.saxpy.ks__target.ks__ctx, (void *)q.kern, (void *)q.func,
               (void *)q.ctx);
    /* New arguments and fill's new size in every kstub node; the
     * application's memset node keeps its word. */
    args a1 = make_args(1);
    a1.word = a0.word;
    ks_status st = set_all(e, &n, &G, &a1);
    EXPECT(st == KS_OK, "node_set: %s: %s", ks_status_name(st), ks_last_error_message());
    replay_and_compare("after node_set", e, s, &a1);
    ks_graph_exec_destroy(e);
    ks_graph_destroy(g);
}

/* 1,000 replays, each after node_set of every node with other arguments
 * (fill_int over a changing length), on the three streams in turn; each
 * result checked against what the host expects. */
static void case_thousand_replays(CUstream unused)
{
    (void)unused;
    static int model[N];
    const CUstream streams[3] = {NULL, KS_STREAM_PER_THREAD, user_stream};
    ks_graph g;
    ks_graph_exec e;
    nodes n;
    args a = make_args(0);
    if (!make_graph(&g, &e, &n, &a))
        return;
    REQUIRE(reset_set(&G), "reset");
    unsigned word = a.word;
    for (int r = 0; r < 1000 && !gpu_case_failed; r++) {
        a = make_args(r);
        a.word = word;
        ks_status st = set_all(e, &n, &G, &a);
        REQUIRE(st == KS_OK, "replay %d: node_set: %s", r, ks_last_error_message());
        CUstream s = streams[r % 3];
        st = ks_graph_launch(e, s);
        REQUIRE(st == KS_OK, "replay %d: ks_graph_launch: %s", r, ks_last_error_message());
        REQUIRE(sync_stream(s) == KS_OK, "replay %d", r);
        for (uint32_t i = 0; i < a.fill_n; i++)
            model[i] = a.fill_value;
        char what[32];
        snprintf(what, sizeof what, "replay %d", r);
        expected_results(what, &G, &a, model);
    }
    ks_graph_exec_destroy(e);
    ks_graph_destroy(g);
}

/* A whole-graph update with the same shape is taken; a smaller graph, a node
 * of another kernel and the application's memset node are refused, each
 * leaving the instance as it was. */
static void case_exec_update_and_mismatches(CUstream s)
{
    ks_graph g, g2, small;
    ks_graph_exec e;
    nodes n, n2, n3;
    args a0 = make_args(0), a2 = make_args(2);
    if (!make_graph(&g, &e, &n, &a0))
        return;
    if (make_graph(&g2, NULL, &n2, &a2)) {
        ks_status st = ks_graph_exec_update(e, g2);
        EXPECT(st == KS_OK, "ks_graph_exec_update: %s", ks_last_error_message());
        replay_and_compare("after ks_graph_exec_update", e, s, &a2);
        ks_graph_destroy(g2);
    }
    if (ks_graph_create(&small) == KS_OK) {
        EXPECT(fill_int_node(small, NULL, 0, &n3.fill, ks_launch_1d(1, 32), DEV(int, G.ints), 1, 1u) == KS_OK,
               "fill_int_node: %s", ks_last_error_message());
        EXPECT_STATUS(ks_graph_exec_update(e, small), KS_ERR_GRAPH_MISMATCH, "cuGraphExecUpdate");
        ks_graph_destroy(small);
    }
    /* A node known only as a ks_graph_node takes the checked path: saxpy's
     * update on fill_int's node (the typed saxpy_node_set does not compile
     * with it) and fill_int's on the memset node are refused. */
    float one_f = 1.0f;
    const float *sx = DEV(const float, G.fy);
    float *sy = DEV(float, G.fz);
    size_t one_n = 1;
    void *saxpy_args_[4] = {&one_f, &sx, &sy, &one_n};
    ks_launch small_launch = ks_launch_1d(1, 32);
    EXPECT_STATUS(ks_kernel_node_set(&saxpy_kernel, e, n.fill.node, &small_launch, saxpy_args_),
                  KS_ERR_GRAPH_MISMATCH, "launches another kernel");
    EXPECT(strstr(ks_last_error_message(), "saxpy") != NULL, "the message lacks the kernel: %s",
           ks_last_error_message());
    int *fi = DEV(int, G.ints);
    int one_i = 1;
    uint32_t one_u = 1u;
    void *fill_args_[3] = {&fi, &one_i, &one_u};
    EXPECT_STATUS(ks_kernel_node_set(&fill_int_kernel, e, n.words, &small_launch, fill_args_), KS_ERR_GRAPH_MISMATCH,
                  "is not a kernel node");
    replay_and_compare("after the refusals", e, s, &a2);
    ks_graph_exec_destroy(e);
    ks_graph_destroy(g);
}

/* Issue 23: a training step's update of every node at once. A graph of K
 * saxpy nodes, each on its slice; before each of 200 replays every node
 * gets new buffers (x from fx or fy, y from fz or the stubs' fz) and a new a
 * through saxpy_nodes_set, every other step with new configurations too; y
 * is checked against the CPU each time. Then one node through the typed
 * saxpy_node_set, the others kept. */
enum { K = 64, SLICE = N / K };

static void saxpy_model(float *y, const float *x, float a)
{
    for (int i = 0; i < SLICE; i++)
        y[i] = a * x[i] + y[i];
}

static void case_bulk_update(CUstream s)
{
    static float want[2][N], got[N];
    ks_graph g;
    ks_graph_exec e = NULL;
    saxpy_node_t sx_nodes[K];
    saxpy_args values[K];
    ks_launch launches[K];
    REQUIRE(reset_set(&G) && reset_set(&S), "resetting the buffers");
    KS_REQUIRE(ks_graph_create(&g));
    for (int k = 0; k < K; k++) {
        ks_status st = saxpy_node(g, NULL, 0, &sx_nodes[k], ks_launch_1d(blocks(SLICE, BLOCK), BLOCK), 1.0f,
                                  DEV(const float, G.fx) + k * SLICE, DEV(float, G.fz) + k * SLICE, (size_t)SLICE);
        REQUIRE(st == KS_OK, "saxpy_node %d: %s", k, ks_last_error_message());
    }
    KS_REQUIRE(ks_graph_instantiate(g, &e));
    CUdeviceptr ys[2] = {G.fz, S.fz};
    for (int r = 0; r < 200; r++) {
        /* Both y buffers start from host_fz each step; the model follows. */
        for (int b = 0; b < 2; b++) {
            CU_REQUIRE(cu.MemcpyHtoD(ys[b], host_fz, sizeof host_fz));
            memcpy(want[b], host_fz, sizeof host_fz);
        }
        for (int k = 0; k < K; k++) {
            int xb = (r + k) % 2, yb = (r / 2 + k) % 3 == 0;
            float a = 0.25f * (float)((r * 7 + k) % 13) - 1.5f;
            values[k] = (saxpy_args){a, DEV(const float, xb ? G.fy : G.fx) + k * SLICE,
                                     DEV(float, ys[yb]) + k * SLICE, (size_t)SLICE};
            unsigned block = 32u << ((r + k) % 4);
            launches[k] = ks_launch_1d(blocks(SLICE, block), block);
            saxpy_model(want[yb] + k * SLICE, (xb ? host_fy : host_fx) + k * SLICE, a);
        }
        ks_status st = saxpy_nodes_set(e, K, sx_nodes, r % 2 ? launches : NULL, values);
        REQUIRE(st == KS_OK, "replay %d: saxpy_nodes_set: %s", r, ks_last_error_message());
        REQUIRE(ks_graph_launch(e, s) == KS_OK, "replay %d: %s", r, ks_last_error_message());
        REQUIRE(sync_stream(s) == KS_OK, "replay %d", r);
        for (int b = 0; b < 2; b++) {
            CU_REQUIRE(cu.MemcpyDtoH(got, ys[b], sizeof got));
            for (int i = 0; i < K * SLICE; i++)
                REQUIRE(fabsf(got[i] - want[b][i]) <= 1e-5f * (1.0f + fabsf(want[b][i])),
                        "replay %d: y%d[%d] = %g, want %g", r, b, i, (double)got[i], (double)want[b][i]);
        }
    }
    /* One node alone, typed: the rest keep their last arguments. */
    CU_REQUIRE(cu.MemcpyHtoD(G.fz, host_fz, sizeof host_fz));
    CU_REQUIRE(cu.MemcpyHtoD(S.fz, host_fz, sizeof host_fz));
    memcpy(want[0], host_fz, sizeof host_fz);
    memcpy(want[1], host_fz, sizeof host_fz);
    for (int k = 0; k < K; k++) {
        int yb = values[k].y == DEV(float, S.fz) + k * SLICE;
        const float *hx = values[k].x == DEV(const float, G.fy) + k * SLICE ? host_fy : host_fx;
        float a = values[k].a;
        if (k == 5) {
            KS_REQUIRE(saxpy_node_set(e, sx_nodes[5], ks_launch_1d(blocks(SLICE, 64), 64), 3.0f,
                                      DEV(const float, G.fx) + 5 * SLICE, DEV(float, G.fz) + 5 * SLICE, (size_t)SLICE));
            yb = 0, hx = host_fx, a = 3.0f;
        }
        saxpy_model(want[yb] + k * SLICE, hx + k * SLICE, a);
    }
    KS_REQUIRE(ks_graph_launch(e, s));
    REQUIRE(sync_stream(s) == KS_OK, "after saxpy_node_set");
    for (int b = 0; b < 2; b++) {
        CU_REQUIRE(cu.MemcpyDtoH(got, ys[b], sizeof got));
        for (int i = 0; i < K * SLICE; i++)
            EXPECT(fabsf(got[i] - want[b][i]) <= 1e-5f * (1.0f + fabsf(want[b][i])),
                   "after saxpy_node_set: y%d[%d] = %g, want %g", b, i, (double)got[i], (double)want[b][i]);
    }
    ks_graph_exec_destroy(e);
    ks_graph_destroy(g);
}

static void run_case(const char *name, const char *stream_name, void (*fn)(CUstream), CUstream s)
{
    gpu_case_failed = 0;
    fn(s);
    printf("%s %s%s%s\n", gpu_case_failed ? "FAIL" : "ok  ", name, stream_name ? " / " : "", stream_name ? stream_name : "");
    if (gpu_case_failed)
        n_failed++;
    else
        n_passed++;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUdevice dev;
    char devname[256] = "?";
    int start = gpu_start("gpu-check-graph", &dev, &the_ctx, devname, sizeof devname);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    CUresult r;
    if ((r = cu.StreamCreate(&user_stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
        printf("gpu-check-graph: no stream on device 0: %s\n", gpu_cu_name(r));
        return 1;
    }
    printf("gpu-check-graph: device 0: %s\n", devname);

    for (int i = 0; i < N; i++) {
        host_fx[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
        host_fy[i] = (float)((i * 53) % 97) / 48.0f - 1.0f;
        host_fz[i] = (float)(i % 13) - 6.0f;
        host_hx[i] = ks_half_from_float((float)((i * 29) % 61) / 30.0f - 1.0f).bits;
        host_hy[i] = ks_half_from_float((float)(i % 17) / 8.0f - 1.0f).bits;
    }
    if (!alloc_set(&G) || !alloc_set(&S)) {
        printf("gpu-check-graph: no device memory\n");
        return 1;
    }
    const struct { const char *name; CUstream s; } streams[] = {
        {"legacy", NULL},
        {"per-thread", KS_STREAM_PER_THREAD},
        {"user", user_stream},
    };
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        run_case("graph/build-replay-node_set", streams[i].name, case_build_and_update, streams[i].s);
    run_case("graph/1000-replays", "legacy, per-thread, user", case_thousand_replays, NULL);
    run_case("graph/exec-update-and-mismatches", "user", case_exec_update_and_mismatches, user_stream);
    run_case("graph/nodes_set-200-steps", "per-thread", case_bulk_update, KS_STREAM_PER_THREAD);
    free_set(&G);
    free_set(&S);
    cu.StreamDestroy(user_stream);
    printf("gpu-check-graph: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
