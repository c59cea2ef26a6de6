// Host code with OpenMP beside the kernels (issue 14): <omp.h> lives in the
// host compiler's own include folder, which nvcc's gcc searches and clang
// does not; kstub adds that folder last (generator/compat.c).
#include <omp.h>
#include <cstdio>

struct Tile {
    int rows, cols;
    float alpha;
};

__global__ void scale_tile(Tile t, float *m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < t.rows * t.cols)
        m[i] *= t.alpha;
}

static void host_reference(Tile t, float *m)
{
#pragma omp parallel for
    for (int i = 0; i < t.rows * t.cols; i++)
        m[i] *= t.alpha;
}

int main()
{
    Tile t = {4, 4, 2.0f};
    float h[16] = {0}, *d;
    host_reference(t, h);
    cudaMalloc(&d, sizeof h);
    scale_tile<<<1, 16>>>(t, d);
    printf("%d threads\n", omp_get_max_threads());
    cudaFree(d);
    return 0;
}
