/*
 * globals_gpu.c — issue 29 on a GPU: device variables written and read
 * through their generated accessors (tests/gpu/globals_kernels.cu) around
 * kernels that use them, checked against the CPU: a __constant__ table and
 * a __device__ struct a kernel reads; a __device__ counter read back after
 * atomics, on a stream of the program's own; the per-thread default
 * stream; a __managed__ total read from the host, through its accessor and
 * its address; bounds refused with nothing copied; a graph whose memcpy
 * node writes the table before the kernel node reads it, replayed with new
 * values; a static and a const variable found by their plain names (a
 * const one's initializer read back, the static one written and used by a
 * kernel); two contexts the program made on one device, each thread with
 * its own, each writing its own table and running fir at once (issue 45:
 * images and variables resolved per context). Built twice: with an embedded fatbin, and (GLOBALS_NVRTC) with
 * the source embedded for NVRTC; `make gpu-check-globals` runs each with
 * the library loader and with KSTUB_LOADER=module. Without a CUDA driver it
 * prints "gpu-globals: no CUDA driver (...); skipped" and exits 0.
 */
#include "globals_kernels.kstub.h"

#define GPU_CHECK_RETURN_STATUS   /* the cases return 1 at their first failure */
#include "gpu_check.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 2929u;

/* fir's reference: gain * sum_k taps[k] * in[i + k] + bias */
static double fir_ref(const float *taps, const Params *p, const float *in, int i)
{
    double acc = 0;
    for (int k = 0; k < p->taps; k++)
        acc += (double)taps[k] * in[i + k];
    return p->gain * acc + p->bias;
}

static int run_fir(const float *taps, const Params *p, const float *in, int n, ks_stream stream, double *err)
{
    CUdeviceptr din, dout;
    CU(cu.MemAlloc(&din, (size_t)(n + 15) * sizeof *in));
    CU(cu.MemAlloc(&dout, (size_t)n * sizeof(float)));
    CU(cu.MemcpyHtoD(din, in, (size_t)(n + 15) * sizeof *in));
    CU(cu.MemsetD8(dout, 0xff, (size_t)n * sizeof(float)));   /* poison: NaN */
    KS(fir(ks_launch_on(ks_launch_1d((unsigned)(n + 255) / 256, 256), stream), DEV(const float, din),
           DEV(float, dout), n));
    CU(cu.StreamSynchronize((CUstream)stream));
    float *out = malloc((size_t)n * sizeof *out);
    CU(cu.MemcpyDtoH(out, dout, (size_t)n * sizeof *out));
    *err = 0;
    for (int i = 0; i < n; i++)
        *err = fmax(*err, fabs((double)out[i] - fir_ref(taps, p, in, i)));
    free(out);
    cu.MemFree(din);
    cu.MemFree(dout);
    return 0;
}

/* A __constant__ table and a __device__ struct, written, read by fir, read back. */
static int constant_table_and_struct(void)
{
    const int n = 50000;
    float taps[16], back[16];
    float *in = malloc((size_t)(n + 15) * sizeof *in);
    for (int k = 0; k < 16; k++)
        taps[k] = gpu_frand(&rng);
    for (int i = 0; i < n + 15; i++)
        in[i] = gpu_frand(&rng);
    Params p, pb;
    memset(&p, 0, sizeof p);
    p.gain = 1.5f;
    p.taps = 16;
    p.bias = -0.25;
    KS(c_taps_set(taps, NULL));
    KS(g_params_set(p, NULL));
    double err;
    if (run_fir(taps, &p, in, n, NULL, &err))
        return 1;
    EXPECT(err <= 1e-4, "fir: max error %g", err);
    memset(back, 0, sizeof back);
    KS(c_taps_get(back, NULL));
    EXPECT(memcmp(back, taps, sizeof taps) == 0, "c_taps read back differs");
    memset(&pb, 0, sizeof pb);
    KS(g_params_get(&pb, NULL));
    EXPECT(pb.gain == p.gain && pb.taps == p.taps && pb.bias == p.bias, "g_params read back differs");
    printf("  fir with c_taps (__constant__ float[16]) and g_params (Params): max error %.2g over %d\n", err, n);
    free(in);
    return 0;
}

