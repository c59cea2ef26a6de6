// nvcc_layout.cu — structs whose layout depends on macros nvcc predefines
// (issue 14): kstub must see nvcc's branch, or it packs the wrong bytes.
#include <cuda_runtime.h>

struct Versioned {
    int n;
#if defined(__NVCC__) && __CUDACC_VER_MAJOR__ >= 12
    double extra[2];     /* only nvcc 12+ sees these */
#endif
};

struct Toolkit {
#if defined(__CUDACC__) && defined(CUDART_VERSION) && CUDART_VERSION >= 12000
    long long stamp;
#else
    char stamp;
#endif
    short tag;
};

#ifdef __CUDACC_RELAXED_CONSTEXPR__
typedef float acc_t;
#else
typedef double acc_t;
#endif

__global__ void versioned(Versioned v, Toolkit t, acc_t scale, float *out)
{
    out[threadIdx.x] = (float)(v.n * scale) + (float)t.tag;
}
