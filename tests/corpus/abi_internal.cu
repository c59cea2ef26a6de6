// Kernels with internal linkage (issue 31 #1): static kernels, a static
// kernel template launched by host code, kernels in anonymous namespaces
// (nvcc's names for these carry a part that differs per compilation),
// beside an ordinary kernel. Each gets a stub whose symbol pattern matches
// exactly one of nvcc's .entry lines (common/symbol.h).
struct Span {
    float *data;
    int n;
};

static __global__ void fill_static(float *out, float value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}

template <typename T>
static __global__ void scale_static(T *out, const T *in, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = factor * in[i];
}

namespace {
struct Local {
    double weight;
    char tag;
};

__global__ void fill_anon(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (float)i;
}

__global__ void weigh_anon(Local l, Span s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.n)
        s.data[i] *= (float)l.weight + l.tag;
}

template <int N>
__global__ void add_anon(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += N;
}
} // namespace

namespace ops {
static __global__ void negate_static(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = -out[i];
}
namespace {
__global__ void halve_anon(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] *= 0.5f;
}
} // namespace
} // namespace ops

__global__ void fill_public(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 1.0f;
}

void run(float *a, const float *b, double *d, int n)
{
    fill_static<<<1, 32>>>(a, 2.0f, n);
    scale_static<float><<<1, 32>>>(a, b, 3.0f, n);
    scale_static<<<1, 32>>>(d, (const double *)d, 0.5, n);
    fill_anon<<<1, 32>>>(a, n);
    weigh_anon<<<1, 32>>>(Local{2.0, 1}, Span{a, n});
    add_anon<3><<<1, 32>>>(a, n);
    ops::negate_static<<<1, 32>>>(a, n);
    ops::halve_anon<<<1, 32>>>(a, n);
    fill_public<<<1, 32>>>(a, n);
}
