// CUB in a kernel body and Thrust in host code (issue 14): CUB's and
// libcu++'s headers use placement new, which clang's CUDA mode declares on
// the device side only in its own cuda_wrappers/<new>, found through the
// resource directory kstub passes (generator/session.c).
//
// The .entry lines of CUB's and Thrust's own kernels (instantiated by the
// host code from toolkit headers) are the toolkit's, not the project's:
// abi-toolkit: _ZN3cub
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <cstdio>

struct Stats {
    float sum;
    int count;
};

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) block_sum(const float *__restrict__ in, Stats *out, int n)
{
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage tmp;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float s = Reduce(tmp).Sum(v);
    if (threadIdx.x == 0) {
        atomicAdd(&out->sum, s);
        atomicAdd(&out->count, min(BLOCK, n - (int)(blockIdx.x * BLOCK)));
    }
}

template __global__ void block_sum<128>(const float *__restrict__, Stats *, int);

__global__ void scan_rows(const int *in, int *out, int cols)
{
    using Scan = cub::BlockScan<int, 256>;
    __shared__ typename Scan::TempStorage tmp;
    int v = threadIdx.x < cols ? in[blockIdx.x * cols + threadIdx.x] : 0;
    int r;
    Scan(tmp).InclusiveSum(v, r);
    if (threadIdx.x < cols)
        out[blockIdx.x * cols + threadIdx.x] = r;
}

int main()
{
    thrust::device_vector<float> x(1000, 1.0f);
    Stats *s;
    cudaMalloc(&s, sizeof *s);
    cudaMemset(s, 0, sizeof *s);
    block_sum<256><<<4, 256>>>(thrust::raw_pointer_cast(x.data()), s, 1000);
    float total = thrust::reduce(x.begin(), x.end());
    std::printf("%f\n", total);
    cudaFree(s);
    return 0;
}
