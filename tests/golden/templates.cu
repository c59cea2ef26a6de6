// Golden input: template kernels (explicit instantiations), class template
// specializations by value, tags (empty classes by value) and pointers to arrays.
#include <type_traits>

template <typename T, int N> struct Tile { T v[N]; };
struct Flag {};           // an empty class: a tag

template <typename T, int N>
__global__ void scale(T *x, T a, Tile<T, N> tile) {}
template __global__ void scale<float, 4>(float *, float, Tile<float, 4>);
template __global__ void scale<double, 2>(double *, double, Tile<double, 2>);

template <bool Fast>
__global__ void choose(std::integral_constant<bool, Fast> tag, float *x) {}
template __global__ void choose<true>(std::true_type, float *);
template __global__ void choose<false>(std::false_type, float *);

__global__ void tagged(Flag f, std::integral_constant<int, 3> three, int n) {}
__global__ void rows(float (*m)[8], const int (*cube)[2][4], int nrows) {}

// kstub:name scale<double, 2> = scale_d2
