// Structs, unions, enums and CUDA's special types by value: kstub's C
// mirrors must match nvcc's parameter layout exactly.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace shapes {
enum class Tiny : uint8_t { A, B };
enum class Wide : int64_t { Neg = -5, Big = 1LL << 40 };
enum Plain { P0, P1 };

struct Empty {};
struct Padded { char c; double d; short s; };                // inner and tail padding
struct Nested { Padded p; char tail; };
struct Arrays { float m[3][2]; uint8_t bytes[5]; };           // multi-dimensional, odd sizes
struct alignas(32) Over { int x; };                          // over-aligned
struct Member { alignas(16) float v; char c; };              // an over-aligned field
struct Anonymous {
    int kind;
    union { float f; int i; };                               // anonymous union member
    struct { short lo, hi; } range;                          // unnamed struct type
};
union Bits { double d; uint64_t u; unsigned char b[8]; };
struct Mixed { Tiny t; Wide w; __half h; float3 v; Plain p; };
} // namespace shapes

extern "C" __global__ void rec_basic(char pad, shapes::Empty e, shapes::Padded p, shapes::Nested n) {}
extern "C" __global__ void rec_arrays(shapes::Arrays a, char pad, shapes::Over o) {}
extern "C" __global__ void rec_member(char pad, shapes::Member m, shapes::Anonymous an) {}
extern "C" __global__ void rec_union(char pad, shapes::Bits b, shapes::Mixed mx) {}
extern "C" __global__ void rec_enums(shapes::Tiny t, shapes::Wide w, shapes::Plain p, char c) {}
extern "C" __global__ void rec_halves(char pad, __half h, __half2 h2, __nv_bfloat16 b,
                                      __nv_bfloat162 b2) {}
extern "C" __global__ void rec_handles(char pad, cudaTextureObject_t tex, cudaSurfaceObject_t surf) {}
