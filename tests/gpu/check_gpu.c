/*
 * check_gpu.c — the GPU suite: every kernel in kernels/ launched on a real
 * device through the stubs kstub generated (the build/gen/NAME.kstub.{h,c} files), each
 * result compared with a CPU reference.
 *
 * A plain C program, not a Check suite: the GPU machine has gcc, nvcc and a
 * driver but not necessarily libcheck. It prints one line per case and ends
 * with "gpu-check: N passed, M failed"; the exit status is 1 when any case
 * failed. Without a CUDA driver it prints "gpu-check: no CUDA driver (…);
 * skipped" and exits 0.
 *
 * What it covers:
 *   - each kernel with random inputs, outputs poisoned first (0xAB / NaN
 *     bytes, plus a guard region past every buffer that must stay intact),
 *     on the legacy default stream, the per-thread one and a user stream;
 *   - echo_scalars byte for byte: extremes, -0.0, denormals, NaN payloads;
 *   - launch configuration errors caught before any driver call, including
 *     __launch_bounds__ limits;
 *   - ks_image_unload then relaunch; a launch captured into a CUDA graph;
 *   - 16 threads making their first launches at the same moment, on threads
 *     that have no CUDA context of their own.
 *
 * No -lcuda: the driver calls the test makes itself come from
 * ks_driver_proc(), as an application's would.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"   /* the driver, device 0, EXPECT/REQUIRE, guarded device memory */
#include "vector_ops.kstub.h"
#include "reduce.kstub.h"
#include "scalars.kstub.h"
#include "records.kstub.h"
#include "templates.kstub.h"
#include "handles.kstub.h"

/* ---- a small harness ------------------------------------------------------------ */

static int n_passed, n_failed;
static char case_note[160];      /* what a passing case reports, e.g. its max error */

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_note, sizeof case_note, fmt, ap);
    va_end(ap);
}

/* The status a call must return, with this thread's error naming it. */
#define EXPECT_STATUS(call, want)                                       \
    do {                                                                \
        ks_status s_ = (call);                                          \
        EXPECT(s_ == (want), "%s returned %s (%s), expected %s", #call, \
               ks_status_name(s_), ks_last_error_message(), ks_status_name(want)); \
        if (s_ == (want))                                               \
            EXPECT(ks_last_error()->status == (want),                   \
                   "%s: ks_last_error()->status is %s", #call,          \
                   ks_status_name(ks_last_error()->status));            \
    } while (0)

typedef void (*case_fn)(CUstream stream);

static int n_skipped;

/* KSTUB_GPU_SKIP=name1,name2 skips the cases whose names start with one of
 * them (for tools that cannot follow a case, e.g. racecheck and graphs). */
static int skipped(const char *full)
{
    const char *list = getenv("KSTUB_GPU_SKIP");
    if (!list || !*list)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (strncmp(full, w, strlen(w)) == 0)
            return 1;
    return 0;
}

static void run_case(const char *name, const char *stream_name, case_fn fn, CUstream stream)
{
    char full[96];
    snprintf(full, sizeof full, "%s%s%s", name, stream_name ? "/" : "", stream_name ? stream_name : "");
    if (skipped(full)) {
        n_skipped++;
        printf("skip %-28s (KSTUB_GPU_SKIP)\n", full);
        return;
    }
    gpu_case_failed = 0;
    case_note[0] = '\0';
    fn(stream);
    gpu_release_case_memory();
    if (gpu_case_failed)
        n_failed++;
    else
        n_passed++;
    printf("%s %-28s %s\n", gpu_case_failed ? "FAIL" : "ok  ", full, gpu_case_failed ? "" : case_note);
    fflush(stdout);
}

/* ---- memory helpers ---------------------------------------------------------------- */

/* Launch done: wait for it, so execution errors surface here. */
#define SYNC_REQUIRE(stream) CU_REQUIRE(cu.StreamSynchronize(stream))

/* ---- inputs and CPU references ---------------------------------------------------- */

/* splitmix64 with a fixed seed: failures reproduce. */
static uint64_t rng_state = 0x6b73747562ULL;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static float rng_float(void)
{
    return (float)((double)(rng_next() >> 11) * 0x1.0p-52 - 1.0);
}

static float *random_floats(size_t n)
{
    float *a = gpu_host_alloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = rng_float();
    return a;
}

/* IEEE binary16 <-> float, round to nearest even. */
static uint16_t half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        unsigned e = ax >> 23;
        if (e < 102)
            return sign;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    ax += 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant * 0x1.0p-24f;
        return sign ? -v : v;
    }
    uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
                              : sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

typedef enum { F32, F64, F16 } elem_type;

static double elem(const void *a, elem_type t, size_t i)
{
    switch (t) {
    case F32: return ((const float *)a)[i];
    case F64: return ((const double *)a)[i];
    case F16: return half_to_float(((const uint16_t *)a)[i]);
    }
    return NAN;
}

/*
 * llm.c's validate_result: element i passes when
 * |got - ref| <= atol + rtol * |ref| (NaN never does); the first mismatches
 * are printed, the largest error goes into the case's note.
 */
static void validate_result(const char *what, elem_type t, const void *ref, const void *got,
                            size_t n, double atol, double rtol)
{
    size_t faults = 0;
    double max_err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = elem(ref, t, i), g = elem(got, t, i), err = fabs(g - r);
        if (!(err <= atol + rtol * fabs(r))) {
            if (faults < 5)
                gpu_fail_at(__FILE__, __LINE__, "%s[%zu]: CPU %.9g vs GPU %.9g", what, i, r, g);
            faults++;
        }
        if (!(err <= max_err))
            max_err = err;
    }
    if (faults > 5)
        gpu_fail_at(__FILE__, __LINE__, "%s: %zu of %zu elements differ", what, faults, n);
    note("%zu elements, max err %.3g", n, max_err);
}

static unsigned blocks_for(size_t n, unsigned block)
{
    return (unsigned)((n + block - 1) / block);
}

/* ---- each kernel against its CPU reference ------------------------------------------ */

