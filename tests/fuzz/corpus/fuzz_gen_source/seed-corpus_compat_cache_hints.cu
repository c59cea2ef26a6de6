// Cache-hint loads and stores as nvcc has them (sm_32_intrinsics.h; issue
// 14): __ldcg, __ldca, __ldcs, __ldlu, __ldcv, __stwb, __stcg, __stcs,
// __stwt on scalar and vector types, also the overloads clang's own
// intrinsics header lacks (unsigned long loads, long stores), and the
// __half/__nv_bfloat16 ones of cuda_fp16.h/cuda_bf16.h. kstub's
// compatibility header (generator/compat.c) declares what clang lacks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct Streams {
    const float4 *in;
    float4 *out;
    unsigned long count;
};

__global__ void stream_copy(Streams s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = __ldcs(&s.in[i]);
        __stcs(&s.out[i], v);
    }
}

__global__ void every_hint(const int *a, int *b, const unsigned long *c, unsigned long *d,
                           const double2 *e, double2 *f, long *g, const uchar4 *h, uchar4 *o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = __ldcg(&a[i]) + __ldca(&a[i]) + __ldcs(&a[i]) + __ldlu(&a[i]) + __ldcv(&a[i]);
    __stwb(&b[i], x);
    __stcg(&b[i], x);
    __stwt(&b[i], x);
    unsigned long y = __ldcg(&c[i]) + __ldcs(&c[i]) + __ldcv(&c[i]) + __ldca(&c[i]) + __ldlu(&c[i]);
    __stcs(&d[i], y);
    __stwt(&d[i], y);
    __stwt(&g[i], (long)y);
    __stcg(&f[i], __ldlu(&e[i]));
    __stwb(&o[i], __ldca(&h[i]));
}

__global__ void half_hints(const __half *x, __half *y, const __nv_bfloat16 *u, __nv_bfloat16 *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __stcs(&y[i], __ldcs(&x[i]));
        __stcg(&v[i], __ldcg(&u[i]));
    }
}

template <typename T>
__global__ void streamed(const T *in, T *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        __stcs(&out[i], __ldcs(&in[i]));
}

template __global__ void streamed<float2>(const float2 *, float2 *, int);
template __global__ void streamed<short>(const short *, short *, int);
