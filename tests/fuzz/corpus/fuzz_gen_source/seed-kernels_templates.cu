// Template kernels: kstub generates one stub per explicit instantiation,
// named <template>_<arguments> unless a "kstub:name" comment names it.
#include <cstdint>

namespace tmpl {
// y[i] = a * x[i] + y[i], each thread handling UNROLL consecutive elements.
template <typename T, int UNROLL>
__global__ void axpy(T a, const T *__restrict__ x, T *__restrict__ y, int64_t n)
{
    int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
        if (base + u < n)
            y[base + u] = a * x[base + u] + y[base + u];
}

template __global__ void axpy<float, 4>(float, const float *, float *, int64_t);
template __global__ void axpy<double, 2>(double, const double *, double *, int64_t);
} // namespace tmpl

// Fills out[i] = value for i < n.
template <typename T> __global__ void fill(T *out, T value, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}

template __global__ void fill<int>(int *, int, uint32_t);
// kstub:name fill<unsigned short> = fill_u16
template __global__ void fill<unsigned short>(unsigned short *, unsigned short, uint32_t);
