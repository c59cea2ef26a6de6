extern "C" __global__ void body_only(float *x, int n) {
    x[0] = undeclared_name;
}
