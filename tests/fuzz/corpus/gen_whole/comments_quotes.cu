// gen_whole seed: comments and quotes that reach generated comments and
// string literals (issue 10 #11).
extern "C" __global__ void cm(float *o /* [n] */, int n /* count */) {}
template <typename U, int N> __global__ void kt(U *u) {}
template __global__ void kt<float /* e */, 4>(float *);
template <char C> __global__ void kc(char *c) {}
template __global__ void kc<'"'>(char *);
template <char C> __global__ void kd(char *c) {}
template __global__ void kd<'\\'>(char *);
extern "C" __global__ void in_body(int *x) {
    const char *s = "__launch_bounds__(64) */ \" \\"; (void)s;
    /* __launch_bounds__(32) */
}
extern "C" __global__ void __launch_bounds__(128) real(int *x) {}
