// A header of abi_spliced_instantiations.cu: an explicit instantiation
// whose keyword is split by a line splice, and one a macro writes.
#pragma once

template <typename T>
__global__ void from_header(T *out, int n)
{
    if (n > 0)
        out[0] = T(n);
}

temp\
late __global__ void from_header<double>(double *, int);

#define SPLICED_INST(T) templ\
ate __global__ void from_header<T>(T *, int);
SPLICED_INST(short)
