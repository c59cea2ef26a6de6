// Included by preprocessor_instantiations.cu: a macro that writes an
// explicit instantiation, defined in a header.
#define PP_HEADER_INST(T) template __global__ void pp_header_k<T>(T *, int);
