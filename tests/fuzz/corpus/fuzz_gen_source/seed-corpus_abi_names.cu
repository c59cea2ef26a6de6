// Names that once broke the generated C: type, enum and parameter names with
// keyword fragments (restrict, const, unsigned, struct, _Bool, volatile, int,
// p, float4), and names kstub or libkstub use themselves. Every kernel must
// generate C that compiles as C99, C11 and C++17 and packs as nvcc does.
#include <cstdint>

struct restrict_cfg { float scale; int restrict_count; };
struct unsigned_pair { unsigned lo, hi; };
struct floatp { float *p; double volatile_d; };
struct struct_int { int int_; char _Bool_like; };
enum const_mode { const_a = 1, const_b = 7 };
enum class unsigned_kind : uint8_t { u0, u1 };
typedef int T;                                   // a typedef shorter than 7 characters

// Types named like the runtime's and the generator's own identifiers.
struct ks_launch { int x; };
struct abi_names_kstub_image { int y; };
struct S { double d; };

extern "C" __global__ void kw_types(restrict_cfg restrict_cfg_, unsigned_pair unsigned_, floatp p,
                                    struct_int struct_, const_mode const_, unsigned_kind volatile_kind,
                                    float4 float4_, T *t) {}
extern "C" __global__ void kw_params(float *restrict, int _Bool, const float *__restrict__ in,
                                     volatile int *volatile_, unsigned unsigned_int, char p) {}
// Parameters named after what the stub itself declares and calls.
extern "C" __global__ void kw_own(float *ks__kernel_kw_own, int ks__args, int ks_kernel_launch,
                                  int launch, int stream, int n_items, int KS_RESTRICT,
                                  ks_launch ks_status, abi_names_kstub_image abi_names_kstub_image_) {}
// A kernel named like a runtime function, and one named like a type.
extern "C" __global__ void ks_launch_1d(int *x) {}
extern "C" __global__ void S(struct S s) {}
// Seventeen levels of pointer; comments inside the parameter list.
extern "C" __global__ void deep(int *****************p, float *o /* [n] */, int n /* count */) {}
// __launch_bounds__ text inside the body is not the kernel's bounds.
extern "C" __global__ void bounds_in_body(int *x) { const char *s = "__launch_bounds__(64)"; (void)s; }

// A parameter pack gives parameters of one name.
template <typename... Ts> __global__ void pack(Ts... args) {}
template __global__ void pack<int, float, double>(int, float, double);
// Comments and quotes in explicit instantiation arguments.
template <typename U, int N> __global__ void kt(U *u) {}
template __global__ void kt<float /* e */, 4>(float *);
template <char C> __global__ void kc(char *c) {}
template __global__ void kc<'"'>(char *);
