// Device functions and variables as template arguments (issue 31 #2, #3).
// A GPT-2 trainer's shape: a kernel template on a function pointer, launched
// from a host function template instantiated with several functions, one of
// them static (nvcc writes its name inside a per-compilation namespace). An
// ML library's shape: a static kernel template whose first argument is a
// static device function, launched from a host functor template per
// operation, beside an ordinary kernel. And the address of a variable.
#include <cuda_runtime.h>

using matmul_fn_ptr = void (*)(float *, int, const float *, int, const float *, int, int, int, float);

__device__ void matmul_tri_naive(float *p, int ps, const float *k, int ks, const float *q, int qs, int T,
                                 int hs, float alpha)
{
    p[0] = alpha * k[0] * q[0] + (float)(ps + ks + qs + T + hs);
}

__device__ void matmul_tri_registers(float *p, int ps, const float *k, int ks, const float *q, int qs, int T,
                                     int hs, float alpha)
{
    p[0] = alpha * k[0] + q[0] + (float)(ps + ks + qs + T + hs);
}

static __device__ void matmul_tri_static(float *p, int ps, const float *k, int ks, const float *q, int qs,
                                         int T, int hs, float alpha)
{
    p[0] = alpha - k[0] * q[0] + (float)(ps + ks + qs + T + hs);
}

template <matmul_fn_ptr matmul_tri>
__global__ void __launch_bounds__(256, 2) trimul_global(float *out, const float *inp, int T, int C, int NH)
{
    matmul_tri(out, T, inp, C, inp + C, C, T, C / NH, 0.5f);
}

template <matmul_fn_ptr matmul_tri>
void trimul_cuda(float *out, const float *inp, int T, int C, int NH)
{
    trimul_global<matmul_tri><<<T, 256>>>(out, inp, T, C, NH);
}

void run_trimul(float *out, const float *inp, int T, int C, int NH)
{
    trimul_cuda<matmul_tri_naive>(out, inp, T, C, NH);
    trimul_cuda<matmul_tri_registers>(out, inp, T, C, NH);
    trimul_cuda<matmul_tri_static>(out, inp, T, C, NH);
}

// ---- a static kernel template on a static device function, from a host functor

static __device__ __forceinline__ float op_add(const float a, const float b) { return a + b; }
static __device__ __forceinline__ float op_mul(const float a, const float b) { return a * b; }

template <float (*bin_op)(const float, const float), typename src0_t, typename src1_t, typename dst_t>
static __global__ void k_bin_bcast(const src0_t *src0, const src1_t *src1, dst_t *dst, int ne0, int ne1)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ne0)
        dst[i] = (dst_t)bin_op((float)src0[i], (float)src1[i % ne1]);
}

template <float (*bin_op)(const float, const float)>
struct bin_bcast_cuda {
    template <typename src0_t, typename src1_t, typename dst_t>
    void operator()(const src0_t *src0, const src1_t *src1, dst_t *dst, int ne0, int ne1, cudaStream_t stream)
    {
        k_bin_bcast<bin_op><<<(ne0 + 255) / 256, 256, 0, stream>>>(src0, src1, dst, ne0, ne1);
    }
};

__global__ void k_plain(float *dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = 0.0f;
}

void run_bin(const float *a, const float *b, float *c, double *d, int n, cudaStream_t s)
{
    bin_bcast_cuda<op_add>()(a, b, c, n, 4, s);
    bin_bcast_cuda<op_mul>()(a, b, c, n, 4, s);
    bin_bcast_cuda<op_add>()(a, b, d, n, 4, s);
    k_plain<<<1, 32, 0, s>>>(c, n);
}

// ---- the address of a variable

__device__ int table_a[4];
__device__ int table_b[4];

template <int *table>
__global__ void lookup(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (float)table[i % 4];
}

void run_lookup(float *out, int n)
{
    lookup<table_a><<<1, 32>>>(out, n);
    lookup<table_b><<<1, 32>>>(out, n);
}
