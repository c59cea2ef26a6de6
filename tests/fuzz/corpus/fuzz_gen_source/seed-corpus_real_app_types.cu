// app_types.cu — kernels taking the application's own types (issue 14): a
// struct and enum from a header C can include (model_params.h: the generated
// header includes it and asserts the layout), an enum class from a C++ header
// (mirrored; C++ callers pass nn::Act), CUDA's half types, and a struct the
// file defines itself (mirrored).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "include/activations.hpp"
#include "include/model_params.h"

struct LocalScale {
    float gain;
    __half bias;
};

__device__ float activate(float v, nn::Act a)
{
    switch (a) {
    case nn::Act::Relu: return v > 0.0f ? v : 0.0f;
    case nn::Act::Gelu: return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    default: return v;
    }
}

__global__ void shaped_act(float *x, LayerShape shape, Activation kind)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < shape.batch * shape.channels && kind == ACT_RELU && x[i] < 0.0f)
        x[i] = 0.0f;
}

__global__ void act_half(__half *y, const __half *x, __half scale, nn::Act a, nn::Round r, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = activate(__half2float(x[i]) * __half2float(scale), a);
        y[i] = r == nn::Round::Down ? __float2half_rd(v) : __float2half(v);
    }
}

__global__ void act_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *x, const nn::Act *per_row, LocalScale s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __float2bfloat16(activate(__bfloat162float(x[i]) * s.gain + __half2float(s.bias), per_row[0]));
}
