struct Owner { float *p; ~Owner() {} };
struct Holder : Owner { int n; };
extern "C" __global__ void by_value(float *out, Holder h) {}
