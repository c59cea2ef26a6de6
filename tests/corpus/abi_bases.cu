// Classes with non-virtual base classes by value (CUTLASS 2.x's Params
// derive from other structs): kstub's C mirror flattens each base's
// fields, bases first and in base order, at the offsets the Itanium ABI
// gives them, and must match nvcc's parameter layout exactly.
#include <cstdint>

namespace bases {
struct Tag {};
struct WithEmpty : Tag { int x; float y; };                  // an empty base takes no room
struct TagHolder : Tag { Tag t; int x; };                    // ... unless a member of its type must
                                                             // sit apart: t at 1
struct EmptyD : Tag {};
struct Twice : EmptyD, WithEmpty { short z; };               // their Tags would meet: WithEmpty at 4

struct Pod { int a; char b; };                               // POD: its tail padding is kept
struct KeepsTail : Pod { char c; };                          // c at 8
struct NonPod { int a; char b; __host__ __device__ NonPod() {} };  // not POD: tail reused
struct ReusesTail : NonPod { char c; short s; };             // c at 5, s at 6

struct A { double d; };
struct B { char c; };
struct Multi : A, B { int i; };                              // d at 0, c at 8, i at 12

struct Level1 : Pod { short s; };                            // a base that is itself derived
struct Level2 : Level1 { char z; };

struct Named { int x; int y; };
struct Hides : Named { float x; };                           // C: Named_x, y, x
struct Other { int y; };
struct Both : Named, Other { char x2; };                     // C: x, Named_y, Other_y, x2

struct alignas(16) Aligned { int v; };
struct OverBase : Aligned { int w; };                        // w at 16, 16-aligned

template <typename T> struct TBase { T t; };
struct FromTemplate : TBase<double>, TBase<char> { int n; }; // C: TBase_t, TBase_t_, n

struct Anon { int k; union { float f; int i; }; struct { short lo, hi; } range; };
struct FromAnon : Anon { int k2; };                          // a base's unnamed members

struct Outer { char c; Hides h; ReusesTail r; };             // derived classes as members

// CUTLASS-like: a kernel's Params deriving from a universal base.
struct UniversalParamsBase { int mode; int batch_count; long long batch_stride_A; };
struct GemmParams : UniversalParamsBase { const float *ptr_A; float alpha; };
} // namespace bases

extern "C" __global__ void base_empty(char pad, bases::WithEmpty w, bases::TagHolder t, bases::Twice tw) {}
extern "C" __global__ void base_tail(char pad, bases::KeepsTail k, bases::ReusesTail r) {}
extern "C" __global__ void base_multi(char pad, bases::Multi m, bases::Level2 l) {}
extern "C" __global__ void base_names(char pad, bases::Hides h, bases::Both b) {}
extern "C" __global__ void base_aligned(char pad, bases::OverBase o, bases::FromTemplate f) {}
extern "C" __global__ void base_members(char pad, bases::FromAnon a, bases::Outer o) {}
extern "C" __global__ void base_gemm(bases::GemmParams p, float *out) { out[0] = p.alpha; }
