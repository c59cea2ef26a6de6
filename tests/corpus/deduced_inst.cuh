// Included by abi_deduced_instantiations.cu: a header's explicit
// instantiations of a member function template (no kernel's) and of a
// kernel template whose arguments are deduced.
#pragma once

struct HeaderAcc {
    template <typename T>
    void put(T *p) { (void)p; }
};
template void HeaderAcc::put<int>(int *);
template void HeaderAcc::put(double *);

template <typename T>
__global__ void header_fill(T *out, T v)
{
    out[threadIdx.x] = v;
}
template __global__ void header_fill(unsigned *, unsigned);
