// train_step.cu — a training step as projects write one (issue 14): kernels
// from a project header, template kernels instantiated only from host code,
// a static helper kernel, cudart calls and main in the same file.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "include/layers.cuh"
#include "include/model_params.h"

#define CUDA_OK(x)                                                                    \
    do {                                                                              \
        cudaError_t e_ = (x);                                                         \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

template <typename T, int VEC>
__global__ void sgd_update(T *w, const T *grad, T lr, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
    for (int v = 0; v < VEC; v++)
        if (i + v < n)
            w[i + v] -= lr * grad[i + v];
}

template <typename T>
__global__ void scale_grad(T *grad, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        grad[i] = (T)(grad[i] * factor);
}

static __global__ void clear(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 0.0f;
}

__global__ void cross_entropy(float *loss, const float *logits, const int *targets, LayerShape shape)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < shape.batch) {
        const float *row = logits + b * shape.stride;
        float mx = row[0];
        for (int c = 1; c < shape.channels; c++)
            mx = fmaxf(mx, row[c]);
        float sum = 0.0f;
        for (int c = 0; c < shape.channels; c++)
            sum += expf(row[c] - mx);
        loss[b] = logf(sum) + mx - row[targets[b]];
    }
}

template <typename T>
static void step(T *w, T *g, T lr, int n, cudaStream_t s)
{
    scale_grad<T><<<(n + 255) / 256, 256, 0, s>>>(g, 1.0f / 32, n);
    if (n % 4 == 0)
        sgd_update<T, 4><<<(n / 4 + 255) / 256, 256, 0, s>>>(w, g, lr, n);
    else
        sgd_update<T, 1><<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
}

int main(int argc, char **argv)
{
    (void)argv;
    LayerShape shape = {32, 1000, 1000, ACT_GELU};
    int n = shape.batch * shape.channels;
    float *logits, *bias, *loss, *w, *g, *sums;
    int *targets;
    CUDA_OK(cudaMalloc(&logits, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&bias, shape.channels * sizeof(float)));
    CUDA_OK(cudaMalloc(&loss, shape.batch * sizeof(float)));
    CUDA_OK(cudaMalloc(&targets, shape.batch * sizeof(int)));
    CUDA_OK(cudaMalloc(&w, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&g, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&sums, shape.batch * sizeof(float)));
    cudaStream_t s;
    CUDA_OK(cudaStreamCreate(&s));
    clear<<<(n + 255) / 256, 256, 0, s>>>(g, n);
    bias_act_forward<<<(n + 255) / 256, 256, 0, s>>>(logits, bias, shape);
    launch_row_sum(logits, sums, shape, s);
    cross_entropy<<<1, 32, 0, s>>>(loss, logits, targets, shape);
    step<float>(w, g, 0.01f, n + argc - 1, s);
    double *wd;
    CUDA_OK(cudaMalloc(&wd, n * sizeof(double)));
    step<double>(wd, wd, 0.01, n, s);
    std::vector<float> host(shape.batch);
    CUDA_OK(cudaMemcpyAsync(host.data(), loss, shape.batch * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    printf("loss[0] = %f\n", host[0]);
    cudaFree(wd);
    cudaFree(sums);
    cudaFree(g);
    cudaFree(w);
    cudaFree(targets);
    cudaFree(loss);
    cudaFree(bias);
    cudaFree(logits);
    cudaStreamDestroy(s);
    return 0;
}
