// Kernels with internal linkage get stubs: the symbol is a pattern
// (common/symbol.h) that libkstub matches against the image's own kernels.
static __global__ void hidden(float *x) {}
namespace { __global__ void anon(float *x) {} }
__global__ void visible(float *x) {}
