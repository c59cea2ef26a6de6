/*
 * bench_util.h — what kstub's benchmark programs share: a monotonic clock,
 * order statistics, driver entry points through ks_driver_proc(), and the
 * fail-fast checks an application (not the library) may use.
 *
 * Header-only (static functions): each program is one C file plus this.
 */
#ifndef KSTUB_BENCH_UTIL_H
#define KSTUB_BENCH_UTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "kstub.h"

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n values, by linear interpolation; v is not changed. */
static inline double bench_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    double *s = malloc(n * sizeof *s);
    if (s == NULL)
        return 0.0;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, bench_cmp_double);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    double r = i + 1 < n ? s[i] + frac * (s[i + 1] - s[i]) : s[i];
    free(s);
    return r;
}

static inline double bench_median(const double *v, size_t n)
{
    return bench_quantile(v, n, 0.5);
}

/* KS_CHECK (fail fast: benchmarks are applications) comes from kstub.h. */

#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s failed: CUresult %d\n", __FILE__, __LINE__,      \
                    #call, (int)r_);                                                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* A driver entry point, as the version of cuda.h we compiled against names it
 * (ks_driver_proc goes through cuGetProcAddress). memcpy turns the void *
 * into a function pointer without a -Wpedantic complaint. */
/* The order of n interleaved variants in round r: a new permutation each
 * round (Fisher-Yates, seeded by r, so runs repeat). A rotation ran each
 * variant after the same one every round, and the driver's state that one
 * left (the graph it last launched or updated, a synchronising check) was
 * charged to it: on the H200 a rotation showed node_set of every node at
 * 1.7-3.3x the driver's floor where a shuffled order shows 1.03-1.09x. */
static inline void bench_order(int *order, int n, int r)
{
    unsigned seed = 2654435761u * (unsigned)(r + 1);
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        seed = seed * 1103515245u + 12345u;
        int j = (int)((seed >> 16) % (unsigned)(i + 1)), tmp = order[i];
        order[i] = order[j], order[j] = tmp;
    }
}

#define BENCH_PROC(var, name)                                                           \
    do {                                                                                \
        void *p_ = NULL;                                                                \
        KS_CHECK(ks_driver_proc(name, &p_));                                            \
        memcpy(&(var), &p_, sizeof p_);                                                 \
    } while (0)

/*
 * The first driver call tells whether there is a driver: without one, print
 * one line naming the program and exit 0 (nothing to measure is not a failure).
 */
static inline void bench_require_driver(const char *prog)
{
    void *probe = NULL;
    ks_status st = ks_driver_proc("cuInit", &probe);
    if (st == KS_ERR_NO_DRIVER || st == KS_ERR_DRIVER) {
        printf("%s: no CUDA driver (%s); skipped\n", prog, ks_last_error_message());
        exit(0);
    }
    KS_CHECK(st);
}

/*
 * For the programs that stand for hand-written code: the driver opened by
 * hand, without libkstub (dlopen, then cuGetProcAddress for the CUDA version
 * of our cuda.h, as a careful application does). NULL without a driver.
 */
typedef struct bench_raw_driver {
    void *lib;
    PFN_cuGetProcAddress_v12000 get_proc;
} bench_raw_driver;

static inline int bench_raw_driver_open(bench_raw_driver *d)
{
    d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (d->lib == NULL)
        return 0;
    void *p = dlsym(d->lib, "cuGetProcAddress_v2");
    memcpy(&d->get_proc, &p, sizeof p);
    return d->get_proc != NULL;
}

/* Resolve \p name into \p fn (a function pointer variable); exits on failure. */
#define BENCH_RAW_PROC(d, fn, name)                                                     \
    do {                                                                                \
        void *p_ = NULL;                                                                \
        CUdriverProcAddressQueryResult q_;                                              \
        if ((d)->get_proc(name, &p_, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q_) != \
                CUDA_SUCCESS || p_ == NULL) {                                           \
            fprintf(stderr, "cuGetProcAddress(%s) failed\n", name);                     \
            exit(1);                                                                    \
        }                                                                               \
        memcpy(&(fn), &p_, sizeof p_);                                                  \
    } while (0)

#endif /* KSTUB_BENCH_UTIL_H */
