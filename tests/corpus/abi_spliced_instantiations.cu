// Explicit instantiations written across a line splice (a backslash at a
// line's end): the lexer reads "temp\<newline>late" as the keyword
// "template", and nvcc emits the kernel. kstub's token scan compared the
// raw text and missed it (no stub, "never explicitly instantiated"). In
// the input, in a header, and inside a macro's definition; check-abi
// compares every kernel's symbol and layout with nvcc's.
#include "include/spliced_inst.cuh"

template <typename T, int N>
__global__ void scaled(T *out, T factor)
{
    out[N] = factor;
}

template __global__ void scaled<float, 2>(float *, float);
templ\
ate __global__ void scaled<int, \
3>(int *, int);
template __global__ void scal\
ed<long, 4>(long *, long);
