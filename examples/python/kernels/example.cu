// example.cu — the kernels of the kstub_example package: saxpy, and a kernel
// that takes a struct by value (kstub_example.Affine in Python).

struct Affine {
    float scale;   // y[i] = scale * x[i] + shift, for i < n
    float shift;
    int n;
};

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void affine(Affine t, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < t.n)
        y[i] = t.scale * x[i] + t.shift;
}
