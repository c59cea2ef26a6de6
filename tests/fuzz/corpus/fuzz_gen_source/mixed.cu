// kstub:name foo
template __global__ void ns::k<float /* e */, 4>(float *, int);
/* kstub:skip */ __global__ void g(int a) { "x\"" ; }
#define A \
 b
R"d(raw)d" 'c'