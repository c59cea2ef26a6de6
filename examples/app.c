/*
 * app.c — kstub's demo: every kernel in kernels/ launched from plain C
 * through the functions kstub generated for it, each result checked against
 * a CPU reference.
 *
 * It is built the way a user would build it (examples.mk): compile the
 * generated build/gen/<name>.kstub.c files with this file, add
 * -Iinclude/kstub -Ibuild/gen -I$(CUDA_PATH)/include, and link libkstub.a -ldl
 * -lpthread. There is no -lcuda: the few driver functions the app calls
 * itself (allocation, copies, streams) come from ks_driver_proc(), so the
 * program starts on a machine without a GPU and says what it would have run.
 *
 * Exit status: 0 when every kernel matched its reference (or there is no
 * driver to run them on), 1 otherwise.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudaTypedefs.h> /* PFN_cu…_vNNNN: the driver's function types */

#include "kstub.h"
#include "vector_ops.kstub.h"
#include "reduce.kstub.h"
#include "scalars.kstub.h"

/* ---- fail-fast checks: right for an application, wrong for a library -------- */

#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS)                                                         \
            cu_fail(#call, r_, __FILE__, __LINE__);                                     \
    } while (0)

/* ---- the driver functions this app calls itself ------------------------------- */

/* Types from cudaTypedefs.h, in the version ks_driver_proc() resolves: the one
 * cuda.h maps the plain name to (cuMemAlloc is cuMemAlloc_v2, type _v3020). */
static struct {
    PFN_cuGetErrorName_v6000 GetErrorName;
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDeviceGetName_v2000 DeviceGetName;
    PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuMemAlloc_v3020 MemAlloc;
    PFN_cuMemFree_v3020 MemFree;
    PFN_cuMemcpyHtoD_v3020 MemcpyHtoD;
    PFN_cuMemcpyDtoH_v3020 MemcpyDtoH;
    PFN_cuMemsetD8_v3020 MemsetD8;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    PFN_cuStreamDestroy_v4000 StreamDestroy;
} cu;

static void cu_fail(const char *call, CUresult r, const char *file, int line)
{
    const char *name = NULL;
    if (cu.GetErrorName == NULL || cu.GetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", file, line, call, name ? name : "?", (int)r);
    exit(1);
}

/* ks_driver_proc hands back a void *; memcpy turns it into a function pointer
 * without a -Wpedantic complaint. */
#define LOAD(field, name)                                                               \
    do {                                                                                \
        void *p_ = NULL;                                                                \
        KS_CHECK(ks_driver_proc(name, &p_));                                            \
        memcpy(&cu.field, &p_, sizeof p_);                                              \
    } while (0)

static void load_driver_functions(void)
{
    LOAD(GetErrorName, "cuGetErrorName");
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(DeviceGetName, "cuDeviceGetName");
    LOAD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(CtxSetCurrent, "cuCtxSetCurrent");
    LOAD(MemAlloc, "cuMemAlloc");
    LOAD(MemFree, "cuMemFree");
    LOAD(MemcpyHtoD, "cuMemcpyHtoD");
    LOAD(MemcpyDtoH, "cuMemcpyDtoH");
    LOAD(MemsetD8, "cuMemsetD8");
    LOAD(StreamCreate, "cuStreamCreate");
    LOAD(StreamSynchronize, "cuStreamSynchronize");
    LOAD(StreamDestroy, "cuStreamDestroy");
}

/* ---- device memory ---------------------------------------------------------- */

/* A device address as the pointer type a stub takes. */
#define DEV(type, d) ((type *)(uintptr_t)(d))

static CUdeviceptr dev_upload(const void *host, size_t bytes)
{
    CUdeviceptr d;
    CU_CHECK(cu.MemAlloc(&d, bytes));
    CU_CHECK(cu.MemcpyHtoD(d, host, bytes));
    return d;
}

/* Device memory filled with \p byte: outputs start as garbage (0xFF bytes are
 * a float NaN), so a kernel that writes nothing cannot pass. */
static CUdeviceptr dev_poisoned(size_t bytes, unsigned char byte)
{
    CUdeviceptr d;
    CU_CHECK(cu.MemAlloc(&d, bytes));
    CU_CHECK(cu.MemsetD8(d, byte, bytes));
    return d;
}

static void dev_download(void *host, CUdeviceptr d, size_t bytes)
{
    CU_CHECK(cu.MemcpyDtoH(host, d, bytes));
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "demo: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- inputs and references ----------------------------------------------------- */

/* splitmix64: a fixed seed, so every run sees the same inputs. */
static uint64_t rng_state = 0x6b73747562ULL; /* "kstub" */

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

/* IEEE half <-> float for the haxpy reference (round to nearest even). */
static uint16_t half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)                          /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u)                          /* rounds past 65504 */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {                         /* a half subnormal, or zero */
        unsigned e = ax >> 23;
        if (e < 102)
            return sign;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    ax += 0xfffu + ((ax >> 13) & 1u);               /* round the 13 dropped bits */
    return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {                                 /* zero or subnormal: mant * 2^-24 */
        float v = (float)mant * 0x1.0p-24f;
        return sign ? -v : v;
    }
    uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
                              : sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/*
 * llm.c's validate_result: compares the device's result with the CPU
 * reference element by element and prints the first few mismatches. An
 * element passes when |got - ref| <= atol + rtol * |ref|; NaN never passes.
 * \return 1 when every element passes; *max_err gets the largest |got - ref|.
 */
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

static int validate_result(const char *name, elem_type t, const void *ref, const void *got,
                           size_t n, double atol, double rtol, double *max_err)
{
    int faults = 0;
    *max_err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = elem(ref, t, i), g = elem(got, t, i), err = fabs(g - r);
        if (!(err <= atol + rtol * fabs(r))) {
            if (faults < 5)
                printf("  %s: mismatch at %zu: CPU %.9g vs GPU %.9g\n", name, i, r, g);
            faults++;
        }
        if (!(err <= *max_err))
            *max_err = err; /* NaN sticks */
    }
    return faults == 0;
}

