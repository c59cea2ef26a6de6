/*
 * graph.c — benchmark question 4: stub calls captured into a CUDA graph.
 *
 * Stub launches on a stream under the driver's stream capture become kernel
 * nodes like any launch (kstub's typed nodes follow, below). This measures
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
 * Then kstub's typed graph nodes (issue 12), for graphs of 10, 100 and 1000
 * kernels of bench_args (five typed arguments, a chain), the variants again
 * interleaved round by round, CPU ns per kernel of:
 *
 *   stub             K bench_args stub calls
 *   captured         one ks_graph_launch of the K stub calls, stream-captured
 *   nodes            one ks_graph_launch of K bench_args_node nodes
 *   raw replay       one cuGraphLaunch of the same instance (the floor for nodes)
 *   set all+replay   K bench_args_node_set (new a, m) and the launch
 *   nodes_set        the K nodes' bench_args_args written, one
 *                    bench_args_nodes_set (issue 23's bulk update), the launch
 *   set one+replay   one bench_args_node_set and the launch
 *   raw set all      the driver's floor for the same update: K
 *                    cuGraphExecKernelNodeSetParams with parameters prepared
 *                    beforehand (no packing, no checks), and the launch
 *
 * and, once per size, build (create + K nodes) + instantiate, and capture +
 * instantiate, in ms (medians). The goal check (replay <= 0.02x a stub
 * launch per kernel, update + replay <= 0.1x) is printed with the table.
 *
 *   graph_bench [-r ROUNDS] [-k KERNELS] [-o OUTDIR]   writes OUTDIR/graph_summary.csv
 *                                                      and OUTDIR/graph_nodes.csv
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
    PFN_cuGraphKernelNodeGetParams_v12000 KernelNodeGetParams;
    PFN_cuGraphExecKernelNodeSetParams_v12000 ExecKernelNodeSetParams;
} cu;

static CUstream stream;
static CUfunction raw_fn;
static PFN_cuMemAlloc_v3020 MemAlloc;
static PFN_cuMemsetD8_v3020 MemsetD8;

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

/* ---- typed nodes ------------------------------------------------------------------ */

enum { T_STUB, T_CAPTURED, T_NODES, T_RAW_REPLAY, T_SET_ALL, T_BULK, T_SET_ONE, T_RAW_SET, T_BULK1_CFG,
       T_BULK1_OWN, NT };
static const char *const t_ids[NT] = {"stub", "captured_replay", "nodes_replay", "raw_replay", "set_all_replay",
                                      "nodes_set_replay", "set_one_replay", "raw_set_all_replay",
                                      "nodes_set1_cfg_replay", "nodes_set1_own_replay"};
static const char *const t_labels[NT] = {"stub calls, one by one", "stream-captured stubs, replayed",
                                         "typed nodes, replayed", "raw cuGraphLaunch of the same instance",
                                         "node_set of every node + replay",
                                         "nodes_set of every node (args array filled) + replay",
                                         "node_set of one node + replay",
                                         "raw cuGraphExecKernelNodeSetParams of every node + replay",
                                         "nodes_set of one node at a time, a configuration given + replay",
                                         "nodes_set of one node at a time, its own configuration + replay"};

enum { ARGS_N = 256 };
static const float *args_x;
static float *args_y;

static void args_stubs(unsigned k, float a)
{
    ks_launch l = ks_launch_on(ks_launch_1d(1, ARGS_N), stream);
    for (unsigned i = 0; i < k; i++)
        KS_CHECK(bench_args(l, a, args_x, args_y, ARGS_N, (long long)i));
}

/* A chain of k bench_args nodes in a new graph, instantiated. */
static void args_nodes(unsigned k, ks_graph *g, bench_args_node_t *nodes, ks_graph_exec *e)
{
    KS_CHECK(ks_graph_create(g));
    for (unsigned i = 0; i < k; i++)
        KS_CHECK(bench_args_node(*g, i ? &nodes[i - 1].node : NULL, i ? 1 : 0, &nodes[i], ks_launch_1d(1, ARGS_N), 1.0f,
                                 args_x, args_y, ARGS_N, (long long)i));
    KS_CHECK(ks_graph_instantiate(*g, e));
}

