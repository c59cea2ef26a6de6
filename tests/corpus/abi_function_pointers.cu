// Device function pointers as kernel parameters (issue 18, item 9): nvcc
// passes "float (*op)(float)" as a 64-bit value (.param .u64), the address
// a host program reads with cudaMemcpyFromSymbol from a __device__ pointer
// variable. The stub takes a pointer to a C typedef of the function type,
// named from its types ("float_fn_float") or from the typedef the
// parameter is spelled through ("unary_t" -> "unary_t_fn").
#include <cstdint>

struct Pair {
    float a;
    int b;
};

typedef float (*unary_t)(float);
using binary_t = float (*)(float, float);
typedef float scale_fn(float, float);

namespace ops {
typedef int (*reduce_t)(const int *, int64_t);
}

__device__ float sq(float x) { return x * x; }
__device__ float add(float x, float y) { return x + y; }
__device__ unary_t d_sq = sq;
__device__ binary_t d_add = add;

// Spelled out, through a pointer typedef, a using alias and a typedef of
// the function type itself.
__global__ void map(float *y, const float *x, float (*op)(float), int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = op(x[i]);
}

__global__ void map_t(float *y, unary_t op, int n) { y[0] = op((float)n); }

__global__ void zip(float *y, binary_t f, const float *a, const float *b)
{
    y[0] = f(a[0], b[0]);
}

__global__ void scaled(float *y, scale_fn *s, char c) { y[0] = s(y[0], (float)c); }

// Pointers in and out, a struct by value and by pointer, no parameters,
// void result, a const pointer, a pointer to a table of function pointers,
// a pointer taking and returning a function pointer, namespaced typedef.
__global__ void shapes(float *(*pick)(float *, int), Pair (*make)(const Pair *, Pair),
                       void (*fire)(void), int (*count)(), unary_t (*choose)(int, unary_t),
                       float (*const fixed)(float), unary_t *table, ops::reduce_t red,
                       double tail)
{
    (void)pick; (void)make; (void)fire; (void)count; (void)choose; (void)fixed; (void)table;
    (void)red; (void)tail;
}

// A struct holding a function pointer, by value.
struct Stage {
    unary_t f;
    float (*g[2])(float);
    int k;
};

__global__ void staged(Stage s, float *y) { y[0] = s.f(s.g[1](y[0])) + (float)s.k; }

template <typename F>
__global__ void apply(float *y, F f, int n) { if (n) y[0] = f(y[0]); }
template __global__ void apply<float (*)(float)>(float *, float (*)(float), int);