static void case_saxpy(CUstream stream)
{
    const size_t n = 1000003;
    const float a = -2.25f;
    float *x = random_floats(n), *y = random_floats(n), *ref = gpu_host_alloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++)
        ref[i] = a * x[i] + y[i];
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x), dy = gpu_dev_upload(y, n * sizeof *y);
    REQUIRE(dx && dy, "no device memory");

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, 256), 256), stream);
    KS_REQUIRE(saxpy(l, a, DEV(const float, dx), DEV(float, dy), n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(y, dy, n * sizeof *y), "download");
    gpu_check_guard(dx);
    gpu_check_guard(dy);
    validate_result("y", F32, ref, y, n, 1e-5, 1e-5);
}

static void case_scale_f64(CUstream stream)
{
    const int n = 300007;
    const double s = -1.0 / 3.0;
    double *x = gpu_host_alloc((size_t)n * sizeof *x), *ref = gpu_host_alloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = (double)rng_float() * 1e3;
        ref[i] = x[i] * s;
    }
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * sizeof *x);
    REQUIRE(dx, "no device memory");

    /* 256 threads per block: exactly the kernel's __launch_bounds__. */
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 256), 256), stream);
    KS_REQUIRE(blas_scale__doublep_double_int(l, DEV(double, dx), s, n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(x, dx, (size_t)n * sizeof *x), "download");
    gpu_check_guard(dx);
    validate_result("x", F64, ref, x, (size_t)n, 0, 0); /* one IEEE multiply: exact */
}

static void case_scale_f32(CUstream stream)
{
    const int n = 300007;
    const float s = 1.75f;
    float *x = random_floats((size_t)n), *ref = gpu_host_alloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++)
        ref[i] = x[i] * s;
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * sizeof *x);
    REQUIRE(dx, "no device memory");

    /* No __launch_bounds__: the hardware's 1024 is the limit. */
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 1024), 1024), stream);
    KS_REQUIRE(blas_scale__floatp_float_int(l, DEV(float, dx), s, n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(x, dx, (size_t)n * sizeof *x), "download");
    gpu_check_guard(dx);
    validate_result("x", F32, ref, x, (size_t)n, 0, 0);
}

static void case_block_sum(CUstream stream)
{
    const unsigned long long n = (1ull << 21) + 77;
    const unsigned block = 512; /* the kernel's __launch_bounds__ maximum */
    float *x = random_floats(n);
    double sum = 0.0, sum_abs = 0.0;
    for (unsigned long long i = 0; i < n; i++) {
        sum += x[i];
        sum_abs += fabs(x[i]);
    }
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x);
    CUdeviceptr dout = gpu_dev_alloc(sizeof(float), 0); /* it accumulates into *out */
    REQUIRE(dx && dout, "no device memory");

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, block), block), stream);
    l.shared_bytes = block * sizeof(float);
    KS_REQUIRE(block_sum(l, DEV(const float, dx), n, DEV(float, dout)));
    SYNC_REQUIRE(stream);
    float got;
    REQUIRE(gpu_dev_download(&got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    /* Float partial sums added by atomics in any order. */
    double got_d = got;
    validate_result("sum", F64, &sum, &got_d, 1, 1e-6 * sum_abs, 0);
}

static void case_histogram(CUstream stream)
{
    const int64_t n = 200003;
    const int32_t lo = -1000;
    const uint32_t width = 7;
    const uint16_t nbins = 300;
    int32_t *values = gpu_host_alloc((size_t)n * sizeof *values);
    unsigned *ref = gpu_host_alloc(nbins * sizeof *ref), *got = gpu_host_alloc(nbins * sizeof *got);
    memset(ref, 0, nbins * sizeof *ref);
    const int64_t span = (int64_t)width * nbins + 100; /* some values fall outside every bin */
    for (int64_t i = 0; i < n; i++) {
        values[i] = (int32_t)(lo - 50 + (int64_t)(rng_next() % (uint64_t)span));
        /* As the kernel bins: C division truncates toward zero, so the
         * width-1 values just below lo land in bin 0 too. */
        int64_t b = ((int64_t)values[i] - lo) / (int64_t)width;
        if (b >= 0 && b < nbins)
            ref[b]++;
    }
    CUdeviceptr dv = gpu_dev_upload(values, (size_t)n * sizeof *values);
    CUdeviceptr dbins = gpu_dev_alloc(nbins * sizeof *got, 0); /* counts start at 0 */
    REQUIRE(dv && dbins, "no device memory");

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 128), 128), stream);
    KS_REQUIRE(histogram(l, DEV(const int32_t, dv), n, lo, width, DEV(unsigned, dbins), nbins));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(got, dbins, nbins * sizeof *got), "download");
    gpu_check_guard(dbins);
    unsigned wrong = 0;
    for (unsigned b = 0; b < nbins; b++)
        if (got[b] != ref[b] && wrong++ < 5)
            gpu_fail_at(__FILE__, __LINE__, "bin %u: CPU %u vs GPU %u", b, ref[b], got[b]);
    EXPECT(wrong == 0, "%u of %u bins differ", wrong, (unsigned)nbins);
    note("%u bins exact", (unsigned)nbins);
}

static void case_haxpy(CUstream stream)
{
    const int n = 70001;
    const float a = 1.5f;
    uint16_t *x = gpu_host_alloc((size_t)n * 2), *y = gpu_host_alloc((size_t)n * 2), *ref = gpu_host_alloc((size_t)n * 2);
    for (int i = 0; i < n; i++) {
        x[i] = half_from_float(rng_float());
        y[i] = half_from_float(rng_float());
        ref[i] = half_from_float(a * half_to_float(x[i]) + half_to_float(y[i]));
    }
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * 2), dy = gpu_dev_upload(y, (size_t)n * 2);
    REQUIRE(dx && dy, "no device memory");

    /* __half is ks_half in C (kstub_types.h): same size, alignment and bits. */
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 256), 256), stream);
    KS_REQUIRE(haxpy(l, n, a, DEV(const ks_half, dx), DEV(ks_half, dy)));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(y, dy, (size_t)n * 2), "download");
    gpu_check_guard(dx);
    gpu_check_guard(dy);
    /* One half ulp: the device may fuse the multiply-add before rounding. */
    validate_result("y", F16, ref, y, (size_t)n, 1e-7, 0x1.0p-10);
}

