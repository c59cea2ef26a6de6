// Host-side math and clock as nvcc accepts them (issue 14): min, max,
// isfinite, isnan, isinf, abs, fabs and clock in host and __host__
// __device__ code. clang's CUDA mode declares min/max and the
// classification functions device-side only; kstub's compatibility header
// (generator/compat.c) adds the host side, so no body here is refused.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <math.h>

struct Range {
    int lo, hi;
    float scale;
};

__host__ __device__ int clamp_int(int v, Range r) { return min(max(v, r.lo), r.hi); }
__host__ __device__ unsigned clamp_u(unsigned v, unsigned hi) { return min(v, hi); }
__host__ __device__ long long widest(long long a, long long b) { return max(a, b); }
__host__ __device__ float finite_or_zero(float x) { return isfinite(x) ? x : 0.0f; }
__host__ __device__ double nan_to_one(double x) { return isnan(x) ? 1.0 : x; }
__host__ __device__ float magnitude(float x) { return fabs(x) + (float)abs((int)x); }

static int host_max(int a, int b) { return max(a, b); }
static float host_minf(float a, float b) { return min(a, b); }
static size_t host_min_size(size_t a, size_t b) { return min(a, b); }
static unsigned long host_max_mixed(long a, unsigned long b) { return max(a, b); }
static double host_mind(double a, float b) { return min(a, b); }
static bool host_bad(float a, double b) { return !isfinite(a) || isnan(b) || isinf(a); }
static long host_clock() { return (long)clock(); }

__global__ void clamp_all(int *v, Range r, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = clamp_int(v[i], r) + (int)(r.scale * magnitude((float)v[i]));
}

__global__ void sanitize(float *x, double *y, unsigned hi, long long *t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = finite_or_zero(x[i]);
        y[i] = nan_to_one(y[i]) + clamp_u((unsigned)i, hi);
        t[i] = widest(clock64(), (long long)clock());
    }
}

int main()
{
    printf("%d %f %zu %lu %f %d %ld\n", host_max(1, 2), host_minf(1.0f, 2.0f),
           host_min_size(3, 4), host_max_mixed(-1, 5ul), host_mind(1.0, 2.0f),
           host_bad(1.0f, 2.0), host_clock());
    Range r = {0, 10, 0.5f};
    int *v;
    cudaMalloc(&v, 64 * sizeof(int));
    clamp_all<<<1, 64>>>(v, r, 64);
    cudaFree(v);
    return 0;
}
