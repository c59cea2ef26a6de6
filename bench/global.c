/*
 * global.c — benchmark of a device variable's accessor (issue 29): the
 * generated bench_table_set writing the 64-byte __constant__ table
 * bench_table, against the driver's own cuMemcpyHtoDAsync of the same 64
 * bytes to the same address (taken once with bench_table_address), on one
 * user stream. Each round times B calls of each (the variants interleaved,
 * their order alternating), then synchronises; CPU ns per call, median
 * over the rounds. Goal: accessor / raw <= 1.02 (a miss is reported).
 *
 *   global_bench [-r ROUNDS] [-b CALLS] [-o OUTDIR]   writes OUTDIR/global_summary.csv
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_kernels.kstub.h"

int main(int argc, char **argv)
{
    int rounds = 200, calls = 1000;
    const char *outdir = ".";
    for (int c; (c = getopt(argc, argv, "r:b:o:")) != -1;) {
        if (c == 'r')
            rounds = atoi(optarg);
        else if (c == 'b')
            calls = atoi(optarg);
        else if (c == 'o')
            outdir = optarg;
        else {
            fprintf(stderr, "usage: global_bench [-r ROUNDS] [-b CALLS] [-o OUTDIR]\n");
            return 2;
        }
    }
    void *fn;
    ks_status st = ks_driver_proc("cuInit", &fn);
    if (st != KS_OK) {
        printf("global_bench: no CUDA driver (%s); skipped\n", ks_last_error_message());
        return 0;
    }
    PFN_cuMemcpyHtoDAsync_v3020 MemcpyHtoDAsync;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    KS_CHECK(ks_driver_proc("cuMemcpyHtoDAsync", &fn));
    memcpy(&MemcpyHtoDAsync, &fn, sizeof fn);
    KS_CHECK(ks_driver_proc("cuStreamCreate", &fn));
    memcpy(&StreamCreate, &fn, sizeof fn);
    KS_CHECK(ks_driver_proc("cuStreamSynchronize", &fn));
    memcpy(&StreamSynchronize, &fn, sizeof fn);

    float table[16];
    for (int i = 0; i < 16; i++)
        table[i] = (float)i;
    KS_CHECK(bench_table_set(table, NULL));          /* loads the image, makes a context current */
    float *addr = NULL;
    KS_CHECK(bench_table_address(&addr));
    CUstream s;
    if (StreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        fprintf(stderr, "global_bench: cuStreamCreate failed\n");
        return 1;
    }
    double *acc = malloc((size_t)rounds * sizeof *acc), *raw = malloc((size_t)rounds * sizeof *raw);
    for (int r = 0; r < rounds; r++) {
        for (int v = 0; v < 2; v++) {
            int accessor = (v == 0) == (r % 2 == 0);
            uint64_t t0 = bench_now_ns();
            if (accessor) {
                for (int i = 0; i < calls; i++)
                    if (bench_table_set(table, (ks_stream)s) != KS_OK) {
                        fprintf(stderr, "bench_table_set: %s\n", ks_last_error_message());
                        return 1;
                    }
            } else {
                for (int i = 0; i < calls; i++)
                    if (MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)addr, table, sizeof table, s) != CUDA_SUCCESS) {
                        fprintf(stderr, "cuMemcpyHtoDAsync failed\n");
                        return 1;
                    }
            }
            uint64_t t1 = bench_now_ns();
            StreamSynchronize(s);
            (accessor ? acc : raw)[r] = (double)(t1 - t0) / calls;
        }
    }
    double ma = bench_median(acc, (size_t)rounds), mr = bench_median(raw, (size_t)rounds);
    double ratio = ma / mr;
    printf("global_bench: %d rounds x %d calls, 64-byte __constant__ write, CPU ns per call (median)\n",
           rounds, calls);
    printf("  bench_table_set            %8.1f ns\n", ma);
    printf("  raw cuMemcpyHtoDAsync      %8.1f ns\n", mr);
    printf("  accessor / raw             %8.3f  (goal <= 1.02: %s)\n", ratio, ratio <= 1.02 ? "met" : "MISSED");
    char path[4096];
    snprintf(path, sizeof path, "%s/global_summary.csv", outdir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "variant,ns_per_call_median,p10,p90\n");
        fprintf(f, "accessor_set,%.1f,%.1f,%.1f\n", ma, bench_quantile(acc, (size_t)rounds, 0.1),
                bench_quantile(acc, (size_t)rounds, 0.9));
        fprintf(f, "raw_memcpy,%.1f,%.1f,%.1f\n", mr, bench_quantile(raw, (size_t)rounds, 0.1),
                bench_quantile(raw, (size_t)rounds, 0.9));
        fprintf(f, "ratio,%.4f,,\n", ratio);
        fclose(f);
    }
    free(acc);
    free(raw);
    return 0;
}