/* ---- one check per kernel ---------------------------------------------------- */

/* What a check reports: pass/fail and a few words on why. */
typedef struct {
    int pass;
    char detail[96];
} result;

static result from_validate(int pass, double max_err)
{
    result res = {pass, ""};
    snprintf(res.detail, sizeof res.detail, "max error %.3g", max_err);
    return res;
}

static unsigned blocks_for(size_t n, unsigned block)
{
    return (unsigned)((n + block - 1) / block);
}

static result check_saxpy(CUstream stream)
{
    const size_t n = 1000003;
    const float a = 2.5f;
    float *x = xmalloc(n * sizeof *x), *y = xmalloc(n * sizeof *y), *ref = xmalloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        x[i] = rng_float();
        y[i] = rng_float();
        ref[i] = a * x[i] + y[i];
    }
    CUdeviceptr dx = dev_upload(x, n * sizeof *x), dy = dev_upload(y, n * sizeof *y);

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, 256), 256), stream);
    KS_CHECK(saxpy(l, a, DEV(const float, dx), DEV(float, dy), n));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(y, dy, n * sizeof *y);

    double err;
    int pass = validate_result("saxpy", F32, ref, y, n, 1e-5, 1e-5, &err);
    CU_CHECK(cu.MemFree(dx));
    CU_CHECK(cu.MemFree(dy));
    free(x), free(y), free(ref);
    return from_validate(pass, err);
}

static result check_scale_f64(CUstream stream)
{
    const int n = 300007;
    const double s = -1.0 / 3.0;
    double *x = xmalloc((size_t)n * sizeof *x), *ref = xmalloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = rng_float();
        ref[i] = x[i] * s;
    }
    CUdeviceptr dx = dev_upload(x, (size_t)n * sizeof *x);

    /* 256 threads: the kernel's __launch_bounds__ allows no more. */
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 256), 256), stream);
    KS_CHECK(blas_scale__doublep_double_int(l, DEV(double, dx), s, n));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(x, dx, (size_t)n * sizeof *x);

    double err;
    int pass = validate_result("blas::scale(double)", F64, ref, x, (size_t)n, 1e-12, 0, &err);
    CU_CHECK(cu.MemFree(dx));
    free(x), free(ref);
    return from_validate(pass, err);
}

static result check_scale_f32(CUstream stream)
{
    const int n = 300007;
    const float s = 1.75f;
    float *x = xmalloc((size_t)n * sizeof *x), *ref = xmalloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = rng_float();
        ref[i] = x[i] * s;
    }
    CUdeviceptr dx = dev_upload(x, (size_t)n * sizeof *x);

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 1024), 1024), stream);
    KS_CHECK(blas_scale__floatp_float_int(l, DEV(float, dx), s, n));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(x, dx, (size_t)n * sizeof *x);

    double err;
    int pass = validate_result("blas::scale(float)", F32, ref, x, (size_t)n, 1e-6, 1e-6, &err);
    CU_CHECK(cu.MemFree(dx));
    free(x), free(ref);
    return from_validate(pass, err);
}

