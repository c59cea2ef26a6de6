// launch_rt.cu — the benchmark kernels launched with nvcc's <<<>>> on the
// CUDA runtime API, for bench/launch.c (the "nvcc <<<>>>" variant) and
// bench/cold_nvcc.cu. Built with nvcc; C callers see plain extern "C"
// functions.
//
// The kernels are compiled here a second time, under other names: nvcc gives
// each extern "C" kernel a host function of the kernel's own name, which
// would collide with the kstub stub of the same name in the same program.
#define bench_args rt_bench_args
#define bench_struct rt_bench_struct
#define bench_empty rt_bench_empty
#define bench_read_table rt_bench_read_table
#define bench_table rt_bench_table
#include "kernels/bench_kernels.cu"
#undef bench_args
#undef bench_struct
#undef bench_empty
#undef bench_read_table
#undef bench_table

#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "launch_rt.h"

extern "C" int rt_init(char *message, size_t size)
{
    // cudaFree(0) makes the runtime create (or adopt) device 0's primary context.
    cudaError_t e = cudaFree(0);
    if (e != cudaSuccess) {
        snprintf(message, size, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
        return (int)e;
    }
    int version = 0;
    cudaRuntimeGetVersion(&version);
    snprintf(message, size, "CUDA runtime %d.%d", version / 1000, version % 1000 / 10);
    return 0;
}

// The loops live here so that the launches are ordinary <<<>>> statements.
// Errors are read once per batch (cudaGetLastError), as idiomatic code does.
extern "C" int rt_args_batch(unsigned count, void *stream, unsigned grid, unsigned block, float a,
                             const float *x, float *y, int n, long long m)
{
    cudaStream_t s = (cudaStream_t)stream;
    for (unsigned i = 0; i < count; i++)
        rt_bench_args<<<grid, block, 0, s>>>(a, x, y, n, m);
    return (int)cudaGetLastError();
}

extern "C" int rt_struct_batch(unsigned count, void *stream, unsigned grid, unsigned block,
                               const void *params, float *y)
{
    BenchParams p;
    memcpy(&p, params, sizeof p);
    cudaStream_t s = (cudaStream_t)stream;
    for (unsigned i = 0; i < count; i++)
        rt_bench_struct<<<grid, block, 0, s>>>(p, y);
    return (int)cudaGetLastError();
}

extern "C" size_t rt_params_size(void)
{
    return sizeof(BenchParams);
}