/* A __device__ counter zeroed, bumped by atomics and read back, on a stream of our own. */
static int counter_after_atomics(void)
{
    const int n = 1 << 20;
    float *x = malloc((size_t)n * sizeof *x);
    unsigned want = 0;
    for (int i = 0; i < n; i++) {
        x[i] = gpu_frand(&rng);
        want += x[i] > 0.25f;
    }
    CUstream s;
    CU(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dx = gpu_dev_upload(x, (size_t)n * sizeof *x);
    EXPECT(dx != 0, "upload");
    unsigned hits = 12345;
    KS(g_hits_set(hits, (ks_stream)s));
    KS(g_hits_set(0u, (ks_stream)s));
    KS(count_above(ks_launch_on(ks_launch_1d((unsigned)(n + 255) / 256, 256), (ks_stream)s),
                   DEV(const float, dx), 0.25f, n));
    KS(g_hits_get(&hits, (ks_stream)s));              /* after the kernel, in stream order */
    EXPECT(hits == want, "g_hits is %u, wanted %u", hits, want);
    unsigned *addr = NULL;
    KS(g_hits_address(&addr));
    EXPECT(addr != NULL, "g_hits_address gave NULL");
    printf("  g_hits (__device__ unsigned int) after %d atomicAdds: %u\n", n, hits);
    CU(cu.StreamDestroy(s));
    gpu_release_case_memory();
    free(x);
    return 0;
}

/* The per-thread default stream, and a part of the table. */
static int per_thread_stream_and_parts(void)
{
    float taps[16], three[3] = {7.0f, 8.0f, 9.0f}, back[16];
    for (int k = 0; k < 16; k++)
        taps[k] = (float)k;
    KS(c_taps_set(taps, KS_STREAM_PER_THREAD));
    KS(c_taps_write(4, three, 3, KS_STREAM_PER_THREAD));
    KS(c_taps_read(0, back, 16, KS_STREAM_PER_THREAD));
    for (int k = 0; k < 16; k++) {
        float want = k >= 4 && k < 7 ? three[k - 4] : (float)k;
        EXPECT(back[k] == want, "c_taps[%d] is %g, wanted %g", k, back[k], want);
    }
    /* Past the end: refused, nothing copied. */
    float seven[7] = {0};
    ks_status st = c_taps_write(10, seven, 7, NULL);
    EXPECT(st == KS_ERR_INVALID_VALUE, "c_taps_write(10, ..., 7) returned %s", ks_status_name(st));
    EXPECT(strstr(ks_last_error_message(), "c_taps") != NULL, "message: %s", ks_last_error_message());
    KS(c_taps_get(back, NULL));
    EXPECT(back[10] == 10.0f && back[15] == 15.0f, "a refused write changed the table");
    printf("  c_taps written in parts on KS_STREAM_PER_THREAD; an overrun refused\n");
    return 0;
}

/* A __managed__ total a kernel writes, read from the host two ways. */
static int managed_total(void)
{
    float grid[4][8];
    double want = 0;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 8; c++) {
            grid[r][c] = (float)(r * 8 + c) * 0.5f;
            want += grid[r][c];
        }
    KS(lut_grid_set(&grid[0][0], NULL));
    KS(m_total_set(-1.0f, NULL));
    KS(sum_grid(ks_launch_1d(1, 32)));
    float got = 0;
    KS(m_total_get(&got, NULL));
    EXPECT(got == (float)want, "m_total is %g, wanted %g", got, want);
    float *host = NULL;
    KS(m_total_address(&host));
    CU(cu.StreamSynchronize(NULL));
    EXPECT(host != NULL && *host == (float)want, "*m_total_address() is %g, wanted %g", host ? *host : -1.0f, want);
    printf("  m_total (__managed__ float) = %g, read by m_total_get and through its address\n", got);
    return 0;
}

/* Internal linkage at global scope: s_scale (static) and k_offset (const)
 * by their plain names; the const one holds its initializer. */
