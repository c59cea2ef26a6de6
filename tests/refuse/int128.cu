extern "C" __global__ void ld(float *out, __int128 wide) {}
