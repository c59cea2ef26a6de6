__device__ int h_returns(int);
__host__ __device__ void h_returns(int);
__global__ void k_returns(int *x) { x[0] = 1; }
