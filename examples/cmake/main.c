/*
 * main.c — the CMake example: y = 2 x on the GPU through scale(), the stub
 * kstub generated from scale.cu, checked on the CPU.
 *
 * Device memory comes from the driver functions libkstub hands out
 * (ks_driver_proc), so the program links no libcuda and still starts, and
 * says so, on a machine without a driver. Exit status: 0 when the result
 * matched (or there is no driver), 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudaTypedefs.h> /* PFN_cu…_vNNNN: the driver's function types */

#include "kstub.h"
#include "scale.kstub.h"

#define N 4096

/* KS_CHECK (fail fast: print the call, the status and
 * ks_last_error_message(), exit) comes from kstub.h. */
#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)r_); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* ks_driver_proc hands back a void *; memcpy makes it a function pointer
 * without a -Wpedantic complaint. */
#define LOAD(var, name)                                                                 \
    do {                                                                                \
        void *p_ = NULL;                                                                \
        KS_CHECK(ks_driver_proc(name, &p_));                                            \
        memcpy(&var, &p_, sizeof p_);                                                   \
    } while (0)

int main(void)
{
    void *probe;
    ks_status st = ks_driver_proc("cuInit", &probe);
    if (st == KS_ERR_NO_DRIVER) {
        printf("scale_app: no CUDA driver here (%s); nothing to run\n", ks_last_error_message());
        return 0;
    }
    KS_CHECK(st);

    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuMemAlloc_v3020 MemAlloc;
    PFN_cuMemFree_v3020 MemFree;
    PFN_cuMemcpyHtoD_v3020 MemcpyHtoD;
    PFN_cuMemcpyDtoH_v3020 MemcpyDtoH;
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(CtxSetCurrent, "cuCtxSetCurrent");
    LOAD(MemAlloc, "cuMemAlloc");
    LOAD(MemFree, "cuMemFree");
    LOAD(MemcpyHtoD, "cuMemcpyHtoD");
    LOAD(MemcpyDtoH, "cuMemcpyDtoH");

    CUdevice dev;
    CUcontext ctx;
    CU_CHECK(DeviceGet(&dev, 0));
    CU_CHECK(PrimaryCtxRetain(&ctx, dev));
    CU_CHECK(CtxSetCurrent(ctx));

    static float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i - N / 2;
    CUdeviceptr dx, dy;
    CU_CHECK(MemAlloc(&dx, sizeof x));
    CU_CHECK(MemAlloc(&dy, sizeof y));
    CU_CHECK(MemcpyHtoD(dx, x, sizeof x));

    /* The stub takes the kernel's own types: a float, two float pointers, a size_t. */
    KS_CHECK(scale(ks_launch_1d((N + 255) / 256, 256), 2.0f, (const float *)(uintptr_t)dx,
                   (float *)(uintptr_t)dy, (size_t)N));
    CU_CHECK(MemcpyDtoH(y, dy, sizeof y)); /* waits for the kernel: legacy default stream */

    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += y[i] != 2.0f * x[i];
    CU_CHECK(MemFree(dx));
    CU_CHECK(MemFree(dy));
    printf("scale_app: %s (%d of %d elements wrong)\n", bad ? "FAIL" : "PASS", bad, N);
    return bad ? 1 : 0;
}
