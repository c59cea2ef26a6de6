__device__ float g_defined(float v) { return v; }
__host__ __device__ float g_defined(float v) { return v; }
__global__ void k_two_definitions(float *x) { x[0] = g_defined(1.0f); }
