struct Flags { unsigned a : 3; unsigned b : 5; };
extern "C" __global__ void bits(float *out, Flags f) {}