static int static_and_const_by_name(void)
{
    int off = -1;
    KS(k_offset_get(&off, NULL));
    EXPECT(off == 7, "k_offset_get gave %d, wanted its initializer 7", off);
    KS(s_scale_set(2.5f, NULL));
    float back = 0;
    KS(s_scale_get(&back, NULL));
    EXPECT(back == 2.5f, "s_scale_get gave %g, wanted 2.5", back);
    enum { n = 1000 };
    float y[n], out[n];
    memset(out, 0xff, sizeof out);   /* poison: NaN */
    for (int i = 0; i < n; i++)
        y[i] = gpu_frand(&rng);
    CUdeviceptr dy;
    CU(cu.MemAlloc(&dy, sizeof y));
    CU(cu.MemcpyHtoD(dy, y, sizeof y));
    KS(scale_offset(ks_launch_1d((n + 255) / 256, 256), DEV(float, dy), n));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(out, dy, sizeof out));
    cu.MemFree(dy);
    double err = 0;
    for (int i = 0; i < n; i++)
        err = fmax(err, fabs((double)out[i] - (2.5 * y[i] + 7.0)));
    EXPECT(err < 1e-4, "scale_offset: max error %g", err);
    printf("  s_scale (static) = 2.5 and k_offset (const) = %d by their plain names, max error %.2g\n",
           off, err);
    return 0;
}

