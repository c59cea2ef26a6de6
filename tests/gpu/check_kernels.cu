// check_kernels.cu — kernels for the run-time checks' GPU suite (tests/gpu/check_checks_gpu.c).

// Writes far past the end of y: an illegal address the sync check must pin on this kernel.
extern "C" __global__ void oob_write(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ((float *)((char *)y + (1ull << 44)))[i + n] = 1.0f;
}

// Doubles n floats.
extern "C" __global__ void scale(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] *= 2.0f;
}

// Sets n float4s.
extern "C" __global__ void fill4(float4 *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = make_float4(1, 2, 3, 4);
}
