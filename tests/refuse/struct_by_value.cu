struct P { float x, y; };
extern "C" __global__ void by_value(float *out, P p) {}
