// A CUtensorMap passed as a __grid_constant__ parameter (128 bytes,
// 64-byte aligned or more): its stub's header includes cuda.h, so C11 or C++.
#include <cuda.h>

extern "C" __global__ void rec_tensor_map(const __grid_constant__ CUtensorMap map, int n) {}
