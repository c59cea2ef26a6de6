/*
 * graph.c — benchmark question 4: stub calls captured into a CUDA graph.
 *
 * kstub has no graph API of its own; stub launches on a stream under the
 * driver's stream capture become kernel nodes like any launch. This measures
 * a sequence of K launches of an empty kernel (bench_empty) three ways, the
 * variants interleaved round by round:
 *
 *   stub, one by one     K stub calls on a user stream, then synchronise
 *   raw, one by one      K cuLaunchKernel calls, then synchronise
 *   graph replay         one cuGraphLaunch of the K stub calls captured once
 *
 * per kernel: the CPU time of the launch calls alone, and the time until all
 * K completed (launch + synchronise). Capture and instantiation are timed
 * separately (median of a few repetitions).
 *
 *   graph_bench [-r ROUNDS] [-k KERNELS] [-o OUTDIR]   writes OUTDIR/graph_summary.csv
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_kernels.kstub.h"

static struct {
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    PFN_cuStreamBeginCapture_v10010 StreamBeginCapture;
    PFN_cuStreamEndCapture_v10000 StreamEndCapture;
    PFN_cuGraphInstantiateWithFlags_v11040 GraphInstantiate;
    PFN_cuGraphLaunch_v10000 GraphLaunch;
    PFN_cuGraphExecDestroy_v10000 GraphExecDestroy;
    PFN_cuGraphDestroy_v10000 GraphDestroy;
    PFN_cuModuleLoadData_v2000 ModuleLoadData;
    PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
    PFN_cuLaunchKernel_v4000 LaunchKernel;
} cu;

static CUstream stream;
static CUfunction raw_fn;

enum { V_STUB, V_RAW, V_GRAPH, NV };
static const char *const ids[NV] = {"stub_one_by_one", "raw_one_by_one", "graph_replay"};
static const char *const labels[NV] = {"kstub stub, one by one", "raw cuLaunchKernel, one by one",
                                       "graph of captured stub calls, replayed"};

static void stub_seq(unsigned k)
{
    ks_launch l = ks_launch_on(ks_launch_1d(1, 32), stream);
    for (unsigned i = 0; i < k; i++)
        KS_CHECK(bench_empty(l));
}

static void raw_seq(unsigned k)
{
    for (unsigned i = 0; i < k; i++)
        CU_CHECK(cu.LaunchKernel(raw_fn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
}

/* Capture k stub calls on the stream into a graph and instantiate it. */
static CUgraphExec capture(unsigned k, CUgraph *graph)
{
    CUgraphExec exec;
    CU_CHECK(cu.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    stub_seq(k);
    CU_CHECK(cu.StreamEndCapture(stream, graph));
    CU_CHECK(cu.GraphInstantiate(&exec, *graph, 0));
    return exec;
}

int main(int argc, char **argv)
{
    int rounds = 50;
    unsigned k = 100;
    const char *outdir = ".";
    int opt;
    while ((opt = getopt(argc, argv, "r:k:o:")) != -1) {
        switch (opt) {
        case 'r': rounds = atoi(optarg); break;
        case 'k': k = (unsigned)atoi(optarg); break;
        case 'o': outdir = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-r ROUNDS] [-k KERNELS] [-o OUTDIR]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || k < 1) {
        fprintf(stderr, "graph: ROUNDS and KERNELS must be >= 1\n");
        return 2;
    }
    bench_require_driver("graph");
    BENCH_PROC(cu.DeviceGet, "cuDeviceGet");
    BENCH_PROC(cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BENCH_PROC(cu.CtxSetCurrent, "cuCtxSetCurrent");
    BENCH_PROC(cu.StreamCreate, "cuStreamCreate");
    BENCH_PROC(cu.StreamSynchronize, "cuStreamSynchronize");
    BENCH_PROC(cu.StreamBeginCapture, "cuStreamBeginCapture");
    BENCH_PROC(cu.StreamEndCapture, "cuStreamEndCapture");
    BENCH_PROC(cu.GraphInstantiate, "cuGraphInstantiateWithFlags");
    BENCH_PROC(cu.GraphLaunch, "cuGraphLaunch");
    BENCH_PROC(cu.GraphExecDestroy, "cuGraphExecDestroy");
    BENCH_PROC(cu.GraphDestroy, "cuGraphDestroy");
    BENCH_PROC(cu.ModuleLoadData, "cuModuleLoadData");
    BENCH_PROC(cu.ModuleGetFunction, "cuModuleGetFunction");
    BENCH_PROC(cu.LaunchKernel, "cuLaunchKernel");

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CU_CHECK(cu.DeviceGet(&dev, 0));
    CU_CHECK(cu.DevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cu.CtxSetCurrent(ctx));
    CU_CHECK(cu.StreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cu.ModuleLoadData(&mod, bench_kernels_kstub_image.data));
    CU_CHECK(cu.ModuleGetFunction(&raw_fn, mod, "bench_empty"));
    KS_CHECK(ks_image_load(&bench_kernels_kstub_image));
    /* Resolve the stub's kernel outside the capture. */
    stub_seq(1);
    CU_CHECK(cu.StreamSynchronize(stream));

    /* Capture + instantiate, timed a few times; the last graph is replayed. */
    enum { NCAPTURE = 10 };
    double cap_ms[NCAPTURE];
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    for (int i = 0; i < NCAPTURE; i++) {
        if (exec) {
            CU_CHECK(cu.GraphExecDestroy(exec));
            CU_CHECK(cu.GraphDestroy(graph));
        }
        uint64_t t0 = bench_now_ns();
        exec = capture(k, &graph);
        cap_ms[i] = (double)(bench_now_ns() - t0) / 1e6;
    }

    double *cpu[NV], *e2e[NV];
    for (int v = 0; v < NV; v++) {
        cpu[v] = calloc((size_t)rounds, sizeof(double));
        e2e[v] = calloc((size_t)rounds, sizeof(double));
        if (!cpu[v] || !e2e[v])
            return 1;
    }
    for (int w = 0; w < 3; w++) {   /* warm-up */
        stub_seq(k);
        raw_seq(k);
        CU_CHECK(cu.GraphLaunch(exec, stream));
        CU_CHECK(cu.StreamSynchronize(stream));
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NV; i++) {
            int v = (i + r) % NV;
            CU_CHECK(cu.StreamSynchronize(stream));
            uint64_t t0 = bench_now_ns();
            if (v == V_STUB)
                stub_seq(k);
            else if (v == V_RAW)
                raw_seq(k);
            else
                CU_CHECK(cu.GraphLaunch(exec, stream));
            uint64_t t1 = bench_now_ns();
            CU_CHECK(cu.StreamSynchronize(stream));
            uint64_t t2 = bench_now_ns();
            cpu[v][r] = (double)(t1 - t0) / k;
            e2e[v][r] = (double)(t2 - t0) / k;
        }
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/graph_summary.csv", outdir);
    FILE *sum = fopen(path, "w");
    if (sum == NULL) {
        perror(path);
        return 1;
    }
    double cap = bench_median(cap_ms, NCAPTURE);
    printf("graph: %u kernels per sequence, %d rounds; capture + instantiate %.3f ms (median of %d)\n",
           k, rounds, cap, NCAPTURE);
    printf("  %-42s %16s %16s\n", "variant", "launch ns/kernel", "to done ns/kernel");
    fprintf(sum, "variant,label,kernels,rounds,cpu_ns_per_kernel,e2e_ns_per_kernel,capture_instantiate_ms\n");
    for (int v = 0; v < NV; v++) {
        double c = bench_median(cpu[v], (size_t)rounds), e = bench_median(e2e[v], (size_t)rounds);
        printf("  %-42s %16.1f %16.1f\n", labels[v], c, e);
        fprintf(sum, "%s,\"%s\",%u,%d,%.1f,%.1f,%.3f\n", ids[v], labels[v], k, rounds, c, e,
                v == V_GRAPH ? cap : 0.0);
        free(cpu[v]);
        free(e2e[v]);
    }
    fclose(sum);
    CU_CHECK(cu.GraphExecDestroy(exec));
    CU_CHECK(cu.GraphDestroy(graph));
    return 0;
}
