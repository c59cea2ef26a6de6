extern "C" __global__ void by_ref(int &x, float *y) {}
