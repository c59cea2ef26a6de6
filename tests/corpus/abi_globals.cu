// Device variables of every kind kstub gives accessors to (issue 29): check-abi
// compares each one's size and alignment with the .const/.global declaration
// in nvcc's PTX. One kernel reads them all, so none is folded away.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

struct Padded { char c; double d; short s; };          // padding inside and at the end
struct Pair { int a; float b; };
union Bits { float f; uint32_t u; unsigned char b[4]; };
enum Mode { MODE_A = 1, MODE_B = 7 };
enum class Wide : int64_t { Lo = -1, Hi = 1 };
struct alignas(32) Aligned { float v[3]; };            // over-aligned
struct Counter {                                        // a class with member functions
    int hits;
    __host__ __device__ int get() const { return hits; }
};

__constant__ float c_taps[16];                          // a table
__constant__ int c_scale;                               // a scalar
__constant__ Padded c_params;                           // a struct with padding
__device__ double g_sum;
__device__ unsigned long long g_count;
__device__ int8_t g_small[5];
__device__ float4 g_vec;                                // a vector
__device__ int2 g_vecs[3];
__device__ __half g_half;
__device__ __nv_bfloat16 g_bf16[4];
__device__ __half2 g_half2;
__device__ Pair g_pairs[8];                             // an array of structs
__device__ float g_grid[4][3];                          // a 2-D array
__device__ Mode g_mode;                                 // enums
__device__ Wide g_wide;
__device__ Bits g_bits;                                 // a union
__device__ Aligned g_aligned[2];
__device__ Counter g_counter;
__device__ float *g_ptr;                                // a pointer
__managed__ int m_flag;
namespace nn {
__constant__ float weights[2][8];                      // in a namespace
namespace inner { __device__ Pair pair; }
}

__global__ void touch_globals(float *out)
{
    out[0] = c_taps[1] + c_scale + (float)c_params.d + (float)g_sum + (float)g_count + g_small[2] +
             g_vec.x + g_vecs[1].y + __half2float(g_half) + __bfloat162float(g_bf16[1]) +
             __low2float(g_half2) + g_pairs[3].b + g_grid[2][1] + (int)g_mode + (float)(int64_t)g_wide +
             g_bits.f + g_aligned[1].v[2] + g_counter.get() + *g_ptr + m_flag + nn::weights[1][3] +
             nn::inner::pair.a;
}
