// A .cu as projects have them (issue 14): kernels, host code that launches
// them with <<<>>>, cudart calls, main, cuda_fp16 and a host max(int, int)
// that clang's CUDA mode lacks (a warning: it is inside a body).
#include <cstdio>
#include <cuda_fp16.h>

struct Params {
    float scale;
    int n;
};

__global__ void scale(Params p, const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = p.scale * in[i];
}

__global__ void to_half(const float *in, __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __float2half(in[i]);
}

int main()
{
    float *in, *out;
    cudaMalloc(&in, 1024 * sizeof(float));
    cudaMalloc(&out, 1024 * sizeof(float));
    Params p = {2.0f, 1024};
    scale<<<(p.n + 255) / 256, 256>>>(p, in, out);
    cudaDeviceSynchronize();
    printf("%d\n", max(3, 4));
    cudaFree(in);
    cudaFree(out);
    return 0;
}
