// saxpy.cu — the first project's kernel: y = a * x + y over n elements.
__global__ void saxpy(float a, const float *x, float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
