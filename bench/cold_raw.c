/*
 * cold_raw.c — cold start of a hand-written Driver API program: the driver
 * opened by hand, device 0's primary context, cuLibraryLoadData of the same
 * embedded fatbin kstub's stub carries (its bytes are taken from the
 * generated image), cuLibraryGetKernel, cuLaunchKernel, synchronise. What
 * kstub's embedded-fatbin start is compared with.
 *
 * Prints "main=NS init=NS ctx=NS done=NS" (CLOCK_MONOTONIC): init after
 * cuInit, ctx once the context is current, done after the first kernel
 * completed.
 */
#include "bench_util.h"
#include "bench_kernels.kstub.h"

int main(void)
{
    uint64_t t_main = bench_now_ns();
    bench_raw_driver d;
    if (!bench_raw_driver_open(&d)) {
        printf("skip=no CUDA driver (libcuda.so.1 not found)\n");
        return 0;
    }
    PFN_cuInit_v2000 Init;
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuLibraryLoadData_v12000 LibraryLoadData;
    PFN_cuLibraryGetKernel_v12000 LibraryGetKernel;
    PFN_cuLaunchKernel_v4000 LaunchKernel;
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    BENCH_RAW_PROC(&d, Init, "cuInit");
    BENCH_RAW_PROC(&d, DeviceGet, "cuDeviceGet");
    BENCH_RAW_PROC(&d, PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BENCH_RAW_PROC(&d, CtxSetCurrent, "cuCtxSetCurrent");
    BENCH_RAW_PROC(&d, LibraryLoadData, "cuLibraryLoadData");
    BENCH_RAW_PROC(&d, LibraryGetKernel, "cuLibraryGetKernel");
    BENCH_RAW_PROC(&d, LaunchKernel, "cuLaunchKernel");
    BENCH_RAW_PROC(&d, StreamSynchronize, "cuStreamSynchronize");
    CU_CHECK(Init(0));
    uint64_t t_init = bench_now_ns();
    CUdevice dev;
    CUcontext ctx;
    CUlibrary lib;
    CUkernel kernel;
    CU_CHECK(DeviceGet(&dev, 0));
    CU_CHECK(PrimaryCtxRetain(&ctx, dev));
    CU_CHECK(CtxSetCurrent(ctx));
    uint64_t t_ctx = bench_now_ns();
    CU_CHECK(LibraryLoadData(&lib, bench_kernels_kstub_image.data, NULL, NULL, 0, NULL, NULL, 0));
    CU_CHECK(LibraryGetKernel(&kernel, lib, "bench_args"));
    /* n = 0: the kernel touches no memory, so none is allocated. */
    float a = 0.0f;
    const float *x = NULL;
    float *y = NULL;
    int n = 0;
    long long m = 0;
    void *args[5] = {&a, &x, &y, &n, &m};
    CU_CHECK(LaunchKernel((CUfunction)kernel, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CU_CHECK(StreamSynchronize(NULL));
    uint64_t t_done = bench_now_ns();
    printf("main=%llu init=%llu ctx=%llu done=%llu\n", (unsigned long long)t_main,
           (unsigned long long)t_init, (unsigned long long)t_ctx, (unsigned long long)t_done);
    return 0;
}
