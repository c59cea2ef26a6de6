// bases_device.cu — one kernel per field of bases_fields.h, reading it
// through its C++ name from a parameter of tests/corpus/abi_bases.cu's
// class: nvcc's PTX loads it from "[read_<class>_<field>_param_0+<offset>]",
// the device's offset of the field, which check_real compares with the C
// mirror's (bases_offsets.c). Dots in a field path become "_" in the id.
#include "abi_bases.cu"
#include "bases_fields.h"

#define READ(T, id, c, cxx) \
    extern "C" __global__ void read_##T##_##id(bases::T v, long long *out) \
    { out[0] = (const char *)&v.cxx - (const char *)&v; }

BASES_FIELDS(READ)
