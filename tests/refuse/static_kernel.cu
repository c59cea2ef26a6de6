static __global__ void hidden(float *x) {}
namespace { __global__ void anon(float *x) {} }
__global__ void visible(float *x) {}