static void typed_nodes(int rounds, FILE *csv)
{
    static const unsigned sizes[] = {10, 100, 1000};
    CUdeviceptr d;
    CU_CHECK(MemAlloc(&d, 2 * ARGS_N * sizeof(float)));
    CU_CHECK(MemsetD8(d, 0, 2 * ARGS_N * sizeof(float)));
    args_x = (const float *)(uintptr_t)d;
    args_y = (float *)(uintptr_t)d + ARGS_N;
    double *t[NT];
    for (int v = 0; v < NT; v++)
        if ((t[v] = calloc((size_t)rounds, sizeof(double))) == NULL)
            exit(1);
    printf("\n## Typed graph nodes: CPU ns per kernel (bench_args, median of %d rounds)\n\n", rounds);
    printf("| kernels | stub | captured, replayed | nodes, replayed | raw cuGraphLaunch | set all + replay |"
           " nodes_set + replay | set one + replay | raw driver set all + replay | build + instantiate ms |"
           " capture + instantiate ms | replay / stub | set all + replay / stub | raw driver set all / stub |"
           " set all / raw set all | nodes_set / raw set all | replay / raw replay |"
           " goals (<= 0.02x, <= 0.1x; <= 1.1x the driver's floor) |\n");
    printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
           " ---: | ---: | --- |\n");
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        unsigned k = sizes[si];
        bench_args_node_t *nodes = calloc(k, sizeof *nodes);
        bench_args_args *values = calloc(k, sizeof *values);
        if (nodes == NULL || values == NULL)
            exit(1);
        /* One-time costs, a few times each; the last graphs are the ones replayed. */
        enum { NBUILD = 7 };
        double build_ms[NBUILD], cap_ms[NBUILD];
        ks_graph g = NULL, cg = NULL;
        ks_graph_exec e = NULL, ce = NULL;
        for (int i = 0; i < NBUILD; i++) {
            if (e) {
                KS_CHECK(ks_graph_exec_destroy(e));
                KS_CHECK(ks_graph_destroy(g));
                KS_CHECK(ks_graph_exec_destroy(ce));
                KS_CHECK(ks_graph_destroy(cg));
            }
            uint64_t t0 = bench_now_ns();
            args_nodes(k, &g, nodes, &e);
            uint64_t t1 = bench_now_ns();
            CU_CHECK(cu.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
            args_stubs(k, 1.0f);
            CU_CHECK(cu.StreamEndCapture(stream, &cg));
            CU_CHECK(cu.GraphInstantiate(&ce, cg, 0));
            uint64_t t2 = bench_now_ns();
            build_ms[i] = (double)(t1 - t0) / 1e6;
            cap_ms[i] = (double)(t2 - t1) / 1e6;
        }
        /* The raw update's parameters, prepared once: the node's own, the
         * arguments of round 0 (the driver copies them at each call). */
        CUDA_KERNEL_NODE_PARAMS *raw = calloc(k, sizeof *raw);
        float raw_a = 1.0f;
        int raw_n = ARGS_N;
        long long raw_m = 0;
        void *raw_args[] = {&raw_a, &args_x, &args_y, &raw_n, &raw_m};
        if (raw == NULL)
            exit(1);
        for (unsigned n = 0; n < k; n++) {
            CU_CHECK(cu.KernelNodeGetParams((CUgraphNode)nodes[n].node, &raw[n]));
            raw[n].kernelParams = raw_args;
            raw[n].extra = NULL;
        }
        for (int w = 0; w < 3; w++) {   /* warm-up */
            args_stubs(k, 1.0f);
            KS_CHECK(ks_graph_launch(ce, stream));
            KS_CHECK(ks_graph_launch(e, stream));
            CU_CHECK(cu.StreamSynchronize(stream));
        }
        for (int r = 0; r < rounds; r++) {
            int order[NT];
            bench_order(order, NT, r);
            for (int i = 0; i < NT; i++) {
                int v = order[i];
                float a = (float)(r % 7) + 0.5f;
                CU_CHECK(cu.StreamSynchronize(stream));
                uint64_t t0 = bench_now_ns();
                switch (v) {
                case T_STUB: args_stubs(k, a); break;
                case T_CAPTURED: KS_CHECK(ks_graph_launch(ce, stream)); break;
                case T_NODES: KS_CHECK(ks_graph_launch(e, stream)); break;
                case T_RAW_REPLAY: CU_CHECK(cu.GraphLaunch((CUgraphExec)e, stream)); break;
                case T_BULK:
                    /* What a training step writes: every node's arguments, then one call. */
                    for (unsigned n = 0; n < k; n++)
                        values[n] = (bench_args_args){a, args_x, args_y, ARGS_N, (long long)(n + (unsigned)r)};
                    KS_CHECK(bench_args_nodes_set(e, k, nodes, NULL, values));
                    KS_CHECK(ks_graph_launch(e, stream));
                    break;
                case T_BULK1_CFG:
                case T_BULK1_OWN: {
                    /* Which part of node_set costs what: the bulk entry one node
                     * at a time, with a configuration given or the node's own. */
                    ks_launch cfg = ks_launch_1d(1, ARGS_N);
                    for (unsigned n = 0; n < k; n++) {
                        values[n] = (bench_args_args){a, args_x, args_y, ARGS_N, (long long)(n + (unsigned)r)};
                        KS_CHECK(bench_args_nodes_set(e, 1, &nodes[n], v == T_BULK1_CFG ? &cfg : NULL, &values[n]));
                    }
                    KS_CHECK(ks_graph_launch(e, stream));
                    break;
                }
                case T_SET_ALL:
                    for (unsigned n = 0; n < k; n++)
                        KS_CHECK(bench_args_node_set(e, nodes[n], ks_launch_1d(1, ARGS_N), a, args_x, args_y, ARGS_N,
                                                     (long long)(n + (unsigned)r)));
                    KS_CHECK(ks_graph_launch(e, stream));
                    break;
                case T_RAW_SET:
                    raw_a = a;
                    for (unsigned n = 0; n < k; n++) {
                        raw_m = (long long)(n + (unsigned)r);
                        CU_CHECK(cu.ExecKernelNodeSetParams((CUgraphExec)e, (CUgraphNode)nodes[n].node, &raw[n]));
                    }
                    KS_CHECK(ks_graph_launch(e, stream));
                    break;
                default:
                    KS_CHECK(bench_args_node_set(e, nodes[(unsigned)r % k], ks_launch_1d(1, ARGS_N), a, args_x, args_y,
                                                 ARGS_N, (long long)r));
                    KS_CHECK(ks_graph_launch(e, stream));
                    break;
                }
                t[v][r] = (double)(bench_now_ns() - t0) / k;
            }
        }
        CU_CHECK(cu.StreamSynchronize(stream));
        double m[NT];
        for (int v = 0; v < NT; v++)
            m[v] = bench_median(t[v], (size_t)rounds);
        double b = bench_median(build_ms, NBUILD), c = bench_median(cap_ms, NBUILD);
        double rr = m[T_NODES] / m[T_STUB], ur = m[T_SET_ALL] / m[T_STUB], raw_r = m[T_RAW_SET] / m[T_STUB];
        double floor_set = m[T_SET_ALL] / m[T_RAW_SET], floor_bulk = m[T_BULK] / m[T_RAW_SET];
        double replay_raw = m[T_NODES] / m[T_RAW_REPLAY];
        printf("| %u | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f | %.3f | %.4fx | %.3fx | %.3fx |"
               " %.3fx | %.3fx | %.3fx | replay %s, update %s; floor: set %s, nodes_set %s |\n",
               k, m[T_STUB], m[T_CAPTURED], m[T_NODES], m[T_RAW_REPLAY], m[T_SET_ALL], m[T_BULK], m[T_SET_ONE],
               m[T_RAW_SET], b, c, rr, ur, raw_r, floor_set, floor_bulk, replay_raw,
               rr <= 0.02 ? "met" : "MISSED", ur <= 0.1 ? "met" : "MISSED", floor_set <= 1.1 ? "met" : "MISSED",
               floor_bulk <= 1.1 ? "met" : "MISSED");
        free(raw);
        free(values);
        for (int v = 0; v < NT; v++)
            fprintf(csv, "%u,%s,\"%s\",%d,%.1f,%.3f,%.3f\n", k, t_ids[v], t_labels[v], rounds, m[v], b, c);
        KS_CHECK(ks_graph_exec_destroy(e));
        KS_CHECK(ks_graph_destroy(g));
        KS_CHECK(ks_graph_exec_destroy(ce));
        KS_CHECK(ks_graph_destroy(cg));
        free(nodes);
    }
    printf("\nGoal: typed nodes replayed <= 0.02x a stub launch per kernel; node_set of every node + replay"
           " <= 0.1x (issue 12); set all + replay and nodes_set + replay <= 1.1x the raw driver's set all +"
           " replay, replay equal to a raw cuGraphLaunch (issue 23). \"set one + replay\" is per kernel of the"
           " graph, as the others.\n");
    for (int v = 0; v < NT; v++)
        free(t[v]);
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
    BENCH_PROC(cu.KernelNodeGetParams, "cuGraphKernelNodeGetParams");
    BENCH_PROC(cu.ExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams");
    BENCH_PROC(MemAlloc, "cuMemAlloc");
    BENCH_PROC(MemsetD8, "cuMemsetD8");

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

    snprintf(path, sizeof path, "%s/graph_nodes.csv", outdir);
    FILE *csv = fopen(path, "w");
    if (csv == NULL) {
        perror(path);
        return 1;
    }
    fprintf(csv, "kernels,variant,label,rounds,cpu_ns_per_kernel,build_instantiate_ms,capture_instantiate_ms\n");
    typed_nodes(rounds, csv);
    fclose(csv);
    return 0;
}
