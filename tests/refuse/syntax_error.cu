extern "C" __global__ void broken(float *x, int n) {
    x[0] = undeclared_name;
}
