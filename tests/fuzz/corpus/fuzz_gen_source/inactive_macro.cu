template <class T> __global__ void k(T *p) {}
#ifndef NEVER_DEFINED
#define INST(T)
#else
#define INST(T) template __global__ void k<T>(T *);
#endif
INST(float)
