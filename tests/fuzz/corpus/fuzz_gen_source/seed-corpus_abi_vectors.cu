// Every CUDA vector type by value, to check kstub's layout of each against nvcc.
// (CUDA 13 deprecates some 4-wide 64-bit ones in favour of _16a/_32a; both kinds appear.)
#include <vector_types.h>

extern "C" __global__ void vec_char(char pad, char1 v1, char2 v2, char3 v3, char4 v4) {}
extern "C" __global__ void vec_uchar(char pad, uchar1 v1, uchar2 v2, uchar3 v3, uchar4 v4) {}
extern "C" __global__ void vec_short(char pad, short1 v1, short2 v2, short3 v3, short4 v4) {}
extern "C" __global__ void vec_ushort(char pad, ushort1 v1, ushort2 v2, ushort3 v3, ushort4 v4) {}
extern "C" __global__ void vec_int(char pad, int1 v1, int2 v2, int3 v3, int4 v4) {}
extern "C" __global__ void vec_uint(char pad, uint1 v1, uint2 v2, uint3 v3, uint4 v4) {}
extern "C" __global__ void vec_long(char pad, long1 v1, long2 v2, long3 v3, long4_16a v4) {}
extern "C" __global__ void vec_ulong(char pad, ulong1 v1, ulong2 v2, ulong3 v3, ulong4_16a v4) {}
extern "C" __global__ void vec_longlong(char pad, longlong1 v1, longlong2 v2, longlong3 v3, longlong4_16a v4) {}
extern "C" __global__ void vec_ulonglong(char pad, ulonglong1 v1, ulonglong2 v2, ulonglong3 v3, ulonglong4_16a v4) {}
extern "C" __global__ void vec_float(char pad, float1 v1, float2 v2, float3 v3, float4 v4) {}
extern "C" __global__ void vec_double(char pad, double1 v1, double2 v2, double3 v3, double4_16a v4) {}
extern "C" __global__ void vec_aligned32(char pad, double4_32a d, longlong4_32a l, dim3 grid) {}

// Types CUDA 13 deprecates (use the _16a/_32a forms): the generated code must
// still compile warning-free under -Werror.
extern "C" __global__ void vec_deprecated(char pad, double4 d, long4 l, ulonglong4 u, longlong4 ll,
                                          ulong4 ul) {}
