// coop_reduce.cu — cooperative groups as projects use them (issue 14): a
// grid-wide reduction launched with cudaLaunchCooperativeKernel, warp tiles,
// and a kernel in an anonymous namespace (internal linkage: a note).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

struct ReduceArgs {
    const float *in;
    float *partial;
    float *out;
    unsigned n;
};

__global__ void grid_sum(ReduceArgs a)
{
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = 0.0f;
    for (unsigned i = grid.thread_rank(); i < a.n; i += grid.size())
        v += a.in[i];
    v = cg::reduce(warp, v, cg::plus<float>());
    if (warp.thread_rank() == 0)
        atomicAdd(&a.partial[blockIdx.x], v);
    grid.sync();
    if (grid.thread_rank() == 0) {
        float s = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++)
            s += a.partial[b];
        *a.out = s;
    }
}

namespace reduce {
__global__ void warp_max(const int *in, int *out, int n)
{
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : -2147483647 - 1;
    v = cg::reduce(warp, v, cg::greater<int>());
    if (warp.thread_rank() == 0)
        atomicMax(out, v);
}
} // namespace reduce

namespace {
__global__ void reset(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0.0f;
}
} // namespace

int main()
{
    ReduceArgs a = {nullptr, nullptr, nullptr, 1u << 20};
    cudaMalloc(&a.partial, 132 * sizeof(float));
    reset<<<1, 132>>>(a.partial, 132);
    void *params[] = {&a};
    cudaError_t e = cudaLaunchCooperativeKernel((const void *)grid_sum, dim3(132), dim3(256), params);
    printf("%s\n", cudaGetErrorString(e));
    return 0;
}
