// Device variables on the GPU (issue 29, tests/gpu/globals_gpu.c): a
// __constant__ table and a __device__ struct that a kernel reads, a
// __device__ counter bumped with atomics, a __managed__ total, a namespaced
// 2-D table, a static and a const variable (their plain names in a
// whole-program image), each reached through its generated accessors.
struct Params {
    float gain;
    int taps;
    double bias;                                         // padding before it
};

__constant__ float c_taps[16];
__device__ Params g_params;
__device__ unsigned int g_hits;
__managed__ float m_total;
namespace lut { __device__ float grid[4][8]; }

// out[i] = gain * sum_k c_taps[k] * in[i + k] + bias (in has n + 15 elements)
__global__ void fir(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < g_params.taps; k++)
        acc += c_taps[k] * in[i + k];
    out[i] = g_params.gain * acc + (float)g_params.bias;
}

// Every thread whose value passes the threshold bumps g_hits once.
__global__ void count_above(const float *x, float threshold, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > threshold)
        atomicAdd(&g_hits, 1u);
}

// One thread sums the 2-D table into the managed total.
__global__ void sum_grid(void)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float s = 0.0f;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 8; c++)
                s += lut::grid[r][c];
        m_total = s;
    }
}

// A static and a const variable at global scope: internal linkage, but nvcc
// keeps their plain names in a whole-program image (and NVRTC's), where the
// driver finds them by name. y[i] = s_scale * y[i] + k_offset.
static __device__ float s_scale;
const __device__ int k_offset = 7;
__global__ void scale_offset(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = s_scale * y[i] + (float)k_offset;
}