static void case_gather_rows(CUstream stream)
{
    enum { NSRC = 64, NROWS = 37, NCOLS = 1000, BLOCK = 128 };
    float *src = random_floats((size_t)NSRC * NCOLS);
    float *ref = gpu_host_alloc((size_t)NROWS * NCOLS * sizeof *ref);
    float *got = gpu_host_alloc((size_t)NROWS * NCOLS * sizeof *got);
    CUdeviceptr dsrc = gpu_dev_upload(src, (size_t)NSRC * NCOLS * sizeof *src);
    REQUIRE(dsrc, "no device memory");

    /* The row table holds device addresses, as the kernel reads it. */
    uint64_t rows[NROWS];
    for (int r = 0; r < NROWS; r++) {
        size_t pick = (size_t)(rng_next() % NSRC);
        rows[r] = dsrc + pick * NCOLS * sizeof(float);
        memcpy(ref + (size_t)r * NCOLS, src + pick * NCOLS, NCOLS * sizeof *ref);
    }
    CUdeviceptr drows = gpu_dev_upload(rows, sizeof rows);
    CUdeviceptr dout = gpu_dev_alloc((size_t)NROWS * NCOLS * sizeof *got, 0xFF); /* NaN */
    REQUIRE(drows && dout, "no device memory");

    ks_dim3 grid = {blocks_for(NCOLS, BLOCK), NROWS, 1}, block = {BLOCK, 1, 1};
    KS_REQUIRE(gather_rows(ks_launch_on(ks_launch_3d(grid, block), stream),
                           DEV(const float *const, drows), NROWS, NCOLS, DEV(volatile float, dout)));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(got, dout, (size_t)NROWS * NCOLS * sizeof *got), "download");
    gpu_check_guard(dout);
    validate_result("out", F32, ref, got, (size_t)NROWS * NCOLS, 0, 0);
}

/* ---- echo_scalars: every scalar kind, byte for byte ------------------------------- */

/* kernels/scalars.cu's struct Echo, field for field: what the kernel writes
 * back. A separate name, so the test does not depend on whether the
 * generated header declares struct Echo or mirrors it; the stub's pointer is
 * cast. x86-64 host and device agree on this layout. */
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
_Static_assert(offsetof(struct echo_fields, f) == 48, "offsetof(struct echo_fields, f)");
_Static_assert(offsetof(struct echo_fields, d) == 56, "offsetof(struct echo_fields, d)");
_Static_assert(offsetof(struct echo_fields, i8) == 64, "offsetof(struct echo_fields, i8)");
_Static_assert(offsetof(struct echo_fields, flags) == 128, "offsetof(struct echo_fields, flags)");

#define ECHO_FIELDS(X)                                                                  \
    X(b) X(c) X(sc) X(uc) X(s) X(us) X(i) X(u) X(l) X(ul) X(ll) X(ull) X(f) X(d)        \
    X(i8) X(u8) X(i16) X(u16) X(i32) X(u32) X(i64) X(u64) X(sz) X(pd) X(ip) X(up) X(flags)

#define ECHO_ARG(field) , v->field
static ks_status launch_echo(CUstream stream, CUdeviceptr out, const struct echo_fields *v)
{
    /* The function itself: the C macro form counts its arguments before
     * ECHO_FIELDS expands. */
    return (echo_scalars)(ks_launch_on(ks_launch_1d(1, 1), stream),
                          DEV(struct Echo, out) ECHO_FIELDS(ECHO_ARG));
}
#undef ECHO_ARG

