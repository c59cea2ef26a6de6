// Explicit instantiations spelled as real code spells them: arguments
// written otherwise than clang prints them (decltype, sizeof, a cast, a
// scoped enumerator), an empty and a non-empty pack, a function pointer
// type, and a name qualified from the global namespace after "void"
// ("void ::k4<...>"), which kstub read as the name "void ::k4" once the
// file was parsed again with references written in (the arguments clang
// spells otherwise make it so): refused with "expected '(' for
// function-style cast". check-abi compares every kernel with nvcc's.
#include <cstddef>
namespace a { namespace b { enum class Mode { Fast, Slow }; } }
template <typename T, int N> __global__ void k1(T *x) { x[0] = T(N); }
template __global__ void k1<decltype(1.0f), sizeof(double)>(float *);
template <a::b::Mode M> __global__ void k2(int *x) { x[0] = (int)M; }
template __global__ void k2<a::b::Mode::Slow>(int *);
template <bool B, std::size_t S> __global__ void k3(char *x) { x[0] = B ? (char)S : 0; }
template __global__ void k3<true, (std::size_t)16>(char *);
template <typename T> __global__ void k4(T *x) { x[0] = T(); }
template __global__ void ::k4<unsigned long long>(unsigned long long *);
template <int... Ns> __global__ void k5(int *x) { x[0] = sizeof...(Ns); }
template __global__ void k5<1, 2, 3>(int *);
template __global__ void k5<>(int *);
template <typename T> __global__ void k6(T x) { (void)x; }
template __global__ void k6<int (*)(int)>(int (*)(int));
