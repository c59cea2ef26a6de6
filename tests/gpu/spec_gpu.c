/*
 * spec_gpu.c — issue 18 on a GPU: kernels taking a class template
 * specialization by value (Params<float>, mirrored as Params_float), a
 * std::bool_constant tag (the stub packs its byte) and pointers to arrays
 * (float (*)[28], float (*)[5][5]) and device function pointers (read
 * from the image by a kernel, passed as unary_t_fn *), each launched through its generated stub
 * (tests/gpu/spec_kernels.cu) on random inputs, the output poisoned first,
 * and checked against the CPU. Without a CUDA driver it prints
 * "gpu-spec: no CUDA driver (...); skipped" and exits 0.
 */
#include "spec_kernels.kstub.h"

#define GPU_CHECK_RETURN_STATUS   /* the cases return 1 at their first failure */
#include "gpu_check.h"      /* the driver, device 0 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 4242u;
static float frand(void)
{
    return gpu_frand(&rng);
}

/* Params<float> by value through its mirror: every field reaches the kernel
 * at nvcc's offset (a char and a double after it test the padding). */
static int specialization_by_value(void)
{
    const int n = 100003;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (int i = 0; i < n; i++)
        in[i] = frand();
    CUdeviceptr din, dout;
    CU(cu.MemAlloc(&din, n * sizeof *in));
    CU(cu.MemAlloc(&dout, n * sizeof *out));
    CU(cu.MemcpyHtoD(din, in, n * sizeof *in));
    CU(cu.MemsetD8(dout, 0xff, n * sizeof *out));          /* poison: NaN */
    Params_float p;
    memset(&p, 0, sizeof p);
    p.out = (float *)dout;
    p.in = (const float *)din;
    p.scale = 2.5f;
    p.n = n;
    p.tag = 3;
    p.offset = -0.75;
    KS(spec_apply_float(ks_launch_1d((n + 255) / 256, 256), p));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(out, dout, n * sizeof *out));
    double err = 0;
    for (int i = 0; i < n; i++)
        err = fmax(err, fabs((double)out[i] - (double)(in[i] * 2.5f + -0.75f + 3.0f)));
    EXPECT(err <= 1e-6, "spec_apply<float>: max error %g", err);
    printf("  spec_apply<float>(Params_float) max error %.2g over %d elements\n", err, n);
    cu.MemFree(din);
    cu.MemFree(dout);
    free(in), free(out);
    return 0;
}

/* std::bool_constant<true> and <false>: no argument in C, the instance
 * picks the branch. */
static int bool_constant_tags(void)
{
    const int n = 4099;
    float *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
    for (int i = 0; i < n; i++)
        x[i] = frand();
    CUdeviceptr dx;
    CU(cu.MemAlloc(&dx, n * sizeof *x));
    CU(cu.MemcpyHtoD(dx, x, n * sizeof *x));
    KS(spec_sign_true(ks_launch_1d((n + 127) / 128, 128), (float *)dx, n));
    KS(spec_sign_false(ks_launch_1d((n + 127) / 128, 128), (float *)dx, n));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(r, dx, n * sizeof *r));
    for (int i = 0; i < n; i++)
        EXPECT(r[i] == -x[i] + 1.0f, "spec_sign: element %d is %g, wanted %g", i, r[i], -x[i] + 1.0f);
    printf("  spec_sign<true> then spec_sign<false> over %d elements\n", n);
    cu.MemFree(dx);
    free(x), free(r);
    return 0;
}

/* float (*)[28] and const float (*)[5][5], passed as the caller's own
 * array pointers. */