/* Byte compare of every field: -0.0 == 0.0 and NaN != NaN would both lie. */
static int echo_matches(const char *what, const struct echo_fields *got, const struct echo_fields *sent)
{
    int ok = 1;
#define CMP(field)                                                                      \
    if (memcmp(&got->field, &sent->field, sizeof sent->field) != 0) {                   \
        unsigned long long g_ = 0, s_ = 0;                                              \
        memcpy(&g_, &got->field, sizeof got->field);                                    \
        memcpy(&s_, &sent->field, sizeof sent->field);                                  \
        gpu_fail_at(__FILE__, __LINE__, "%s: field '%s' sent as 0x%llx came back as 0x%llx",          \
                what, #field, s_, g_);                                                  \
        ok = 0;                                                                         \
    }
    ECHO_FIELDS(CMP)
#undef CMP
    return ok;
}

static void echo_roundtrip(CUstream stream, const char *what, const struct echo_fields *sent)
{
    CUdeviceptr dout = gpu_dev_alloc(sizeof(struct echo_fields), POISON);
    REQUIRE(dout, "no device memory");
    KS_REQUIRE(launch_echo(stream, dout, sent));
    SYNC_REQUIRE(stream);
    struct echo_fields got;
    REQUIRE(gpu_dev_download(&got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    echo_matches(what, &got, sent);
    note("27 scalars, byte-identical");
}

/* ---- records.cu: structs, enums, vectors and halves by value ------------------------------- */

#define SAME(what, a, b)                                                                   \
    EXPECT(memcmp(&(a), &(b), sizeof(a)) == 0, "%s: %s differs from what was sent", what, #a)

static void case_echo_params(CUstream stream)
{
    rec_Params p;
    memset(&p, 0, sizeof p);
    p.scale = -3.25f;
    p.inner.tag = 'k';
    p.inner.weight = 1.0 / 3.0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            p.grid[i][j] = (int)(rng_next() & 0x7fffffff) - 0x40000000;
    p.mode = rec_Mode_Careful;
    p.dir.x = 1.5f;
    p.dir.y = -2.5f;
    p.dir.z = 1e-30f;
    p.bits.i = 0x5a5a1234;
    p.enabled = true;
    CUdeviceptr dout = gpu_dev_alloc(96, POISON);
    REQUIRE(dout, "no device memory");
    KS_REQUIRE(echo_params(ks_launch_on(ks_launch_1d(1, 1), (ks_stream)stream), DEV(unsigned char, dout),
                           p, rec_Mode_Exact, rec_Axis_Z));
    SYNC_REQUIRE(stream);
    unsigned char got[96];
    REQUIRE(gpu_dev_download(got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    rec_Params q;
    memcpy(&q, got, sizeof q);
    SAME("Params", q.scale, p.scale);
    SAME("Params", q.inner.tag, p.inner.tag);
    SAME("Params", q.inner.weight, p.inner.weight);
    SAME("Params", q.grid, p.grid);
    SAME("Params", q.mode, p.mode);
    SAME("Params", q.dir, p.dir);
    SAME("Params", q.bits, p.bits);
    SAME("Params", q.enabled, p.enabled);
    rec_Mode m;
    rec_Axis a;
    memcpy(&m, got + 80, sizeof m);
    memcpy(&a, got + 84, sizeof a);
    EXPECT(m.value == 2 && a.value == 2, "enums arrived as %u and %d", m.value, a.value);
    note("struct (80 B, nested, padded, array, union), 2 enums: field-identical");
}

static void case_echo_vectors(CUstream stream)
{
    float4 f4 = {1.0f, -2.0f, 3.5f, 1e20f};
    double3 d3 = {1.0 / 7.0, -0.0, 6.02214076e23};
    char3 c3 = {'a', (char)-1, 'z'};
    int2 i2 = {INT32_MIN, INT32_MAX};
    ushort3 us3 = {1, 65535, 4242};
    float3 f3 = {0.1f, 0.2f, 0.3f};
    CUdeviceptr dout = gpu_dev_alloc(72, POISON);
    REQUIRE(dout, "no device memory");
    KS_REQUIRE(echo_vectors(ks_launch_on(ks_launch_1d(1, 1), (ks_stream)stream), DEV(unsigned char, dout),
                            f4, d3, c3, i2, us3, f3));
    SYNC_REQUIRE(stream);
    unsigned char got[72];
    REQUIRE(gpu_dev_download(got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    EXPECT(memcmp(got + 0, &f4, sizeof f4) == 0, "float4 differs");
    EXPECT(memcmp(got + 16, &d3, sizeof d3) == 0, "double3 differs");
    EXPECT(memcmp(got + 40, &c3, sizeof c3) == 0, "char3 differs");
    EXPECT(memcmp(got + 44, &i2, sizeof i2) == 0, "int2 differs");
    EXPECT(memcmp(got + 52, &us3, sizeof us3) == 0, "ushort3 differs");
    EXPECT(memcmp(got + 60, &f3, sizeof f3) == 0, "float3 differs");
    note("6 vector types (odd sizes too): byte-identical");
}

static void case_echo_halves(CUstream stream)
{
    const float vals[4] = {1.5f, -0.333333f, 65504.0f, 3.1415926f};
    ks_half h = ks_half_from_float(vals[0]);
    ks_half2 h2 = ks_half2_make(vals[1], 2.0f);
    ks_bfloat16 b = ks_bfloat16_from_float(vals[2]);
    ks_bfloat162 b2 = ks_bfloat162_make(vals[3], -1.0f);
    CUdeviceptr dout = gpu_dev_alloc(36, POISON);
    REQUIRE(dout, "no device memory");
    KS_REQUIRE(echo_halves(ks_launch_on(ks_launch_1d(1, 1), (ks_stream)stream), DEV(unsigned char, dout),
                           h, h2, b, b2, 42.0f));
    SYNC_REQUIRE(stream);
    unsigned char got[36];
    REQUIRE(gpu_dev_download(got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    EXPECT(memcmp(got + 0, &h, 2) == 0, "__half differs");
    EXPECT(memcmp(got + 4, &h2, 4) == 0, "__half2 differs");
    EXPECT(memcmp(got + 8, &b, 2) == 0, "__nv_bfloat16 differs");
    EXPECT(memcmp(got + 12, &b2, 4) == 0, "__nv_bfloat162 differs");
    float conv[4], check;
    memcpy(conv, got + 16, sizeof conv);
    memcpy(&check, got + 32, sizeof check);
    EXPECT(conv[0] == ks_half_to_float(h) && conv[1] == ks_half_to_float(h2.x),
           "device reads the halves as %g, %g; host helpers say %g, %g", conv[0], conv[1],
           ks_half_to_float(h), ks_half_to_float(h2.x));
    EXPECT(conv[2] == ks_bfloat16_to_float(b) && conv[3] == ks_bfloat16_to_float(b2.x),
           "device reads the bfloat16s as %g, %g; host helpers say %g, %g", conv[2], conv[3],
           ks_bfloat16_to_float(b), ks_bfloat16_to_float(b2.x));
    EXPECT(check == 42.0f, "the float after them arrived as %g", check);
    note("half, half2, bf16, bf162: byte-identical; host conversions match the device's");
}

/* ---- templates.cu: one stub per explicit instantiation --------------------------------------- */

static void case_template_axpy(CUstream stream)
{
    const int64_t n = 100003;               /* not a multiple of either UNROLL */
    float *x = random_floats((size_t)n), *y = random_floats((size_t)n);
    float *ref = gpu_host_alloc((size_t)n * sizeof *ref);
    double *xd = gpu_host_alloc((size_t)n * sizeof *xd), *yd = gpu_host_alloc((size_t)n * sizeof *yd);
    double *refd = gpu_host_alloc((size_t)n * sizeof *refd);
    for (int64_t i = 0; i < n; i++) {
        ref[i] = 0.5f * x[i] + y[i];
        xd[i] = x[i];
        yd[i] = y[i];
        refd[i] = -3.0 * xd[i] + yd[i];
    }
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * sizeof *x), dy = gpu_dev_upload(y, (size_t)n * sizeof *y);
    CUdeviceptr dxd = gpu_dev_upload(xd, (size_t)n * sizeof *xd), dyd = gpu_dev_upload(yd, (size_t)n * sizeof *yd);
    REQUIRE(dx && dy && dxd && dyd, "no device memory");
    KS_REQUIRE(tmpl_axpy_float_4(ks_launch_on(ks_launch_1d(blocks_for((size_t)(n + 3) / 4, 128), 128), stream),
                                 0.5f, DEV(const float, dx), DEV(float, dy), n));
    KS_REQUIRE(tmpl_axpy_double_2(ks_launch_on(ks_launch_1d(blocks_for((size_t)(n + 1) / 2, 128), 128), stream),
                                  -3.0, DEV(const double, dxd), DEV(double, dyd), n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(y, dy, (size_t)n * sizeof *y), "download");
    REQUIRE(gpu_dev_download(yd, dyd, (size_t)n * sizeof *yd), "download");
    gpu_check_guard(dy);
    gpu_check_guard(dyd);
    validate_result("axpy<float, 4>", F32, ref, y, (size_t)n, 1e-5, 1e-5);
    validate_result("axpy<double, 2>", F64, refd, yd, (size_t)n, 1e-12, 1e-12);
}

static void case_template_fill(CUstream stream)
{
    const uint32_t n = 4099;
    CUdeviceptr di = gpu_dev_alloc(n * sizeof(int), POISON), du = gpu_dev_alloc(n * sizeof(unsigned short), POISON);
    REQUIRE(di && du, "no device memory");
    KS_REQUIRE(fill_int(ks_launch_on(ks_launch_1d(blocks_for(n, 256), 256), stream), DEV(int, di),
                        -123456, n));
    KS_REQUIRE(fill_u16(ks_launch_on(ks_launch_1d(blocks_for(n, 256), 256), stream),
                        DEV(unsigned short, du), (unsigned short)54321, n));
    SYNC_REQUIRE(stream);
    int *gi = gpu_host_alloc(n * sizeof *gi);
    unsigned short *gu = gpu_host_alloc(n * sizeof *gu);
    REQUIRE(gpu_dev_download(gi, di, n * sizeof *gi), "download");
    REQUIRE(gpu_dev_download(gu, du, n * sizeof *gu), "download");
    gpu_check_guard(di);
    gpu_check_guard(du);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++)
        bad += gi[i] != -123456 || gu[i] != 54321;
    EXPECT(bad == 0, "%u of %u elements not filled", bad, n);
    note("fill<int>, fill<unsigned short> (renamed fill_u16): %u elements each", n);
}

/* ---- <kernel>_n: the occupancy-sized entry points ------------------------------------------ */

static void case_saxpy_n(CUstream stream)
{
    const size_t n = 777777;
    const float a = 0.75f;
    float *x = random_floats(n), *y = random_floats(n), *ref = gpu_host_alloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++)
        ref[i] = a * x[i] + y[i];
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x), dy = gpu_dev_upload(y, n * sizeof *y);
    REQUIRE(dx && dy, "no device memory");
    KS_REQUIRE(saxpy_n(n, (ks_stream)stream, a, DEV(const float, dx), DEV(float, dy), n));
    /* n_items == 0 launches nothing and succeeds */
    KS_REQUIRE(saxpy_n(0, (ks_stream)stream, a, DEV(const float, dx), DEV(float, dy), 0));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(y, dy, n * sizeof *y), "download");
    gpu_check_guard(dy);
    validate_result("y", F32, ref, y, n, 1e-5, 1e-5);
}

static void case_scale_n_bounded(CUstream stream)
{
    /* blas::scale(double) has __launch_bounds__(256): the chosen block must respect it. */
    const int n = 300007;
    double *x = gpu_host_alloc((size_t)n * sizeof *x), *ref = gpu_host_alloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = rng_float();
        ref[i] = x[i] * 1.5;
    }
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * sizeof *x);
    REQUIRE(dx, "no device memory");
    KS_REQUIRE(blas_scale__doublep_double_int_n((size_t)n, (ks_stream)stream, DEV(double, dx), 1.5, n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(x, dx, (size_t)n * sizeof *x), "download");
    gpu_check_guard(dx);
    validate_result("x", F64, ref, x, (size_t)n, 0, 0);
}

static void case_echo_handles(CUstream stream)
{
    CUtensorMap map;
    unsigned char *bytes = (unsigned char *)&map;
    for (size_t i = 0; i < sizeof map; i++)
        bytes[i] = (unsigned char)(rng_next() >> 24);
    unsigned long long tex = 0x0123456789abcdefULL, surf = 0xfedcba9876543210ULL;
    CUdeviceptr dout = gpu_dev_alloc(sizeof map + 16, POISON);
    REQUIRE(dout, "no device memory");
    KS_REQUIRE(echo_handles(ks_launch_on(ks_launch_1d(1, 32), (ks_stream)stream), DEV(unsigned char, dout),
                            map, tex, surf));
    SYNC_REQUIRE(stream);
    unsigned char got[sizeof map + 16];
    REQUIRE(gpu_dev_download(got, dout, sizeof got), "download");
    gpu_check_guard(dout);
    EXPECT(memcmp(got, &map, sizeof map) == 0, "CUtensorMap (__grid_constant__) differs");
    EXPECT(memcmp(got + sizeof map, &tex, 8) == 0, "cudaTextureObject_t differs");
    EXPECT(memcmp(got + sizeof map + 8, &surf, 8) == 0, "cudaSurfaceObject_t differs");
    note("CUtensorMap (128 B, __grid_constant__), texture and surface objects: byte-identical");
}

static float float_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double double_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Random bits in every field; a float or double that comes out a signalling
 * NaN is made quiet (signalling NaNs have their own case). */
static void echo_random(struct echo_fields *v)
{
    unsigned char *p = (unsigned char *)v;
    for (size_t i = 0; i < sizeof *v; i++)
        p[i] = (unsigned char)rng_next();
    v->b = rng_next() & 1;
    uint32_t f;
    uint64_t d;
    memcpy(&f, &v->f, sizeof f);
    memcpy(&d, &v->d, sizeof d);
    if ((f & 0x7f800000u) == 0x7f800000u)
        v->f = float_bits(f | 0x00400000u);
    if ((d & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
        v->d = double_bits(d | 0x0008000000000000ull);
}

static void case_echo_random(CUstream stream)
{
    for (int k = 0; k < 8 && !gpu_case_failed; k++) {
        struct echo_fields v;
        echo_random(&v);
        echo_roundtrip(stream, "random", &v);
    }
}

static void case_echo_min(CUstream stream)
{
    struct echo_fields v = {
        false, CHAR_MIN, SCHAR_MIN, 0, SHRT_MIN, 0, INT32_MIN, 0,
        INT64_MIN, 0, INT64_MIN, 0, 0.0f, 0.0, INT8_MIN, 0, INT16_MIN, 0, INT32_MIN, 0,
        INT64_MIN, 0, 0, PTRDIFF_MIN, INTPTR_MIN, 0, 0,
    };
    v.f = -0x1.fffffep127f; /* -FLT_MAX */
    v.d = -0x1.fffffffffffffp1023; /* -DBL_MAX */
    echo_roundtrip(stream, "minimum", &v);
}

static void case_echo_max(CUstream stream)
{
    struct echo_fields v = {
        true, CHAR_MAX, SCHAR_MAX, UCHAR_MAX, SHRT_MAX, USHRT_MAX, INT32_MAX, UINT32_MAX,
        INT64_MAX, UINT64_MAX, INT64_MAX, UINT64_MAX, 0.0f, 0.0, INT8_MAX, UINT8_MAX,
        INT16_MAX, UINT16_MAX, INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX, SIZE_MAX,
        PTRDIFF_MAX, INTPTR_MAX, UINTPTR_MAX, USHRT_MAX,
    };
    v.f = 0x1.fffffep127f;
    v.d = 0x1.fffffffffffffp1023;
    echo_roundtrip(stream, "maximum", &v);
}

/* Floats whose bits a conversion or a flush would change. */
static void case_echo_special_floats(CUstream stream)
{
    static const struct { uint32_t f; uint64_t d; const char *what; } cases[] = {
        {0x80000000u, 0x8000000000000000ull, "-0.0"},
        {0x00000001u, 0x0000000000000001ull, "smallest denormal"},
        {0x807fffffu, 0x800fffffffffffffull, "largest negative denormal"},
        {0x7f800000u, 0x7ff0000000000000ull, "+inf"},
        {0xff800000u, 0xfff0000000000000ull, "-inf"},
        {0x7fc12345u, 0x7ff8000000012345ull, "quiet NaN with payload"},
        {0xffedcba9u, 0xfffedcba98765432ull, "negative quiet NaN with payload"},
        {0x00800000u, 0x0010000000000000ull, "smallest normal"},
        {0x3eaaaaabu, 0x3fd5555555555555ull, "1/3"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0] && !gpu_case_failed; k++) {
        struct echo_fields v;
        echo_random(&v);
        v.f = float_bits(cases[k].f);
        v.d = double_bits(cases[k].d);
        echo_roundtrip(stream, cases[k].what, &v);
    }
    note("%zu float/double bit patterns, byte-identical", sizeof cases / sizeof cases[0]);
}

/* Kept apart: a move that quietens a signalling NaN is a finding about the
 * kernel's code generation, not about how the stub packs arguments. */
static void case_echo_signalling_nan(CUstream stream)
{
    struct echo_fields v;
    echo_random(&v);
    v.f = float_bits(0x7f800001u);
    v.d = double_bits(0xfff0000000000001ull);
    echo_roundtrip(stream, "signalling NaN", &v);
}

/* ---- launch configuration errors -------------------------------------------------- */

/* Result of the launch made before the driver was loaded (see main). */
static ks_status pre_driver_status;
static char pre_driver_message[256];

static void case_config_before_driver(CUstream stream)
{
    (void)stream;
    EXPECT(pre_driver_status == KS_ERR_INVALID_CONFIG,
           "block 2048 before the driver was loaded returned %s (%s), expected KS_ERR_INVALID_CONFIG",
           ks_status_name(pre_driver_status), pre_driver_message);
    note("%s", pre_driver_message);
}

static void case_config_errors(CUstream stream)
{
    (void)stream;
    /* Never a device address: none of these may reach the driver. */
    float *fx = (float *)(uintptr_t)0x10;
    double *dx = (double *)(uintptr_t)0x10;
    const float *cx = fx;

    /* Unloaded image: a rejected launch must not load it. */
    KS_REQUIRE(ks_image_unload(&vector_ops_kstub_image));
    EXPECT_STATUS(saxpy(ks_launch_1d(1, 2048), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);
    EXPECT(__atomic_load_n(&vector_ops_kstub_image.ks__library, __ATOMIC_ACQUIRE) == NULL,
           "a rejected launch loaded the image");

    EXPECT_STATUS(saxpy(ks_launch_1d(0, 256), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);
    EXPECT_STATUS(saxpy(ks_launch_1d(1, 0), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);
    ks_dim3 g1 = {1, 1, 1}, big_z = {1, 1, 65}, over = {64, 32, 1}, huge_y = {1, 65536, 1};
    ks_dim3 b1 = {1, 1, 1};
    EXPECT_STATUS(saxpy(ks_launch_3d(g1, big_z), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);
    EXPECT_STATUS(saxpy(ks_launch_3d(g1, over), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);
    EXPECT_STATUS(saxpy(ks_launch_3d(huge_y, b1), 1.0f, cx, fx, 1), KS_ERR_INVALID_CONFIG);

    /* __launch_bounds__(256) on blas::scale(double *, double, int). */
    EXPECT_STATUS(blas_scale__doublep_double_int(ks_launch_1d(1, 257), dx, 1.0, 1),
                  KS_ERR_INVALID_CONFIG);
    EXPECT(ks_last_error()->kernel != NULL && strcmp(ks_last_error()->kernel, "blas::scale") == 0,
           "the error names kernel '%s', expected 'blas::scale'",
           ks_last_error()->kernel ? ks_last_error()->kernel : "(null)");
    ks_dim3 b16x17 = {16, 17, 1};
    EXPECT_STATUS(blas_scale__doublep_double_int(ks_launch_3d(g1, b16x17), dx, 1.0, 1),
                  KS_ERR_INVALID_CONFIG);
    /* The float overload has no bounds: 1024 is fine there (see case_scale_f32). */

    /* __launch_bounds__(512, 2) on block_sum. */
    EXPECT_STATUS(block_sum(ks_launch_1d(1, 513), cx, 1, fx), KS_ERR_INVALID_CONFIG);
    EXPECT_STATUS(block_sum(ks_launch_1d(1, 1024), cx, 1, fx), KS_ERR_INVALID_CONFIG);

    EXPECT(__atomic_load_n(&vector_ops_kstub_image.ks__library, __ATOMIC_ACQUIRE) == NULL,
           "a rejected launch loaded the image");
    note("10 bad configurations rejected, image left unloaded");
}

/* ---- images: unload, reload ----------------------------------------------------------- */

static void case_unload_relaunch(CUstream stream)
{
    const size_t n = 4099;
    float *x = random_floats(n), *y = random_floats(n), *ref = gpu_host_alloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++)
        ref[i] = (2.0f * x[i] + y[i]) * 3.0f + x[i];
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x), dy = gpu_dev_upload(y, n * sizeof *y);
    REQUIRE(dx && dy, "no device memory");
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, 128), 128), stream);

    KS_REQUIRE(ks_image_load(&vector_ops_kstub_image));
    KS_REQUIRE(ks_image_load(&vector_ops_kstub_image)); /* again: a no-op */
    KS_REQUIRE(saxpy(l, 2.0f, DEV(const float, dx), DEV(float, dy), n));
    SYNC_REQUIRE(stream);
    KS_REQUIRE(ks_image_unload(&vector_ops_kstub_image));
    KS_REQUIRE(ks_image_unload(&vector_ops_kstub_image)); /* already unloaded */
    /* Two kernels of the unloaded image, each resolved anew. */
    KS_REQUIRE(blas_scale__floatp_float_int(l, DEV(float, dy), 3.0f, (int)n));
    KS_REQUIRE(saxpy(l, 1.0f, DEV(const float, dx), DEV(float, dy), n));
    SYNC_REQUIRE(stream);
    REQUIRE(gpu_dev_download(y, dy, n * sizeof *y), "download");
    validate_result("y", F32, ref, y, n, 1e-5, 1e-5);
}

static void case_load_all_images(CUstream stream)
{
    (void)stream;
    ks_image *images[] = {&vector_ops_kstub_image, &reduce_kstub_image, &scalars_kstub_image};
    for (size_t i = 0; i < 3; i++)
        KS_REQUIRE(ks_image_load(images[i]));
    note("vector_ops, reduce, scalars");
}

/* ---- a launch captured into a CUDA graph -------------------------------------------- */

/* Capture only records what is launched on the captured stream: a node in the
 * graph shows the stub passed our stream through to cuLaunchKernel. */
static void case_graph_capture(CUstream stream)
{
    const size_t n = 10007;
    const float a = 0.5f;
    const int replays = 3;
    float *x = random_floats(n), *y = random_floats(n), *ref = gpu_host_alloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        ref[i] = y[i];
        for (int k = 0; k < replays; k++)
            ref[i] = a * x[i] + ref[i];
    }
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x), dy = gpu_dev_upload(y, n * sizeof *y);
    REQUIRE(dx && dy, "no device memory");
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, 256), 256), stream);
    /* Resolve the kernel first (a = 0 leaves y as it is): what is captured is
     * then the fast path alone, which must be capture-safe. */
    KS_REQUIRE(saxpy(l, 0.0f, DEV(const float, dx), DEV(float, dy), n));
    SYNC_REQUIRE(stream);

    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CU_REQUIRE(cu.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    ks_status st = saxpy(l, a, DEV(const float, dx), DEV(float, dy), n);
    CUresult r = cu.StreamEndCapture(stream, &graph);
    REQUIRE(st == KS_OK, "saxpy during capture: %s", ks_last_error_message());
    REQUIRE(r == CUDA_SUCCESS, "cuStreamEndCapture: %s", gpu_cu_name(r));
    size_t nodes = 0;
    r = cu.GraphGetNodes(graph, NULL, &nodes);
    if (r == CUDA_SUCCESS)
        r = cu.GraphInstantiateWithFlags(&exec, graph, 0);
    for (int k = 0; r == CUDA_SUCCESS && k < replays; k++)
        r = cu.GraphLaunch(exec, stream);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(stream);
    if (exec)
        cu.GraphExecDestroy(exec);
    cu.GraphDestroy(graph);
    REQUIRE(r == CUDA_SUCCESS, "graph: %s", gpu_cu_name(r));
    EXPECT(nodes == 1, "the captured graph has %zu nodes, expected 1", nodes);
    REQUIRE(gpu_dev_download(y, dy, n * sizeof *y), "download");
    validate_result("y", F32, ref, y, n, 1e-5, 1e-5);
}

/* ---- 16 threads making their first launches at once ------------------------------ */

enum { NTHREADS = 16, SLICE = 8192 };

typedef struct {
    int index;
    pthread_barrier_t *start;
    CUdeviceptr x, y, z, echo;   /* shared buffers; each thread owns its slice */
    struct echo_fields sent;
    ks_status st_kernel, st_echo;
    CUresult sync;
    char message[256];
} thread_job;

/* No cuCtxSetCurrent here: these threads have no context, and libkstub must
 * make device 0's primary context current for them. */
static void *thread_main(void *arg)
{
    thread_job *job = arg;
    CUstream s = job->index % 2 ? KS_STREAM_PER_THREAD : NULL;
    size_t off = (size_t)job->index * SLICE * sizeof(float);
    ks_launch l = ks_launch_on(ks_launch_1d(SLICE / 256, 256), s);

    pthread_barrier_wait(job->start);
    if (job->index % 2 == 0)
        job->st_kernel = saxpy(l, 2.0f, DEV(const float, job->x + off), DEV(float, job->y + off), SLICE);
    else
        job->st_kernel = blas_scale__floatp_float_int(l, DEV(float, job->z + off), 3.0f, SLICE);
    if (job->st_kernel != KS_OK)
        snprintf(job->message, sizeof job->message, "%s", ks_last_error_message());
    job->st_echo = launch_echo(s, job->echo + (CUdeviceptr)job->index * sizeof(struct echo_fields), &job->sent);
    if (job->st_echo != KS_OK && job->message[0] == '\0')
        snprintf(job->message, sizeof job->message, "%s", ks_last_error_message());
    /* A successful launch left a context current on this thread. */
    job->sync = job->st_kernel == KS_OK ? cu.StreamSynchronize(s) : CUDA_SUCCESS;
    return NULL;
}

static void case_threads_first_launch(CUstream stream)
{
    (void)stream;
    const size_t n = (size_t)NTHREADS * SLICE;
    float *x = random_floats(n), *y = random_floats(n), *z = random_floats(n);
    float *ref_y = gpu_host_alloc(n * sizeof *ref_y), *ref_z = gpu_host_alloc(n * sizeof *ref_z);
    for (size_t i = 0; i < n; i++) {
        int even = (i / SLICE) % 2 == 0;
        ref_y[i] = even ? 2.0f * x[i] + y[i] : y[i];
        ref_z[i] = even ? z[i] : z[i] * 3.0f;
    }
    CUdeviceptr dx = gpu_dev_upload(x, n * sizeof *x), dy = gpu_dev_upload(y, n * sizeof *y);
    CUdeviceptr dz = gpu_dev_upload(z, n * sizeof *z);
    CUdeviceptr decho = gpu_dev_alloc(NTHREADS * sizeof(struct echo_fields), POISON);
    REQUIRE(dx && dy && dz && decho, "no device memory");

    /* Every kernel unresolved, so all threads race into the first load. */
    KS_REQUIRE(ks_image_unload(&vector_ops_kstub_image));
    KS_REQUIRE(ks_image_unload(&scalars_kstub_image));

    thread_job jobs[NTHREADS];
    pthread_t threads[NTHREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (int t = 0; t < NTHREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].index = t;
        jobs[t].start = &start;
        jobs[t].x = dx, jobs[t].y = dy, jobs[t].z = dz, jobs[t].echo = decho;
        echo_random(&jobs[t].sent);
    }
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&threads[t], NULL, thread_main, &jobs[t]) != 0) {
            /* The threads already started wait at the barrier for ever. */
            printf("gpu-check: pthread_create failed for thread %d\n", t);
            exit(2);
        }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&start);

    int bad = 0;
    for (int t = 0; t < NTHREADS; t++) {
        if (jobs[t].st_kernel != KS_OK || jobs[t].st_echo != KS_OK) {
            gpu_fail_at(__FILE__, __LINE__, "thread %d: %s / %s: %s", t, ks_status_name(jobs[t].st_kernel),
                    ks_status_name(jobs[t].st_echo), jobs[t].message);
            bad++;
        } else if (jobs[t].sync != CUDA_SUCCESS) {
            gpu_fail_at(__FILE__, __LINE__, "thread %d: cuStreamSynchronize: %s", t, gpu_cu_name(jobs[t].sync));
            bad++;
        }
    }
    REQUIRE(bad == 0, "%d of %d threads failed", bad, NTHREADS);
    CU_REQUIRE(cu.StreamSynchronize(NULL));
    struct echo_fields got[NTHREADS];
    REQUIRE(gpu_dev_download(y, dy, n * sizeof *y) && gpu_dev_download(z, dz, n * sizeof *z) &&
            gpu_dev_download(got, decho, sizeof got), "download");
    for (int t = 0; t < NTHREADS; t++) {
        char what[32];
        snprintf(what, sizeof what, "thread %d echo", t);
        echo_matches(what, &got[t], &jobs[t].sent);
    }
    validate_result("z", F32, ref_z, z, n, 1e-6, 1e-6);
    validate_result("y", F32, ref_y, y, n, 1e-5, 1e-5);
    note("%d threads, no context of their own; all launches correct", NTHREADS);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* Before anything loads the driver: the configuration check must stand
     * on its own. Its verdict is reported below, with the other cases. */
    pre_driver_status = saxpy(ks_launch_1d(1, 2048), 1.0f, NULL, NULL, 0);
    snprintf(pre_driver_message, sizeof pre_driver_message, "%s", ks_last_error_message());

    CUdevice dev;
    CUcontext ctx;
    CUstream user;
    char devname[256] = "?";
    int start = gpu_start("gpu-check", &dev, &ctx, devname, sizeof devname);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    CUresult r;
    if ((r = cu.StreamCreate(&user, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
        printf("gpu-check: no stream on device 0: %s\n", gpu_cu_name(r));
        return 1;
    }
    printf("gpu-check: device 0: %s\n", devname);

    static const struct { const char *name; case_fn fn; } per_stream[] = {
        {"saxpy", case_saxpy},
        {"blas::scale(double)", case_scale_f64},
        {"blas::scale(float)", case_scale_f32},
        {"block_sum", case_block_sum},
        {"histogram", case_histogram},
        {"haxpy", case_haxpy},
        {"gather_rows", case_gather_rows},
        {"echo_scalars/random", case_echo_random},
    };
    const struct { const char *name; CUstream s; } streams[] = {
        {"legacy", NULL},
        {"per-thread", KS_STREAM_PER_THREAD},
        {"user", user},
    };

    run_case("config/before-driver", NULL, case_config_before_driver, NULL);
    run_case("config/errors", NULL, case_config_errors, NULL);
    for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++)
        for (size_t k = 0; k < sizeof per_stream / sizeof per_stream[0]; k++)
            run_case(per_stream[k].name, streams[s].name, per_stream[k].fn, streams[s].s);
    run_case("echo_scalars/minimum", NULL, case_echo_min, NULL);
    run_case("echo_scalars/maximum", NULL, case_echo_max, NULL);
    run_case("echo_scalars/special-floats", NULL, case_echo_special_floats, user);
    run_case("echo_scalars/signalling-nan", NULL, case_echo_signalling_nan, NULL);
    run_case("records/echo_params", "legacy", case_echo_params, NULL);
    run_case("records/echo_params", "user", case_echo_params, user);
    run_case("records/echo_vectors", "user", case_echo_vectors, user);
    run_case("records/echo_halves", "per-thread", case_echo_halves, (CUstream)KS_STREAM_PER_THREAD);
    run_case("records/echo_handles", "user", case_echo_handles, user);
    run_case("occupancy/saxpy_n", "user", case_saxpy_n, user);
    run_case("occupancy/scale_n-bounded", "legacy", case_scale_n_bounded, NULL);
    run_case("templates/axpy", "user", case_template_axpy, user);
    run_case("templates/fill", "legacy", case_template_fill, NULL);
    run_case("image/load-all", NULL, case_load_all_images, NULL);
    run_case("image/unload-relaunch", "legacy", case_unload_relaunch, NULL);
    run_case("image/unload-relaunch", "user", case_unload_relaunch, user);
    run_case("graph/capture", "user", case_graph_capture, user);
    run_case("threads/first-launch", NULL, case_threads_first_launch, NULL);

    cu.StreamDestroy(user);
    if (n_skipped)
        printf("gpu-check: %d passed, %d failed, %d skipped\n", n_passed, n_failed, n_skipped);
    else
        printf("gpu-check: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
