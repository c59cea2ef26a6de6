/*
 * cold_ctx.c — cold start, the CUDA floor: load the driver by hand, make
 * device 0's primary context current and synchronise, launching nothing.
 * What every CUDA program pays before its first kernel; the cold-start
 * table measures the image sources against it.
 *
 * Prints "main=NS init=NS ctx=NS done=NS" (CLOCK_MONOTONIC): init after
 * cuInit, ctx once the context is current, done after the (empty) default
 * stream is synchronised.
 */
#include "bench_util.h"

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
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    BENCH_RAW_PROC(&d, Init, "cuInit");
    BENCH_RAW_PROC(&d, DeviceGet, "cuDeviceGet");
    BENCH_RAW_PROC(&d, PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BENCH_RAW_PROC(&d, CtxSetCurrent, "cuCtxSetCurrent");
    BENCH_RAW_PROC(&d, StreamSynchronize, "cuStreamSynchronize");
    CU_CHECK(Init(0));
    uint64_t t_init = bench_now_ns();
    CUdevice dev;
    CUcontext ctx;
    CU_CHECK(DeviceGet(&dev, 0));
    CU_CHECK(PrimaryCtxRetain(&ctx, dev));
    CU_CHECK(CtxSetCurrent(ctx));
    uint64_t t_ctx = bench_now_ns();
    CU_CHECK(StreamSynchronize(NULL));
    uint64_t t_done = bench_now_ns();
    printf("main=%llu init=%llu ctx=%llu done=%llu\n", (unsigned long long)t_main,
           (unsigned long long)t_init, (unsigned long long)t_ctx, (unsigned long long)t_done);
    return 0;
}
