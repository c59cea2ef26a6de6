// Template kernels instantiated only by host code (issue 14): launched with
// <<<>>>, with deduced arguments, through a pointer, from a host function
// template, with bool and enum arguments. nvcc emits each instantiation;
// kstub gives each a stub named as an explicit instantiation would be.
#include <cuda_runtime.h>

namespace nn {
enum class Act { Relu = 1, Gelu = 2 };

template <typename T, int VEC>
__global__ void softmax(const T *in, T *out, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cols * VEC)
        out[i] = in[i];
}

template <Act A, bool Inplace>
__global__ void activate(float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = (A == Act::Relu ? (y[i] > 0 ? y[i] : 0) : y[i]) + (Inplace ? x[i] : 0);
}
} // namespace nn

template <typename T>
__global__ void fill(T *p, T v, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

template <typename T, unsigned long N>
__global__ void fixed(T *rows, int n)
{
    if ((int)threadIdx.x < n && N > 0)
        rows[threadIdx.x] = T();
}

// Host template: its instantiations launch fill<T>.
template <typename T>
void fill_async(T *p, T v, unsigned n, cudaStream_t s)
{
    fill<<<(n + 255) / 256, 256, 0, s>>>(p, v, n);
}

// Never instantiated anywhere: a note, no stub.
template <typename T>
__global__ void unused(T *p) { *p = T(); }

void forward(float *x, float *y, double *d, int n, cudaStream_t s)
{
    nn::softmax<float, 4><<<1, 128, 0, s>>>(x, y, n);
    nn::softmax<double, 1><<<1, 128>>>(d, d, n);
    nn::activate<nn::Act::Gelu, true><<<1, 128>>>(x, y, n);
    fill_async(x, 1.0f, (unsigned)n, s);
    fill_async(d, 2.0, (unsigned)n, s);
    void (*k)(int *, int, unsigned) = fill<int>;
    void *args[] = {&x, &n, &n};
    cudaLaunchKernel((const void *)k, dim3(1), dim3(32), args, 0, s);
    cudaLaunchKernel((const void *)fixed<short, 8ul>, dim3(1), dim3(32), args, 0, s);
}
