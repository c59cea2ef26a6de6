// dynamic_launch.cu — a kernel launching kernels from the device (dynamic
// parallelism), which nvcc compiles only as relocatable device code
// (-rdc=true); kstub takes --rdc (or -p, from the compile command).
// abi-nvcc: -rdc=true
// abi-kstub: --rdc
#include <cuda_runtime.h>

struct Segment {
    int begin, end;
};

__global__ void fill_segment(float *data, Segment seg, float value)
{
    int i = seg.begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < seg.end)
        data[i] = value;
}

// Instantiated only by the device-side launch below.
template <typename T>
__global__ void count_segment(T *counts, Segment seg)
{
    if (threadIdx.x == 0)
        counts[0] += (T)(seg.end - seg.begin);
}

__global__ void fill_all(float *data, const Segment *segs, int nsegs, unsigned long long *counts)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < nsegs) {
        Segment seg = segs[s];
        int len = seg.end - seg.begin;
        if (len > 0)
            fill_segment<<<(len + 127) / 128, 128>>>(data, seg, (float)s);
        count_segment<<<1, 32>>>(counts, seg);
    }
}

void run(float *data, const Segment *segs, int nsegs, unsigned long long *counts)
{
    fill_all<<<(nsegs + 31) / 32, 32>>>(data, segs, nsegs, counts);
}
