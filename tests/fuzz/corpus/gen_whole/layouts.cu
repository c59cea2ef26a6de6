// gen_whole seed: short typedefs (issue 10 #2), deep pointers (#13), records,
// enums, namespaces and template arguments for mutants to recombine.
typedef int T;
typedef float F2;
struct alignas(16) P { float x, y; int n; };
enum class E : unsigned char { a, b };
namespace n { namespace m { struct Q { double d[3]; }; } }
extern "C" __global__ void td(T *t, F2 f, T n) {}
extern "C" __global__ void deep(int *****************p, const char *const *names) {}
extern "C" __global__ void rec(P p, E e, n::m::Q q, const P *ps) {}
namespace n {
template <typename V, int K> __global__ void tk(V *v, int k) {}
template __global__ void tk<double, 3>(double *, int);
template __global__ void tk<n::m::Q, -1>(n::m::Q *, int);
}
