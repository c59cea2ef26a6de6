// kernels.cu — the Python target's test kernels (tests/python/): every
// parameter kind the target converts, a template with two instances and
// device variables. The CPU tests launch them through the fake driver; the
// GPU tests (tests/python/test_gpu.py) run them.
#include <cstdint>
#include <cuda_fp16.h>

struct Params {
    float scale;
    int32_t count;
    double bias;  // 8-aligned: padding before it
    char tag;     // and after it
};

enum class Mode : uint8_t { Fast = 1, Exact = 2, Careful = 200 };

struct Nested {
    Params p;
    float v[3];
    Mode mode;
    unsigned char *buf;
};

// y[i] = a * x[i] + y[i]
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// out[i] = p.scale * i + p.bias for i < p.count, by value.
extern "C" __global__ void scale_params(Params p, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.count)
        out[i] = p.scale * i + (float)p.bias + (p.tag == 'x' ? 1000.0f : 0.0f);
}

// Every integer width, a double, a bool and an enum: written to out as int64 / double.
extern "C" __global__ void widths(int8_t i8, uint8_t u8, int16_t i16, uint16_t u16, int32_t i32,
                                  uint32_t u32, int64_t i64, uint64_t u64, double d, bool b,
                                  Mode m, long long *out)
{
    out[0] = i8; out[1] = u8; out[2] = i16; out[3] = u16; out[4] = i32; out[5] = u32;
    out[6] = i64; out[7] = (long long)u64; out[8] = (long long)d; out[9] = b; out[10] = (int)m;
}

extern "C" __global__ void nested(Nested n, const double *in, double *out)
{
    out[0] = n.p.scale + n.v[2] + in[0] + (double)n.mode;
    if (n.buf)
        n.buf[0] = 1;
}

extern "C" __global__ void halves(__half h, float4 v, const __half *hp, float *out)
{
    out[0] = __half2float(h) + v.w + __half2float(hp[0]);
}

extern "C" __global__ void untyped(void *p, const void *q, unsigned long long n) {}

template <typename T> __global__ void fill(T *out, T value, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}

template __global__ void fill<float>(float *, float, uint32_t);
template __global__ void fill<int>(int *, int, uint32_t);

__device__ float g_scale;
__constant__ float c_table[8];
__device__ Params g_params;

extern "C" __global__ void use_globals(float *out)
{
    out[0] = g_scale * c_table[threadIdx.x % 8] + g_params.scale;
}
