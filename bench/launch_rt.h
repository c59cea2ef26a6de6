/*
 * launch_rt.h — the runtime-API (<<<>>>) side of the launch benchmark,
 * implemented in launch_rt.cu and called from C. Streams are passed as
 * void *: a cudaStream_t and a CUstream are the same pointer.
 */
#ifndef KSTUB_BENCH_LAUNCH_RT_H
#define KSTUB_BENCH_LAUNCH_RT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Initialise the runtime on device 0's primary context; 0 on success, else a
 * cudaError_t with \p message filled in. On success \p message names the
 * runtime version. */
int rt_init(char *message, size_t size);

/* \p count launches of bench_args / bench_struct with <<<grid, block, 0, stream>>>;
 * returns cudaGetLastError() after the loop. \p params points at a BenchParams. */
int rt_args_batch(unsigned count, void *stream, unsigned grid, unsigned block, float a,
                  const float *x, float *y, int n, long long m);
int rt_struct_batch(unsigned count, void *stream, unsigned grid, unsigned block,
                    const void *params, float *y);

/* sizeof(BenchParams) as nvcc's host compiler sees it: checked against the C mirror. */
size_t rt_params_size(void);

#ifdef __cplusplus
}
#endif

#endif /* KSTUB_BENCH_LAUNCH_RT_H */