/* A graph: a memcpy node writes the table, then fir reads it; replayed with new taps. */
static int graph_memcpy_node(void)
{
    typedef CUresult (*alloc_host_fn)(void **p, size_t bytes);
    typedef CUresult (*free_host_fn)(void *p);
    alloc_host_fn alloc_host;
    free_host_fn free_host;
    void *f1 = NULL, *f2 = NULL;
    KS(ks_driver_proc("cuMemAllocHost", &f1));
    KS(ks_driver_proc("cuMemFreeHost", &f2));
    memcpy(&alloc_host, &f1, sizeof f1);
    memcpy(&free_host, &f2, sizeof f2);
    float *taps = NULL;
    CU(alloc_host((void **)&taps, 16 * sizeof *taps));   /* read when the graph runs */
    const int n = 4096;
    float *in = malloc((size_t)(n + 15) * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    for (int i = 0; i < n + 15; i++)
        in[i] = gpu_frand(&rng);
    for (int k = 0; k < 16; k++)
        taps[k] = 0.0f;
    Params p;
    memset(&p, 0, sizeof p);
    p.gain = 1.0f;
    p.taps = 16;
    p.bias = 0.0;
    KS(g_params_set(p, NULL));
    KS(c_taps_set(taps, NULL));                          /* zeros before the graph */
    CUdeviceptr din = gpu_dev_upload(in, (size_t)(n + 15) * sizeof *in);
    CUdeviceptr dout = gpu_dev_alloc((size_t)n * sizeof *out, 0xff);
    EXPECT(din && dout, "device memory");
    ks_graph g;
    ks_graph_exec e;
    ks_graph_node copy;
    fir_node_t k;
    KS(ks_graph_create(&g));
    KS(c_taps_node(g, NULL, 0, 0, taps, 16, &copy));
    KS(fir_node(g, &copy, 1, &k, ks_launch_1d((unsigned)(n + 255) / 256, 256), DEV(const float, din),
                DEV(float, dout), n));
    KS(ks_graph_instantiate(g, &e));
    for (int round = 0; round < 2; round++) {
        for (int kk = 0; kk < 16; kk++)
            taps[kk] = gpu_frand(&rng);
        KS(ks_graph_launch(e, NULL));
        CU(cu.StreamSynchronize(NULL));
        EXPECT(gpu_dev_download(out, dout, (size_t)n * sizeof *out), "download");
        double err = 0;
        for (int i = 0; i < n; i++)
            err = fmax(err, fabs((double)out[i] - fir_ref(taps, &p, in, i)));
        EXPECT(err <= 1e-4, "graph round %d: max error %g", round, err);
        printf("  graph round %d: c_taps_node then fir_node, max error %.2g\n", round, err);
    }
    KS(ks_graph_exec_destroy(e));
    KS(ks_graph_destroy(g));
    free_host(taps);
    free(in);
    free(out);
    gpu_release_case_memory();
    return 0;
}

/* ---- two contexts of the program's own (issue 45) ----------------------------------------- */

typedef struct ctx_run {
    CUcontext ctx;
    float taps[16];
    float *in;
    int n;
    int failed;
    double err;
} ctx_run;

/* In r->ctx: its own table written, fir run against it, the table read back; three rounds. */
static int context_work(ctx_run *r)
{
    CU(cu.CtxSetCurrent(r->ctx));
    Params p;
    memset(&p, 0, sizeof p);
    p.gain = 1.0f;
    p.taps = 16;
    p.bias = 0.5;
    for (int round = 0; round < 3; round++) {
        float back[16];
        KS(c_taps_set(r->taps, NULL));
        KS(g_params_set(p, NULL));
        if (run_fir(r->taps, &p, r->in, r->n, NULL, &r->err))
            return 1;
        EXPECT(r->err <= 1e-4, "round %d: max error %g (another context's table?)", round, r->err);
        KS(c_taps_get(back, NULL));
        EXPECT(memcmp(back, r->taps, sizeof back) == 0, "round %d: c_taps read back is another context's",
               round);
    }
    return 0;
}

static void *context_thread(void *arg)
{
    ctx_run *r = arg;
    r->failed = context_work(r);
    return NULL;
}

static int two_contexts_each_its_own_table(void)
{
    CUresult (*ctx_create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
    CUresult (*ctx_get_current)(CUcontext *);
    void *fn;
    KS(ks_driver_proc("cuCtxGetCurrent", &fn));
    memcpy(&ctx_get_current, &fn, sizeof fn);
    KS(ks_driver_proc("cuCtxCreate", &fn));
    memcpy(&ctx_create, &fn, sizeof fn);
    CUdevice dev;
    CUcontext primary;
    CU(cu.DeviceGet(&dev, 0));   /* gpu_start's device (not cuCtxGetDevice: CUDA 13's takes a context too) */
    CU(ctx_get_current(&primary));
    enum { NCTX = 2 };
    ctx_run runs[NCTX];
    const int n = 20000;
    for (int c = 0; c < NCTX; c++) {
        memset(&runs[c], 0, sizeof runs[c]);
        CU(ctx_create(&runs[c].ctx, NULL, 0, dev));
        runs[c].n = n;
        runs[c].in = malloc((size_t)(n + 15) * sizeof(float));
        EXPECT(runs[c].in != NULL, "out of memory");
        for (int k = 0; k < 16; k++)
            runs[c].taps[k] = (float)(c + 1) * gpu_frand(&rng);
        for (int i = 0; i < n + 15; i++)
            runs[c].in[i] = gpu_frand(&rng);
    }
    CU(cu.CtxSetCurrent(primary));
    /* A thread that could not start fails the case only after the started
     * ones are joined: they use runs[], which lives in this frame. */
    pthread_t t[NCTX];
    int started = 0;
    while (started < NCTX && pthread_create(&t[started], NULL, context_thread, &runs[started]) == 0)
        started++;
    for (int c = 0; c < started; c++)
        pthread_join(t[c], NULL);
    EXPECT(started == NCTX, "pthread_create failed for thread %d", started);
    int bad = 0;
    for (int c = 0; c < NCTX; c++) {
        printf("  context %d (%p): fir against its own c_taps: max error %.2g%s\n", c, (void *)runs[c].ctx,
               runs[c].err, runs[c].failed ? " (FAILED, above)" : "");
        bad |= runs[c].failed;
        free(runs[c].in);
    }
    /* The primary context still has its own, untouched by the others. */
    CU(cu.CtxSetCurrent(primary));
    float back[16], mine[16];
    for (int k = 0; k < 16; k++)
        mine[k] = -1.0f - (float)k;
    KS(c_taps_set(mine, NULL));
    KS(c_taps_get(back, NULL));
    EXPECT(memcmp(back, mine, sizeof back) == 0, "the primary context's c_taps");
    return bad;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUdevice dev;
    CUcontext ctx;
    int start = gpu_start("gpu-globals", &dev, &ctx, NULL, 0);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    const char *loader = getenv("KSTUB_LOADER");
#ifdef GLOBALS_NVRTC
    printf("gpu-globals: image compiled by NVRTC, %s loader\n", loader ? loader : "library");
#else
    printf("gpu-globals: embedded fatbin, %s loader\n", loader ? loader : "library");
#endif
    gpu_run_case("a __constant__ table and a __device__ struct read by a kernel", constant_table_and_struct);
    gpu_run_case("a __device__ counter after atomics, on a stream of our own", counter_after_atomics);
    gpu_run_case("parts of the table on the per-thread stream, an overrun refused", per_thread_stream_and_parts);
    gpu_run_case("a __managed__ total read from the host", managed_total);
    gpu_run_case("a graph memcpy node writing the table", graph_memcpy_node);
    gpu_run_case("a static and a const variable found by their plain names", static_and_const_by_name);
    gpu_run_case("two contexts of the program's own, each its own table, at once", two_contexts_each_its_own_table);
    return gpu_report("gpu-globals");
}
