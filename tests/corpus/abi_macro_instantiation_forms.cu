// Explicit instantiations a macro writes, in the forms kstub missed before
// (issue 38's probe): arguments deduced from the parameters, and arguments
// that end in CUDA's ">>>" token. check-abi compares every kernel with
// nvcc's.
template <typename T> __global__ void mk(T *x) { x[0] = T(); }
#define INST(T) template __global__ void mk(T *);
INST(float)
INST(int)
#define INST2(T) template __global__ void mk<Pr<T, Pr<T, T>>>(Pr<T, Pr<T, T>> *);
template <typename A, typename B> struct Pr { A a; B b; };
INST2(char)
