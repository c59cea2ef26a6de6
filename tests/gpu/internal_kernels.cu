// Kernels with internal linkage in a whole-program image (issue 31 #1): a
// static kernel, a static kernel template instantiated by host code, and a
// kernel in an anonymous namespace; and a kernel template on a device
// function (#3). Each is launched through its stub by tests/gpu/internal_gpu.c.
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

// A kernel template on a device function (issue 31 #3), launched from a host
// function template instantiated with an ordinary and a static function.
__device__ float cube(float x) { return x * x * x; }
static __device__ float twice_plus_one(float x) { return 2.0f * x + 1.0f; }

template <float (*op)(float)>
__global__ void __launch_bounds__(256, 2) map_op(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = op(in[i]);
}

template <float (*op)(float)>
void map_cuda(const float *in, float *out, int n)
{
    map_op<op><<<(n + 255) / 256, 256>>>(in, out, n);
}

void launch_all(float *f, double *d, int n)
{
    map_cuda<cube>(f, f, n);
    map_cuda<twice_plus_one>(f, f, n);
    fill_static<<<(n + 255) / 256, 256>>>(f, 1.0f, n);
    axpy_static<<<(n + 255) / 256, 256>>>(2.0f, (const float *)f, f, n);
    axpy_static<<<(n + 255) / 256, 256>>>(2.0, (const double *)d, d, n);
    square_anon<<<(n + 255) / 256, 256>>>(f, f, n);
}
