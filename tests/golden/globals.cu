// Device variables and their accessors (issue 29): a table, a scalar, a
// struct, a 2-D array, a managed flag, one renamed and one skipped, and what
// gets no accessors (a note for each).
struct Params { float gain; int taps; double bias; };

__constant__ float c_w[16];
__constant__ Params c_params;
__device__ unsigned int g_count;
__device__ float g_grid[4][3];
__managed__ int m_ready;
// kstub:name g_long_internal_name = g_short
__device__ int g_long_internal_name;
// kstub:skip g_scratch
__device__ float g_scratch[64];
__shared__ float s_tile[32];
extern __device__ int g_elsewhere;
namespace { __device__ int g_hidden; }

__global__ void apply(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = c_w[i % 16] * c_params.gain + g_grid[i % 4][i % 3] + m_ready + g_long_internal_name +
                 g_scratch[i % 64] + g_hidden;
    atomicAdd(&g_count, 1u);
}
