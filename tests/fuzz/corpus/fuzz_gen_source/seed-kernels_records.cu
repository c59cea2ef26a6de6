// Parameters passed by value that C must mirror exactly: structs (nested,
// padded, arrays, unions), enums, CUDA vector types and half types. Each
// kernel copies the bytes it received to `out` at the parameter's own
// offset, so a test can compare them with what the host packed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace rec {
enum class Mode : uint8_t { Fast = 1, Exact = 2, Careful = 200 };
enum Axis { X = 0, Y = 1, Z = 2 };

struct Inner {
    char tag;
    double weight;
};

struct alignas(16) Params {
    float scale;
    Inner inner;          // padded before and inside
    int grid[2][3];       // a multi-dimensional array
    Mode mode;            // an enum inside
    float3 dir;           // an odd-sized vector inside
    union {
        int i;
        float f;
    } bits;               // a union
    bool enabled;
};
} // namespace rec

template <typename T> __device__ void put(unsigned char *out, size_t off, const T &v)
{
    memcpy(out + off, &v, sizeof v);
}

extern "C" __global__ void echo_params(unsigned char *out, rec::Params p, rec::Mode m,
                                       rec::Axis a)
{
    put(out, 0, p);
    put(out, 80, m);
    put(out, 84, a);
}

extern "C" __global__ void echo_vectors(unsigned char *out, float4 f4, double3 d3, char3 c3,
                                        int2 i2, ushort3 us3, float3 f3)
{
    put(out, 0, f4);
    put(out, 16, d3);
    put(out, 40, c3);
    put(out, 44, i2);
    put(out, 52, us3);
    put(out, 60, f3);
}

extern "C" __global__ void echo_halves(unsigned char *out, __half h, __half2 h2,
                                       __nv_bfloat16 b, __nv_bfloat162 b2, float check)
{
    put(out, 0, h);
    put(out, 4, h2);
    put(out, 8, b);
    put(out, 12, b2);
    // the device's own conversion of the halves, for the host helpers' test
    float conv[4] = {__half2float(h), __low2float(h2), __bfloat162float(b), __low2float(b2)};
    put(out, 16, conv);
    put(out, 32, check);
}
