// Opaque handles passed by value: a CUtensorMap as a __grid_constant__
// parameter (128 bytes, 64-byte aligned), and texture and surface objects.
// The kernel copies what it received to `out`, for a byte-for-byte check.
// (Its stub header includes cuda.h for CUtensorMap, so it needs C11 or C++.)
#include <cuda.h>

extern "C" __global__ void echo_handles(unsigned char *out, const __grid_constant__ CUtensorMap map,
                                        cudaTextureObject_t tex, cudaSurfaceObject_t surf)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    memcpy(out, &map, sizeof map);
    memcpy(out + sizeof map, &tex, sizeof tex);
    memcpy(out + sizeof map + sizeof tex, &surf, sizeof surf);
}
