/*
 * cold_kstub.c — cold start through a kstub stub: process start to the first
 * kernel completed, the image coming from where the argument says.
 *
 *   cold_kstub            the fatbin embedded in the generated stub
 *   cold_kstub FILE       ks_image_set_file(FILE): a cubin, PTX (JIT), or a
 *                         .cu compiled with NVRTC through the disk cache
 *                         (KSTUB_CACHE_DIR says where; coldstart.c sets it)
 *
 * The program makes device 0's primary context current itself, as an
 * application that allocates memory does (libkstub would otherwise do the
 * same inside the first launch), so that the time from the context to the
 * kernel's completion is kstub's own part: image load, ABI check, launch.
 *
 * Prints "main=NS init=NS ctx=NS launched=NS done=NS origin=K kind=K
 * cache=C" (CLOCK_MONOTONIC): init after the driver is loaded and
 * initialised (ks_driver_proc), ctx once the context is current, launched
 * after the stub returned, done after the kernel completed; then what
 * ks_image_info says was loaded, so the driver can check each configuration
 * did what it claims.
 */
#include "bench_util.h"
#include "bench_kernels.kstub.h"

int main(int argc, char **argv)
{
    uint64_t t_main = bench_now_ns();
    if (argc > 1)
        KS_CHECK(ks_image_set_file(&bench_kernels_kstub_image, argv[1]));
    PFN_cuStreamSynchronize_v2000 StreamSynchronize;
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    void *p = NULL;
    ks_status st = ks_driver_proc("cuStreamSynchronize", &p);
    if (st == KS_ERR_NO_DRIVER) {
        printf("skip=no CUDA driver (%s)\n", ks_last_error_message());
        return 0;
    }
    KS_CHECK(st);
    memcpy(&StreamSynchronize, &p, sizeof p);
    BENCH_PROC(DeviceGet, "cuDeviceGet");
    BENCH_PROC(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BENCH_PROC(CtxSetCurrent, "cuCtxSetCurrent");
    uint64_t t_init = bench_now_ns();
    CUdevice dev;
    CUcontext ctx;
    CU_CHECK(DeviceGet(&dev, 0));
    CU_CHECK(PrimaryCtxRetain(&ctx, dev));
    CU_CHECK(CtxSetCurrent(ctx));
    uint64_t t_ctx = bench_now_ns();
    /* n = 0: the kernel touches no memory, so none is allocated. */
    KS_CHECK(bench_args(ks_launch_1d(1, 32), 0.0f, NULL, NULL, 0, 0));
    uint64_t t_launched = bench_now_ns();
    CU_CHECK(StreamSynchronize(NULL));
    uint64_t t_done = bench_now_ns();
    ks_image_info info;
    memset(&info, 0, sizeof info);
    KS_CHECK(ks_image_info_get(&bench_kernels_kstub_image, &info));
    printf("main=%llu init=%llu ctx=%llu launched=%llu done=%llu origin=%d kind=%d cache=%d\n",
           (unsigned long long)t_main, (unsigned long long)t_init, (unsigned long long)t_ctx,
           (unsigned long long)t_launched, (unsigned long long)t_done, (int)info.origin,
           (int)info.kind, info.from_cache);
    return 0;
}
