// cold_nvcc.cu — cold start of the nvcc-built program: the same kernel,
// launched with <<<>>> on the CUDA runtime API (which creates the primary
// context and loads its fatbin itself), then cudaDeviceSynchronize.
//
// Prints "main=NS done=NS" (CLOCK_MONOTONIC), done after the first kernel
// completed; "skip=..." when there is no usable driver.
#include <cstdio>
#include <ctime>

#include <cuda_runtime.h>

#include "kernels/bench_kernels.cu"

static unsigned long long now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main()
{
    unsigned long long t_main = now_ns();
    // n = 0: the kernel touches no memory, so none is allocated.
    bench_args<<<1, 32>>>(0.0f, nullptr, nullptr, 0, 0);
    cudaError_t e = cudaDeviceSynchronize();
    unsigned long long t_done = now_ns();
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
        printf("skip=no usable CUDA driver (%s)\n", cudaGetErrorName(e));
        return 0;
    }
    if (e != cudaSuccess) {
        fprintf(stderr, "cold_nvcc: %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
        return 1;
    }
    printf("main=%llu done=%llu\n", t_main, t_done);
    return 0;
}
