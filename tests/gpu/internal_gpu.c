/*
 * internal_gpu.c — kernels with internal linkage on a GPU (issue 31 #1),
 * each launched through its generated stub and checked against the CPU with
 * the output poisoned first: from a whole-program image
 * (tests/gpu/internal_kernels.cu) a static kernel, two instances of a static
 * kernel template and an anonymous-namespace kernel; from one -rdc image
 * linked from tests/gpu/internal_rdc_a.cu and internal_rdc_b.cu, which
 * define a static and an anonymous-namespace kernel of the same names, each
 * file's own; and a kernel template's instances on an ordinary and a static
 * device function (issue 31 #3). Without a CUDA driver it prints "gpu-internal: no CUDA
 * driver (...); skipped" and exits 0.
 */
#include "internal_kernels.kstub.h"
#include "internal_rdc_a.kstub.h"
#include "internal_rdc_b.kstub.h"

#define GPU_CHECK_RETURN_STATUS   /* the cases return 1 at their first failure */
#include "gpu_check.h"      /* the driver, device 0 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 31u;

enum { N = (1 << 16) + 7 };

static int whole_program(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *r = malloc(N * sizeof *r);
    double *xd = malloc(N * sizeof *xd), *yd = malloc(N * sizeof *yd), *rd = malloc(N * sizeof *rd);
    for (int i = 0; i < N; i++) {
        x[i] = gpu_frand(&rng);
        y[i] = gpu_frand(&rng);
        xd[i] = gpu_frand(&rng);
        yd[i] = gpu_frand(&rng);
    }
    CUdeviceptr dx, dy, dxd, dyd;
    CU(cu.MemAlloc(&dx, N * sizeof *x));
    CU(cu.MemAlloc(&dy, N * sizeof *y));
    CU(cu.MemAlloc(&dxd, N * sizeof *xd));
    CU(cu.MemAlloc(&dyd, N * sizeof *yd));
    ks_launch l = ks_launch_1d((N + 255) / 256, 256);

    /* fill_static: a static kernel */
    CU(cu.MemsetD8(dy, POISON, N * sizeof *y));
    KS(fill_static(l, (float *)dy, 0.5f, N));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(r, dy, N * sizeof *r));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += r[i] != 0.5f + (float)i;
    EXPECT(wrong == 0, "fill_static: %d of %d elements wrong", wrong, N);

    /* axpy_static<float>, axpy_static<double>: a static template's instances */
    CU(cu.MemcpyHtoD(dx, x, N * sizeof *x));
    CU(cu.MemcpyHtoD(dy, y, N * sizeof *y));
    CU(cu.MemcpyHtoD(dxd, xd, N * sizeof *xd));
    CU(cu.MemcpyHtoD(dyd, yd, N * sizeof *yd));
    KS(axpy_static_float(l, 1.5f, (const float *)dx, (float *)dy, N));
    KS(axpy_static_double(l, -0.25, (const double *)dxd, (double *)dyd, N));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(r, dy, N * sizeof *r));
    CU(cu.MemcpyDtoH(rd, dyd, N * sizeof *rd));
    double err = 0, errd = 0;
    for (int i = 0; i < N; i++) {
        err = fmax(err, fabs((double)r[i] - (double)(1.5f * x[i] + y[i])));
        errd = fmax(errd, fabs(rd[i] - (-0.25 * xd[i] + yd[i])));
    }
    EXPECT(err <= 1e-6, "axpy_static<float>: max error %g", err);
    double erra = err;
    EXPECT(errd <= 1e-12, "axpy_static<double>: max error %g", errd);

    /* square_anon: a kernel in an anonymous namespace */
    CU(cu.MemsetD8(dy, POISON, N * sizeof *y));
    KS(square_anon(l, (const float *)dx, (float *)dy, N));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(r, dy, N * sizeof *r));
    err = 0;
    for (int i = 0; i < N; i++)
        err = fmax(err, fabs((double)r[i] - (double)(x[i] * x[i])));
    EXPECT(err <= 1e-6, "square_anon: max error %g", err);
    printf("  fill_static exact, axpy_static<float> %.2g, <double> %.2g, square_anon %.2g over %d elements\n",
           erra, errd, err, N);
    cu.MemFree(dx), cu.MemFree(dy), cu.MemFree(dxd), cu.MemFree(dyd);
    free(x), free(y), free(r), free(xd), free(yd), free(rd);
    return 0;
}

