/*
 * main.c — the first project: device memory from the CUDA runtime
 * (cudaMalloc), one launch of saxpy through its generated stub on a
 * cudaStream_t, the status checked, the result checked, everything freed.
 */
#include "saxpy.kstub.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N ((size_t)1 << 20)

int main(void)
{
    /* libkstub loads the driver itself; without one there is nothing to run on. */
    void *probe;
    if (ks_driver_proc("cuInit", &probe) == KS_ERR_NO_DRIVER) {
        printf("first: no CUDA driver on this machine (%s)\n", ks_last_error_message());
        return 0;
    }

    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    float *d_x = NULL, *d_y = NULL;
    cudaStream_t stream = NULL;
    int ok = 0;
    if (!x || !y) {
        fprintf(stderr, "first: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    if (cudaMalloc((void **)&d_x, N * sizeof *x) != cudaSuccess ||
        cudaMalloc((void **)&d_y, N * sizeof *y) != cudaSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess ||
        cudaMemcpy(d_x, x, N * sizeof *x, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(d_y, y, N * sizeof *y, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "first: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto out;
    }

    /* A cudaStream_t is a ks_stream: both are CUstream. */
    ks_status st = saxpy(ks_launch_on(ks_launch_1d((unsigned)((N + 255) / 256), 256), stream),
                         2.0f, d_x, d_y, N);
    if (st != KS_OK) {
        fprintf(stderr, "first: saxpy: %s\n", ks_last_error_message());
        goto out;
    }
    if (cudaMemcpyAsync(y, d_y, N * sizeof *y, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
        fprintf(stderr, "first: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto out;
    }
    double err = 0;
    for (size_t i = 0; i < N; i++)
        err = fmax(err, fabs(y[i] - (2.0f * (float)i + 1.0f)));
    ok = err == 0;
    printf("first: saxpy over %zu elements: %s (max error %g)\n", N, ok ? "PASS" : "FAIL", err);
out:
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(d_x);
    cudaFree(d_y);
    free(x);
    free(y);
    return ok ? 0 : 1;
}
