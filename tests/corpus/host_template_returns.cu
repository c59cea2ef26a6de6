// Host function templates that return a value, explicitly instantiated
// (issue 18, item 3): the kernel each launches gets its stub. kstub once
// refused the file with "address of overloaded function 'run_fill' cannot be
// static_cast to type 'void (*)(float *, float, int)'" at a line past its
// end, in text it had added itself.
#include <cuda_runtime.h>

template <typename T>
__global__ void fill_k(T *x, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

template <typename T>
__global__ void scale_k(T *x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

template <typename T>
__global__ void count_k(const T *x, int n, unsigned *hits)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] != T(0))
        atomicAdd(hits, 1u);
}

template <typename T>
int run_fill(T *x, T v, int n)
{
    fill_k<<<(n + 255) / 256, 256>>>(x, v, n);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

template <typename T>
static inline cudaError_t run_scale(T *x, T a, int n)
{
    scale_k<<<(n + 255) / 256, 256>>>(x, a, n);
    return cudaGetLastError();
}

template <typename T>
auto run_count(const T *x, int n, unsigned *hits) -> const T *
{
    count_k<<<(n + 255) / 256, 256>>>(x, n, hits);
    return x;
}

template int run_fill<float>(float *, float, int);
template int run_fill<double>(double *, double, int);
template cudaError_t run_scale<float>(float *, float, int);
template auto run_count<int>(const int *, int, unsigned *) -> const int *;
