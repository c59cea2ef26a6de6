template <int N> struct Blob { char b[N]; };
template <class T> __global__ void k(T *p) {}
constexpr char doc[] = R"(usage:
template __global__ void k<float>(float *);
)";
extern "C" __global__ void sized(Blob<sizeof doc> b) {}
