extern "C" __global__ void k(float *x) {}
// kstub:name no_such_kernel = other
