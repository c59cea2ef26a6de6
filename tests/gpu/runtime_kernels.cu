// runtime_kernels.cu — kernels for tests/gpu/check_runtime_gpu.c, the runtime's
// GPU suite. Built by nvcc into a fatbin, a cubin and PTX (tests/gpu/runtime.mk),
// and compiled at run time by NVRTC from this same text: so no #include.

// y = a * x + y (a C name).
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// A C++ kernel: its symbol is mangled (_ZN2rt5scaleEPfdi).
namespace rt {
__global__ void scale(float *x, double a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = (float)(x[i] * a);
}
}

// __launch_bounds__(128): the occupancy helper must not pick more.
extern "C" __global__ void __launch_bounds__(128) iota_bounded(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i;
}

// Each block sums i over n ints of dynamic shared memory: needs the opt-in above 48 KiB.
extern "C" __global__ void smem_sum(long long *out, int n)
{
    extern __shared__ int s[];
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s[i] = i;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long t = 0;
        for (int i = 0; i < n; i++)
            t += s[i];
        out[blockIdx.x] = t;
    }
}

// Writes each block's rank in its cluster and the cluster size (sm_90).
extern "C" __global__ void cluster_rank(unsigned *rank, unsigned *size)
{
#if __CUDA_ARCH__ >= 900
    unsigned r, s;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(s));
    if (threadIdx.x == 0) {
        rank[blockIdx.x] = r;
        size[blockIdx.x] = s;
    }
#endif
}

// A hand-made grid barrier: only correct when every block is resident at
// once, which a cooperative launch guarantees (or refuses).
extern "C" __global__ void grid_barrier(unsigned *arrived, unsigned *seen, long long timeout)
{
    if (threadIdx.x == 0) {
        atomicAdd(arrived, 1u);
        long long start = clock64();
        while (atomicAdd(arrived, 0u) < gridDim.x && clock64() - start < timeout)
            ;
        seen[blockIdx.x] = atomicAdd(arrived, 0u);
    }
}

// Two kernels that meet only if they run at the same time: wait_flag spins
// (with a timeout) until set_flag, launched after it on another stream, runs.
extern "C" __global__ void wait_flag(volatile int *flag, int *met, long long timeout)
{
    long long start = clock64();
    while (*flag == 0 && clock64() - start < timeout)
        ;
    *met = *flag;
}

extern "C" __global__ void set_flag(volatile int *flag)
{
    __threadfence_system();
    *flag = 1;
}
