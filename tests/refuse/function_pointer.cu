typedef int (*log_t)(const char *, ...);
extern "C" __global__ void apply(float *x, log_t op) {}
