template <class T> __global__ void k(T *p) {}
#define INST(T) template __global__ void k<T>(T *);
INST(int)
#undef INST
struct INST { int v; }; INST(global_obj);
