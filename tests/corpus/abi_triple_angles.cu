// Explicit instantiations whose template arguments end in ">>>" (issue 38's
// 150-file run found none, a probe did): in CUDA ">>>" is one token, the end
// of a launch, so a list of arguments closing three templates at once ends
// in it. Before, the instantiation was not read ("never explicitly
// instantiated", no stub) though nvcc emits the kernel. ">>>>" (">>>" then
// ">"), ">>>" in the middle of the arguments and a class template's
// explicit instantiation are here too; check-abi compares every kernel's
// symbol and layout with nvcc's.
template <typename A, typename B>
struct Pr {
    A a;
    B b;
};

template <typename T>
struct Box {
    T value;
};

template <typename T>
__global__ void tagged(T tag, float *out)
{
    out[0] = (float)sizeof(tag);
}

template <typename T, int N>
__global__ void counted(T tag, float *out)
{
    out[0] = (float)(N + (int)sizeof(tag));
}

template <typename T>
struct Holder {
    T held;
    float scale;
};

template <typename T>
__global__ void held(Holder<T> h, float *out)
{
    out[0] = h.scale;
}

// ">>>" closing three: Pr<int, Pr<int, float>> is the argument.
template __global__ void tagged<Pr<int, Pr<int, float>>>(Pr<int, Pr<int, float>>, float *);
// ">>>" then ">": four closed at once.
template __global__ void tagged<Box<Box<Box<Box<short>>>>>(Box<Box<Box<Box<short>>>>, float *);
// ">>>" in the middle, a non-type argument after it.
template __global__ void counted<Pr<char, Box<Box<double>>>, 3>(Pr<char, Box<Box<double>>>, float *);
// A class template's explicit instantiation ending in ">>>", and a kernel over it.
template struct Holder<Pr<int, Box<Box<long>>>>;
template __global__ void held<Pr<int, Box<Box<long>>>>(Holder<Pr<int, Box<Box<long>>>>, float *);
