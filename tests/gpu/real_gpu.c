/*
 * real_gpu.c — issue 14 on a GPU: a template kernel instantiated only by
 * host code, and a kernel needing 100 KiB of dynamic shared memory, each
 * launched through its generated stub (tests/gpu/real_kernels.cu) with the
 * results checked against the CPU. Without a CUDA driver it prints
 * "gpu-real: no CUDA driver (...); skipped" and exits 0.
 */
#include "real_kernels.kstub.h"

#define GPU_CHECK_RETURN_STATUS   /* the cases return 1 at their first failure */
#include "gpu_check.h"      /* the driver, device 0 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 12345u;
static float frand(void)
{
    return gpu_frand(&rng);
}

/* scale_add<float, 4> and scale_add<double, 1>: nvcc emitted them only
 * because axpy_host launches them; their stubs take the kernel's types. */
static int host_instantiated_templates(void)
{
    const int n = (1 << 20) + 3;      /* not a multiple of VEC */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *r = malloc(n * sizeof *r);
    double *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd), *rd = malloc(n * sizeof *rd);
    for (int i = 0; i < n; i++) {
        x[i] = frand();
        y[i] = frand();
        xd[i] = frand();
        yd[i] = frand();
    }
    CUdeviceptr dx, dy, dxd, dyd;
    CU(cu.MemAlloc(&dx, n * sizeof *x));
    CU(cu.MemAlloc(&dy, n * sizeof *y));
    CU(cu.MemAlloc(&dxd, n * sizeof *xd));
    CU(cu.MemAlloc(&dyd, n * sizeof *yd));
    CU(cu.MemcpyHtoD(dx, x, n * sizeof *x));
    CU(cu.MemcpyHtoD(dy, y, n * sizeof *y));
    CU(cu.MemcpyHtoD(dxd, xd, n * sizeof *xd));
    CU(cu.MemcpyHtoD(dyd, yd, n * sizeof *yd));
    KS(scale_add_float_4(ks_launch_1d((n / 4 + 1 + 255) / 256, 256), 1.5f, (const float *)dx,
                         (float *)dy, n));
    KS(scale_add_double_1(ks_launch_1d((n + 255) / 256, 256), -0.25, (const double *)dxd,
                          (double *)dyd, n));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(r, dy, n * sizeof *r));
    CU(cu.MemcpyDtoH(rd, dyd, n * sizeof *rd));
    double err = 0, errd = 0;
    for (int i = 0; i < n; i++) {
        err = fmax(err, fabs((double)r[i] - (double)(1.5f * x[i] + y[i])));
        errd = fmax(errd, fabs(rd[i] - (-0.25 * xd[i] + yd[i])));
    }
    EXPECT(err <= 1e-6, "scale_add<float, 4>: max error %g", err);
    EXPECT(errd <= 1e-12, "scale_add<double, 1>: max error %g", errd);
    printf("  scale_add<float, 4> max error %.2g, scale_add<double, 1> %.2g over %d elements\n", err, errd, n);
    cu.MemFree(dx);
    cu.MemFree(dy);
    cu.MemFree(dxd);
    cu.MemFree(dyd);
    free(x), free(y), free(r), free(xd), free(yd), free(rd);
    return 0;
}

/* 100 KiB of dynamic shared memory: refused before the opt-in, run after
 * ks_kernel_set_max_shared on the exported descriptor. */
static int shared_100k(void)
{
    const unsigned bytes = 100 * 1024;
    const int n = (int)(bytes / sizeof(float));
    float *in = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++)
        in[i] = frand();
    CUdeviceptr din, dout;
    CU(cu.MemAlloc(&din, bytes));
    CU(cu.MemAlloc(&dout, bytes));
    CU(cu.MemcpyHtoD(din, in, bytes));
    CU(cu.MemsetD8(dout, 0xFF, bytes));   /* poisoned: NaN everywhere */
    ks_launch l = ks_launch_1d(1, 1024);
    l.shared_bytes = bytes;
    ks_status st = smem_reverse(l, (const float *)din, (float *)dout, n);
    EXPECT(st == KS_ERR_INVALID_CONFIG, "100 KiB without the opt-in: %s, expected KS_ERR_INVALID_CONFIG",
           ks_status_name(st));
    KS(ks_kernel_set_max_shared(&smem_reverse_kernel, bytes));
    KS(smem_reverse(l, (const float *)din, (float *)dout, n));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(out, dout, bytes));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += memcmp(&out[i], &in[n - 1 - i], sizeof(float)) != 0;
    EXPECT(wrong == 0, "smem_reverse: %d of %d elements wrong", wrong, n);
    printf("  smem_reverse with %u bytes of dynamic shared memory: %d elements exact\n", bytes, n);
    cu.MemFree(din);
    cu.MemFree(dout);
    free(in);
    free(out);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUdevice dev;
    CUcontext ctx;
    int start = gpu_start("gpu-real", &dev, &ctx, NULL, 0);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    gpu_run_case("host-instantiated template kernels", host_instantiated_templates);
    gpu_run_case("100 KiB of dynamic shared memory", shared_100k);
    return gpu_report("gpu-real");
}