static result check_block_sum(CUstream stream)
{
    const unsigned long long n = (1ull << 20) + 123;
    const unsigned block = 512;
    float *x = xmalloc(n * sizeof *x);
    double sum = 0.0, sum_abs = 0.0;
    for (unsigned long long i = 0; i < n; i++) {
        x[i] = rng_float();
        sum += x[i];
        sum_abs += fabs(x[i]);
    }
    CUdeviceptr dx = dev_upload(x, n * sizeof *x);
    CUdeviceptr dout = dev_poisoned(sizeof(float), 0); /* it accumulates: must start at 0 */

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for(n, block), block), stream);
    l.shared_bytes = block * sizeof(float);
    KS_CHECK(block_sum(l, DEV(const float, dx), n, DEV(float, dout)));
    CU_CHECK(cu.StreamSynchronize(stream));
    float got;
    dev_download(&got, dout, sizeof got);

    /* Float partial sums added by atomics in any order: allow rounding in
     * proportion to the magnitudes summed. */
    double ref = sum, got_d = got, err;
    int pass = validate_result("block_sum", F64, &ref, &got_d, 1, 1e-6 * sum_abs, 0, &err);
    CU_CHECK(cu.MemFree(dx));
    CU_CHECK(cu.MemFree(dout));
    free(x);
    return from_validate(pass, err);
}

static result check_histogram(CUstream stream)
{
    const int64_t n = 100003;
    const int32_t lo = -1000;
    const uint32_t width = 7;
    const uint16_t nbins = 300;
    const size_t guard = 16; /* bins past nbins must stay untouched */
    int32_t *values = xmalloc((size_t)n * sizeof *values);
    unsigned *ref = xmalloc((nbins + guard) * sizeof *ref), *got = xmalloc((nbins + guard) * sizeof *got);
    memset(ref, 0, nbins * sizeof *ref);
    const int64_t span = (int64_t)width * nbins + 80; /* some values fall outside */
    for (int64_t i = 0; i < n; i++) {
        values[i] = (int32_t)(lo - 40 + (int64_t)(rng_next() % (uint64_t)span));
        /* As the kernel bins (C division truncates toward zero). */
        int64_t b = ((int64_t)values[i] - lo) / (int64_t)width;
        if (b >= 0 && b < nbins)
            ref[b]++;
    }
    memset(ref + nbins, 0xAB, guard * sizeof *ref);
    CUdeviceptr dv = dev_upload(values, (size_t)n * sizeof *values);
    CUdeviceptr dbins = dev_poisoned((nbins + guard) * sizeof *got, 0xAB);
    CU_CHECK(cu.MemsetD8(dbins, 0, nbins * sizeof *got)); /* counts start at 0 */

    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 128), 128), stream);
    KS_CHECK(histogram(l, DEV(const int32_t, dv), n, lo, width, DEV(unsigned, dbins), nbins));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(got, dbins, (nbins + guard) * sizeof *got);

    size_t wrong = 0;
    for (size_t b = 0; b < nbins + guard; b++)
        if (got[b] != ref[b]) {
            if (wrong < 5)
                printf("  histogram: bin %zu: CPU %u vs GPU %u\n", b, ref[b], got[b]);
            wrong++;
        }
    result res = {wrong == 0, ""};
    snprintf(res.detail, sizeof res.detail, "%zu of %zu bins differ", wrong, nbins + guard);
    CU_CHECK(cu.MemFree(dv));
    CU_CHECK(cu.MemFree(dbins));
    free(values), free(ref), free(got);
    return res;
}

/* kernels/scalars.cu's struct Echo, field for field (same ABI on the x86-64
 * host and the device): what echo_scalars writes back. */
struct echo_fields {
    bool b; char c; signed char sc; unsigned char uc;
    short s; unsigned short us; int i; unsigned int u;
    long l; unsigned long ul; long long ll; unsigned long long ull;
    float f; double d;
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; size_t sz; ptrdiff_t pd; intptr_t ip; uintptr_t up;
    unsigned short flags;
};
_Static_assert(sizeof(struct echo_fields) == 136, "differs from kernels/scalars.cu's struct Echo");

#define ECHO_FIELDS(X)                                                                  \
    X(b) X(c) X(sc) X(uc) X(s) X(us) X(i) X(u) X(l) X(ul) X(ll) X(ull) X(f) X(d)        \
    X(i8) X(u8) X(i16) X(u16) X(i32) X(u32) X(i64) X(u64) X(sz) X(pd) X(ip) X(up) X(flags)

