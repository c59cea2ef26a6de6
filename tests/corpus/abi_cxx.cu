// ABI oracle corpus: C++ kernels. Namespaced and nested-namespace kernels
// (mangled symbols), overloads that differ in parameter types and counts,
// extern "C" inside a namespace, and a C++ kernel without parameters. Checked
// against nvcc's PTX by tests/generator/check_abi.c, matched by device symbol.
#include <cstddef>
#include <cstdint>

__global__ void top_level(int n, double *x)
{
    x[0] = n;
}

namespace blas {

__global__ void axpy(float a, const float *x, float *y, int n)
{
    if (n > 0) y[0] += a * x[0];
}

__global__ void axpy(double a, const double *x, double *y, int n)
{
    if (n > 0) y[0] += a * x[0];
}

__global__ void axpy(short a, const short *x, short *y, size_t n)
{
    if (n > 0) y[0] += a * x[0];
}

__global__ void fill(char v, char *x)
{
    x[0] = v;
}

__global__ void fill(char v, char *x, size_t n, bool wide)
{
    if (n > 0 && wide) x[0] = v;
}

namespace detail {

__global__ void nested(uint8_t a, uint64_t b, int16_t c, int32_t *out)
{
    out[0] = a + (int32_t)b + c;
}

__global__ void nothing()
{
}

} // namespace detail

extern "C" __global__ void c_linkage_in_namespace(unsigned short a, long long b)
{
    if (a == b) __trap();
}

} // namespace blas

namespace a { namespace b { namespace c {
__global__ void deep(bool f, double d, float *out)
{
    out[0] = f + d;
}
}}}

namespace a::b {
__global__ void deep(int i, float *out)   // same name, different namespace depth
{
    out[0] = i;
}
}
