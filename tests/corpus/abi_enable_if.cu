// Kernels overloaded through an enable_if non-type template parameter
// (issue 18, item 1): nvcc mangles the template parameter object the old way
// (_Z12block_strideIfLi0EEvjjPT_); clang 22 by default writes "TnN...E",
// a symbol nvcc never emits. check-abi finds each kernel by nvcc's symbol.
#include <type_traits>

template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
__global__ void block_stride(unsigned n, unsigned stride, T *x)
{
    if (threadIdx.x < n)
        x[threadIdx.x * stride] = T(1.5);
}

template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
__global__ void block_stride(unsigned n, unsigned stride, T *x)
{
    if (threadIdx.x < n)
        x[threadIdx.x * stride] = T(2);
}

template <typename T, std::enable_if_t<(sizeof(T) > 4), bool> = true>
__global__ void wide_only(T *x, T v) { x[0] = v; }

template __global__ void block_stride<float>(unsigned, unsigned, float *);
template __global__ void block_stride<int>(unsigned, unsigned, int *);
template __global__ void wide_only<double>(double *, double);

// Instantiated by a host launch, as real code does it.
void fill(double *x, long long *y)
{
    block_stride<<<1, 32>>>(32u, 1u, x);
    block_stride<<<1, 32>>>(32u, 1u, y);
}
