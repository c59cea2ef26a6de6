// layers.cuh — kernels kept in a project header, included by train_step.cu
// (issue 14: nvcc emits them in the including translation unit).
#pragma once
#include <cuda_runtime.h>
#include "model_params.h"

__device__ inline float activate(float x, Activation a)
{
    if (a == ACT_RELU)
        return x > 0.0f ? x : 0.0f;
    if (a == ACT_GELU)
        return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    return x;
}

__global__ void bias_act_forward(float *out, const float *bias, LayerShape shape)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int64_t)shape.batch * shape.channels) {
        int c = (int)(i % shape.channels);
        out[i] = activate(out[i] + bias[c], shape.act);
    }
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) row_sum(const float *in, float *out, LayerShape shape)
{
    __shared__ float part[BLOCK];
    int row = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < shape.channels; c += BLOCK)
        s += in[row * shape.stride + c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[row] = part[0];
}

// A helper only this header's launcher uses: internal linkage, a note.
static __global__ void zero_rows(float *out, int rows)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows)
        out[i] = 0.0f;
}

inline void launch_row_sum(const float *in, float *out, LayerShape shape, cudaStream_t s)
{
    zero_rows<<<(shape.batch + 127) / 128, 128, 0, s>>>(out, shape.batch);
    row_sum<256><<<shape.batch, 256, 0, s>>>(in, out, shape);
}
