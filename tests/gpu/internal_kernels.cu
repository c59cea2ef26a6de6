// Kernels with internal linkage in a whole-program image (issue 31 #1): a
// static kernel, a static kernel template instantiated by host code, and a
// kernel in an anonymous namespace, each launched through its stub by
// tests/gpu/internal_gpu.c.
static __global__ void fill_static(float *out, float value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value + (float)i;
}

template <typename T>
static __global__ void axpy_static(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

namespace {
__global__ void square_anon(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * in[i];
}
} // namespace

void launch_all(float *f, double *d, int n)
{
    fill_static<<<(n + 255) / 256, 256>>>(f, 1.0f, n);
    axpy_static<<<(n + 255) / 256, 256>>>(2.0f, (const float *)f, f, n);
    axpy_static<<<(n + 255) / 256, 256>>>(2.0, (const double *)d, d, n);
    square_anon<<<(n + 255) / 256, 256>>>(f, f, n);
}
