/*
 * main_driver.c — the first project with the CUDA driver API instead of the
 * runtime: every driver entry point through ks_driver_proc (no libcuda to
 * link, so the program starts and says so on a machine without a driver),
 * device memory from cuMemAlloc, saxpy through its stub.
 */
#include "saxpy.kstub.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdio.h>

#define N ((size_t)1 << 20)

/* Looks an entry point up, or leaves main with the reason. */
#define PROC(var, name)                                                                   \
    do {                                                                                  \
        ks_status st_ = ks_driver_proc(name, (void **)&var);                              \
        if (st_ != KS_OK) {                                                               \
            printf("first_driver: %s (%s)\n",                                             \
                   st_ == KS_ERR_NO_DRIVER ? "no CUDA driver on this machine" : name,     \
                   ks_last_error_message());                                              \
            return st_ == KS_ERR_NO_DRIVER ? 0 : 1;                                       \
        }                                                                                 \
    } while (0)

int main(void)
{
    PFN_cuInit_v2000 init;
    PFN_cuDeviceGet_v2000 device_get;
    PFN_cuDevicePrimaryCtxRetain_v7000 ctx_retain;
    PFN_cuCtxSetCurrent_v4000 ctx_set;
    PFN_cuMemAlloc_v3020 mem_alloc;
    PFN_cuMemcpyHtoD_v3020 htod;
    PFN_cuMemcpyDtoH_v3020 dtoh;
    PFN_cuMemFree_v3020 mem_free;
    PROC(init, "cuInit");
    PROC(device_get, "cuDeviceGet");
    PROC(ctx_retain, "cuDevicePrimaryCtxRetain");
    PROC(ctx_set, "cuCtxSetCurrent");
    PROC(mem_alloc, "cuMemAlloc");
    PROC(htod, "cuMemcpyHtoD");
    PROC(dtoh, "cuMemcpyDtoH");
    PROC(mem_free, "cuMemFree");

    /* Device 0's primary context, current on this thread: the stub launches in it. */
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr d_x = 0, d_y = 0;
    static float x[N], y[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    if (init(0) != CUDA_SUCCESS || device_get(&dev, 0) != CUDA_SUCCESS ||
        ctx_retain(&ctx, dev) != CUDA_SUCCESS || ctx_set(ctx) != CUDA_SUCCESS ||
        mem_alloc(&d_x, sizeof x) != CUDA_SUCCESS || mem_alloc(&d_y, sizeof y) != CUDA_SUCCESS ||
        htod(d_x, x, sizeof x) != CUDA_SUCCESS || htod(d_y, y, sizeof y) != CUDA_SUCCESS) {
        printf("first_driver: a driver call failed\n");
        return 1;
    }
    /* NULL: the legacy default stream, which cuMemcpyDtoH waits for. */
    ks_status st = saxpy(ks_launch_1d((unsigned)((N + 255) / 256), 256), 2.0f,
                         (const float *)(uintptr_t)d_x, (float *)(uintptr_t)d_y, N);
    if (st != KS_OK) {
        printf("first_driver: saxpy: %s\n", ks_last_error_message());
        return 1;
    }
    int ok = dtoh(y, d_y, sizeof y) == CUDA_SUCCESS;
    for (size_t i = 0; ok && i < N; i++)
        ok = y[i] == 2.0f * (float)i + 1.0f;
    printf("first_driver: saxpy over %zu elements: %s\n", N, ok ? "PASS" : "FAIL");
    mem_free(d_x);
    mem_free(d_y);
    return ok ? 0 : 1;
}
