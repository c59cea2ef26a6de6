// Explicit instantiations C++ allows beside "k<ARGS>(PARAMS)" (issue 38's
// probe of real code's forms): the arguments deduced from the parameters
// ("template __global__ void k(float *);", "k<>(...)"), which nvcc emits
// and kstub named nothing for; and instantiations of member function
// templates ("template void S::f<int>(int *);"), no kernel's, which made
// kstub refuse the file ("address of overloaded function 'f' cannot be
// static_cast"). A header's of both kinds (deduced_inst.cuh); an extern
// one, which nvcc does not emit; a host function template's deduced
// instantiation that launches a kernel. check-abi compares every kernel
// with nvcc's.
#include "deduced_inst.cuh"

template <typename A, typename B>
struct Box {
    A a;
    B b;
};

template <typename T>
__global__ void deduced(T *out, int n)
{
    if (threadIdx.x < n)
        out[threadIdx.x] = T();
}
template __global__ void deduced(float *, int);
template __global__ void deduced(int *, int);
template __global__ void deduced<>(char *, int);

namespace ns {
template <typename T>
__global__ void scale(T *x, T s)
{
    x[threadIdx.x] *= s;
}
}  // namespace ns
template __global__ void ns::scale(double *, double);

template <typename T>
__global__ void boxed(Box<T, int> *b, T v)
{
    b->a = v;
}
template __global__ void boxed(Box<short, int> *, short);

template <typename T>
__global__ void external(T *x)
{
    x[0] = T();
}
extern template __global__ void external<long>(long *);

struct Acc {
    template <typename T>
    void add(T *p) { (void)p; }
    template <typename T>
    static void twice(T *p) { (void)p; }
};
template void Acc::add<int>(int *);
template void Acc::add(float *);
template void Acc::twice<char>(char *);

// A kernel launched only from a host function template whose explicit
// instantiation deduces its arguments: found through that instantiation.
template <typename T>
__global__ void viahost(T *x)
{
    x[0] = T();
}
template <typename T>
void launch_viahost(T *x)
{
    viahost<<<1, 1>>>(x);
}
template void launch_viahost(float *);
