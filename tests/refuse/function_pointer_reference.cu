struct S { int v; };
extern "C" __global__ void apply(float *x, float (*op)(const S &)) {}