static int pointers_to_arrays(void)
{
    enum { NROWS = 1000 };
    static float rows[NROWS][28], out[NROWS];
    static float w[1][5][5];
    for (int r = 0; r < NROWS; r++)
        for (int j = 0; j < 28; j++)
            rows[r][j] = frand();
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            w[0][i][j] = frand();
    CUdeviceptr drows, dw, dout;
    CU(cu.MemAlloc(&drows, sizeof rows));
    CU(cu.MemAlloc(&dw, sizeof w));
    CU(cu.MemAlloc(&dout, sizeof out));
    CU(cu.MemcpyHtoD(drows, rows, sizeof rows));
    CU(cu.MemcpyHtoD(dw, w, sizeof w));
    CU(cu.MemsetD8(dout, 0xff, sizeof out));
    const float(*rows_dev)[28] = (const float(*)[28])drows;
    const float(*w_dev)[5][5] = (const float(*)[5][5])dw;
    KS(row_sums(ks_launch_1d((NROWS + 127) / 128, 128), rows_dev, w_dev, (float *)dout, NROWS));
    CU(cu.StreamSynchronize(NULL));
    CU(cu.MemcpyDtoH(out, dout, sizeof out));
    double err = 0;
    for (int r = 0; r < NROWS; r++) {
        float s = 0.0f;
        for (int j = 0; j < 28; j++)
            s += rows[r][j];
        err = fmax(err, fabs((double)out[r] - (double)(s * w[0][r % 5][r % 5])));
    }
    EXPECT(err <= 1e-4, "row_sums: max error %g", err);
    printf("  row_sums(float (*)[28], const float (*)[5][5]) max error %.2g over %d rows\n", err, NROWS);
    cu.MemFree(drows);
    cu.MemFree(dw);
    cu.MemFree(dout);
    return 0;
}

/* Device function pointers: spec_ops writes two __device__ functions'
 * addresses into a table (unary_t_fn **), the host reads them back, and
 * spec_map applies each through its unary_t_fn * parameter. */
static int device_function_pointers(void)
{
    const int n = 5003;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++)
        x[i] = frand();
    CUdeviceptr dtable, dx, dy;
    CU(cu.MemAlloc(&dtable, 2 * sizeof(unary_t_fn *)));
    CU(cu.MemAlloc(&dx, n * sizeof *x));
    CU(cu.MemAlloc(&dy, n * sizeof *y));
    CU(cu.MemcpyHtoD(dx, x, n * sizeof *x));
    KS(spec_ops(ks_launch_1d(1, 1), (unary_t_fn **)dtable));
    CU(cu.StreamSynchronize(NULL));
    unary_t_fn *table[2];
    CU(cu.MemcpyDtoH(table, dtable, sizeof table));
    EXPECT(table[0] != NULL && table[1] != NULL && table[0] != table[1], "spec_ops: table %p %p",
           (void *)(uintptr_t)table[0], (void *)(uintptr_t)table[1]);
    for (int f = 0; f < 2; f++) {
        CU(cu.MemsetD8(dy, 0xff, n * sizeof *y));           /* poison: NaN */
        KS(spec_map(ks_launch_1d((n + 127) / 128, 128), (float *)dy, (const float *)dx, table[f], n));
        CU(cu.StreamSynchronize(NULL));
        CU(cu.MemcpyDtoH(y, dy, n * sizeof *y));
        for (int i = 0; i < n; i++) {
            float want = f == 0 ? x[i] * x[i] : -x[i];
            EXPECT(y[i] == want, "spec_map(%s): element %d is %g, wanted %g", f ? "negate" : "square", i,
                   y[i], want);
        }
    }
    printf("  spec_map(unary_t_fn *) with spec_square and spec_negate over %d elements\n", n);
    cu.MemFree(dtable);
    cu.MemFree(dx);
    cu.MemFree(dy);
    free(x), free(y);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUdevice dev;
    CUcontext ctx;
    int start = gpu_start("gpu-spec", &dev, &ctx, NULL, 0);
    if (start != GPU_READY)
        return start == GPU_SKIP ? 0 : 1;
    gpu_run_case("class template specialization by value (Params_float)", specialization_by_value);
    gpu_run_case("std::bool_constant tags packed by the stub", bool_constant_tags);
    gpu_run_case("pointers to arrays", pointers_to_arrays);
    gpu_run_case("device function pointers (unary_t_fn *)", device_function_pointers);
    return gpu_report("gpu-spec");
}
