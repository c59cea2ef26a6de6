// Class template specializations as kernel parameters (issue 18, item 5):
// each one a kernel takes by value is mirrored as a C struct named from its
// template and arguments ("Params<float>" is Params_float,
// "attn::Mha_params<__half, 8>" is attn_Mha_params___half_8), with layout
// asserts; "// kstub:name TYPE = NAME" picks another name. Empty classes
// (std::bool_constant, std::integral_constant, std::true_type, tag structs)
// are one byte, as nvcc passes them: the stub packs that byte itself and the
// caller passes nothing, the value being fixed by the kernel's instance.
#include <cuda_fp16.h>
#include <type_traits>

template <typename T>
struct Params {
    T *out;
    const T *in;
    T scale;
    int n;
};

namespace attn {
template <typename T, int HEADS>
struct Mha_params {
    T *q;
    float softmax_scale;
    int heads[HEADS];
    Params<float> inner;      // a specialization held by value: mirrored too
};
} // namespace attn

struct Tag {};
struct Derived_tag : std::true_type {};

template <typename T>
__global__ void apply(Params<T> p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.out[i] = p.in[i] * p.scale;
}

template <typename T>
__global__ void apply_twice(Params<T> a, Params<T> b, const Params<T> *more)
{
    if (threadIdx.x == 0 && more)
        a.out[0] = b.in[0] + more->scale;
}

template <typename T, int H>
__global__ void mha(attn::Mha_params<T, H> p, int n)
{
    if (threadIdx.x < n)
        p.inner.out[0] = p.softmax_scale;
}

// The GPT-2 trainer's form: a bool_constant chosen at the call site.
template <bool B>
__global__ void tagged(float *x, std::bool_constant<B> flag, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = B ? 1.0f : -1.0f;
}

__global__ void constants(float *x, std::integral_constant<int, 4> four, std::true_type yes, char c,
                          Tag t, Derived_tag d, double after)
{
    x[0] = four.value + (decltype(yes)::value ? 1 : 0) + c + (float)after;
}

// kstub:name Params<int> = ParamsI
template __global__ void apply<float>(Params<float>);
template __global__ void apply<double>(Params<double>);
template __global__ void apply<int>(Params<int>);
template __global__ void apply_twice<float>(Params<float>, Params<float>, const Params<float> *);
template __global__ void mha<__half, 8>(attn::Mha_params<__half, 8>, int);

void launch_tagged(float *x, int n)
{
    tagged<<<1, 32>>>(x, std::bool_constant<true>{}, n);
    tagged<<<1, 32>>>(x, std::false_type{}, n);
}
