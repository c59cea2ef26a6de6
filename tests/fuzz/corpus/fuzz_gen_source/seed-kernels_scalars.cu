// One kernel that takes every scalar kind kstub supports and writes back
// what it received, so a test can compare it byte for byte with what the
// host passed; and a half-precision axpy that takes its scale as float.
#include <cuda_fp16.h>
#include <cstddef>
#include <cstdint>

typedef unsigned short flags_t;

struct Echo {
    bool b; char c; signed char sc; unsigned char uc;
    short s; unsigned short us; int i; unsigned int u;
    long l; unsigned long ul; long long ll; unsigned long long ull;
    float f; double d;
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; size_t sz; ptrdiff_t pd; intptr_t ip; uintptr_t up;
    flags_t flags;
};

extern "C" __global__ void echo_scalars(Echo *out, bool b, char c, signed char sc,
                                        unsigned char uc, short s, unsigned short us, int i,
                                        unsigned int u, long l, unsigned long ul, long long ll,
                                        unsigned long long ull, float f, double d, int8_t i8,
                                        uint8_t u8, int16_t i16, uint16_t u16, int32_t i32,
                                        uint32_t u32, int64_t i64, uint64_t u64, size_t sz,
                                        ptrdiff_t pd, intptr_t ip, uintptr_t up, flags_t flags)
{
    out->b = b; out->c = c; out->sc = sc; out->uc = uc; out->s = s; out->us = us;
    out->i = i; out->u = u; out->l = l; out->ul = ul; out->ll = ll; out->ull = ull;
    out->f = f; out->d = d; out->i8 = i8; out->u8 = u8; out->i16 = i16; out->u16 = u16;
    out->i32 = i32; out->u32 = u32; out->i64 = i64; out->u64 = u64; out->sz = sz;
    out->pd = pd; out->ip = ip; out->up = up; out->flags = flags;
}

// y = a * x + y in half precision; pointers to __half, scale as float.
extern "C" __global__ void haxpy(int n, float a, const __half *x, __half *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __float2half(a * __half2float(x[i]) + __half2float(y[i]));
}

// Gathers rows through a pointer-to-pointer table (rows[r] is a device pointer).
extern "C" __global__ void gather_rows(const float *const *rows, int nrows, int ncols,
                                       volatile float *out)
{
    int r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows && c < ncols)
        out[(size_t)r * ncols + c] = rows[r][c];
}
