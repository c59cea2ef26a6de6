struct Base { float x; };
struct Derived : virtual Base { float y; };
extern "C" __global__ void by_value(float *out, Derived d) {}
