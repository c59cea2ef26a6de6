// A function declared again in another execution space (issue 38): nvcc
// parses the host and the device side apart and takes the later
// declaration for the same function; clang's CUDA mode overloads on
// __host__/__device__ and refused each of these ("__host__ __device__
// function 'printf' cannot overload __host__ function 'printf'"). Headers
// do it with the C library's functions, which glibc declares for the host,
// clang's CUDA wrapper for the device (printf, malloc, free, memcpy,
// memset, the math functions, __assert_fail) and nvcc's headers for both;
// CUDA 13's <cuda/std/...> headers declare __assert_fail __host__
// __device__ under -DNDEBUG (check_real.c parses this file with and
// without it). A project's own functions follow the same rule (nvcc warns:
// "redeclared with __host__ __device__, hence treated as a __host__
// __device__ function"); clang keeps the first declaration's execution
// space, so a call from the other side is a body warning in kstub (none
// here: each is called where its first declaration serves).
#include <cstddef>
#include <cuda/std/utility>

extern "C" {
__host__ __device__ void __assert_fail(const char *, const char *, unsigned int, const char *) noexcept
    __attribute__((__noreturn__));
__host__ __device__ int printf(const char *, ...);
__host__ __device__ void *malloc(size_t) noexcept;
__host__ __device__ void free(void *) noexcept;
__host__ __device__ void *memcpy(void *, const void *, size_t) noexcept;
__host__ __device__ void *memset(void *, int, size_t) noexcept;
__host__ __device__ double sin(double) noexcept;
__host__ __device__ float sqrtf(float) noexcept;
}

// host, then both
float scale_of(int n);
__host__ __device__ float scale_of(int n);
// device, then both (the definition)
__device__ float twice(float v);
__host__ __device__ float twice(float v) { return 2.0f * v; }
// both (the definition), then device and host
__host__ __device__ inline int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }
__device__ int clamp_index(int i, int n);
int clamp_index(int i, int n);

struct pair_f {
    float a, b;
};

__global__ void hd_redeclared(float *x, pair_f p, int n)
{
    int i = clamp_index(blockIdx.x * blockDim.x + threadIdx.x, n);
    float tmp[2];
    memcpy(tmp, &p, sizeof tmp);
    if (n < 0)
        printf("n %d\n", n);
    x[i] = twice(tmp[0]) + sqrtf(tmp[1]) + cuda::std::move(p).a;
}

float scale_of(int n) { return n > 0 ? (float)sin(1.0 / n) : 0.0f; }

void hd_redeclared_host(float *x, int n)
{
    float *h = (float *)malloc(sizeof(float) * (size_t)n);
    memset(h, 0, sizeof(float) * (size_t)n);
    free(h);
    hd_redeclared<<<1, 32>>>(x, pair_f{scale_of(n), 1.0f}, clamp_index(n, 64));
}
