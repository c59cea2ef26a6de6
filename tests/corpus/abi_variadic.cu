// Variadic kernel templates (issue 31 #4): a benchmark's multi-tensor apply,
// launched from a host function template with its trailing arguments; the
// stub's C name and parameters come from the expanded pack (empty, one, two).
#include <cstdint>

struct TensorList {
    float *addresses[4];
    int sizes[4];
    int count;
};

struct ScaleFunctor {
    float factor;
};

template <typename T, typename U, typename... ArgTypes>
__global__ void multi_tensor_apply_kernel(int64_t chunk_size, volatile int *noop_flag, T tl, U callable,
                                          ArgTypes... args)
{
    if (*noop_flag == 0 && chunk_size > 0)
        tl.addresses[0][0] = callable.factor;
}

template <typename T, typename... ArgTypes>
void multi_tensor_apply(int64_t chunk_size, int *noop_flag, T callable, ArgTypes... args)
{
    TensorList tl{};
    multi_tensor_apply_kernel<<<1, 32>>>(chunk_size, noop_flag, tl, callable, args...);
}

template <typename... Ts>
__global__ void sum_all(float *out, Ts... vals)
{
    out[0] = (0.0f + ... + (float)vals);
}

void run(int *noop, float *out)
{
    multi_tensor_apply(2048, noop, ScaleFunctor{2.0f}, 1.5f, 3);
    multi_tensor_apply(2048, noop, ScaleFunctor{1.0f});
    multi_tensor_apply(2048, noop, ScaleFunctor{0.5f}, (double *)nullptr);
    sum_all<<<1, 1>>>(out, 1, 2.0, 'c', 4.0f);
}