/* map_op<cube>, map_op<twice_plus_one>: a kernel template on a device function
 * (the second static: nvcc names it inside a per-compilation namespace). */
static int function_template_arguments(void)
{
    float *x = malloc(N * sizeof *x), *r = malloc(N * sizeof *r);
    for (int i = 0; i < N; i++)
        x[i] = gpu_frand(&rng);
    CUdeviceptr dx, dy;
    CU(cu.MemAlloc(&dx, N * sizeof *x));
    CU(cu.MemAlloc(&dy, N * sizeof *r));
    CU(cu.MemcpyHtoD(dx, x, N * sizeof *x));
    ks_launch l = ks_launch_1d((N + 255) / 256, 256);
    double err[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
        CU(cu.MemsetD8(dy, POISON, N * sizeof *r));
        if (f == 0)
            KS(map_op_cube(l, (const float *)dx, (float *)dy, N));
        else
            KS(map_op_twice_plus_one(l, (const float *)dx, (float *)dy, N));
        CU(cu.StreamSynchronize(NULL));
        CU(cu.MemcpyDtoH(r, dy, N * sizeof *r));
        for (int i = 0; i < N; i++) {
            double want = f == 0 ? (double)(x[i] * x[i] * x[i]) : (double)(2.0f * x[i] + 1.0f);
            err[f] = fmax(err[f], fabs((double)r[i] - want));
        }
    }
    EXPECT(err[0] <= 1e-6, "map_op<cube>: max error %g", err[0]);
    EXPECT(err[1] <= 1e-6, "map_op<twice_plus_one>: max error %g", err[1]);
    printf("  map_op<cube> max error %.2g, map_op<twice_plus_one> (static) %.2g over %d elements\n",
           err[0], err[1], N);
    cu.MemFree(dx), cu.MemFree(dy);
    free(x), free(r);
    return 0;
}

/* One -rdc image holding both files' set_static and add_anon: each stub runs its own. */
static int rdc_two_files(void)
{
    float *r = malloc(N * sizeof *r);
    CUdeviceptr d;
    CU(cu.MemAlloc(&d, N * sizeof *r));
    ks_launch l = ks_launch_1d((N + 255) / 256, 256);
    static const struct { float base, add; } want[2] = {{100.0f, 1.5f}, {200.0f, 2.5f}};
    for (int f = 0; f < 2; f++) {
        CU(cu.MemsetD8(d, POISON, N * sizeof *r));
        if (f == 0) {
            KS(set_static_a(l, (float *)d, N));
            KS(add_anon_a(l, (float *)d, N));
        } else {
            KS(set_static_b(l, (float *)d, N));
            KS(add_anon_b(l, (float *)d, N));
        }
        CU(cu.StreamSynchronize(NULL));
        CU(cu.MemcpyDtoH(r, d, N * sizeof *r));
        int wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += r[i] != (want[f].base + (float)i) + want[f].add;
        EXPECT(wrong == 0, "internal_rdc_%c.cu's kernels: %d of %d elements wrong (another file's kernel?)",
               "ab"[f], wrong, N);
    }
    printf("  set_static and add_anon of internal_rdc_a.cu and internal_rdc_b.cu, one -rdc image: each its own\n");
    cu.MemFree(d);
    free(r);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUdevice dev;
    CUcontext ctx;
    int start = gpu_start("gpu-internal", &dev, &ctx, NULL, 0);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    gpu_run_case("internal linkage, whole-program image", whole_program);
    gpu_run_case("internal linkage, one -rdc image of two files", rdc_two_files);
    gpu_run_case("device functions as template arguments", function_template_arguments);
    return gpu_report("gpu-internal");
}
