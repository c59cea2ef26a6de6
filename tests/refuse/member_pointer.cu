struct S { int a; };
extern "C" __global__ void mp(int S::*field) {}
