// typedef_anon_structs.cu — kernels over a C header's typedef'd anonymous
// structs (issue 31 #7): bondStruct by value, bondsYieldTermStruct and
// bondsDateStruct only through pointers. The generated header spells every
// one by its typedef name and declares no "struct bondsYieldTermStruct",
// which C++ refuses after the typedef (and which in C names another type).
#include "include/bonds_structs.h"

__global__ void bond_prices(const bondsYieldTermStruct *curve, bondStruct bond, dataType *price, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        price[i] = curve[i].rate * bond.rate;
}

__global__ void bond_dates(bondsDateStruct *dates, const bondsYieldTermStruct *curve, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dates[i].year = curve[i].refDate;
}
