/*
 * check_nvrtc_gpu.c — generated stubs whose image is the kernel source
 * itself (kstub --embed-source): libkstub compiles it with NVRTC for the
 * device at first launch, and a second process finds it in the disk cache.
 *
 *   check_nvrtc_gpu cold|warm    prints "gpu-nvrtc: N passed, M failed"
 *
 * `make gpu-check` runs it twice with one fresh KSTUB_CACHE_DIR: "cold"
 * must compile, "warm" must load from the cache. Without a driver it says so
 * and passes.
 */
#include "kstub.h"
#include "nvrtc_kernels.kstub.h"

#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                        \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
        }                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cold";
    PFN_cuMemAlloc_v3020 mem_alloc;
    PFN_cuMemcpyHtoD_v3020 htod;
    PFN_cuMemcpyDtoH_v3020 dtoh;
    PFN_cuMemFree_v3020 mem_free;
    ks_status st = ks_driver_proc("cuMemAlloc", (void **)&mem_alloc);
    if (st == KS_ERR_NO_DRIVER) {
        printf("gpu-nvrtc: no CUDA driver (%s); skipped\n", ks_last_error_message());
        return 0;
    }
    if (st != KS_OK || ks_driver_proc("cuMemcpyHtoD", (void **)&htod) != KS_OK ||
        ks_driver_proc("cuMemcpyDtoH", (void **)&dtoh) != KS_OK ||
        ks_driver_proc("cuMemFree", (void **)&mem_free) != KS_OK) {
        printf("gpu-nvrtc: driver entry points: %s\n", ks_last_error_message());
        return 1;
    }

    /* The first launch compiles (or finds the cubin in the cache). */
    const int n = 10007;
    CUdeviceptr d_out = 0, d_x = 0;
    ks_image_info info;
    EXPECT(ks_image_load(&nvrtc_kernels_kstub_image) == KS_OK, "load: %s", ks_last_error_message());
    EXPECT(ks_image_info_get(&nvrtc_kernels_kstub_image, &info) == KS_OK, "info");
    EXPECT(info.origin == KS_IMAGE_SOURCE, "origin %d, expected SOURCE", (int)info.origin);
    EXPECT(info.arch >= 70, "compiled for sm_%d", info.arch);
    if (strcmp(mode, "warm") == 0)
        EXPECT(info.from_cache, "a warm run compiled again instead of using the cache");
    else
        EXPECT(!info.from_cache, "a cold run found a cache entry");

    EXPECT(mem_alloc(&d_out, n * sizeof(int)) == CUDA_SUCCESS, "cuMemAlloc");
    EXPECT(mem_alloc(&d_x, n * sizeof(float)) == CUDA_SUCCESS, "cuMemAlloc");
    int *out = malloc(n * sizeof *out);
    float *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++)
        x[i] = (float)i * 0.5f;
    EXPECT(htod(d_x, x, n * sizeof *x) == CUDA_SUCCESS, "upload");

    st = iota_n((size_t)n, NULL, (int *)(uintptr_t)d_out, n, 1000);
    EXPECT(st == KS_OK, "iota_n: %s", ks_last_error_message());
    st = nv_scale_float(ks_launch_1d((unsigned)(n + 127) / 128, 128), (float *)(uintptr_t)d_x, -2.0f, n);
    EXPECT(st == KS_OK, "nv::scale<float>: %s", ks_last_error_message());
    EXPECT(dtoh(out, d_out, n * sizeof *out) == CUDA_SUCCESS, "download");
    EXPECT(dtoh(x, d_x, n * sizeof *x) == CUDA_SUCCESS, "download");
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != 1000 + i || x[i] != (float)i * -1.0f;
    EXPECT(bad == 0, "%d of %d elements wrong", bad, n);

    mem_free(d_out);
    mem_free(d_x);
    free(out);
    free(x);
    printf("gpu-nvrtc (%s, sm_%d, %s): %d passed, %d failed\n", mode, info.arch,
           info.from_cache ? "from the cache" : "compiled", passed, failed);
    return failed ? 1 : 0;
}
