// cxx_own_types.cu — kernels taking records from a header host C++ can
// include (include/own_params.hpp; issue 30 #6): the generated header uses
// the application's own types in C++ (OwnParams<float>, OwnCfg, geo::Box)
// with the device's layout asserted, and the C mirrors in C.
#include "include/own_params.hpp"

template <typename T>
__global__ void own_apply(OwnParams<T> p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.out[i] = p.scale * p.in[i];
}
template __global__ void own_apply<float>(OwnParams<float>);
template __global__ void own_apply<double>(OwnParams<double>);

__global__ void own_cfg(OwnCfg c, float *x)
{
    x[threadIdx.x] = (float)(c.rows * c.cols * c.eps) + c.tag;
}

__global__ void own_box(geo::Box b, const OwnCfg *cfgs, float *vol)
{
    vol[threadIdx.x] = (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]) * cfgs[0].rows;
}
