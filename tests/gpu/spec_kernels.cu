// spec_kernels.cu — issue 18 on a GPU (tests/gpu/spec_gpu.c): a kernel
// taking a class template specialization by value (mirrored as
// Params_float), one taking a std::bool_constant tag (no argument in C),
// and one taking a pointer to an array (float (*)[28]).
#include <type_traits>

template <typename T>
struct Params {
    T *out;
    const T *in;
    T scale;
    int n;
    char tag;
    double offset;
};

template <typename T>
__global__ void spec_apply(Params<T> p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.out[i] = p.in[i] * p.scale + (T)p.offset + (T)p.tag;
}

template <bool NEGATE>
__global__ void spec_sign(float *x, std::bool_constant<NEGATE> flag, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = NEGATE ? -x[i] : x[i] + 1.0f;
}

// Each row of 28 summed, weighted by a 5x5 table's diagonal.
__global__ void row_sums(const float (*rows)[28], const float (*w)[5][5], float *out, int nrows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows)
        return;
    float s = 0.0f;
    for (int j = 0; j < 28; j++)
        s += rows[r][j];
    out[r] = s * w[0][r % 5][r % 5];
}

template __global__ void spec_apply<float>(Params<float>);
template __global__ void spec_sign<true>(float *, std::bool_constant<true>, int);
template __global__ void spec_sign<false>(float *, std::bool_constant<false>, int);

// Device function pointers (issue 18, item 9): spec_ops writes the
// addresses of two __device__ functions (read from __device__ pointer
// variables, as cudaMemcpyFromSymbol would) into a table; the C caller
// copies one back and passes it to spec_map, whose stub takes it as
// unary_t_fn * (the typedef unary_t's function type). Read from the same
// image as the kernel, so the address is this module's code.
typedef float (*unary_t)(float);
__device__ float spec_square(float x) { return x * x; }
__device__ float spec_negate(float x) { return -x; }
__device__ unary_t d_square = spec_square;
__device__ unary_t d_negate = spec_negate;

__global__ void spec_ops(unary_t *table)
{
    table[0] = d_square;
    table[1] = d_negate;
}

__global__ void spec_map(float *y, const float *x, unary_t op, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = op(x[i]);
}
