// Golden input: the shapes of signature the generator must get exactly right.
#include <cstddef>
#include <cstdint>

typedef int64_t index_t;          // a typedef of a <stdint.h> type
typedef float real;               // a typedef of a builtin

struct Particle;                  // only ever pointed to

extern "C" __global__ void fill(float *out, float value, size_t n) {}

extern "C" __global__ void __launch_bounds__(128, 4)
mixed(char c, double d, short s, index_t i, bool b, const real *__restrict__ in,
      volatile unsigned int *flags, const Particle *const *table) {}

extern "C" __global__ void no_params() {}

namespace physics {
namespace detail {
__global__ void step(Particle *p, real dt, uint32_t n) {}
} // namespace detail
__global__ void clamp(float *x, float lo, float hi) {}
__global__ void clamp(int *x, int lo, int hi) {}
} // namespace physics

// Unnamed parameter, and parameters called "launch", "args", "stream",
// "n_items" and "restrict" (a name in C++, a keyword in C).
extern "C" __global__ void odd_names(int, float *launch, int args, int stream, long n_items,
                                     const char *restrict) {}
