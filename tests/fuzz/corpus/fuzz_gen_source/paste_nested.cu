#define A(x, ...) template __global__ void k<x>(__VA_ARGS__);
#define B(p) A(p##16, p *) #p
#define C A(int, int *)
template <class T> __global__ void k(T *) {}
B(u) C;
A(k<int>>, int)
