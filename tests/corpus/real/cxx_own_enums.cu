// cxx_own_enums.cu — kernels taking enums from a header host C++ can include
// (include/own_enums.hpp; issue 30 #6): in C++ the generated header uses the
// application's own enums (Color, Act, nn::Norm, nn::Pool, Layer::Kind, and
// the records and specializations holding them) with the device's size and
// alignment asserted; C keeps the mirrors. An enum this file declares itself
// (Local), and a struct of its own holding the application's enums, keep
// their mirrors in C++ too: no header of the caller's declares them.
#include "include/own_enums.hpp"

enum class Local : unsigned char { A, B = 9 };

struct LocalRec {
    Local l;
    Act a;
    nn::Norm n;
};

__global__ void paint(Color c, Act a, nn::Norm nm, nn::Pool p, Layer::Kind k, float *x)
{
    x[threadIdx.x] = (float)c + (float)a + (float)nm + (float)p + (float)k;
}

__global__ void layer(Layer l, const Layer *all, Color *colors)
{
    colors[threadIdx.x] = all[threadIdx.x].kind == l.kind ? l.color : RED;
}

template <typename E, Act A>
__global__ void tagged(Tagged<E, A> t, int *out)
{
    out[threadIdx.x] = ((int)t.value - (int)t.alt) * t.n + (int)A;
}
template __global__ void tagged<Color, Act::Relu>(Tagged<Color, Act::Relu>, int *);
template __global__ void tagged<nn::Norm, Act::Gelu>(Tagged<nn::Norm, Act::Gelu>, int *);

__global__ void local(Local l, LocalRec r, Holder<int>::Mode m, int *out)
{
    out[threadIdx.x] = (int)l + (int)r.l + (int)r.a + (int)r.n + (int)m;
}
