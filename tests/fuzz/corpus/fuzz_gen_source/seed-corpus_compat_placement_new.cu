// Placement new in device code with no #include at all (issue 14): nvcc's
// crt/common_functions.h includes <new> in every .cu; clang's CUDA mode
// does not, and its device-side placement forms live in cuda_wrappers/<new>
// under the resource directory. kstub's compat header includes <new>, and
// the resource directory is the one beside the libclang in use.
struct Slot {
    int key;
    float value;
    __device__ Slot(int k, float v) : key(k), value(v) {}
};

__device__ void emplace(Slot *where, int k, float v)
{
    ::new (static_cast<void *>(where)) Slot(k, v);
}

__global__ void fill_slots(Slot *slots, const float *values, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        emplace(&slots[i], i, values[i]);
}
