// Layouts that depend on nvcc's predefined macros: kstub must see the same
// branch as nvcc's device pass, or the stub packs a different struct (a
// silent ABI difference). Each struct below is one size under nvcc and
// another under a plain clang parse.
#include <cstdint>

struct VersionGated {
    float a;
    int b;
#if defined(__NVCC__) && __CUDACC_VER_MAJOR__ >= 12
    double extra[2];                       // 24 bytes under nvcc 12+, 8 otherwise
#endif
};

struct ApiGated {
#if defined(__CUDA_API_VER_MAJOR__) && __CUDA_API_VER_MAJOR__ >= 12
    int64_t wide;
#else
    int narrow;
#endif
    char tag;
};

struct ArchListed {
#ifdef __CUDA_ARCH_LIST__
    short archs[4];
#endif
    char c;
};

#if defined(__CUDACC_VER_BUILD__) && defined(__CUDACC_VER_MINOR__)
typedef double gated_scalar;
#else
typedef float gated_scalar;
#endif

#ifdef __NVCC__
#define PARAMS_ALIGN 16
#else
#define PARAMS_ALIGN 4
#endif
struct alignas(PARAMS_ALIGN) Aligned { int x; };

extern "C" __global__ void gated_version(char pad, VersionGated v, float *out) {}
extern "C" __global__ void gated_api(ApiGated a, char pad, ArchListed l) {}
extern "C" __global__ void gated_scalar_kernel(char pad, gated_scalar s, Aligned al) {}
