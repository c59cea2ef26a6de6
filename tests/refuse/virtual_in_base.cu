struct Shape { virtual float area() const { return 0; } float x; };
struct Square : Shape { float side; };
extern "C" __global__ void by_value(float *out, Square s) {}
