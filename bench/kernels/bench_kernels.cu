// bench_kernels.cu — the kernels kstub's benchmarks launch (bench/).
//
// Their bodies are tiny on purpose: a launch of one small block costs the GPU
// a few microseconds, less than the CPU spends launching it, so the launch
// benchmarks measure the host side. The file includes nothing, so NVRTC
// compiles it as it is (the cold-start benchmark's run-time source).

// A struct passed by value: padding after n, a pointer member.
struct BenchParams {
    float scale;
    int n;
    double bias;
    const float *x;
};

// A few scalar and pointer arguments.
// kstub:extent(y, n)
extern "C" __global__ void bench_args(float a, const float *x, float *y, int n, long long m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + (float)m;
}

// One struct argument (and a pointer).
extern "C" __global__ void bench_struct(BenchParams p, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        y[i] = p.scale * p.x[i] + (float)p.bias;
}

// No arguments: the graph benchmark's unit of work.
extern "C" __global__ void bench_empty()
{
}

// A function template with two instances: the one C name over them
// (bench_fill, _Generic in C) against the instance's own stub.
template <typename T> __global__ void bench_fill(T *y, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = v;
}
template __global__ void bench_fill<float>(float *, float, int);
template __global__ void bench_fill<int>(int *, int, int);

// A 64-byte constant table (issue 29): global_bench writes it with the
// generated bench_table_set and with a raw cuMemcpyHtoDAsync to its address.
__constant__ float bench_table[16];

extern "C" __global__ void bench_read_table(float *y)
{
    y[threadIdx.x & 15] = bench_table[threadIdx.x & 15];
}
