// races_kernels.cu — kernels for the races check's GPU suite (tests/gpu/check_races_gpu.c).

// Sets y[0, n) to v.
extern "C" __global__ void fill(float *y, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = v;
}

// Spins for about `cycles` clock ticks, then sets y[0, n) to v: a kernel still
// running when the host queues the next one.
extern "C" __global__ void spin_fill(float *y, int n, float v, long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = v;
}

// out[0] = the sum of x[0, n) (one block).
extern "C" __global__ void sum(const float *x, int n, float *out)
{
    __shared__ float part[256];
    float s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0;
        for (int i = 0; i < (int)blockDim.x; i++)
            t += part[i];
        out[0] = t;
    }
}
