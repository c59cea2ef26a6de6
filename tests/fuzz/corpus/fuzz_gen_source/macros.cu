// Explicit instantiations written by macros (issue 18, item 8): kstub once
// saw none of them (libclang shows no cursor for an explicit instantiation,
// and its own scan of the text read the macro's definition, not its
// invocations), and the kernels below got no stubs.
#include <cuda_runtime.h>

template <int N>
__global__ void table_k(float *table, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        table[i] += v;
}

// A host function template that launches; the macro instantiates it.
template <int N>
void add_to_table(float *table, float v)
{
    table_k<N><<<(N + 127) / 128, 128>>>(table, v);
}

#define EXPORT(n) template void add_to_table<n>(float *, float);
EXPORT(1) EXPORT(2)
EXPORT(64)

// A kernel template instantiated directly, the ';' written after the
// invocation; arguments with commas inside parentheses.
template <typename T, int B>
__global__ void scale_k(T *x, T a, int n)
{
    int i = blockIdx.x * B + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

#define INSTANTIATE_SCALE(T, B) template __global__ void scale_k<T, B>(T *, T, int)
INSTANTIATE_SCALE(float, 128);
INSTANTIATE_SCALE(double, (64 * 2));

// A macro written by another macro, and a pasted name.
template <typename T>
__global__ void fill_k(T *x, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

typedef unsigned short u16;
#define FILL_ONE(T) template __global__ void fill_k<T>(T *, T, int);
#define FILL_ALL(pre) FILL_ONE(pre##16) FILL_ONE(int) \
                      FILL_ONE(char)
FILL_ALL(u)

namespace ops {
template <typename T>
__global__ void neg_k(T *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = -x[i];
}
#define NEG(...) template __global__ void neg_k<__VA_ARGS__>(__VA_ARGS__ *, int);
NEG(float)
NEG(long long)
}  // namespace ops
