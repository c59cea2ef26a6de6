// Reductions: a block-level sum with cooperative groups, and a histogram.
#include <cooperative_groups.h>
#include <cstdint>

namespace cg = cooperative_groups;

// Sums x[0..n) into *out (one atomicAdd per block). Needs blockDim.x * 4
// bytes of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(512, 2)
block_sum(const float *x, unsigned long long n, float *out)
{
    extern __shared__ float partial[];
    cg::thread_block block = cg::this_thread_block();
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    partial[threadIdx.x] = i < n ? x[i] : 0.0f;
    block.sync();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        block.sync();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, partial[0]);
}

// Counts values into nbins bins of width `width` starting at `lo`.
extern "C" __global__ void histogram(const int32_t *values, int64_t n, int32_t lo, uint32_t width,
                                     unsigned int *bins, uint16_t nbins)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int64_t b = ((int64_t)values[i] - lo) / (int64_t)width;
    if (b >= 0 && b < nbins)
        atomicAdd(&bins[b], 1u);
}
