// One C name over template instances that differ in an empty tag (issue 31
// #6), in the GPT-2 trainer's shape: matmul_backward_bias_kernel9<OutFloat,
// UseAuxBuffer>(..., std::bool_constant<UseAuxBuffer>) launched from a host
// function template. Each instance's stub packs the tag's byte itself, so
// the one name (the C11 macro and the C++ overloads) takes no argument for
// it; instances that differ in the tag alone cannot be told apart by their
// arguments and get no one name.
#include <type_traits>

template <typename OutFloat, bool UseAuxBuffer>
__global__ void matmul_backward_bias_kernel9(OutFloat *dbias, const float *dout, int B, int T, int OC,
                                             std::bool_constant<UseAuxBuffer>)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < OC)
        dbias[i] = UseAuxBuffer ? (OutFloat)dout[i] : (OutFloat)(dout[i] * B * T);
}

template <typename OutFloat, bool UseAuxBuffer>
void matmul_backward_bias(OutFloat *dbias, const float *dout, int B, int T, int OC)
{
    matmul_backward_bias_kernel9<<<1, 256>>>(dbias, dout, B, T, OC, std::bool_constant<UseAuxBuffer>{});
}

template void matmul_backward_bias<float, true>(float *, const float *, int, int, int);
template void matmul_backward_bias<double, false>(double *, const float *, int, int, int);

// Instances that differ in the tag only.
template <bool Accumulate>
__global__ void scale_into(float *out, const float *in, float s, std::bool_constant<Accumulate>)
{
    out[threadIdx.x] = (Accumulate ? out[threadIdx.x] : 0.0f) + s * in[threadIdx.x];
}
template __global__ void scale_into<true>(float *, const float *, float, std::bool_constant<true>);
template __global__ void scale_into<false>(float *, const float *, float, std::bool_constant<false>);
