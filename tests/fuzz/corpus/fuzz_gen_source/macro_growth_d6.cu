#define D1(x) x x
#define D2(x) D1(D1(x))
#define D3(x) D2(D2(x))
#define D4(x) D3(D3(x))
#define D5(x) D4(D4(x))
#define D6(x) D5(D5(x))
#define D7(x) D6(D6(x))
#define D8(x) D7(D7(x))
#define D9(x) D8(D8(x))
#define DA(x) D9(D9(x))
#define A(x) B(x) template void f<x>(int);
#define B(x) A(x) #x a##x
#define V(a, ...) template void g<a>(__VA_ARGS__);
#define E(
D6(template void h<1>(int);)
A(1) V(1) V(2, int, float) E( B(
