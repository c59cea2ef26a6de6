// abi-nvcc: -rdc=true
// The kernels of abi_internal.cu compiled with -rdc=true: nvcc prefixes
// every internal name with __nv_static_<n>__<hash>_<file>_<hash>__ (and
// keeps the anonymous namespace's part inside it), the file being this one,
// the translation unit, though the kernels lie in the included file; the
// same patterns match.
#include "abi_internal.cu"
