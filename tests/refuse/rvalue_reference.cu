extern "C" __global__ void rv(float &&x) {}