static result check_echo_scalars(CUstream stream)
{
    /* Values whose every bit matters: extremes, -0.0, a float denormal, a
     * double NaN with a payload. */
    const uint64_t nan_bits = 0x7ff8000000012345ULL;
    struct echo_fields sent = {
        true, 'k', -128, 255, -32768, 65535, INT32_MIN, UINT32_MAX,
        INT64_MIN, UINT64_MAX, INT64_MAX, 0x0123456789abcdefULL,
        -0.0f, 0.0, INT8_MIN, UINT8_MAX, INT16_MIN, UINT16_MAX, INT32_MAX, 0xdeadbeefu,
        INT64_MIN + 1, UINT64_MAX - 1, SIZE_MAX, PTRDIFF_MIN, INTPTR_MAX, UINTPTR_MAX,
        0xbeef,
    };
    sent.f = 0x1.0p-149f; /* the smallest float denormal */
    memcpy(&sent.d, &nan_bits, sizeof sent.d);

    CUdeviceptr dout = dev_poisoned(sizeof(struct echo_fields), 0xAB);
#define ARG(field) , sent.field
    KS_CHECK(echo_scalars(ks_launch_on(ks_launch_1d(1, 1), stream),
                          DEV(struct Echo, dout) ECHO_FIELDS(ARG)));
#undef ARG
    CU_CHECK(cu.StreamSynchronize(stream));
    struct echo_fields got;
    dev_download(&got, dout, sizeof got);

    /* Compare bytes, not values: -0.0 == 0.0 and NaN != NaN would both lie. */
    int fields = 0, differ = 0;
#define CMP(field)                                                                      \
    fields++;                                                                           \
    if (memcmp(&got.field, &sent.field, sizeof sent.field) != 0) {                      \
        printf("  echo_scalars: field '%s' came back different\n", #field);             \
        differ++;                                                                       \
    }
    ECHO_FIELDS(CMP)
#undef CMP
    result res = {differ == 0, ""};
    snprintf(res.detail, sizeof res.detail, "%d of %d scalars differ (byte compare)", differ, fields);
    CU_CHECK(cu.MemFree(dout));
    return res;
}

static result check_haxpy(CUstream stream)
{
    const int n = 50021;
    const float a = 1.5f;
    uint16_t *x = xmalloc((size_t)n * sizeof *x), *y = xmalloc((size_t)n * sizeof *y);
    uint16_t *ref = xmalloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        x[i] = half_from_float(rng_float());
        y[i] = half_from_float(rng_float());
        ref[i] = half_from_float(a * half_to_float(x[i]) + half_to_float(y[i]));
    }
    CUdeviceptr dx = dev_upload(x, (size_t)n * sizeof *x), dy = dev_upload(y, (size_t)n * sizeof *y);

    /* __half is ks_half in C (kstub_types.h): same size, alignment and bits. */
    ks_launch l = ks_launch_on(ks_launch_1d(blocks_for((size_t)n, 256), 256), stream);
    KS_CHECK(haxpy(l, n, a, DEV(const ks_half, dx), DEV(ks_half, dy)));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(y, dy, (size_t)n * sizeof *y);

    /* One half ulp: the device may fuse the multiply-add before rounding. */
    double err;
    int pass = validate_result("haxpy", F16, ref, y, (size_t)n, 1e-7, 0x1.0p-10, &err);
    CU_CHECK(cu.MemFree(dx));
    CU_CHECK(cu.MemFree(dy));
    free(x), free(y), free(ref);
    return from_validate(pass, err);
}

static result check_gather_rows(CUstream stream)
{
    enum { NSRC = 64, NROWS = 37, NCOLS = 1000, BLOCK = 128 };
    float *src = xmalloc((size_t)NSRC * NCOLS * sizeof *src);
    float *ref = xmalloc((size_t)NROWS * NCOLS * sizeof *ref);
    float *got = xmalloc((size_t)NROWS * NCOLS * sizeof *got);
    for (size_t i = 0; i < (size_t)NSRC * NCOLS; i++)
        src[i] = rng_float();
    CUdeviceptr dsrc = dev_upload(src, (size_t)NSRC * NCOLS * sizeof *src);

    /* The table of row pointers lives on the device, as the kernel reads it. */
    uint64_t rows[NROWS];
    for (int r = 0; r < NROWS; r++) {
        size_t pick = (size_t)(rng_next() % NSRC);
        rows[r] = dsrc + pick * NCOLS * sizeof(float);
        memcpy(ref + (size_t)r * NCOLS, src + pick * NCOLS, NCOLS * sizeof *ref);
    }
    CUdeviceptr drows = dev_upload(rows, sizeof rows);
    CUdeviceptr dout = dev_poisoned((size_t)NROWS * NCOLS * sizeof *got, 0xFF); /* NaN */

    ks_dim3 grid = {blocks_for(NCOLS, BLOCK), NROWS, 1}, block = {BLOCK, 1, 1};
    KS_CHECK(gather_rows(ks_launch_on(ks_launch_3d(grid, block), stream),
                         DEV(const float *const, drows), NROWS, NCOLS, DEV(volatile float, dout)));
    CU_CHECK(cu.StreamSynchronize(stream));
    dev_download(got, dout, (size_t)NROWS * NCOLS * sizeof *got);

    double err;
    int pass = validate_result("gather_rows", F32, ref, got, (size_t)NROWS * NCOLS, 0, 0, &err);
    CU_CHECK(cu.MemFree(dsrc));
    CU_CHECK(cu.MemFree(drows));
    CU_CHECK(cu.MemFree(dout));
    free(src), free(ref), free(got);
    return from_validate(pass, err);
}

