// Explicit instantiations as clang's preprocessor sees them (issue 26,
// items 1-3): kstub once read this file with a scanner of its own, took
// the instantiations inside raw string literals and comments for code
// (and wrote a reference into the literal, changing its size), expanded a
// macro defined in an inactive #if branch, and ignored #undef. nvcc's PTX
// is the oracle: the same kernels, the same layouts.
#include "preprocessor_inst.cuh"

template <int N> struct Blob {
    char b[N];
};

template <typename T>
__global__ void pp_k(T *x, int n)
{
    if (threadIdx.x < n)
        x[threadIdx.x] = T();
}

template <typename T>
__global__ void pp_j(T *x, int n)
{
    if (threadIdx.x < n)
        x[threadIdx.x] = T();
}

template <typename T>
__global__ void pp_header_k(T *x, int n)
{
    if (threadIdx.x < n)
        x[threadIdx.x] = T();
}

// Raw string literals are literals, whatever their prefix or delimiter.
constexpr char pp_doc[] = R"(usage:
template __global__ void pp_k<float>(float *, int);
)";
constexpr char pp_doc_x[] = R"x(a )" template __global__ void pp_k<int>(int *, int); )x";
constexpr char pp_doc_u8[] = u8R"(template __global__ void pp_k<char>(char *, int);)";
constexpr wchar_t pp_doc_l[] = LR"(template __global__ void pp_k<long>(long *, int);)";

extern "C" __global__ void pp_sized(Blob<sizeof pp_doc> a, Blob<sizeof pp_doc_x> b,
                                    Blob<sizeof pp_doc_u8> c, Blob<sizeof pp_doc_l> d)
{
}

// Comments and inactive code are not code.
/* template __global__ void pp_k<short>(short *, int); */
// template __global__ void pp_k<double>(double *, int);
#if 0
template __global__ void pp_k<unsigned>(unsigned *, int);
#endif

// Which definition is live is the preprocessor's: #if/#else ...
#ifndef PP_NEVER_DEFINED
#define PP_INST(T)
#else
#define PP_INST(T) template __global__ void pp_k<T>(T *, int);
#endif
PP_INST(float)

#define PP_HAVE 1
#ifdef PP_HAVE
#define PP_YES(T) template __global__ void pp_k<T>(T *, int);
#else
#define PP_YES(T)
#endif
PP_YES(double)

// ... #undef, and a redefinition between two uses ...
#define PP_TWICE(T) template __global__ void pp_k<T>(T *, int);
PP_TWICE(int)
#undef PP_TWICE
#define PP_TWICE(T) template __global__ void pp_j<T>(T *, int);
PP_TWICE(float)

// ... a function-like macro's name without arguments is no invocation ...
#define PP_VAR(T) template __global__ void pp_j<T>(T *, int);
int PP_VAR = 0;
PP_VAR(short)

// ... and a macro of a header.
PP_HEADER_INST(unsigned)

// After #undef the name is the program's again.
#define PP_OBJ(T) template __global__ void pp_j<T>(T *, int);
#undef PP_OBJ
struct PP_OBJ {
    int v;
};
PP_OBJ(pp_obj);
