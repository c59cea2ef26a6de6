// Kernels whose stubs embed this very source (kstub --embed-source):
// libkstub compiles it with NVRTC for the device it runs on.
namespace nv {
template <typename T> __global__ void scale(T *x, T s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
template __global__ void scale<float>(float *, float, int);
} // namespace nv

extern "C" __global__ void iota(int *out, int n, int start)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = start + i;
}
