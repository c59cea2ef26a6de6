extern "C" __global__ void k(float *x) {}
/* kstub:name k = 9lives */
