extern "C" __global__ void broken(float *x, int n) {}
extern "C" __global__ void broken2(undeclared_type x) {}
