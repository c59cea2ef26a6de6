struct Shape { virtual float area() const { return 0; } float x; };
extern "C" __global__ void by_value(float *out, Shape s) {}
