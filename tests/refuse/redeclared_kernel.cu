__global__ void k_redeclared(float *x);
void k_redeclared(float *x);
