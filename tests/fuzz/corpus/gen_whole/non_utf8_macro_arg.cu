#define D5(x) x
__global__ void k(int a) { D5(D5É()); }
