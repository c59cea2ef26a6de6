// scan.cuh — template kernels explicitly instantiated in the header that
// defines them, at global scope, in a namespace, and in an anonymous
// namespace (internal linkage: a note).
#pragma once

template <typename T>
__global__ void inclusive_scan(const T *in, T *out, int n)
{
    T acc = T();
    for (int i = 0; i < n; i++)
        out[i] = acc += in[i];
}
template __global__ void inclusive_scan<int>(const int *, int *, int);
template __global__ void inclusive_scan<double>(const double *, double *, int);

namespace scan {
namespace detail {
template <int STRIDE>
__global__ void strided_copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i * STRIDE < n)
        out[i] = in[i * STRIDE];
}
template __global__ void strided_copy<2>(const float *, float *, int);
} // namespace detail

namespace {
template <typename T>
__global__ void local_fill(T *p, T v) { *p = v; }
template __global__ void local_fill<char>(char *, char);
} // namespace
} // namespace scan
