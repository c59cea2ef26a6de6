// Golden input: records, enums and half types by value and through pointers.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace geo {
enum class Axis : unsigned char { X = 0, Y = 1, Z = 2 };   // a scoped enum, one byte
enum Mode { FAST = 1, EXACT = -2 };                        // a plain enum, signed

struct Vec3 { float x, y, z; };
struct Box {
    Vec3 lo, hi;          // nested records
    Axis split;           // an enum member: 1 byte, then padding
    double weight;
    int counts[2][3];     // a two-dimensional array member
    struct { short a, b; } pair;   // an anonymous record member
};
union Bits { float f; uint32_t u; unsigned char b[4]; };
struct Node;              // only ever pointed to
} // namespace geo

struct __align__(16) Aligned { float v[3]; };   // over-aligned

__global__ void boxes(geo::Box box, const geo::Box *all, geo::Node **tree, geo::Mode mode, int n) {}
__global__ void bits(geo::Bits in, geo::Bits *out, geo::Axis axis) {}
__global__ void halves(__half h, const __half2 *h2, __nv_bfloat16 b, __nv_bfloat162 *b2, Aligned a) {}
