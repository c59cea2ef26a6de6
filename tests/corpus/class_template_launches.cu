// Kernels launched from members of class templates (issue 18, item 7):
// "template class Runner<float>;" instantiates every member, and each
// member's launches are instances nvcc emits. kstub once followed none of
// them: the kernels below got no stub and a note said they were never
// instantiated.
#include <cuda_runtime.h>

template <typename T>
__global__ void axpy_k(T *y, const T *x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

template <typename T, int N>
__global__ void fill_n(T *y, T v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        y[i] = v;
}

template <typename T>
__global__ void zero_k(T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = T(0);
}

template <typename T>
__global__ void count_k(const T *x, int n, unsigned *hits)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] != T(0))
        atomicAdd(hits, 1u);
}

template <typename T>
class Runner {
public:
    explicit Runner(int n) : n_(n) {}
    void axpy(T *y, const T *x, T a) { axpy_k<<<blocks(), 256>>>(y, x, a, n_); }
    int fill(T *y, T v);                   // defined out of line
    static void clear(T *y, int n) { zero_k<T><<<(n + 255) / 256, 256>>>(y, n); }
    template <int N> void fill_fixed(T *y, T v) { fill_n<T, N><<<(N + 255) / 256, 256>>>(y, v); }
    void fill64(T *y, T v) { fill_fixed<64>(y, v); }   // a member template, reached from a member
private:
    int blocks() const { return (n_ + 255) / 256; }
    int n_;
};

template <typename T>
int Runner<T>::fill(T *y, T v)
{
    fill_n<T, 128><<<1, 128>>>(y, v);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

template class Runner<float>;
template class Runner<double>;

namespace stats {
template <typename T>
struct Counter {
    unsigned run(const T *x, int n, unsigned *hits)
    {
        count_k<<<(n + 255) / 256, 256>>>(x, n, hits);
        return 0;
    }
};
template struct Counter<int>;
}  // namespace stats

// A class template used by host code is instantiated there, as a function
// template is: its members' launches are followed from the call.
void count_nonzero(const float *x, int n, unsigned *hits)
{
    stats::Counter<float> c;
    c.run(x, n, hits);
}