/* ---- the table of generated stubs this demo exercises ------------------------ */

/*
 * One row per generated kernel function. The stub is referenced by address,
 * so a kernel renamed or removed in kernels/ breaks the build here instead of
 * silently dropping out of the demo; the file name comes from the generated
 * image (ks_image.source).
 */
typedef struct {
    const char *name;            /* the generated C function */
    void (*stub)(void);          /* that function, type-erased */
    const ks_image *image;       /* the generated image it launches from */
    result (*check)(CUstream);   /* runs it and compares with the CPU */
    int user_stream;             /* 1: on our own stream; 0: the default stream */
} demo_kernel;

#define DEMO(image, fn, check, user_stream) \
    { #fn, (void (*)(void))fn, &image, check, user_stream }

static const demo_kernel demo_kernels[] = {
    DEMO(kernels_vector_ops_kstub_image, saxpy, check_saxpy, 0),
    DEMO(kernels_vector_ops_kstub_image, blas_scale__doublep_double_int, check_scale_f64, 1),
    DEMO(kernels_vector_ops_kstub_image, blas_scale__floatp_float_int, check_scale_f32, 0),
    DEMO(kernels_reduce_kstub_image, block_sum, check_block_sum, 1),
    DEMO(kernels_reduce_kstub_image, histogram, check_histogram, 0),
    DEMO(kernels_scalars_kstub_image, echo_scalars, check_echo_scalars, 1),
    DEMO(kernels_scalars_kstub_image, haxpy, check_haxpy, 0),
    DEMO(kernels_scalars_kstub_image, gather_rows, check_gather_rows, 1),
};
enum { NKERNELS = sizeof demo_kernels / sizeof demo_kernels[0] };

static void print_without_driver(void)
{
    printf("demo: no CUDA driver on this machine (%s); with one it runs these %d kernels "
           "against the CPU:\n", ks_last_error_message(), NKERNELS);
    for (int k = 0; k < NKERNELS; k++)
        printf("  %-16s %s\n", demo_kernels[k].image->source, demo_kernels[k].name);
}

int main(void)
{
    /* The first call that needs the driver tells whether there is one. */
    void *probe;
    ks_status st = ks_driver_proc("cuInit", &probe);
    if (st == KS_ERR_NO_DRIVER) {
        print_without_driver();
        return 0;
    }
    KS_CHECK(st);
    load_driver_functions();

    /* Device 0's primary context, current on this thread: the one libkstub
     * would pick itself, made explicit because our allocations need it. */
    CUdevice dev;
    CUcontext ctx;
    char devname[256];
    CU_CHECK(cu.DeviceGet(&dev, 0));
    CU_CHECK(cu.DeviceGetName(devname, sizeof devname, dev));
    CU_CHECK(cu.DevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cu.CtxSetCurrent(ctx));
    CUstream user;
    CU_CHECK(cu.StreamCreate(&user, CU_STREAM_DEFAULT));
    printf("demo: %d kernels on %s\n", NKERNELS, devname);

    int failed = 0;
    for (int k = 0; k < NKERNELS; k++) {
        const demo_kernel *dk = &demo_kernels[k];
        result res = dk->check(dk->user_stream ? user : NULL);
        failed += !res.pass;
        printf("%s  %-32s %-14s %-14s %s\n", res.pass ? "PASS" : "FAIL", dk->name,
               dk->image->source, dk->user_stream ? "user stream" : "default stream",
               res.detail);
    }
    CU_CHECK(cu.StreamDestroy(user));
    printf("demo: %d of %d kernels passed\n", NKERNELS - failed, NKERNELS);
    return failed ? 1 : 0;
}
